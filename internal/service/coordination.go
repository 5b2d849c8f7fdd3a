package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// Claim takes a lease on a subject for a session the caller owns. When
// another active session holds a conflicting subject it fails with a
// *logbook.ClaimConflictError naming the holder. The same session claiming
// again renews its claim (created is then false). Claims that may
// conflict (one subject, or a folder and a path under it) are decided one
// at a time, so of many sessions racing for one subject exactly one wins,
// also across replicas; claims that cannot conflict are decided side by
// side (store.Tx.ClaimLock).
func (s *Service) Claim(ctx context.Context, c Caller, p ClaimParams) (claim logbook.Claim, created bool, err error) {
	subject := logbook.NormalizeSubject(p.Subject)
	if subject == "" {
		return logbook.Claim{}, false, logbook.Invalid("subject", "name what to claim: a path (src/api/ for a folder), or issue:12, pull:7, branch:NAME")
	}
	// Compared below with the subjects of stored claims, so redacted as
	// they were.
	if err := s.store.c.clean(ctx, &subject); err != nil {
		return logbook.Claim{}, false, err
	}
	switch {
	case p.TTLMinutes == 0:
		p.TTLMinutes = logbook.DefaultClaimTTL
	case p.TTLMinutes < 0 || p.TTLMinutes > logbook.MaxClaimTTL:
		return logbook.Claim{}, false, logbook.Invalid("ttl_minutes", "give a TTL from 1 to %d minutes", logbook.MaxClaimTTL)
	}
	ttl := time.Duration(p.TTLMinutes) * time.Minute
	// A claim locks its subject (and may wait for another session's claim
	// of the same path): in a shared transaction on PostgreSQL it would
	// hold every conflicting claim until the whole group committed.
	alone := func(ctx context.Context, _ store.SessionKeys, fn func(*work) error) error { return s.inTx(ctx, fn) }
	_, err = s.writeSession(ctx, c, store.SessionKeys{ID: p.SessionID}, alone, func(tx *work, sess *logbook.Session, now time.Time) error {
		if err := tx.ClaimLock(ctx, sess.Project, []string{subject}); err != nil {
			return err
		}
		held, err := tx.ClaimList(ctx, store.ClaimListParams{Project: sess.Project, Conflicting: subject, Now: now})
		if err != nil {
			return err
		}
		for _, h := range held {
			if h.SessionID != sess.ID {
				return &logbook.ClaimConflictError{Subject: subject, Holder: h}
			}
		}
		for _, h := range held {
			if h.Subject == subject { // our own claim: renew, never shorten
				h.TTLSeconds = int64(ttl / time.Second)
				if until := now.Add(ttl); until.After(h.ExpiresAt) {
					h.ExpiresAt = until
				}
				claim = h
				return tx.ClaimUpdate(ctx, &claim)
			}
		}
		claim = logbook.Claim{ID: logbook.NewID(now), Project: sess.Project, SessionID: sess.ID, Actor: sess.Actor,
			Subject: subject, TTLSeconds: int64(ttl / time.Second), CreatedAt: now, ExpiresAt: now.Add(ttl), Title: sess.Title}
		created = true
		emitClaim(tx, logbook.EventClaimTaken, claim, now)
		return tx.ClaimInsert(ctx, &claim)
	})
	return claim, created, err
}

// Release ends a claim the caller's session holds.
func (s *Service) Release(ctx context.Context, c Caller, claimID string) (logbook.Claim, error) {
	var claim logbook.Claim
	err := s.inTx(ctx, func(tx *work) error {
		var err error
		claim, err = tx.ClaimGet(ctx, claimID)
		if err != nil || !c.sees(claim.Project) {
			return fmt.Errorf("no claim %q in your projects: %w", claimID, errOr(ignoreNotFound(err), logbook.ErrNotFound))
		}
		if claim.Actor != c.Actor {
			return fmt.Errorf("claim %s belongs to actor %q; only its owner releases it: %w", claimID, claim.Actor, logbook.ErrForbidden)
		}
		if claim.ReleasedAt != nil {
			return nil // released already: nothing to do
		}
		now := s.now()
		claim.ReleasedAt, claim.ReleaseReason = &now, logbook.ReleaseReleased
		emitClaim(tx, logbook.EventClaimReleased, claim, now)
		return tx.ClaimUpdate(ctx, &claim)
	})
	if err != nil {
		return logbook.Claim{}, err
	}
	return claim, nil
}

func isNotFound(err error) bool { return errors.Is(err, logbook.ErrNotFound) }

func ignoreNotFound(err error) error {
	if errors.Is(err, logbook.ErrNotFound) {
		return nil
	}
	return err
}

// Claims lists a project's active claims. A session it names must be one
// of the project's (ErrNotFound otherwise).
func (s *Service) Claims(ctx context.Context, c Caller, p ClaimsParams) ([]logbook.Claim, error) {
	project, err := c.projectFor(p.Project)
	if err != nil {
		return nil, err
	}
	if p.SessionID != "" {
		if _, err := s.sessionIn(ctx, c, project, p.SessionID); err != nil {
			return nil, err
		}
	}
	return s.store.ClaimList(ctx, store.ClaimListParams{Project: project, Subject: logbook.NormalizeSubject(p.Subject),
		SessionID: p.SessionID, Now: s.now()})
}

func emitClaim(tx *work, typ string, c logbook.Claim, at time.Time) {
	tx.emit(c.Project, typ, c.SessionID, at, claimEventData(c))
}

// claimEventData is what a claim event says of the claim.
func claimEventData(c logbook.Claim) map[string]any {
	data := map[string]any{
		"claim_id": c.ID, "subject": c.Subject, "actor": c.Actor, "expires_at": c.ExpiresAt, "reason": c.ReleaseReason}
	if c.Auto {
		data["auto"] = true // taken by the session's first write, not asked for
	}
	return data
}

// releaseClaims releases every claim of an ending session.
func releaseClaims(ctx context.Context, tx *work, sess *logbook.Session, now time.Time) error {
	released, err := tx.ClaimReleaseSession(ctx, sess.ID, logbook.ReleaseSessionEnded, now)
	for _, c := range released {
		emitClaim(tx, logbook.EventClaimReleased, c, now)
	}
	return err
}

// BusiestFiles lists the project's most touched files since the UTC day
// of a time (default 7 days ago), most touched first, at most limit
// (default 10, at most 100).
func (s *Service) BusiestFiles(ctx context.Context, c Caller, project string, since time.Time, limit int) ([]logbook.Touch, error) {
	project, err := c.projectFor(project)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 100 {
		limit = 10
	}
	if since.IsZero() {
		since = s.now().Add(-7 * 24 * time.Hour)
	}
	return s.store.TouchTop(ctx, project, since, limit)
}

// syncLinks stores the session's links: attached from its issue and pull
// fields, named from "#N" in its title, goal, task, prompt and result, and
// the extra named links found in its prompt entries.
func syncLinks(ctx context.Context, tx *work, sess *logbook.Session, extra ...logbook.Link) error {
	var attached, named []logbook.Link
	if sess.Issue != "" {
		attached = append(attached, logbook.Link{Kind: "issue", Ref: string(sess.Issue), Via: logbook.ViaAttached})
	}
	if sess.Pull != "" {
		attached = append(attached, logbook.Link{Kind: "pull", Ref: string(sess.Pull), Via: logbook.ViaAttached})
	}
	for _, text := range []string{sess.GivenTitle, sess.Goal, sess.Task, sess.Prompt, sess.Result} {
		named = append(named, namedLinks(text)...)
	}
	named = append(named, extra...)
	return tx.LinkSet(ctx, sess.ID, sess.Project, attached, named)
}

// linkedFieldsChanged reports whether a session's change from was to now
// changes a field syncLinks derives its links from. When none did,
// syncLinks would delete the attached links and insert the same again (on
// every heartbeat, two statements or more).
func linkedFieldsChanged(was, now *logbook.Session) bool {
	return was.Issue != now.Issue || was.Pull != now.Pull || was.GivenTitle != now.GivenTitle || was.Goal != now.Goal ||
		was.Task != now.Task || was.Prompt != now.Prompt || was.Result != now.Result
}

func namedLinks(text string) []logbook.Link {
	var links []logbook.Link
	for _, ref := range logbook.NamedIssues(text) {
		links = append(links, logbook.Link{Kind: "issue", Ref: ref, Via: logbook.ViaNamed})
	}
	return links
}

// DefaultEventRetention is how long events are kept.
const DefaultEventRetention = 7 * 24 * time.Hour

// SweepResult says what one sweep did.
type SweepResult struct {
	Swept         bool // false when another replica holds the sweep lock
	TimedOut      int
	ClaimsExpired int
	EventsPruned  int64
	// Retention is what the projects' retention removed.
	Retention RetentionResult
	// AlertsRaised counts the alerts raised: idle_with_claims, and the
	// cost_over_budget ones of a day that no write raised (see
	// raiseCostDays).
	AlertsRaised int
}

// Sweep ends sessions not seen for the session timeout (end_reason
// timed_out; a later heartbeat revives them), expires lapsed claims,
// prunes events older than retention, emitting events for each change,
// then applies each project's retention (logbook.Retention) in small
// batches, and raises the idle_with_claims alerts. With several replicas
// only one sweeps at a time.
func (s *Service) Sweep(ctx context.Context, retention time.Duration) (SweepResult, error) {
	if retention <= 0 {
		retention = DefaultEventRetention
	}
	var res SweepResult
	now := s.now()
	if err := s.store.Optimize(ctx); err != nil {
		s.log.WarnContext(ctx, "refreshing the planner's statistics failed", "err", err)
	}
	if err := s.store.EntryPartitionsMaintain(ctx, now, store.PartitionMonthsAhead); err != nil {
		s.log.WarnContext(ctx, "keeping the partitions of entries failed", "err", err)
	}
	err := s.inTx(ctx, func(tx *work) error {
		won, err := tx.SweepLock(ctx)
		if err != nil || !won {
			return err
		}
		res.Swept = true
		ended, err := tx.SessionTimeOut(ctx, now.Add(-s.timeout), now)
		if err != nil {
			return err
		}
		for _, sess := range ended {
			if sess.Unannounced > 0 { // left by a crash before announcePending ran
				was := sess
				announce(tx, &sess, now)
				if err := tx.SessionUpdate(ctx, &sess, &was); err != nil {
					return err
				}
			}
			tx.emit(sess.Project, logbook.EventSessionEnded, sess.ID, now, map[string]any{
				"end_reason": logbook.EndReasonTimedOut, "root_id": sess.Root()})
			if err := releaseClaims(ctx, tx, &sess, now); err != nil {
				return err
			}
		}
		res.TimedOut = len(ended)
		expired, err := tx.ClaimExpire(ctx, now)
		if err != nil {
			return err
		}
		for _, c := range expired {
			emitClaim(tx, logbook.EventClaimExpired, c, now)
		}
		res.ClaimsExpired = len(expired)
		res.EventsPruned, err = tx.EventPrune(ctx, now.Add(-retention))
		return err
	})
	if err != nil || !res.Swept {
		return res, err
	}
	if res.Retention, err = s.enforceRetention(ctx, now); err != nil {
		return res, err
	}
	if res.AlertsRaised, err = s.raiseIdle(ctx, now); err != nil {
		return res, err
	}
	budgets, err := s.raiseCostDays(ctx, now)
	res.AlertsRaised += budgets
	return res, err
}

// Events returns a project's events after an id, at most limit (default
// and maximum 500), in id order.
func (s *Service) Events(ctx context.Context, c Caller, project string, afterID int64, limit int) ([]logbook.Event, error) {
	project, err := c.projectFor(project)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 500 {
		limit = 500
	}
	s.sequenceEvents(ctx)
	return s.store.EventList(ctx, store.EventListParams{Project: project, AfterID: afterID, Limit: limit})
}

// LatestEventID returns the id of a project's newest event, 0 when none.
func (s *Service) LatestEventID(ctx context.Context, c Caller, project string) (int64, error) {
	project, err := c.projectFor(project)
	if err != nil {
		return 0, err
	}
	s.sequenceEvents(ctx)
	return s.store.EventLatestID(ctx, project)
}

// sequenceEvents numbers committed events before a read, so the reader
// sees everything committed so far. A failure only delays events (the
// next read numbers them), so it is logged, not returned.
func (s *Service) sequenceEvents(ctx context.Context) {
	if _, err := s.store.EventSequence(ctx); err != nil && ctx.Err() == nil {
		s.log.WarnContext(ctx, "numbering events failed", "err", err)
	}
}

// EventsChanged returns a channel closed the next time events may have
// been written: by this process, or by another replica (see Listen).
func (s *Service) EventsChanged() <-chan struct{} { return s.hub.wait() }

// Listen wakes this process's followers when another replica commits
// events, until ctx ends. Run it once, in its own goroutine.
func (s *Service) Listen(ctx context.Context) error {
	return s.store.Listen(ctx, s.hub.wake)
}
