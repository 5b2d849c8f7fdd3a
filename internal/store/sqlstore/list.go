package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// query builds one SQL statement with numbered placeholders.
type query struct {
	where []string
	args  []any
}

// arg adds a value and returns its placeholder.
func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
}

func (q *query) and(cond string) { q.where = append(q.where, cond) }

// whereSQL is the conditions joined with AND.
func (q *query) whereSQL() string { return strings.Join(q.where, " AND ") }

// prefixEnd returns the smallest string greater than every string that
// starts with prefix, so `value >= prefix AND value < prefixEnd(prefix)` is
// a prefix match an index can serve.
func prefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\xff\xff\xff\xff"
}

// durationExpr is a session's duration in seconds at now (a placeholder):
// closed_at − started_at when ended, now − started_at while open.
func durationExpr(now string) string {
	return `((CASE WHEN s.status = 'ended' AND s.closed_at IS NOT NULL THEN s.closed_at ELSE ` + now + ` END) - s.started_at) / 1000000`
}

// sortExpr is the column a list is ordered by.
func sortExpr(sort logbook.SessionSort, now string) string {
	switch sort {
	case logbook.SortStarted:
		return "s.started_at"
	case logbook.SortDuration:
		return durationExpr(now)
	default:
		return "s.last_seen_at"
	}
}

func (e executor) SessionList(ctx context.Context, p store.SessionListParams) ([]logbook.Session, error) {
	e = e.forReadAcross(ctx)
	stmt, args, err := e.sessionListSQL(ctx, p)
	if err != nil {
		return nil, err
	}
	if p.Filter.Query != "" {
		args = e.freshPlan(args)
	}
	rows, err := e.query(ctx, stmt, args...)
	if err != nil {
		return nil, e.interpretError(err, "listing sessions")
	}
	defer rows.Close()
	sessions := []logbook.Session{}
	for rows.Next() {
		var extra [2]int64
		s, err := scanSession(rows, &extra[0], &extra[1])
		if err != nil {
			return nil, e.interpretError(err, "listing sessions")
		}
		s.SubagentCount, s.DurationSeconds = extra[0], extra[1]
		sessions = append(sessions, s)
	}
	return sessions, e.interpretError(rows.Err(), "listing sessions")
}

// sessionListSQL builds the one statement a page of sessions takes. With
// a search (Filter.Query), it first asks how many sessions match it.
func (e executor) sessionListSQL(ctx context.Context, p store.SessionListParams) (string, []any, error) {
	q := &query{}
	now := q.arg(micros(p.Now))
	project := q.arg(p.Project)
	q.and("s.project = " + project)
	filterSessions(q, p.Filter, project, now, p.IdleBefore)
	if p.Filter.Query != "" {
		cond, err := e.sessionQueryCondition(ctx, q, p.Project, p.Filter.Query)
		if err != nil {
			return "", nil, err
		}
		q.and(cond)
	}
	order := sortExpr(p.Sort, now)
	if p.After != nil {
		v, id := q.arg(p.After.Value), q.arg(p.After.ID)
		q.and("(" + order + " < " + v + " OR (" + order + " = " + v + " AND s.id < " + id + "))")
	}
	// The page's ids first, then their rows and subagent counts: a filter
	// that matches many sessions (an issue named by hundreds) sorts only
	// ids, not whole rows each with a count of its subagents.
	return `SELECT ` + prefixed("s.", sessionColumns) + `,
		(SELECT COUNT(*) FROM sessions c WHERE c.parent_id = s.id AND c.parent_id <> '') AS subagent_count,
		` + durationExpr(now) + ` AS duration_seconds
		FROM sessions s WHERE s.id IN (SELECT s.id FROM sessions s WHERE ` + q.whereSQL() + `
			ORDER BY ` + order + ` DESC, s.id DESC LIMIT ` + q.arg(p.Limit) + `)
		ORDER BY ` + order + ` DESC, s.id DESC`, q.args, nil
}

// ExplainSessionList returns the engine's query plan for a page of
// sessions, for BENCHMARKS.md and for checking that each filter stays an
// index scan.
func (s *Store) ExplainSessionList(ctx context.Context, p store.SessionListParams) (string, error) {
	stmt, args, err := s.sessionListSQL(ctx, p)
	if err != nil {
		return "", err
	}
	rows, err := s.db.QueryContext(ctx, s.d.ExplainPrefix+stmt, args...)
	if err != nil {
		return "", s.interpretError(err, "explaining the session list")
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var plan strings.Builder
	for rows.Next() {
		values := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range values {
			ptrs[i] = &values[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		line := fmt.Sprint(values[len(values)-1]) // the plan text is the last column in both engines
		plan.WriteString(line + "\n")
	}
	return plan.String(), rows.Err()
}

// filterSessions adds a filter's conditions to q.
func filterSessions(q *query, f logbook.SessionFilter, project, now string, idleBefore time.Time) {
	switch f.State {
	case logbook.StateActive:
		q.and("s.status = 'active' AND s.last_seen_at >= " + q.arg(micros(idleBefore)))
	case logbook.StateIdle:
		q.and("s.status = 'active' AND s.last_seen_at < " + q.arg(micros(idleBefore)))
	case logbook.StateEnded:
		q.and("s.status = 'ended'")
	}
	for _, eq := range []struct{ column, value string }{
		{"s.outcome", string(f.Outcome)}, {"s.blocker", string(f.Blocker)}, {"s.harness", f.Harness},
		{"s.actor", f.Actor}, {"s.agent", f.Agent}, {"s.subject", f.Subject},
	} {
		if eq.value != "" {
			// "<> ''" lets the planner use the column's partial index
			// (WHERE column <> ''): it cannot tell from a bound value alone.
			q.and(eq.column + " = " + q.arg(eq.value) + " AND " + eq.column + " <> ''")
		}
	}
	switch {
	case f.ParentID != "":
		q.and("s.parent_id = " + q.arg(f.ParentID) + " AND s.parent_id <> ''")
	case !f.Subagents:
		q.and("s.parent_id = ''")
	}
	if f.Issue != "" {
		// IN over an uncorrelated subquery, not EXISTS: the planner can
		// start from the links of that issue (an index) instead of walking
		// every session of the project.
		q.and("s.id IN (SELECT l.session_id FROM links l WHERE l.project = " + project + " AND l.kind = 'issue' AND l.ref = " + q.arg(f.Issue) + ")")
	}
	if f.Pull != "" {
		ref := q.arg(f.Pull)
		// Attached or named, or on the branch of a session attached to the pull.
		q.and("(s.id IN (SELECT l.session_id FROM links l WHERE l.project = " + project + " AND l.kind = 'pull' AND l.ref = " + ref + ")" +
			" OR (s.branch <> '' AND s.branch IN (SELECT b.branch FROM sessions b WHERE b.project = " + project + " AND b.pull = " + ref + " AND b.pull <> '' AND b.branch <> '')))")
	}
	if f.Path != "" {
		if strings.HasSuffix(f.Path, "/") {
			// A folder is touched by many sessions: walk them in list order
			// and stop at a page, probing each one's touches.
			q.and("EXISTS (SELECT 1 FROM touches t WHERE t.session_id = s.id AND t.kind = 'file' AND t.value >= " +
				q.arg(f.Path) + " AND t.value < " + q.arg(prefixEnd(f.Path)) + ")")
		} else {
			// One file is touched by few: start from them.
			q.and("s.id IN (SELECT t.session_id FROM touches t WHERE t.project = " + project + " AND t.kind = 'file' AND t.value = " + q.arg(f.Path) + ")")
		}
	}
	if !f.Since.IsZero() { // active at some point in [since, until]
		q.and("s.last_seen_at >= " + q.arg(micros(f.Since)))
	}
	if !f.Until.IsZero() {
		q.and("s.started_at <= " + q.arg(micros(f.Until)))
	}
	if f.MinDuration > 0 {
		q.and(durationExpr(now) + " >= " + q.arg(int64(f.MinDuration/time.Second)))
	}
	if f.MinToolCalls > 0 {
		q.and("s.tool_call_count >= " + q.arg(f.MinToolCalls))
	}
}

// prefixed qualifies every column of a comma-separated list with a table alias.
func prefixed(alias, columns string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = alias + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

func (e executor) SessionListPrior(ctx context.Context, p store.SessionListPriorParams) ([]logbook.Session, error) {
	rows, err := e.query(ctx, `SELECT `+sessionColumns+` FROM sessions
		WHERE project = $1 AND closed_at IS NOT NULL AND closed_at >= $2 AND outcome IN ('partial', 'failed') AND id <> $3
		ORDER BY closed_at DESC, id DESC LIMIT $4`, p.Project, micros(p.Since), p.ExcludeID, p.Limit)
	if err != nil {
		return nil, e.interpretError(err, "listing prior sessions")
	}
	return e.collectSessions(rows, "listing prior sessions")
}
