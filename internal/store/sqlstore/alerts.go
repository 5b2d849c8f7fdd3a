package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// Alerts: the rules, the outbox of the alerts they raise and its delivery
// log (migration 0023).

const alertRuleColumns = `id, project, name, kind, threshold, webhook_url, format, secret, created_at, budget_micros, scope`

// scanAlertRule is the one place an alert_rules row becomes a
// logbook.AlertRule.
func scanAlertRule(row rowScanner) (logbook.AlertRule, error) {
	var r logbook.AlertRule
	var created int64
	err := row.Scan(&r.ID, &r.Project, &r.Name, &r.Kind, &r.Threshold, &r.WebhookURL, &r.Format, &r.Secret, &created,
		&r.BudgetMicros, &r.Scope)
	r.CreatedAt, r.BudgetUSD = fromMicros(created), float64(r.BudgetMicros)/1e6
	return r, err
}

func (e executor) AlertRuleInsert(ctx context.Context, r *logbook.AlertRule) error {
	_, err := e.exec(ctx, `INSERT INTO alert_rules (`+alertRuleColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		r.ID, r.Project, r.Name, string(r.Kind), r.Threshold, r.WebhookURL, string(r.Format), r.Secret, micros(r.CreatedAt),
		r.BudgetMicros, string(r.Scope))
	return e.interpretError(err, "storing alert rule")
}

func (e executor) AlertRuleGet(ctx context.Context, id string) (logbook.AlertRule, error) {
	r, err := scanAlertRule(e.queryRow(ctx, `SELECT `+alertRuleColumns+` FROM alert_rules WHERE id = $1`, id))
	return r, e.interpretError(err, "reading alert rule")
}

func (e executor) AlertRuleList(ctx context.Context, p store.AlertRuleListParams) ([]logbook.AlertRule, error) {
	query := `SELECT ` + alertRuleColumns + ` FROM alert_rules WHERE ($1 = '' OR project = $1) AND ($2 = '' OR kind = $2) ORDER BY created_at, id`
	rows, err := e.query(ctx, query, p.Project, string(p.Kind))
	if err != nil {
		return nil, e.interpretError(err, "listing alert rules")
	}
	defer rows.Close()
	rules := []logbook.AlertRule{}
	for rows.Next() {
		r, err := scanAlertRule(rows)
		if err != nil {
			return nil, e.interpretError(err, "listing alert rules")
		}
		rules = append(rules, r)
	}
	return rules, e.interpretError(rows.Err(), "listing alert rules")
}

func (e executor) AlertRuleDelete(ctx context.Context, id string) error {
	if _, err := e.exec(ctx, `DELETE FROM alert_attempts WHERE alert_id IN (SELECT id FROM alerts WHERE rule_id = $1)`, id); err != nil {
		return e.interpretError(err, "deleting alert rule")
	}
	if _, err := e.exec(ctx, `DELETE FROM alerts WHERE rule_id = $1`, id); err != nil {
		return e.interpretError(err, "deleting alert rule")
	}
	res, err := e.exec(ctx, `DELETE FROM alert_rules WHERE id = $1`, id)
	if err != nil {
		return e.interpretError(err, "deleting alert rule")
	}
	return e.expectOne(res, "deleting alert rule")
}

func (e executor) AlertInsert(ctx context.Context, a *logbook.Alert) (bool, error) {
	var details sql.NullString
	if len(a.Details) > 0 {
		details = sql.NullString{String: string(a.Details), Valid: true}
	}
	res, err := e.exec(ctx, `INSERT INTO alerts (id, rule_id, project, kind, subject, session_id, summary, details, raised_at, status, attempts, next_attempt_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, $9) ON CONFLICT (rule_id, subject) DO NOTHING`,
		a.ID, a.RuleID, a.Project, string(a.Kind), a.Subject, a.SessionID, a.Summary, details, micros(a.RaisedAt), string(logbook.AlertPending))
	if err != nil {
		return false, e.interpretError(err, "storing alert")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, e.interpretError(err, "storing alert")
	}
	if n == 1 {
		a.Status, a.NextAttemptAt = logbook.AlertPending, &a.RaisedAt
	}
	return n == 1, nil
}

const alertColumns = `id, rule_id, project, kind, subject, session_id, summary, details, raised_at, status, attempts, next_attempt_at, delivered_at`

// scanAlert is the one place an alerts row becomes a logbook.Alert.
func scanAlert(row rowScanner) (logbook.Alert, error) {
	var a logbook.Alert
	var details sql.NullString
	var raised, next int64
	var delivered sql.NullInt64
	if err := row.Scan(&a.ID, &a.RuleID, &a.Project, &a.Kind, &a.Subject, &a.SessionID, &a.Summary, &details,
		&raised, &a.Status, &a.Attempts, &next, &delivered); err != nil {
		return a, err
	}
	if details.Valid {
		a.Details = []byte(details.String)
	}
	a.RaisedAt, a.DeliveredAt = fromMicros(raised), fromNullMicros(delivered)
	if a.Status == logbook.AlertPending {
		t := fromMicros(next)
		a.NextAttemptAt = &t
	}
	return a, nil
}

func (e executor) AlertClaimDue(ctx context.Context, now, leaseUntil time.Time, limit int) ([]logbook.Alert, error) {
	// A lease is next_attempt_at moved to its end: the alert is not due
	// again until then, when another deliverer may take it (this one
	// having died). On PostgreSQL, SKIP LOCKED passes over the rows a
	// concurrent claim is taking, and the condition is checked again on
	// the row once locked, so an alert is leased once.
	rows, err := e.query(ctx, `UPDATE alerts SET next_attempt_at = $2 WHERE id IN (
			SELECT id FROM alerts WHERE status = 'pending' AND next_attempt_at <= $1
			ORDER BY next_attempt_at, id LIMIT $3`+e.d.ForUpdateSkipLocked+`)
		AND status = 'pending' AND next_attempt_at <= $1
		RETURNING `+alertColumns, micros(now), micros(leaseUntil), limit)
	if err != nil {
		return nil, e.interpretError(err, "claiming alerts")
	}
	defer rows.Close()
	alerts := []logbook.Alert{}
	for rows.Next() {
		a, err := scanAlert(rows)
		if err != nil {
			return nil, e.interpretError(err, "claiming alerts")
		}
		alerts = append(alerts, a)
	}
	return alerts, e.interpretError(rows.Err(), "claiming alerts")
}

func (e executor) AlertFinish(ctx context.Context, p store.AlertFinishParams) (bool, error) {
	var delivered sql.NullInt64
	if p.Status == logbook.AlertDelivered {
		delivered = sql.NullInt64{Int64: micros(p.Attempt.At), Valid: true}
	}
	next := p.NextAttemptAt
	if p.Status != logbook.AlertPending {
		next = p.Attempt.At // no attempt is due; kept only so the column holds a time
	}
	var n int64
	err := e.queryRow(ctx, `UPDATE alerts SET status = $3, attempts = attempts + 1, next_attempt_at = $4, delivered_at = $5
		WHERE id = $1 AND status = 'pending' AND next_attempt_at = $2 RETURNING attempts`,
		p.ID, micros(p.Lease), string(p.Status), micros(next), delivered).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, e.interpretError(err, "recording an alert's delivery")
	}
	_, err = e.exec(ctx, `INSERT INTO alert_attempts (alert_id, n, at, status_code, error, duration_ms) VALUES ($1, $2, $3, $4, $5, $6)`,
		p.ID, n, micros(p.Attempt.At), p.Attempt.StatusCode, p.Attempt.Error, p.Attempt.DurationMS)
	return err == nil, e.interpretError(err, "recording an alert's delivery")
}

func (e executor) AlertList(ctx context.Context, p store.AlertListParams) ([]logbook.Alert, error) {
	rows, err := e.query(ctx, `SELECT `+alertColumns+` FROM alerts WHERE project = $1 AND ($2 = '' OR rule_id = $2)
		ORDER BY raised_at DESC, id DESC LIMIT $3`, p.Project, p.RuleID, p.Limit)
	if err != nil {
		return nil, e.interpretError(err, "listing alerts")
	}
	alerts := []logbook.Alert{}
	for rows.Next() {
		a, err := scanAlert(rows)
		if err != nil {
			rows.Close()
			return nil, e.interpretError(err, "listing alerts")
		}
		alerts = append(alerts, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(alerts) == 0 {
		return alerts, e.interpretError(err, "listing alerts")
	}
	// Their delivery logs, in one query (SQLite's one connection is free
	// again once the rows above are closed).
	at := make(map[string]int, len(alerts))
	list := make([]string, len(alerts))
	args := make([]any, len(alerts))
	for i, a := range alerts {
		at[a.ID] = i
		list[i] = "$" + strconv.Itoa(i+1)
		args[i] = a.ID
	}
	logRows, err := e.query(ctx, `SELECT alert_id, at, status_code, error, duration_ms FROM alert_attempts
		WHERE alert_id IN (`+strings.Join(list, ", ")+`) ORDER BY alert_id, n`, args...)
	if err != nil {
		return nil, e.interpretError(err, "listing alert attempts")
	}
	defer logRows.Close()
	for logRows.Next() {
		var id string
		var when int64
		var att logbook.AlertAttempt
		if err := logRows.Scan(&id, &when, &att.StatusCode, &att.Error, &att.DurationMS); err != nil {
			return nil, e.interpretError(err, "listing alert attempts")
		}
		att.At = fromMicros(when)
		alerts[at[id]].Log = append(alerts[at[id]].Log, att)
	}
	return alerts, e.interpretError(logRows.Err(), "listing alert attempts")
}

func (e executor) SessionListIdleClaiming(ctx context.Context, project string, seenBefore, now time.Time, limit int) ([]logbook.IdleClaimer, error) {
	rows, err := e.query(ctx, `SELECT s.id, s.actor, s.title, s.last_seen_at, c.subject
		FROM (SELECT id, actor, title, last_seen_at FROM sessions
			WHERE project = $1 AND status = 'active' AND last_seen_at < $2
			AND EXISTS (SELECT 1 FROM claims WHERE claims.session_id = sessions.id AND released_at IS NULL AND expires_at > $3)
			ORDER BY last_seen_at, id LIMIT $4) s
		JOIN claims c ON c.session_id = s.id AND c.released_at IS NULL AND c.expires_at > $3
		ORDER BY s.last_seen_at, s.id, c.subject`, project, micros(seenBefore), micros(now), limit)
	if err != nil {
		return nil, e.interpretError(err, "listing idle sessions holding claims")
	}
	defer rows.Close()
	out := []logbook.IdleClaimer{}
	for rows.Next() {
		var c logbook.IdleClaimer
		var seen int64
		var subject string
		if err := rows.Scan(&c.SessionID, &c.Actor, &c.Title, &seen, &subject); err != nil {
			return nil, e.interpretError(err, "listing idle sessions holding claims")
		}
		if n := len(out); n > 0 && out[n-1].SessionID == c.SessionID {
			out[n-1].Subjects = append(out[n-1].Subjects, subject)
			continue
		}
		c.LastSeenAt, c.Subjects = fromMicros(seen), []string{subject}
		out = append(out, c)
	}
	return out, e.interpretError(rows.Err(), "listing idle sessions holding claims")
}

func (e executor) EntryLastToolCalls(ctx context.Context, sessionID string, n int) ([]logbook.Entry, error) {
	rows, err := e.query(ctx, `SELECT `+entryColumns+` FROM entries WHERE session_id = $1 AND kind = 'tool_call'
		ORDER BY seq DESC LIMIT $2`, sessionID, n)
	if err != nil {
		return nil, e.interpretError(err, "listing a session's last tool calls")
	}
	defer rows.Close()
	entries := []logbook.Entry{}
	for rows.Next() {
		en, err := scanEntry(rows)
		if err != nil {
			return nil, e.interpretError(err, "listing a session's last tool calls")
		}
		entries = append(entries, en)
	}
	return entries, e.interpretError(rows.Err(), "listing a session's last tool calls")
}
