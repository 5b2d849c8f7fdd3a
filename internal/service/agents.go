package service

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// agentHarness is the harness of sessions logbook starts for an agent.
const agentHarness = "agent"

// EnsureAgentSession returns the agent's current session, or starts one
// when it has none (or its current one has ended). created says which.
// Concurrent calls for one agent return one session. The session belongs to
// the actor that started it: for another actor this is ErrForbidden, as
// rotating the agent or handing it a task is.
func (s *Service) EnsureAgentSession(ctx context.Context, c Caller, project, agent string) (sess logbook.Session, created bool, err error) {
	project, name, err := agentName(c, project, agent)
	if err != nil {
		return logbook.Session{}, false, err
	}
	now := s.now()
	err = s.inTx(ctx, func(tx *work) error {
		a, err := lockAgent(ctx, tx, project, name, now)
		if err != nil {
			return err
		}
		if a.CurrentSessionID != "" {
			current, err := tx.SessionGet(ctx, store.SessionGetParams{ID: a.CurrentSessionID, ForUpdate: true})
			if err != nil && !errors.Is(err, logbook.ErrNotFound) {
				return err
			}
			if err == nil && !current.EndedOnPurpose() && current.Actor != c.Actor {
				return fmt.Errorf("agent %s's current session belongs to actor %q; only its owner continues it: %w", name, current.Actor, logbook.ErrForbidden)
			}
			if err == nil && !current.EndedOnPurpose() {
				if due := a.Policy.Due(&current, now); due != "" {
					rot, err := s.rotateLocked(ctx, tx, c, &a, due, now)
					sess, created = rot.Session, true
					return err
				}
				reopen(&current) // a timed-out agent session is revived, not replaced
				current.LastSeenAt = now
				sess = current
				return tx.SessionUpdate(ctx, &sess, nil)
			}
		}
		sess, err = startAgentSession(ctx, tx, c, &a, now)
		created = true
		if err != nil {
			return err
		}
		_, err = tx.TaskMoveAgent(ctx, a.Project, a.Name, sess.ID, now)
		return err
	})
	if err != nil {
		return logbook.Session{}, false, err
	}
	return s.withState(sess, now), created, nil
}

// RotateAgent starts a new session for the agent, ends its current one with
// end_reason "rotated: REASON", and points the agent at the new one, in
// one transaction.
func (s *Service) RotateAgent(ctx context.Context, c Caller, project, agent, reason string) (Rotation, error) {
	project, name, err := agentName(c, project, agent)
	if err != nil {
		return Rotation{}, err
	}
	reason = logbook.Clip(reason, logbook.MaxID)
	if reason == "" {
		reason = "requested"
	}
	now := s.now()
	var rot Rotation
	err = s.inTx(ctx, func(tx *work) error {
		a, err := lockAgent(ctx, tx, project, name, now)
		if err != nil {
			return err
		}
		rot, err = s.rotateLocked(ctx, tx, c, &a, reason, now)
		return err
	})
	if err != nil {
		return Rotation{}, err
	}
	rot.Session = s.withState(rot.Session, now)
	return rot, nil
}

// rotateLocked ends the locked agent's current session with end_reason
// "rotated: REASON", starts its next one, moves every task of the agent
// onto it and records the rotation, all in the caller's transaction.
func (s *Service) rotateLocked(ctx context.Context, tx *work, c Caller, a *logbook.Agent, reason string, now time.Time) (Rotation, error) {
	rot := Rotation{Reason: reason}
	if a.CurrentSessionID != "" {
		old, err := s.loadForWrite(ctx, tx, c, a.CurrentSessionID)
		if err != nil && !errors.Is(err, logbook.ErrNotFound) {
			return rot, err
		}
		if err == nil && !old.EndedOnPurpose() {
			rot.PreviousSessionID = old.ID
			if err := endLocked(ctx, tx, &old, logbook.EndReasonRotatedPfx+reason, now); err != nil {
				return rot, err
			}
		}
	}
	var err error
	if rot.Session, err = startAgentSession(ctx, tx, c, a, now); err != nil {
		return rot, err
	}
	if _, err := tx.TaskMoveAgent(ctx, a.Project, a.Name, rot.Session.ID, now); err != nil {
		return rot, err
	}
	return rot, tx.AgentRotationInsert(ctx, a.Project, a.Name, logbook.Rotation{
		At: now, Reason: reason, FromSessionID: rot.PreviousSessionID, ToSessionID: rot.Session.ID})
}

func agentName(c Caller, project, agent string) (string, string, error) {
	project, err := c.projectFor(project)
	if err != nil {
		return "", "", err
	}
	name, err := logbook.Name("agent", agent, logbook.MaxID)
	if err != nil {
		return "", "", err
	}
	if name == "" {
		return "", "", logbook.Invalid("agent", "name the agent, e.g. engineer-1")
	}
	return project, name, nil
}

// lockAgent makes the agent if it is new and locks its row, so concurrent
// ensures and rotations of one agent take turns.
func lockAgent(ctx context.Context, tx *work, project, name string, now time.Time) (logbook.Agent, error) {
	if err := tx.ProjectEnsure(ctx, project, now); err != nil {
		return logbook.Agent{}, err
	}
	if err := tx.AgentEnsure(ctx, project, name, now); err != nil {
		return logbook.Agent{}, err
	}
	return tx.AgentGet(ctx, store.AgentGetParams{Project: project, Name: name, ForUpdate: true})
}

// startAgentSession starts the agent's next session and makes it current.
// Its harness session id names the agent and the generation, so it is
// unique and readable.
func startAgentSession(ctx context.Context, tx *work, c Caller, a *logbook.Agent, now time.Time) (logbook.Session, error) {
	a.Generation++
	sess := logbook.Session{
		ID: logbook.NewID(now), Project: a.Project, Actor: c.Actor, Harness: agentHarness,
		HarnessSessionID: a.Name + "#" + strconv.FormatInt(a.Generation, 10),
		Agent:            a.Name, Status: logbook.StatusActive, StartedAt: now, LastSeenAt: now,
	}
	sess.GivenTitle = a.Name
	sess.DeriveTitle()
	inserted, err := tx.SessionInsert(ctx, &sess)
	if err != nil {
		return sess, err
	}
	if !inserted {
		return sess, fmt.Errorf("agent %s generation %d already has a session: %w", a.Name, a.Generation, logbook.ErrConflict)
	}
	a.CurrentSessionID = sess.ID
	tx.emit(sess.Project, logbook.EventSessionStarted, sess.ID, now, map[string]any{
		"title": sess.Title, "actor": sess.Actor, "harness": sess.Harness, "agent": sess.Agent, "root_id": sess.Root()})
	return sess, tx.AgentUpdate(ctx, a)
}
