package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// sessionColumns lists a session row's columns in the order scanSession reads them.
const sessionColumns = `id, project, actor, harness, harness_session_id, parent_id, agent,
	title, given_title, goal, task, prompt, model, agent_type, issue, pull, branch,
	head_commit, subject, status, outcome, blocker, end_reason, result,
	started_at, last_seen_at, closed_at, entry_count, message_count, tool_call_count,
	input_tokens, output_tokens, first_assistant, last_assistant, root_id, progressed_at`

type rowScanner interface{ Scan(dest ...any) error }

// scanSession is the one place a session row becomes a logbook.Session.
// extra receives columns a query selects after the session's own.
func scanSession(row rowScanner, extra ...any) (logbook.Session, error) {
	var s logbook.Session
	var started, seen, progressed int64
	var closed sql.NullInt64
	dest := []any{&s.ID, &s.Project, &s.Actor, &s.Harness, &s.HarnessSessionID, &s.ParentID, &s.Agent,
		&s.Title, &s.GivenTitle, &s.Goal, &s.Task, &s.Prompt, &s.Model, &s.AgentType, &s.Issue, &s.Pull, &s.Branch,
		&s.HeadCommit, &s.Subject, &s.Status, &s.Outcome, &s.Blocker, &s.EndReason, &s.Result,
		&started, &seen, &closed, &s.EntryCount, &s.MessageCount, &s.ToolCallCount,
		&s.InputTokens, &s.OutputTokens, &s.FirstAssistant, &s.LastAssistant, &s.RootID, &progressed}
	err := row.Scan(append(dest, extra...)...)
	s.StartedAt, s.LastSeenAt, s.ClosedAt = fromMicros(started), fromMicros(seen), fromNullMicros(closed)
	s.ProgressedAt = fromMicros(progressed)
	return s, err
}

func (e executor) SessionInsert(ctx context.Context, s *logbook.Session) (bool, error) {
	res, err := e.exec(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES (
		$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
		$21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36)
		ON CONFLICT (project, actor, harness, harness_session_id) WHERE harness_session_id <> '' DO NOTHING`,
		s.ID, s.Project, s.Actor, s.Harness, s.HarnessSessionID, s.ParentID, s.Agent,
		s.Title, s.GivenTitle, s.Goal, s.Task, s.Prompt, s.Model, s.AgentType, s.Issue, s.Pull, s.Branch,
		s.HeadCommit, s.Subject, s.Status, s.Outcome, s.Blocker, s.EndReason, s.Result,
		micros(s.StartedAt), micros(s.LastSeenAt), nullMicros(s.ClosedAt), s.EntryCount, s.MessageCount, s.ToolCallCount,
		s.InputTokens, s.OutputTokens, s.FirstAssistant, s.LastAssistant, s.RootID, micros(s.ProgressedAt))
	if err != nil {
		return false, e.interpretError(err, "inserting session")
	}
	n, err := res.RowsAffected()
	return n == 1, e.interpretError(err, "inserting session")
}

func (e executor) SessionGet(ctx context.Context, p store.SessionGetParams) (logbook.Session, error) {
	query := `SELECT ` + sessionColumns + ` FROM sessions WHERE id = $1`
	if p.ForUpdate {
		query += e.d.ForUpdate
	}
	s, err := scanSession(e.queryRow(ctx, query, p.ID))
	return s, e.interpretError(err, "reading session")
}

func (e executor) SessionGetByHarnessID(ctx context.Context, p store.SessionGetByHarnessIDParams) (logbook.Session, error) {
	query := `SELECT ` + sessionColumns + ` FROM sessions
		WHERE project = $1 AND actor = $2 AND harness = $3 AND harness_session_id = $4 AND harness_session_id <> ''`
	if p.ForUpdate {
		query += e.d.ForUpdate
	}
	s, err := scanSession(e.queryRow(ctx, query, p.Project, p.Actor, p.Harness, p.HarnessSessionID))
	return s, e.interpretError(err, "reading session by harness id")
}

func (e executor) SessionUpdate(ctx context.Context, s *logbook.Session) error {
	res, err := e.exec(ctx, `UPDATE sessions SET
		parent_id = $2, agent = $3, title = $4, given_title = $5, goal = $6, task = $7, prompt = $8,
		model = $9, agent_type = $10, issue = $11, pull = $12, branch = $13, head_commit = $14,
		subject = $15, status = $16, outcome = $17, blocker = $18, end_reason = $19, result = $20,
		last_seen_at = $21, closed_at = $22, entry_count = $23, message_count = $24,
		tool_call_count = $25, input_tokens = $26, output_tokens = $27,
		first_assistant = $28, last_assistant = $29, progressed_at = $30
		WHERE id = $1`,
		s.ID, s.ParentID, s.Agent, s.Title, s.GivenTitle, s.Goal, s.Task, s.Prompt,
		s.Model, s.AgentType, s.Issue, s.Pull, s.Branch, s.HeadCommit,
		s.Subject, s.Status, s.Outcome, s.Blocker, s.EndReason, s.Result,
		micros(s.LastSeenAt), nullMicros(s.ClosedAt), s.EntryCount, s.MessageCount,
		s.ToolCallCount, s.InputTokens, s.OutputTokens,
		s.FirstAssistant, s.LastAssistant, micros(s.ProgressedAt))
	if err != nil {
		return e.interpretError(err, "updating session")
	}
	return e.expectOne(res, "updating session")
}

// expectOne turns an UPDATE that matched no row into ErrNotFound.
func (e executor) expectOne(res sql.Result, doing string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return e.interpretError(err, doing)
	}
	if n == 0 {
		return e.interpretError(sql.ErrNoRows, doing)
	}
	return nil
}

func (e executor) SessionMarkSeen(ctx context.Context, id string, at time.Time) error {
	_, err := e.exec(ctx, `UPDATE sessions SET last_seen_at = $2
		WHERE id = $1 AND status = 'active' AND last_seen_at < $2`, id, micros(at))
	return e.interpretError(err, "marking session seen")
}

func (e executor) SessionListChildren(ctx context.Context, parentID string) ([]logbook.Session, error) {
	rows, err := e.query(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE parent_id = $1 AND parent_id <> ''
		ORDER BY started_at, id`, parentID)
	if err != nil {
		return nil, e.interpretError(err, "listing subagents")
	}
	return e.collectSessions(rows, "listing subagents")
}

func (e executor) collectSessions(rows *sql.Rows, doing string) ([]logbook.Session, error) {
	defer rows.Close()
	sessions := []logbook.Session{}
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, e.interpretError(err, doing)
		}
		sessions = append(sessions, s)
	}
	return sessions, e.interpretError(rows.Err(), doing)
}

func (e executor) SessionTimeOut(ctx context.Context, cutoff, now time.Time) ([]logbook.Session, error) {
	rows, err := e.query(ctx, `UPDATE sessions SET status = 'ended', end_reason = $2,
		closed_at = COALESCE(closed_at, $3)
		WHERE status = 'active' AND last_seen_at < $1
		RETURNING `+sessionColumns, micros(cutoff), logbook.EndReasonTimedOut, micros(now))
	if err != nil {
		return nil, e.interpretError(err, "timing out sessions")
	}
	return e.collectSessions(rows, "timing out sessions")
}
