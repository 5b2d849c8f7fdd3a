package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// sessionColumns lists a session row's columns in the order scanSession reads them.
const sessionColumns = `id, project, actor, harness, harness_session_id, parent_id, agent,
	title, given_title, goal, task, prompt, model, agent_type, issue, pull, branch,
	head_commit, subject, status, outcome, blocker, end_reason, result,
	started_at, last_seen_at, closed_at, entry_count, message_count, tool_call_count,
	input_tokens, output_tokens, first_assistant, last_assistant, root_id, progressed_at,
	unannounced, announced_at, cost_micros`

type rowScanner interface{ Scan(dest ...any) error }

// scanSession is the one place a session row becomes a logbook.Session.
// extra receives columns a query selects after the session's own.
func scanSession(row rowScanner, extra ...any) (logbook.Session, error) {
	var s logbook.Session
	var started, seen, progressed, announced int64
	var closed sql.NullInt64
	dest := []any{&s.ID, &s.Project, &s.Actor, &s.Harness, &s.HarnessSessionID, &s.ParentID, &s.Agent,
		&s.Title, &s.GivenTitle, &s.Goal, &s.Task, &s.Prompt, &s.Model, &s.AgentType, &s.Issue, &s.Pull, &s.Branch,
		&s.HeadCommit, &s.Subject, &s.Status, &s.Outcome, &s.Blocker, &s.EndReason, &s.Result,
		&started, &seen, &closed, &s.EntryCount, &s.MessageCount, &s.ToolCallCount,
		&s.InputTokens, &s.OutputTokens, &s.FirstAssistant, &s.LastAssistant, &s.RootID, &progressed,
		&s.Unannounced, &announced, &s.CostMicros}
	err := row.Scan(append(dest, extra...)...)
	s.StartedAt, s.LastSeenAt, s.ClosedAt = fromMicros(started), fromMicros(seen), fromNullMicros(closed)
	s.ProgressedAt, s.AnnouncedAt = fromMicros(progressed), fromMicros(announced)
	return s, err
}

func (e executor) SessionInsert(ctx context.Context, s *logbook.Session) (inserted bool, err error) {
	if e.tx == nil { // the rollups change with the session, in one transaction
		err = e.root.inTx(ctx, func(e executor) error { inserted, err = e.SessionInsert(ctx, s); return err })
		return inserted, err
	}
	res, err := e.exec(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES (
		$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
		$21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37, $38, $39)
		ON CONFLICT (project, actor, harness, harness_session_id) WHERE harness_session_id <> '' DO NOTHING`,
		s.ID, s.Project, s.Actor, s.Harness, s.HarnessSessionID, s.ParentID, s.Agent,
		s.Title, s.GivenTitle, s.Goal, s.Task, s.Prompt, s.Model, s.AgentType, s.Issue, s.Pull, s.Branch,
		s.HeadCommit, s.Subject, s.Status, s.Outcome, s.Blocker, s.EndReason, s.Result,
		micros(s.StartedAt), micros(s.LastSeenAt), nullMicros(s.ClosedAt), s.EntryCount, s.MessageCount, s.ToolCallCount,
		s.InputTokens, s.OutputTokens, s.FirstAssistant, s.LastAssistant, s.RootID, micros(s.ProgressedAt),
		s.Unannounced, micros(s.AnnouncedAt), s.CostMicros)
	if err != nil {
		return false, e.interpretError(err, "inserting session")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, e.interpretError(err, "inserting session")
	}
	if n == 1 {
		e.knownSession(s, true)
		f := factsOf(s)
		e.stats.change(nil, &f)
		if err := e.indexSession(ctx, s); err != nil {
			return false, err
		}
	}
	return n == 1, nil
}

func (e executor) SessionGet(ctx context.Context, p store.SessionGetParams) (logbook.Session, error) {
	if s, ok := e.txRows.get(p.ID); ok {
		return s, e.checkCached(ctx, s)
	}
	query := `SELECT ` + sessionColumns + ` FROM sessions WHERE id = $1`
	if p.ForUpdate {
		query += e.d.ForUpdate
	}
	s, err := scanSession(e.queryRow(ctx, query, p.ID))
	if err != nil {
		return s, e.interpretError(err, "reading session")
	}
	e.knownSession(&s, p.ForUpdate)
	return s, nil
}

func (e executor) SessionGetByHarnessID(ctx context.Context, p store.SessionGetByHarnessIDParams) (logbook.Session, error) {
	query := `SELECT ` + sessionColumns + ` FROM sessions
		WHERE project = $1 AND actor = $2 AND harness = $3 AND harness_session_id = $4 AND harness_session_id <> ''`
	if p.ForUpdate {
		query += e.d.ForUpdate
	}
	s, err := scanSession(e.queryRow(ctx, query, p.Project, p.Actor, p.Harness, p.HarnessSessionID))
	if err != nil {
		return s, e.interpretError(err, "reading session by harness id")
	}
	e.knownSession(&s, p.ForUpdate)
	return s, nil
}

// sessionWritable lists the columns SessionUpdate writes.
var sessionWritable = []sessionColumn{
	column("parent_id", func(s *logbook.Session) string { return s.ParentID }),
	column("agent", func(s *logbook.Session) string { return s.Agent }),
	column("title", func(s *logbook.Session) string { return s.Title }),
	column("given_title", func(s *logbook.Session) string { return s.GivenTitle }),
	column("goal", func(s *logbook.Session) string { return s.Goal }),
	column("task", func(s *logbook.Session) string { return s.Task }),
	column("prompt", func(s *logbook.Session) string { return s.Prompt }),
	column("model", func(s *logbook.Session) string { return s.Model }),
	column("agent_type", func(s *logbook.Session) string { return s.AgentType }),
	column("issue", func(s *logbook.Session) string { return string(s.Issue) }),
	column("pull", func(s *logbook.Session) string { return string(s.Pull) }),
	column("branch", func(s *logbook.Session) string { return s.Branch }),
	column("head_commit", func(s *logbook.Session) string { return s.HeadCommit }),
	column("subject", func(s *logbook.Session) string { return s.Subject }),
	column("status", func(s *logbook.Session) string { return string(s.Status) }),
	column("outcome", func(s *logbook.Session) string { return string(s.Outcome) }),
	column("blocker", func(s *logbook.Session) string { return string(s.Blocker) }),
	column("end_reason", func(s *logbook.Session) string { return s.EndReason }),
	column("result", func(s *logbook.Session) string { return s.Result }),
	column("last_seen_at", func(s *logbook.Session) int64 { return micros(s.LastSeenAt) }),
	column("closed_at", func(s *logbook.Session) sql.NullInt64 { return nullMicros(s.ClosedAt) }),
	column("entry_count", func(s *logbook.Session) int64 { return s.EntryCount }),
	column("message_count", func(s *logbook.Session) int64 { return s.MessageCount }),
	column("tool_call_count", func(s *logbook.Session) int64 { return s.ToolCallCount }),
	column("input_tokens", func(s *logbook.Session) int64 { return s.InputTokens }),
	column("output_tokens", func(s *logbook.Session) int64 { return s.OutputTokens }),
	column("cost_micros", func(s *logbook.Session) int64 { return s.CostMicros }),
	column("first_assistant", func(s *logbook.Session) string { return s.FirstAssistant }),
	column("last_assistant", func(s *logbook.Session) string { return s.LastAssistant }),
	column("progressed_at", func(s *logbook.Session) int64 { return micros(s.ProgressedAt) }),
	column("unannounced", func(s *logbook.Session) int64 { return s.Unannounced }),
	column("announced_at", func(s *logbook.Session) int64 { return micros(s.AnnouncedAt) }),
}

// sessionColumn is a column SessionUpdate writes: whether two sessions
// differ in it, and the value to store. Comparing typed values, not boxed
// ones, spares an update an allocation for every column it leaves alone.
type sessionColumn struct {
	name    string
	differs func(a, b *logbook.Session) bool
	value   func(*logbook.Session) any
}

func column[T comparable](name string, get func(*logbook.Session) T) sessionColumn {
	return sessionColumn{
		name:    name,
		differs: func(a, b *logbook.Session) bool { return get(a) != get(b) },
		value:   func(s *logbook.Session) any { return get(s) },
	}
}

// SessionUpdate writes the columns of s that differ from was, or every
// one when was is nil. Writing only what changed matters for speed: the
// engines rewrite every index that holds a column named in SET, and a
// heartbeat changes a few counters of a row that many indexes cover.
func (e executor) SessionUpdate(ctx context.Context, s, was *logbook.Session) error {
	if e.tx == nil { // the rollups change with the session, in one transaction
		return e.root.inTx(ctx, func(e executor) error { return e.SessionUpdate(ctx, s, was) })
	}
	if !sessionChanged(s, was) {
		return nil // nothing changed since was was read in this transaction
	}
	var old, now statsFacts
	counted := statsChanged(s, was)
	if counted {
		var err error
		if old, err = e.oldStats(ctx, s.ID, was); err != nil {
			return err
		}
		now = old
		now.setMutable(s)
	}
	held := false
	if e.held != nil {
		var before, row *logbook.Session
		if before, row, held = e.txRows.locked(s, was); held {
			e.held.holdSession(before, row) // written with the group's other rows (see heldWrites)
		}
	}
	if !held {
		if err := e.updateSessionColumns(ctx, s, was); err != nil {
			return err
		}
		e.txRows.updated(s, was)
	}
	if counted {
		e.stats.change(&old, &now)
	}
	if searchChanged(s, was) {
		return e.indexSession(ctx, s)
	}
	return nil
}

// sessionChanged reports whether SessionUpdate(s, was) has a column to write.
func sessionChanged(s, was *logbook.Session) bool {
	if was == nil {
		return true
	}
	for _, c := range sessionWritable {
		if c.differs(s, was) {
			return true
		}
	}
	return false
}

// updateSessionColumns writes the columns of s that differ from was (every
// one when was is nil) in one UPDATE of its row.
func (e executor) updateSessionColumns(ctx context.Context, s, was *logbook.Session) error {
	update, ok := sessionUpdate(s, was)
	if !ok {
		return nil
	}
	return e.execPiped(ctx, []piped{update})
}

// sessionUpdate is the UPDATE of the columns of s that differ from was
// (every one when was is nil); false when none does.
func sessionUpdate(s, was *logbook.Session) (piped, bool) {
	var set strings.Builder
	args := []any{s.ID}
	for _, c := range sessionWritable {
		if was != nil && !c.differs(s, was) {
			continue
		}
		args = append(args, c.value(s))
		if set.Len() > 0 {
			set.WriteString(", ")
		}
		set.WriteString(c.name + " = $" + strconv.Itoa(len(args)))
	}
	if set.Len() == 0 {
		return piped{}, false
	}
	return piped{statement: statement{"UPDATE sessions SET " + set.String() + " WHERE id = $1", args}, doing: "updating session", one: true}, true
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
	defer e.changingSessions()()
	_, err := e.exec(ctx, `UPDATE sessions SET last_seen_at = $2
		WHERE id = $1 AND status = 'active' AND last_seen_at < $2`, id, micros(at))
	if err != nil {
		return e.interpretError(err, "marking session seen")
	}
	e.txRows.markedSeen(id, at)
	return nil
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

func (e executor) SessionListUnannounced(ctx context.Context) ([]string, error) {
	// Active sessions are few (the rest have ended or timed out), and the
	// planner walks them by sessions_active_seen. (With ORDER BY id, SQLite
	// without statistics walks every session by its primary key instead.)
	return e.queryStrings(ctx, "listing sessions with unannounced entries",
		`SELECT id FROM sessions WHERE status = 'active' AND unannounced > 0`)
}

func (e executor) SessionTimeOut(ctx context.Context, cutoff, now time.Time) (ended []logbook.Session, err error) {
	if e.tx == nil { // the rollups change with the sessions, in one transaction
		err = e.root.inTx(ctx, func(e executor) error { ended, err = e.SessionTimeOut(ctx, cutoff, now); return err })
		return ended, err
	}
	rows, err := e.query(ctx, `UPDATE sessions SET status = 'ended', end_reason = $2,
		closed_at = COALESCE(closed_at, $3)
		WHERE status = 'active' AND last_seen_at < $1
		RETURNING `+sessionColumns, micros(cutoff), logbook.EndReasonTimedOut, micros(now))
	if err != nil {
		return nil, e.interpretError(err, "timing out sessions")
	}
	ended, err = e.collectSessions(rows, "timing out sessions")
	if err != nil {
		e.txRows.forgetEverything()
		return nil, err
	}
	for _, s := range ended {
		e.knownSession(&s, true)
		now := factsOf(&s)
		was := now
		was.ended = false // it was active: its duration was not counted yet
		e.stats.change(&was, &now)
	}
	return ended, nil
}
