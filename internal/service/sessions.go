package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// StartSession starts a session, or returns the one the harness already
// started with the same harness session id (created is then false) with the
// given fields applied as a heartbeat. A subagent that was ended on purpose
// stays ended, its fields refreshed; a top-level session ended on purpose is
// reopened (its closed_at does not move), unless p.KeepEnded says the
// start is a late report about it; a timed-out one is revived.
func (s *Service) StartSession(ctx context.Context, c Caller, p StartParams) (sess logbook.Session, created bool, err error) {
	project, err := c.projectFor(p.Project)
	if err != nil {
		return logbook.Session{}, false, err
	}
	harness, err := logbook.Name("harness", p.Harness, logbook.MaxModel)
	if err != nil {
		return logbook.Session{}, false, err
	}
	harnessID, err := logbook.Name("harness_session_id", p.HarnessSessionID, logbook.MaxID)
	if err != nil {
		return logbook.Session{}, false, err
	}
	if err := p.Fields.Validate(); err != nil {
		return logbook.Session{}, false, err
	}
	parentID := logbook.Clip(p.ParentID, logbook.MaxID)
	fields := p.Fields.NonEmpty()
	now := s.now()

	start := func(tx *work) error {
		var parent *logbook.Session
		if parentID != "" {
			got, err := tx.SessionGet(ctx, store.SessionGetParams{ID: parentID})
			if errors.Is(err, logbook.ErrNotFound) || (err == nil && (got.Project != project || got.Actor != c.Actor)) {
				return logbook.Invalid("parent_id", "no session %q of yours in project %q; a subagent's parent must be one of your sessions", parentID, project)
			}
			if err != nil {
				return err
			}
			parent = &got
		}
		if err := tx.ProjectEnsure(ctx, project, now); err != nil {
			return err
		}
		if harnessID != "" {
			existing, err := tx.SessionGetByHarnessID(ctx, store.SessionGetByHarnessIDParams{
				Project: project, Actor: c.Actor, Harness: harness, HarnessSessionID: harnessID, ForUpdate: true})
			if err == nil {
				sess, err = s.restart(ctx, tx, existing, fields, p.KeepEnded, now)
				return err
			}
			if !errors.Is(err, logbook.ErrNotFound) {
				return err
			}
		}
		sess = logbook.Session{
			ID: logbook.NewID(now), Project: project, Actor: c.Actor, Harness: harness,
			HarnessSessionID: harnessID, ParentID: parentID, Status: logbook.StatusActive,
			StartedAt: pastOrNow(p.StartedAt, time.Time{}, now), LastSeenAt: now,
		}
		fields.Apply(&sess)
		if parent != nil {
			inherit(&sess, parent)
			sess.RootID = parent.Root()
		}
		inserted, err := tx.SessionInsert(ctx, &sess)
		if err != nil {
			return err
		}
		if !inserted {
			// Another request started the same harness session between our
			// read and our insert; its row is committed now, so read it.
			existing, err := tx.SessionGetByHarnessID(ctx, store.SessionGetByHarnessIDParams{
				Project: project, Actor: c.Actor, Harness: harness, HarnessSessionID: harnessID, ForUpdate: true})
			if err != nil {
				return err
			}
			sess, err = s.restart(ctx, tx, existing, fields, p.KeepEnded, now)
			return err
		}
		created = true
		tx.emit(project, logbook.EventSessionStarted, sess.ID, now, map[string]any{
			"title": sess.Title, "actor": sess.Actor, "harness": sess.Harness, "parent_id": sess.ParentID, "root_id": sess.Root()})
		return syncLinks(ctx, tx, &sess)
	}
	err = s.inTx(ctx, func(tx *work) error {
		if err := start(tx); err != nil {
			return err
		}
		s.markParentSeen(ctx, tx, sess, now)
		return nil
	})
	if err != nil {
		return logbook.Session{}, false, err
	}
	s.markParentSeen(ctx, nil, sess, now)
	return s.withState(sess, now), created, nil
}

// pastOrNow is a time a caller reports something happened at (a session
// recorded after the fact), kept between floor (when set) and now: zero
// means now, a time after now (a skewed clock) is now. The store keeps
// microseconds.
func pastOrNow(at, floor, now time.Time) time.Time {
	if at.IsZero() || at.After(now) {
		return now
	}
	if at.Before(floor) {
		at = floor
	}
	return at.UTC().Truncate(time.Microsecond)
}

// inherit gives a subagent its parent's issue, pull, branch and head commit
// where it did not say its own.
func inherit(child, parent *logbook.Session) {
	for _, f := range []struct{ dst, src *logbook.Ref }{{&child.Issue, &parent.Issue}, {&child.Pull, &parent.Pull}} {
		if *f.dst == "" {
			*f.dst = *f.src
		}
	}
	for _, f := range []struct{ dst, src *string }{{&child.Branch, &parent.Branch}, {&child.HeadCommit, &parent.HeadCommit}} {
		if *f.dst == "" {
			*f.dst = *f.src
		}
	}
}

// restart applies a repeated start to an existing, locked session.
func (s *Service) restart(ctx context.Context, tx *work, sess logbook.Session, fields logbook.SessionFields, keepEnded bool, now time.Time) (logbook.Session, error) {
	// A late hook of a finished subagent, or a late report (keepEnded) of
	// any finished session, refreshes its fields and leaves it ended; any
	// other session is reopened (or revived) and marked seen.
	if !(sess.EndedOnPurpose() && (sess.ParentID != "" || keepEnded)) {
		reopen(&sess)
		sess.LastSeenAt = now
	}
	fields.Apply(&sess)
	if err := tx.SessionUpdate(ctx, &sess, nil); err != nil {
		return sess, err
	}
	return sess, syncLinks(ctx, tx, &sess)
}

// reopen makes an ended session active again. closed_at stays: it is set
// once and never moved.
func reopen(sess *logbook.Session) {
	if sess.Status != logbook.StatusEnded {
		return
	}
	sess.Status = logbook.StatusActive
	sess.Outcome, sess.Blocker, sess.EndReason, sess.Result = "", "", "", ""
}

// markParentSeen keeps a subagent's parent seen. Each write to a subagent
// calls it twice: inside the subagent's transaction (tx) and after it (tx
// nil), and it acts once. Where the service groups transactions (one
// writer, no row locks) it joins the subagent's own, so the caller does not
// wait for another group. Elsewhere it runs after it, in a statement of its
// own, so that a child never holds its row lock while waiting for its
// parent's (ending a parent locks the parent, then its children).
func (s *Service) markParentSeen(ctx context.Context, tx *work, sess logbook.Session, now time.Time) {
	if sess.ParentID == "" || sess.Status != logbook.StatusActive {
		return
	}
	grouped := s.committer.Load() != nil
	if (tx != nil) != grouped {
		return
	}
	var ex store.Executor = s.store
	if tx != nil {
		ex = tx
	}
	if err := ex.SessionMarkSeen(ctx, sess.ParentID, now); err != nil {
		s.log.WarnContext(ctx, "could not mark parent session seen", "session", sess.ID, "parent", sess.ParentID, "err", err)
	}
}

// loadForWrite reads and locks a session the caller is about to change:
// ErrNotFound when the caller cannot see it, ErrForbidden when another
// actor owns it.
func (s *Service) loadForWrite(ctx context.Context, tx *work, c Caller, id string) (logbook.Session, error) {
	sess, err := tx.SessionGet(ctx, store.SessionGetParams{ID: id, ForUpdate: true})
	if err != nil {
		return sess, sessionNotFound(id, err)
	}
	if !c.sees(sess.Project) {
		return sess, sessionNotFound(id, logbook.ErrNotFound)
	}
	if sess.Actor != c.Actor {
		return sess, fmt.Errorf("session %s belongs to actor %q; only its owner changes it: %w", id, sess.Actor, logbook.ErrForbidden)
	}
	return sess, nil
}

// sessionOf checks that a session a request names alongside a project is
// one of that project's: naming a project the caller cannot see is
// ErrForbidden, a session of another project ErrNotFound (as a session
// the caller cannot see is), never an empty answer.
func sessionOf(c Caller, named string, sess logbook.Session) error {
	project, err := c.projectFor(named)
	if err != nil {
		return err
	}
	if sess.Project != project {
		return fmt.Errorf("no session %q in project %s: %w", sess.ID, project, logbook.ErrNotFound)
	}
	return nil
}

// sessionIn reads a session a request names alongside a project: it must
// be one of the project's (ErrNotFound otherwise).
func (s *Service) sessionIn(ctx context.Context, c Caller, project, id string) (logbook.Session, error) {
	sess, err := s.store.SessionGet(ctx, store.SessionGetParams{ID: id})
	if err != nil {
		return sess, sessionNotFound(id, err)
	}
	return sess, sessionOf(c, project, sess)
}

func sessionNotFound(id string, err error) error {
	if errors.Is(err, logbook.ErrNotFound) {
		return fmt.Errorf("no session %q in your projects: %w", id, logbook.ErrNotFound)
	}
	return err
}

// heartbeat marks a locked session seen and, at most every
// logbook.ProgressEvery, renews its claims and emits session.progressed:
// a hook sends many heartbeats a second, and claims are counted in minutes,
// so a claim lives at least its TTL less those 5 seconds past the session's
// last heartbeat. A session ended on purpose takes no writes (ErrEnded); a
// timed-out one is revived.
func heartbeat(ctx context.Context, tx *work, sess *logbook.Session, now time.Time) error {
	if sess.EndedOnPurpose() {
		return fmt.Errorf("session %s has ended (%s): %w", sess.ID, sess.EndReason, logbook.ErrEnded)
	}
	reopen(sess)
	// last_seen_at moves in steps of a second at least: a hook sends many
	// heartbeats a second, and moving it moves the session in the indexes
	// the lists are read by, the dearest part of a heartbeat's write.
	if now.Sub(sess.LastSeenAt) >= logbook.SeenEvery {
		sess.LastSeenAt = now
	}
	if now.Sub(sess.ProgressedAt) >= logbook.ProgressEvery {
		if err := tx.ClaimRenew(ctx, sess.ID, now); err != nil {
			return err
		}
		sess.ProgressedAt = now
		tx.emit(sess.Project, logbook.EventSessionProgressed, sess.ID, now, map[string]any{
			"root_id": sess.Root(), "state": logbook.StateActive})
	}
	return nil
}

// writeHeartbeat runs fn on a session the caller owns, inside one
// transaction that also makes the write a heartbeat, and writes the session
// row fn may have changed. Every write to a session goes through here. fn
// gets the time of the write (the session's last_seen_at moves only every
// logbook.SeenEvery, so it may be older).
func (s *Service) writeHeartbeat(ctx context.Context, c Caller, id string, fn func(tx *work, sess *logbook.Session, now time.Time) error) (logbook.Session, error) {
	return s.writeSession(ctx, c, store.SessionKeys{ID: id}, s.inSessionTx, fn)
}

// writeSession is writeHeartbeat in a transaction that inTx runs: for a
// write that locks more than its session's row, s.inTx, which never
// shares a transaction with writes to other sessions on PostgreSQL (see
// inSessionTx).
func (s *Service) writeSession(ctx context.Context, c Caller, lock store.SessionKeys, inTx func(context.Context, store.SessionKeys, func(*work) error) error,
	fn func(tx *work, sess *logbook.Session, now time.Time) error) (logbook.Session, error) {
	now := s.now()
	id := lock.ID
	var sess logbook.Session
	err := inTx(ctx, lock, func(tx *work) error {
		var err error
		if sess, err = s.loadForWrite(ctx, tx, c, id); err != nil {
			return err
		}
		was := sess
		if err := heartbeat(ctx, tx, &sess, now); err != nil {
			return err
		}
		if err := fn(tx, &sess, now); err != nil {
			return err
		}
		if err := tx.SessionUpdate(ctx, &sess, &was); err != nil {
			return err
		}
		s.markParentSeen(ctx, tx, sess, now)
		return nil
	})
	if err != nil {
		return logbook.Session{}, err
	}
	s.markParentSeen(ctx, nil, sess, now)
	return s.withState(sess, now), nil
}

// UpdateSession is a heartbeat that sets the given fields and keeps the rest.
func (s *Service) UpdateSession(ctx context.Context, c Caller, id string, fields logbook.SessionFields) (logbook.Session, error) {
	if err := fields.Validate(); err != nil {
		return logbook.Session{}, err
	}
	return s.writeHeartbeat(ctx, c, id, func(tx *work, sess *logbook.Session, _ time.Time) error {
		was := *sess
		fields.Apply(sess)
		if !linkedFieldsChanged(&was, sess) {
			return nil // most heartbeats: the links stored stand as they are
		}
		return syncLinks(ctx, tx, sess)
	})
}
