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

func (e executor) EntryInsert(ctx context.Context, entries []logbook.Entry) (inserted int, err error) {
	if e.held != nil {
		if n, ok := e.held.holdEntries(entries); ok {
			for _, en := range entries {
				e.noteWritten(en.SessionID)
			}
			return n, nil
		}
	}
	return e.insertEntries(ctx, entries)
}

// insertEntries inserts entries now, and indexes them.
func (e executor) insertEntries(ctx context.Context, entries []logbook.Entry) (inserted int, err error) {
	const columns = 20
	// One multi-row INSERT per chunk of rows: a batch of 500 entries is a
	// few statements, not 500 round trips. The chunk size is the engine's
	// (see Dialect.InsertRows). The ids of the rows inserted come back, for
	// the search index, written in the same transaction.
	chunk := e.d.InsertRows
	ids := make(map[entryKey]int64, len(entries))
	for start := 0; start < len(entries); start += chunk {
		part := entries[start:min(start+chunk, len(entries))]
		args := make([]any, 0, len(part)*columns)
		for _, en := range part {
			var payload, key sql.NullString
			if len(en.Payload) > 0 {
				payload = sql.NullString{String: string(en.Payload), Valid: true}
			}
			if en.Key != "" {
				key = sql.NullString{String: en.Key, Valid: true}
			}
			var in, out, cacheRead, cacheWrite, cost sql.NullInt64
			var model sql.NullString
			if u := en.Usage; u != nil {
				in, out = sql.NullInt64{Int64: u.InputTokens, Valid: true}, sql.NullInt64{Int64: u.OutputTokens, Valid: true}
				cacheRead, cacheWrite = sql.NullInt64{Int64: u.CacheReadTokens, Valid: true}, sql.NullInt64{Int64: u.CacheWriteTokens, Valid: true}
				cost, model = sql.NullInt64{Int64: u.CostMicros, Valid: true}, sql.NullString{String: u.Model, Valid: u.Model != ""}
			}
			var superseded sql.NullInt64
			if en.Superseded {
				superseded = sql.NullInt64{Int64: micros(en.At), Valid: true}
			}
			var author, authorToken sql.NullString
			if en.Author != nil {
				author = sql.NullString{String: en.Author.Actor, Valid: true}
				authorToken = sql.NullString{String: en.Author.TokenID, Valid: true}
			}
			args = append(args, en.SessionID, en.Seq, micros(en.At), string(en.Kind), en.Role, en.Text, en.Tool,
				en.ToolCallID, payload, en.Commit, key, in, out, superseded, author, authorToken, cacheRead, cacheWrite, model, cost)
		}
		query := `INSERT INTO entries (session_id, seq, at, kind, role, text, tool, tool_call_id,
			payload, commit_sha, key, input_tokens, output_tokens, superseded_at, author, author_token,
			cache_read_tokens, cache_write_tokens, usage_model, cost_micros) VALUES ` + placeholders(len(part), columns) +
			` ON CONFLICT (session_id, key) WHERE key IS NOT NULL DO NOTHING RETURNING id, session_id, seq`
		rows, err := e.query(ctx, query, args...)
		if err != nil {
			return inserted, e.interpretError(err, "inserting entries")
		}
		for rows.Next() {
			var id int64
			var k entryKey
			if err := rows.Scan(&id, &k.session, &k.seq); err != nil {
				rows.Close()
				return inserted, e.interpretError(err, "inserting entries")
			}
			ids[k] = id
			inserted++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return inserted, e.interpretError(err, "inserting entries")
		}
	}
	for _, en := range entries {
		e.noteWritten(en.SessionID)
	}
	if e.held != nil {
		e.held.inserted(entries, ids)
	}
	return inserted, e.indexEntries(ctx, entries, ids, newDocs)
}

// placeholders writes the VALUES list of a multi-row INSERT: rows groups
// of columns parameters, numbered from $1.
func placeholders(rows, columns int) string {
	var b strings.Builder
	for r := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := 1; c <= columns; c++ {
			if c > 1 {
				b.WriteString(", ")
			}
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(r*columns + c))
		}
		b.WriteByte(')')
	}
	return b.String()
}

func (e executor) EntryExistingKeys(ctx context.Context, sessionID string, keys []string) (map[string]bool, error) {
	found := map[string]bool{}
	// Chunks keep the IN list within every engine's parameter limit.
	const chunk = 500
	for start := 0; start < len(keys); start += chunk {
		part := keys[start:min(start+chunk, len(keys))]
		var b strings.Builder
		b.WriteString(`SELECT key FROM entries WHERE session_id = $1 AND key IN (`)
		args := []any{sessionID}
		for i, k := range part {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("$" + strconv.Itoa(i+2))
			args = append(args, k)
		}
		b.WriteByte(')')
		rows, err := e.query(ctx, b.String(), args...)
		if err != nil {
			return nil, e.interpretError(err, "reading entry keys")
		}
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return nil, e.interpretError(err, "reading entry keys")
			}
			found[k] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, e.interpretError(err, "reading entry keys")
		}
	}
	return found, nil
}

// entryColumns lists an entry row's columns in the order scanEntry reads them.
const entryColumns = `id, session_id, seq, at, kind, role, text, tool, tool_call_id, payload, commit_sha, key,
	input_tokens, output_tokens, superseded_at IS NOT NULL, author, author_token,
	cache_read_tokens, cache_write_tokens, usage_model, cost_micros`

// scanEntry is the one place an entry row becomes a logbook.Entry.
func scanEntry(row rowScanner) (logbook.Entry, error) {
	var en logbook.Entry
	var at int64
	var payload, key, author, authorToken sql.NullString
	var in, out, cacheRead, cacheWrite, cost sql.NullInt64
	var model sql.NullString
	if err := row.Scan(&en.ID, &en.SessionID, &en.Seq, &at, &en.Kind, &en.Role, &en.Text, &en.Tool,
		&en.ToolCallID, &payload, &en.Commit, &key, &in, &out, &en.Superseded, &author, &authorToken,
		&cacheRead, &cacheWrite, &model, &cost); err != nil {
		return en, err
	}
	if author.Valid {
		en.Author = &logbook.Author{Actor: author.String, TokenID: authorToken.String}
	}
	en.At = fromMicros(at)
	if payload.Valid {
		en.Payload = []byte(payload.String)
	}
	en.Key = key.String
	if in.Valid || out.Valid {
		en.Usage = &logbook.Usage{InputTokens: in.Int64, OutputTokens: out.Int64, CacheReadTokens: cacheRead.Int64,
			CacheWriteTokens: cacheWrite.Int64, Model: model.String, CostMicros: cost.Int64}
	}
	return en, nil
}

func (e executor) EntryList(ctx context.Context, p store.EntryListParams) ([]logbook.Entry, error) {
	e = e.forSession(ctx, p.SessionID)
	query := `SELECT ` + entryColumns + ` FROM entries WHERE session_id = $1 AND seq > $2`
	if !p.IncludeSuperseded {
		query += ` AND superseded_at IS NULL`
	}
	query += ` ORDER BY seq LIMIT $3`
	rows, err := e.query(ctx, query, p.SessionID, p.AfterSeq, p.Limit)
	if err != nil {
		return nil, e.interpretError(err, "listing entries")
	}
	defer rows.Close()
	entries := []logbook.Entry{}
	for rows.Next() {
		en, err := scanEntry(rows)
		if err != nil {
			return nil, e.interpretError(err, "listing entries")
		}
		entries = append(entries, en)
	}
	return entries, e.interpretError(rows.Err(), "listing entries")
}

func (e executor) EntryDeleteAfter(ctx context.Context, sessionID string, afterSeq int64) error {
	_, err := e.exec(ctx, `DELETE FROM entries WHERE session_id = $1 AND seq > $2`, sessionID, afterSeq)
	if e.held != nil {
		e.held.forgetKeys(sessionID)
	}
	e.noteWritten(sessionID)
	return e.interpretError(err, "taking back entries")
}

func (e executor) EntrySupersede(ctx context.Context, sessionID string, at time.Time) (int64, error) {
	res, err := e.exec(ctx, `UPDATE entries SET superseded_at = $2 WHERE session_id = $1 AND superseded_at IS NULL`,
		sessionID, micros(at))
	if err != nil {
		return 0, e.interpretError(err, "superseding entries")
	}
	e.noteWritten(sessionID)
	n, err := res.RowsAffected()
	return n, e.interpretError(err, "superseding entries")
}
