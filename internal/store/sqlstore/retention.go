package sqlstore

import (
	"context"
	"strconv"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// Retention: a project's policy, and what the sweeper asks to enforce it.

func (e executor) ProjectRetentionGet(ctx context.Context, name string) (logbook.Retention, error) {
	var r logbook.Retention
	err := e.queryRow(ctx, `SELECT retention_sessions_days, retention_payloads_days FROM projects WHERE name = $1`, name).
		Scan(&r.SessionsDays, &r.PayloadsDays)
	return r, e.interpretError(err, "reading retention")
}

func (e executor) ProjectRetentionSet(ctx context.Context, name string, r logbook.Retention) error {
	res, err := e.exec(ctx, `UPDATE projects SET retention_sessions_days = $2, retention_payloads_days = $3 WHERE name = $1`,
		name, r.SessionsDays, r.PayloadsDays)
	if err != nil {
		return e.interpretError(err, "storing retention")
	}
	return e.expectOne(res, "storing retention")
}

func (e executor) ProjectRetentionList(ctx context.Context) ([]logbook.ProjectRetention, error) {
	rows, err := e.query(ctx, `SELECT name, retention_sessions_days, retention_payloads_days FROM projects
		WHERE retention_sessions_days > 0 OR retention_payloads_days > 0 ORDER BY name`)
	if err != nil {
		return nil, e.interpretError(err, "listing retention")
	}
	defer rows.Close()
	out := []logbook.ProjectRetention{}
	for rows.Next() {
		var p logbook.ProjectRetention
		if err := rows.Scan(&p.Project, &p.Retention.SessionsDays, &p.Retention.PayloadsDays); err != nil {
			return nil, e.interpretError(err, "listing retention")
		}
		out = append(out, p)
	}
	return out, e.interpretError(rows.Err(), "listing retention")
}

func (e executor) SessionListTrimmable(ctx context.Context, project string, before time.Time, limit int) ([]string, error) {
	// The condition is the partial index's (migration 0017), so the walk
	// meets only sessions not trimmed yet.
	return e.queryStrings(ctx, "listing sessions to trim", `SELECT id FROM sessions
		WHERE project = $1 AND status = 'ended' AND trimmed_at IS NULL AND closed_at < $2
		ORDER BY closed_at, id LIMIT $3`, project, micros(before), limit)
}

func (e executor) SessionMarkTrimmed(ctx context.Context, id string, at time.Time) error {
	res, err := e.exec(ctx, `UPDATE sessions SET trimmed_at = $2 WHERE id = $1`, id, micros(at))
	if err != nil {
		return e.interpretError(err, "marking a session trimmed")
	}
	return e.expectOne(res, "marking a session trimmed")
}

func (e executor) EntryListTrimmable(ctx context.Context, sessionID string, limit int) ([]logbook.Entry, error) {
	// logbook.Trimmable, in SQL.
	rows, err := e.query(ctx, `SELECT `+entryColumns+` FROM entries WHERE session_id = $1 AND (
			(kind = 'tool_result' AND (text <> '' OR LENGTH(payload) > `+strconv.Itoa(logbook.MaxTrimmedPayload)+`))
			OR (kind NOT IN ('tool_result', 'summary', 'compaction') AND LENGTH(payload) > `+strconv.Itoa(logbook.LargePayload)+`))
		ORDER BY seq LIMIT $2`, sessionID, limit)
	if err != nil {
		return nil, e.interpretError(err, "listing entries to trim")
	}
	defer rows.Close()
	entries := []logbook.Entry{}
	for rows.Next() {
		en, err := scanEntry(rows)
		if err != nil {
			return nil, e.interpretError(err, "listing entries to trim")
		}
		entries = append(entries, en)
	}
	return entries, e.interpretError(rows.Err(), "listing entries to trim")
}

func (e executor) EntryUpdateContent(ctx context.Context, entries []logbook.Entry) error {
	ids := make(map[entryKey]int64, len(entries))
	for _, en := range entries {
		var payload any
		if len(en.Payload) > 0 {
			payload = string(en.Payload)
		}
		// The session names the partition the entry is in (PostgreSQL).
		res, err := e.exec(ctx, `UPDATE entries SET text = $2, payload = $3 WHERE id = $1 AND session_id = $4`, en.ID, en.Text, payload, en.SessionID)
		if err != nil {
			return e.interpretError(err, "updating entries")
		}
		if err := e.expectOne(res, "updating entries"); err != nil {
			return err
		}
		ids[entryKey{en.SessionID, en.Seq}] = en.ID
		e.noteWritten(en.SessionID)
	}
	return e.indexEntries(ctx, entries, ids, changedDocs)
}
