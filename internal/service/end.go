package service

import (
	"context"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// EndSession ends a session with an outcome. closed_at is set once and
// never moves. For partial and failed outcomes without a blocker, the
// blocker is derived from the last assistant message. In-flight plan steps
// close (done on success, skipped otherwise), and subagents still going are
// ended with end_reason "parent ended". Ending a session that was already
// ended on purpose only fills a missing result. p.EndedAt, for a session
// recorded after the fact, is its closed_at and last activity (the
// transcript's last line), and replaces a closed_at set earlier: it is
// what the history says, not a reading of the clock.
func (s *Service) EndSession(ctx context.Context, c Caller, id string, p EndParams) (logbook.Session, error) {
	if !p.Outcome.Valid() {
		return logbook.Session{}, logbook.Invalid("outcome", "%q is not an outcome; use success, partial or failed", p.Outcome)
	}
	if p.Blocker != "" && !p.Blocker.Valid() {
		return logbook.Session{}, logbook.Invalid("blocker", "%q is not a blocker; use one of %v", p.Blocker, logbook.Blockers)
	}
	result := logbook.Clip(p.Result, logbook.MaxLongText)
	reason := logbook.Clip(p.Reason, logbook.MaxLongText)
	if reason == "" {
		reason = logbook.EndReasonEnded
	}
	now := s.now()
	var sess logbook.Session
	err := s.inTx(ctx, func(tx *work) error {
		var err error
		if sess, err = s.loadForWrite(ctx, tx, c, id); err != nil {
			return err
		}
		if sess.EndedOnPurpose() {
			if sess.Result == "" && result != "" {
				sess.Result = result
				return tx.SessionUpdate(ctx, &sess, nil)
			}
			return nil
		}
		sess.Outcome, sess.Result, sess.Blocker = p.Outcome, result, p.Blocker
		if sess.Blocker == "" && p.Outcome != logbook.OutcomeSuccess {
			sess.Blocker = logbook.DeriveBlocker(sess.LastAssistant)
		}
		sess.LastSeenAt = now
		if !p.EndedAt.IsZero() {
			at := pastOrNow(p.EndedAt, sess.StartedAt, now)
			sess.LastSeenAt, sess.ClosedAt = at, &at
		}
		if err := endLocked(ctx, tx, &sess, reason, now); err != nil {
			return err
		}
		if err := raiseOnEnd(ctx, tx, &sess, now); err != nil {
			return err
		}
		return syncLinks(ctx, tx, &sess) // the result may name issues
	})
	if err != nil {
		return logbook.Session{}, err
	}
	return s.withState(sess, now), nil
}

// endLocked ends a locked session with reason, closes its in-flight plan
// steps, releases its claims and ends the subagents it left going, then
// writes the session.
func endLocked(ctx context.Context, tx *work, sess *logbook.Session, reason string, now time.Time) error {
	sess.Status, sess.EndReason = logbook.StatusEnded, reason
	if sess.ClosedAt == nil {
		sess.ClosedAt = &now
	}
	if err := tx.PlanCloseInFlight(ctx, sess.ID, logbook.ClosingStatus(sess.Outcome), now); err != nil {
		return err
	}
	if err := releaseClaims(ctx, tx, sess, now); err != nil {
		return err
	}
	announce(tx, sess, now) // followers learn of the last entries before the end
	tx.emit(sess.Project, logbook.EventSessionEnded, sess.ID, now, map[string]any{
		"outcome": sess.Outcome, "blocker": sess.Blocker, "end_reason": sess.EndReason, "root_id": sess.Root()})
	if err := tx.SessionUpdate(ctx, sess, nil); err != nil {
		return err
	}
	children, err := tx.SessionListChildren(ctx, sess.ID)
	if err != nil {
		return err
	}
	for _, child := range children {
		if child.Status != logbook.StatusActive {
			continue
		}
		child, err := tx.SessionGet(ctx, store.SessionGetParams{ID: child.ID, ForUpdate: true})
		if err != nil {
			return err
		}
		if err := endLocked(ctx, tx, &child, logbook.EndReasonParentEnded, now); err != nil {
			return err
		}
	}
	return nil
}
