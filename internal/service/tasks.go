package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// AddTask makes a task enter the agent's ongoing session as a user turn (a
// message entry, role user, whose payload carries the task id), creating or
// rotating the agent's session as ensure would. The same task id with the
// same text again adds nothing; with another text it adds a new turn to the
// same task.
func (s *Service) AddTask(ctx context.Context, c Caller, project, agent string, in TaskInput) (TaskResult, error) {
	project, name, err := agentName(c, project, agent)
	if err != nil {
		return TaskResult{}, err
	}
	taskID, err := logbook.Name("task_id", in.TaskID, logbook.MaxID)
	if err != nil {
		return TaskResult{}, err
	}
	if taskID == "" {
		return TaskResult{}, logbook.Invalid("task_id", "give the task an id, e.g. the tracker's ticket id")
	}
	title, text := logbook.Clip(in.Title, logbook.MaxTitle), logbook.Clip(in.Text, logbook.MaxEntryText)
	if text == "" {
		text = title
	}
	if text == "" {
		return TaskResult{}, logbook.Invalid("text", "say what the task is")
	}
	sum := sha256.Sum256([]byte(text))
	key := "task:" + taskID + ":" + hex.EncodeToString(sum[:8])
	payload, _ := json.Marshal(map[string]string{"task_id": taskID, "title": title})

	sess, _, err := s.EnsureAgentSession(ctx, c, project, name)
	if err != nil {
		return TaskResult{}, err
	}
	var res TaskResult
	err = s.inTx(ctx, func(tx *work) error {
		a, err := lockAgent(ctx, tx, project, name, s.now())
		if err != nil {
			return err
		}
		if a.CurrentSessionID != sess.ID { // rotated meanwhile: follow it
			sess.ID = a.CurrentSessionID
		}
		locked, err := s.loadForWrite(ctx, tx, c, sess.ID)
		if err != nil {
			return err
		}
		now := s.now()
		if err := heartbeat(ctx, tx, &locked, now); err != nil {
			return err
		}
		added, err := appendLocked(ctx, tx, &locked, []logbook.Entry{{
			Kind: logbook.KindMessage, Role: logbook.RoleUser, Text: text, Payload: payload, Key: key}}, now)
		if err != nil {
			return err
		}
		if err := tx.SessionUpdate(ctx, &locked, nil); err != nil {
			return err
		}
		task, err := tx.TaskGet(ctx, project, taskID)
		switch {
		case errors.Is(err, logbook.ErrNotFound):
			task = logbook.Task{Project: project, ID: taskID, CreatedAt: now}
		case err != nil:
			return err
		}
		task.Agent, task.Title, task.Text, task.ActiveSessionID, task.UpdatedAt = name, title, text, locked.ID, now
		if err := tx.TaskUpsert(ctx, &task); err != nil {
			return err
		}
		res = TaskResult{Task: task, Session: s.withState(locked, now), Added: added.Recorded > 0}
		return nil
	})
	if err != nil {
		return TaskResult{}, err
	}
	res.Task, err = s.store.TaskGet(ctx, project, taskID)
	return res, err
}

// Task reads a task with its active session and every session it lived in.
func (s *Service) Task(ctx context.Context, c Caller, project, taskID string) (logbook.Task, error) {
	project, err := c.projectFor(project)
	if err != nil {
		return logbook.Task{}, err
	}
	t, err := s.store.TaskGet(ctx, project, taskID)
	if errors.Is(err, logbook.ErrNotFound) {
		return t, fmt.Errorf("no task %q in project %s: %w", taskID, project, logbook.ErrNotFound)
	}
	return t, err
}

// Tasks lists an agent's tasks.
func (s *Service) Tasks(ctx context.Context, c Caller, project, agent string) ([]logbook.Task, error) {
	project, name, err := agentName(c, project, agent)
	if err != nil {
		return nil, err
	}
	return s.store.TaskList(ctx, project, name)
}

// Agent reads an agent, its current session and its rotations.
func (s *Service) Agent(ctx context.Context, c Caller, project, agent string) (AgentView, error) {
	project, name, err := agentName(c, project, agent)
	if err != nil {
		return AgentView{}, err
	}
	a, err := s.store.AgentGet(ctx, store.AgentGetParams{Project: project, Name: name})
	if errors.Is(err, logbook.ErrNotFound) {
		return AgentView{}, fmt.Errorf("no agent %q in project %s: %w", name, project, logbook.ErrNotFound)
	}
	if err != nil {
		return AgentView{}, err
	}
	view := AgentView{Agent: a}
	if a.CurrentSessionID != "" {
		if sess, err := s.store.SessionGet(ctx, store.SessionGetParams{ID: a.CurrentSessionID}); err == nil {
			sess = s.withState(sess, s.now())
			view.Session = &sess
		}
	}
	view.Rotations, err = s.store.AgentRotationList(ctx, project, name)
	return view, err
}

// SetRotationPolicy sets when the agent rotates by itself: after its
// session reaches maxAge, or uses more than maxInputTokens input tokens
// (zero turns a limit off). It is checked whenever the agent's session is
// ensured or given a task. The policy decides when the agent's current
// session ends, so while that session goes on only its owner sets it
// (ErrForbidden for anyone else, the admin too); an agent with no session
// going on takes it from any token of the project.
func (s *Service) SetRotationPolicy(ctx context.Context, c Caller, project, agent string, maxAge time.Duration, maxInputTokens int64) (logbook.Agent, error) {
	project, name, err := agentName(c, project, agent)
	if err != nil {
		return logbook.Agent{}, err
	}
	if maxAge < 0 || maxInputTokens < 0 {
		return logbook.Agent{}, logbook.Invalid("rotation_policy", "limits cannot be negative; 0 turns one off")
	}
	var a logbook.Agent
	err = s.inTx(ctx, func(tx *work) error {
		if a, err = lockAgent(ctx, tx, project, name, s.now()); err != nil {
			return err
		}
		if a.CurrentSessionID != "" {
			current, err := tx.SessionGet(ctx, store.SessionGetParams{ID: a.CurrentSessionID})
			if err != nil && !errors.Is(err, logbook.ErrNotFound) {
				return err
			}
			if err == nil && !current.EndedOnPurpose() && current.Actor != c.Actor {
				return fmt.Errorf("agent %s's current session belongs to actor %q; its rotation policy decides when that session ends, so only its owner sets it: %w",
					name, current.Actor, logbook.ErrForbidden)
			}
		}
		a.Policy = logbook.RotationPolicy{MaxAgeSeconds: int64(maxAge / time.Second), MaxInputTokens: maxInputTokens}
		return tx.AgentUpdate(ctx, &a)
	})
	return a, err
}

// AddNote adds a note entry to every active session attached to or naming
// the issue or pull, or with the subject, so an agent reading its session
// hears of a review comment or a status change. It is not a heartbeat of
// those sessions. Every actor of the project may send one, and the note
// records who did (its Author: the actor and its token's id). The admin
// may not: it writes into no actor's session.
func (s *Service) AddNote(ctx context.Context, c Caller, p NoteParams) (NoteResult, error) {
	if c.Admin {
		return NoteResult{}, fmt.Errorf("the admin token writes into no actor's session; send the note with a token of the project: %w", logbook.ErrForbidden)
	}
	project, err := c.projectFor(p.Project)
	if err != nil {
		return NoteResult{}, err
	}
	var kind, ref string
	switch {
	case p.Issue != "":
		kind, ref = "issue", logbook.Clip(strings.TrimPrefix(string(p.Issue), "#"), logbook.MaxID)
	case p.Pull != "":
		kind, ref = "pull", logbook.Clip(strings.TrimPrefix(string(p.Pull), "#"), logbook.MaxID)
	case p.Subject != "":
		kind, ref = "subject", logbook.Clip(p.Subject, logbook.MaxID)
	default:
		return NoteResult{}, logbook.Invalid("issue", "say whom the note is for: issue, pull or subject")
	}
	text := logbook.Clip(p.Text, logbook.MaxEntryText)
	if text == "" {
		return NoteResult{}, logbook.Invalid("text", "a note needs text")
	}
	entry := logbook.Entry{Kind: logbook.KindNote, Role: logbook.RoleSystem, Text: text,
		Author: &logbook.Author{Actor: c.Actor, TokenID: c.TokenID}}
	if k := logbook.Clip(p.Key, logbook.MaxID); k != "" {
		entry.Key = "note:" + k
	}
	targets, err := s.store.SessionListLinked(ctx, project, kind, ref)
	if err != nil {
		return NoteResult{}, err
	}
	res := NoteResult{Sessions: []string{}}
	for _, target := range targets {
		err := s.inTx(ctx, func(tx *work) error {
			sess, err := tx.SessionGet(ctx, store.SessionGetParams{ID: target.ID, ForUpdate: true})
			if err != nil || sess.Status != logbook.StatusActive {
				return ignoreNotFound(err) // ended or deleted meanwhile: not told
			}
			added, err := appendLocked(ctx, tx, &sess, []logbook.Entry{entry}, s.now())
			if err != nil {
				return err
			}
			if added.Recorded == 0 {
				res.Duplicates++
				return nil
			}
			res.Told++
			res.Sessions = append(res.Sessions, sess.ID)
			return tx.SessionUpdate(ctx, &sess, nil)
		})
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// DeleteSession deletes a session, its subagents and everything of theirs
// (entries, touches, links, claims, plan, events) in one transaction. The
// owner or the admin may. A subagent is deleted with its parent, not alone,
// unless force is set.
func (s *Service) DeleteSession(ctx context.Context, c Caller, id string, force bool) (Deleted, error) {
	res := Deleted{SessionID: id}
	err := s.inTx(ctx, func(tx *work) error {
		sess, err := tx.SessionGet(ctx, store.SessionGetParams{ID: id, ForUpdate: true})
		if err != nil || !c.sees(sess.Project) {
			return sessionNotFound(id, errOr(err, logbook.ErrNotFound))
		}
		if sess.Actor != c.Actor && !c.Admin {
			return fmt.Errorf("session %s belongs to actor %q; only its owner or the admin deletes it: %w", id, sess.Actor, logbook.ErrForbidden)
		}
		if sess.ParentID != "" && !force {
			if _, err := tx.SessionGet(ctx, store.SessionGetParams{ID: sess.ParentID}); err == nil {
				return fmt.Errorf("session %s is a subagent of %s, which still exists; delete the parent, or pass force=true: %w", id, sess.ParentID, logbook.ErrConflict)
			}
		}
		res.Deleted, err = tx.SessionDeleteTree(ctx, id)
		return err
	})
	return res, err
}
