package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

func (e executor) AgentRotationInsert(ctx context.Context, project, agent string, r logbook.Rotation) error {
	_, err := e.exec(ctx, `INSERT INTO agent_rotations (project, agent, at, reason, from_session_id, to_session_id)
		VALUES ($1, $2, $3, $4, $5, $6)`, project, agent, micros(r.At), r.Reason, r.FromSessionID, r.ToSessionID)
	return e.interpretError(err, "recording rotation")
}

func (e executor) AgentRotationList(ctx context.Context, project, agent string) ([]logbook.Rotation, error) {
	rows, err := e.query(ctx, `SELECT at, reason, from_session_id, to_session_id FROM agent_rotations
		WHERE project = $1 AND agent = $2 ORDER BY at, to_session_id`, project, agent)
	if err != nil {
		return nil, e.interpretError(err, "listing rotations")
	}
	defer rows.Close()
	out := []logbook.Rotation{}
	for rows.Next() {
		var r logbook.Rotation
		var at int64
		if err := rows.Scan(&at, &r.Reason, &r.FromSessionID, &r.ToSessionID); err != nil {
			return nil, e.interpretError(err, "listing rotations")
		}
		r.At = fromMicros(at)
		out = append(out, r)
	}
	return out, e.interpretError(rows.Err(), "listing rotations")
}

const taskColumns = `project, task_id, agent, title, text, active_session_id, created_at, updated_at`

func scanTask(row rowScanner) (logbook.Task, error) {
	var t logbook.Task
	var created, updated int64
	err := row.Scan(&t.Project, &t.ID, &t.Agent, &t.Title, &t.Text, &t.ActiveSessionID, &created, &updated)
	t.CreatedAt, t.UpdatedAt = fromMicros(created), fromMicros(updated)
	return t, err
}

func (e executor) TaskGet(ctx context.Context, project, taskID string) (logbook.Task, error) {
	t, err := scanTask(e.queryRow(ctx, `SELECT `+taskColumns+` FROM agent_tasks WHERE project = $1 AND task_id = $2`, project, taskID))
	if err != nil {
		return t, e.interpretError(err, "reading task")
	}
	rows, err := e.query(ctx, `SELECT session_id FROM task_sessions WHERE project = $1 AND task_id = $2 ORDER BY since, session_id`, project, taskID)
	if err != nil {
		return t, e.interpretError(err, "reading task sessions")
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return t, e.interpretError(err, "reading task sessions")
		}
		t.Sessions = append(t.Sessions, id)
	}
	return t, e.interpretError(rows.Err(), "reading task sessions")
}

func (e executor) TaskUpsert(ctx context.Context, t *logbook.Task) error {
	_, err := e.exec(ctx, `INSERT INTO agent_tasks (`+taskColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (project, task_id) DO UPDATE SET agent = $3, title = $4, text = $5, active_session_id = $6, updated_at = $8`,
		t.Project, t.ID, t.Agent, t.Title, t.Text, t.ActiveSessionID, micros(t.CreatedAt), micros(t.UpdatedAt))
	if err != nil {
		return e.interpretError(err, "storing task")
	}
	return e.taskSessionRecord(ctx, t.Project, t.ID, t.ActiveSessionID, t.UpdatedAt)
}

func (e executor) taskSessionRecord(ctx context.Context, project, taskID, sessionID string, at time.Time) error {
	_, err := e.exec(ctx, `INSERT INTO task_sessions (project, task_id, session_id, since) VALUES ($1, $2, $3, $4)
		ON CONFLICT (project, task_id, session_id) DO NOTHING`, project, taskID, sessionID, micros(at))
	return e.interpretError(err, "recording task session")
}

func (e executor) TaskList(ctx context.Context, project, agent string) ([]logbook.Task, error) {
	rows, err := e.query(ctx, `SELECT `+taskColumns+` FROM agent_tasks WHERE project = $1 AND agent = $2 ORDER BY created_at, task_id`, project, agent)
	if err != nil {
		return nil, e.interpretError(err, "listing tasks")
	}
	defer rows.Close()
	out := []logbook.Task{}
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, e.interpretError(err, "listing tasks")
		}
		out = append(out, t)
	}
	return out, e.interpretError(rows.Err(), "listing tasks")
}

func (e executor) TaskMoveAgent(ctx context.Context, project, agent, sessionID string, now time.Time) (int64, error) {
	res, err := e.exec(ctx, `UPDATE agent_tasks SET active_session_id = $3, updated_at = $4 WHERE project = $1 AND agent = $2`,
		project, agent, sessionID, micros(now))
	if err != nil {
		return 0, e.interpretError(err, "moving tasks")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, e.interpretError(err, "moving tasks")
	}
	_, err = e.exec(ctx, `INSERT INTO task_sessions (project, task_id, session_id, since)
		SELECT project, task_id, $3, $4 FROM agent_tasks WHERE project = $1 AND agent = $2
		ON CONFLICT (project, task_id, session_id) DO NOTHING`, project, agent, sessionID, micros(now))
	return n, e.interpretError(err, "recording moved tasks")
}

func (e executor) SessionListLinked(ctx context.Context, project, kind, ref string) ([]logbook.Session, error) {
	var rows *sql.Rows
	var err error
	if kind == "subject" {
		rows, err = e.query(ctx, `SELECT `+sessionColumns+` FROM sessions
			WHERE project = $1 AND subject = $2 AND status = 'active' ORDER BY started_at, id`, project, ref)
	} else {
		rows, err = e.query(ctx, `SELECT `+sessionColumns+` FROM sessions
			WHERE project = $1 AND status = 'active' AND id IN (SELECT session_id FROM links WHERE project = $1 AND kind = $2 AND ref = $3)
			ORDER BY started_at, id`, project, kind, ref)
	}
	if err != nil {
		return nil, e.interpretError(err, "listing linked sessions")
	}
	return e.collectSessions(rows, "listing linked sessions")
}

func (e executor) SkillList(ctx context.Context, rootID string) ([]string, error) {
	// The root, and the sessions that name it as theirs (two index
	// searches; an OR here would scan every session).
	return e.queryStrings(ctx, "listing skills", `SELECT DISTINCT text FROM entries WHERE kind = 'skill' AND text <> '' AND session_id IN
		(SELECT $1 UNION ALL SELECT id FROM sessions WHERE root_id = $1 AND root_id <> '') ORDER BY text`, rootID)
}

func (e executor) SessionDeleteTree(ctx context.Context, id string) (deleted map[string]int64, err error) {
	if e.tx == nil { // the rollups change with the sessions, in one transaction
		err = e.root.inTx(ctx, func(e executor) error { deleted, err = e.SessionDeleteTree(ctx, id); return err })
		return deleted, err
	}
	// The tree: the session and every descendant (subagents keep their
	// root's id in root_id, but a subtree below a subagent is found by
	// walking parent_id).
	tree := []string{id}
	for i := 0; i < len(tree); i++ {
		rows, err := e.query(ctx, `SELECT id FROM sessions WHERE parent_id = $1 AND parent_id <> ''`, tree[i])
		if err != nil {
			return nil, e.interpretError(err, "finding subagents")
		}
		for rows.Next() {
			var child string
			if err := rows.Scan(&child); err != nil {
				rows.Close()
				return nil, e.interpretError(err, "finding subagents")
			}
			tree = append(tree, child)
		}
		rows.Close()
	}
	for _, sid := range tree {
		e.txRows.forget(sid)
	}
	deleted = map[string]int64{}
	for _, sid := range tree {
		n, err := e.deleteTouches(ctx, sid)
		if err != nil {
			return nil, err
		}
		deleted["touches"] += n
	}
	for _, table := range []string{"entries", "plan_steps", "claims", "links", "events", "task_sessions"} {
		for _, sid := range tree {
			res, err := e.exec(ctx, `DELETE FROM `+table+` WHERE session_id = $1`, sid)
			if err != nil {
				return nil, e.interpretError(err, "deleting "+table)
			}
			n, _ := res.RowsAffected()
			deleted[table] += n
		}
	}
	for i := len(tree) - 1; i >= 0; i-- { // children before parents
		f, err := scanStatsFacts(e.queryRow(ctx, `DELETE FROM sessions WHERE id = $1 RETURNING `+statsColumns, tree[i]))
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, e.interpretError(err, "deleting session")
		}
		e.stats.change(&f, nil)
		deleted["sessions"]++
	}
	if deleted["sessions"] == 0 {
		return nil, e.interpretError(sql.ErrNoRows, "deleting session")
	}
	return deleted, nil
}
