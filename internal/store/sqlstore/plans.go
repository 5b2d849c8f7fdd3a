package sqlstore

import (
	"context"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

func (e executor) PlanReplace(ctx context.Context, sessionID string, steps []logbook.PlanStep) error {
	if _, err := e.exec(ctx, `DELETE FROM plan_steps WHERE session_id = $1`, sessionID); err != nil {
		return e.interpretError(err, "clearing plan")
	}
	for _, st := range steps {
		if _, err := e.exec(ctx, `INSERT INTO plan_steps (session_id, n, text, status, updated_at) VALUES ($1, $2, $3, $4, $5)`,
			sessionID, st.N, st.Text, string(st.Status), micros(st.UpdatedAt)); err != nil {
			return e.interpretError(err, "storing plan step")
		}
	}
	return nil
}

func (e executor) PlanList(ctx context.Context, sessionID string) ([]logbook.PlanStep, error) {
	rows, err := e.query(ctx, `SELECT n, text, status, updated_at FROM plan_steps WHERE session_id = $1 ORDER BY n`, sessionID)
	if err != nil {
		return nil, e.interpretError(err, "reading plan")
	}
	defer rows.Close()
	steps := []logbook.PlanStep{}
	for rows.Next() {
		var st logbook.PlanStep
		var at int64
		if err := rows.Scan(&st.N, &st.Text, &st.Status, &at); err != nil {
			return nil, e.interpretError(err, "reading plan")
		}
		st.UpdatedAt = fromMicros(at)
		steps = append(steps, st)
	}
	return steps, e.interpretError(rows.Err(), "reading plan")
}

func (e executor) PlanStepUpdate(ctx context.Context, sessionID string, n int, status logbook.StepStatus, at time.Time) error {
	res, err := e.exec(ctx, `UPDATE plan_steps SET status = $3, updated_at = $4 WHERE session_id = $1 AND n = $2`,
		sessionID, n, string(status), micros(at))
	if err != nil {
		return e.interpretError(err, "updating plan step")
	}
	return e.expectOne(res, "updating plan step")
}

func (e executor) PlanCloseInFlight(ctx context.Context, sessionID string, status logbook.StepStatus, at time.Time) error {
	return e.writingOther().writeLater(ctx, piped{statement: statement{`UPDATE plan_steps SET status = $2, updated_at = $3
		WHERE session_id = $1 AND status IN ('pending', 'running')`, []any{sessionID, string(status), micros(at)}}, doing: "closing plan steps"})
}

func (e executor) AgentEnsure(ctx context.Context, project, name string, now time.Time) error {
	_, err := e.exec(ctx, `INSERT INTO agents (project, name, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (project, name) DO NOTHING`, project, name, micros(now))
	return e.interpretError(err, "ensuring agent")
}

func (e executor) AgentGet(ctx context.Context, p store.AgentGetParams) (logbook.Agent, error) {
	query := `SELECT project, name, current_session_id, generation, created_at, rotate_max_age_seconds, rotate_max_input_tokens
		FROM agents WHERE project = $1 AND name = $2`
	if p.ForUpdate {
		query += e.d.ForUpdate
	}
	var a logbook.Agent
	var created int64
	err := e.queryRow(ctx, query, p.Project, p.Name).Scan(&a.Project, &a.Name, &a.CurrentSessionID, &a.Generation, &created,
		&a.Policy.MaxAgeSeconds, &a.Policy.MaxInputTokens)
	a.CreatedAt = fromMicros(created)
	return a, e.interpretError(err, "reading agent")
}

func (e executor) AgentUpdate(ctx context.Context, a *logbook.Agent) error {
	res, err := e.exec(ctx, `UPDATE agents SET current_session_id = $3, generation = $4,
		rotate_max_age_seconds = $5, rotate_max_input_tokens = $6 WHERE project = $1 AND name = $2`,
		a.Project, a.Name, a.CurrentSessionID, a.Generation, a.Policy.MaxAgeSeconds, a.Policy.MaxInputTokens)
	if err != nil {
		return e.interpretError(err, "updating agent")
	}
	return e.expectOne(res, "updating agent")
}
