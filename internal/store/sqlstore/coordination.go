package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"hash/fnv"
	"maps"
	"slices"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// ClaimLock takes, where the engine writes side by side (Dialect.
// ClaimLockSQL), a lock on each subject and a shared lock on each folder
// above it: two subjects conflict exactly when they are the same or one
// is a folder above the other, so exactly then one transaction's lock
// waits for the other's. Claims of different files, by far the most, no
// longer wait for each other, as they did behind one lock of the project
// (holding their sessions' rows meanwhile, which stalled every write of
// those sessions). The locks are taken in the order of their keys, so two
// transactions never wait for each other; a collision of two keys only
// makes two claims wait that did not need to.
func (e executor) ClaimLock(ctx context.Context, project string, subjects []string) error {
	if e.d.ClaimLockSQL == "" || len(subjects) == 0 {
		return nil
	}
	locks, err := json.Marshal(claimLocks(project, subjects))
	if err != nil {
		return err
	}
	var n int
	err = e.queryRow(ctx, e.d.ClaimLockSQL, string(locks)).Scan(&n)
	return e.interpretError(err, "locking subjects to claim")
}

// claimLock is one lock ClaimLock takes: a key, exclusive or shared.
type claimLock struct {
	Key       int32 `json:"k"`
	Exclusive bool  `json:"ex"`
}

// claimLocks are the locks that claiming subjects takes, in key order:
// each subject's own, exclusive, and each folder's above it ("src/" and
// "src/api/" above "src/api/x.go"), shared. A key both shared and
// exclusive is taken exclusive, once.
func claimLocks(project string, subjects []string) []claimLock {
	exclusive := map[int32]bool{}
	add := func(subject string, ex bool) {
		h := fnv.New32a()
		h.Write([]byte(project))
		h.Write([]byte{0})
		h.Write([]byte(subject))
		key := int32(h.Sum32())
		exclusive[key] = exclusive[key] || ex
	}
	for _, s := range subjects {
		add(s, true)
		for i := 0; i < len(s)-1; i++ {
			if s[i] == '/' {
				add(s[:i+1], false)
			}
		}
	}
	locks := make([]claimLock, 0, len(exclusive))
	for key, ex := range exclusive {
		locks = append(locks, claimLock{Key: key, Exclusive: ex})
	}
	slices.SortFunc(locks, func(a, b claimLock) int { return cmp.Compare(a.Key, b.Key) })
	return locks
}

func (e executor) SweepLock(ctx context.Context) (bool, error) {
	if e.d.TryLockSQL == "" {
		return true, nil
	}
	var won bool
	err := e.queryRow(ctx, e.d.TryLockSQL).Scan(&won)
	return won, e.interpretError(err, "taking the sweep lock")
}

const claimColumns = `c.id, c.project, c.session_id, c.actor, c.subject, c.ttl_seconds, c.created_at, c.expires_at, c.released_at, c.release_reason, c.auto`

func scanClaim(row rowScanner, extra ...any) (logbook.Claim, error) {
	var c logbook.Claim
	var created, expires int64
	var released sql.NullInt64
	err := row.Scan(append([]any{&c.ID, &c.Project, &c.SessionID, &c.Actor, &c.Subject, &c.TTLSeconds, &created, &expires, &released, &c.ReleaseReason, &c.Auto}, extra...)...)
	c.CreatedAt, c.ExpiresAt, c.ReleasedAt = fromMicros(created), fromMicros(expires), fromNullMicros(released)
	return c, err
}

func (e executor) ClaimInsert(ctx context.Context, c *logbook.Claim) error {
	_, err := e.exec(ctx, `INSERT INTO claims (id, project, session_id, actor, subject, ttl_seconds, created_at, expires_at, auto)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, c.ID, c.Project, c.SessionID, c.Actor, c.Subject, c.TTLSeconds, micros(c.CreatedAt), micros(c.ExpiresAt), oneIf(c.Auto))
	return e.interpretError(err, "storing claim")
}

// oneIf is a flag as the claims table keeps it: 1 or 0.
func oneIf(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (e executor) ClaimGet(ctx context.Context, id string) (logbook.Claim, error) {
	c, err := scanClaim(e.readingOther().queryRow(ctx, `SELECT `+claimColumns+` FROM claims c WHERE c.id = $1`, id))
	return c, e.interpretError(err, "reading claim")
}

func (e executor) ClaimUpdate(ctx context.Context, c *logbook.Claim) error {
	res, err := e.exec(ctx, `UPDATE claims SET ttl_seconds = $2, expires_at = $3, released_at = $4, release_reason = $5 WHERE id = $1`,
		c.ID, c.TTLSeconds, micros(c.ExpiresAt), nullMicros(c.ReleasedAt), c.ReleaseReason)
	if err != nil {
		return e.interpretError(err, "updating claim")
	}
	return e.expectOne(res, "updating claim")
}

func (e executor) ClaimList(ctx context.Context, p store.ClaimListParams) ([]logbook.Claim, error) {
	q := &query{}
	q.and("c.project = " + q.arg(p.Project))
	q.and("c.released_at IS NULL AND c.expires_at > " + q.arg(micros(p.Now)))
	if p.SessionID != "" {
		q.and("c.session_id = " + q.arg(p.SessionID))
	}
	if p.Subject != "" { // S itself, or a "/"-ended prefix of S
		s := q.arg(p.Subject)
		q.and("(c.subject = " + s + " OR (SUBSTR(c.subject, LENGTH(c.subject), 1) = '/' AND SUBSTR(" + s + ", 1, LENGTH(c.subject)) = c.subject))")
	}
	if p.Conflicting != "" { // both directions
		s := q.arg(p.Conflicting)
		q.and("(c.subject = " + s +
			" OR (SUBSTR(c.subject, LENGTH(c.subject), 1) = '/' AND SUBSTR(" + s + ", 1, LENGTH(c.subject)) = c.subject)" +
			" OR (SUBSTR(" + s + ", LENGTH(" + s + "), 1) = '/' AND SUBSTR(c.subject, 1, LENGTH(" + s + ")) = " + s + "))")
	}
	rows, err := e.query(ctx, `SELECT `+claimColumns+`, s.title FROM claims c JOIN sessions s ON s.id = c.session_id
		WHERE `+q.whereSQL()+` ORDER BY c.created_at, c.id`, q.args...)
	if err != nil {
		return nil, e.interpretError(err, "listing claims")
	}
	return collectClaims(e, rows, true)
}

func collectClaims(e executor, rows *sql.Rows, withTitle bool) ([]logbook.Claim, error) {
	defer rows.Close()
	claims := []logbook.Claim{}
	for rows.Next() {
		var c logbook.Claim
		var err error
		if withTitle {
			var title string
			c, err = scanClaim(rows, &title)
			c.Title = title
		} else {
			c, err = scanClaim(rows)
		}
		if err != nil {
			return nil, e.interpretError(err, "reading claims")
		}
		claims = append(claims, c)
	}
	return claims, e.interpretError(rows.Err(), "reading claims")
}

func (e executor) ClaimRenew(ctx context.Context, sessionID string, now time.Time) error {
	_, err := e.writingOther().exec(ctx, `UPDATE claims SET expires_at = $2 + ttl_seconds * 1000000
		WHERE session_id = $1 AND released_at IS NULL AND expires_at < $2 + ttl_seconds * 1000000`, sessionID, micros(now))
	return e.interpretError(err, "renewing claims")
}

func (e executor) ClaimReleaseSession(ctx context.Context, sessionID, reason string, now time.Time) ([]logbook.Claim, error) {
	rows, err := e.query(ctx, `UPDATE claims SET released_at = $2, release_reason = $3
		WHERE session_id = $1 AND released_at IS NULL
		RETURNING id, project, session_id, actor, subject, ttl_seconds, created_at, expires_at, released_at, release_reason, auto`,
		sessionID, micros(now), reason)
	if err != nil {
		return nil, e.interpretError(err, "releasing claims")
	}
	return collectClaims(e, rows, false)
}

func (e executor) ClaimExpire(ctx context.Context, now time.Time) ([]logbook.Claim, error) {
	rows, err := e.query(ctx, `UPDATE claims SET released_at = expires_at, release_reason = $2
		WHERE released_at IS NULL AND expires_at <= $1
		RETURNING id, project, session_id, actor, subject, ttl_seconds, created_at, expires_at, released_at, release_reason, auto`,
		micros(now), logbook.ReleaseExpired)
	if err != nil {
		return nil, e.interpretError(err, "expiring claims")
	}
	return collectClaims(e, rows, false)
}

func (e executor) TouchUpsert(ctx context.Context, sessionID, project string, touches []logbook.Touch) error {
	if e.tx == nil { // the busiest files' rollup changes with the touches, in one transaction
		return e.root.inTx(ctx, func(e executor) error { return e.TouchUpsert(ctx, sessionID, project, touches) })
	}
	if e.held != nil && e.held.holdTouches(sessionID, project, touches, e.stats) {
		return nil // counted with the group's other touches (see heldWrites)
	}
	for _, t := range touches {
		// first_at is the row's: the new touch's, or the one it repeats.
		var first int64
		err := e.writingOther().queryRow(ctx, `INSERT INTO touches (session_id, project, kind, value, first_at, count) VALUES ($1, $2, $3, $4, $5, 1)
			ON CONFLICT (session_id, kind, value) DO UPDATE SET count = touches.count + 1 RETURNING first_at`,
			sessionID, project, t.Kind, t.Value, micros(t.FirstAt)).Scan(&first)
		if err != nil {
			return e.interpretError(err, "recording touches")
		}
		if e.held != nil {
			e.held.touchFirst(touchRef{sessionID, t.Kind, t.Value}, first)
		}
		if t.Kind == logbook.TouchFile {
			e.stats.touched(sessionID, project, t.Value, first, 1)
		}
	}
	return nil
}

// deleteTouches deletes a session's touches and takes its files' back out
// of the busiest files' rollup.
func (e executor) deleteTouches(ctx context.Context, sessionID string) (int64, error) {
	rows, err := e.query(ctx, `DELETE FROM touches WHERE session_id = $1 RETURNING project, kind, value, first_at, count`, sessionID)
	if err != nil {
		return 0, e.interpretError(err, "deleting touches")
	}
	defer rows.Close()
	var n int64
	for rows.Next() {
		var project, kind, value string
		var first, count int64
		if err := rows.Scan(&project, &kind, &value, &first, &count); err != nil {
			return 0, e.interpretError(err, "deleting touches")
		}
		if kind == logbook.TouchFile {
			e.stats.touched(sessionID, project, value, first, -count)
		}
		n++
	}
	return n, e.interpretError(rows.Err(), "deleting touches")
}

func (e executor) TouchList(ctx context.Context, sessionID string) ([]logbook.Touch, error) {
	rows, err := e.query(ctx, `SELECT kind, value, first_at, count FROM touches WHERE session_id = $1 ORDER BY first_at, value`, sessionID)
	if err != nil {
		return nil, e.interpretError(err, "listing touches")
	}
	return collectTouches(e, rows)
}

// TouchTop adds up the busiest files' rollup (touch_stats_days): per
// file, the days of the window on which it holds touches, the first of
// them, and their sum.
// Until the backfill has counted every session's touches, it adds up the
// touches themselves.
func (e executor) TouchTop(ctx context.Context, project string, since time.Time, limit int) ([]logbook.Touch, error) {
	e = e.forReadAcross(ctx)
	done, _, err := e.statsBackfilled(ctx)
	if err != nil {
		return nil, err
	}
	day := floorDiv(micros(since), dayMicros)
	query := `SELECT 'file', value, MIN(day) * 86400000000, CAST(SUM(touches) AS BIGINT) FROM (
			SELECT value, day, SUM(touches) AS touches FROM touch_stats_days WHERE project = $1 AND day >= $2
			GROUP BY value, day HAVING SUM(touches) <> 0) d
		GROUP BY value ORDER BY 4 DESC, value LIMIT $3`
	if !done {
		query = `SELECT kind, value, MIN(first_at), SUM(count) FROM touches
			WHERE project = $1 AND kind = 'file' AND first_at >= $2 * 86400000000 GROUP BY kind, value ORDER BY 4 DESC, value LIMIT $3`
	}
	rows, err := e.query(ctx, query, project, day, limit)
	if err != nil {
		return nil, e.interpretError(err, "listing busiest files")
	}
	touches, err := collectTouches(e, rows)
	for i := range touches {
		touches[i].FirstAt = touches[i].FirstAt.Truncate(24 * time.Hour) // the day it was first touched
	}
	return touches, err
}

func collectTouches(e executor, rows *sql.Rows) ([]logbook.Touch, error) {
	defer rows.Close()
	touches := []logbook.Touch{}
	for rows.Next() {
		var t logbook.Touch
		var first int64
		if err := rows.Scan(&t.Kind, &t.Value, &first, &t.Count); err != nil {
			return nil, e.interpretError(err, "reading touches")
		}
		t.FirstAt = fromMicros(first)
		touches = append(touches, t)
	}
	return touches, e.interpretError(rows.Err(), "reading touches")
}

func (e executor) LinkSet(ctx context.Context, sessionID, project string, attached, named []logbook.Link) error {
	e = e.writingOther()
	err := e.writeLater(ctx, piped{statement: statement{`DELETE FROM links WHERE session_id = $1 AND via = 'attached'`, []any{sessionID}},
		doing: "replacing links"})
	for _, l := range append(attached, named...) {
		if err != nil {
			return err
		}
		err = e.writeLater(ctx, piped{statement: statement{`INSERT INTO links (session_id, project, kind, ref, via) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (session_id, kind, ref, via) DO NOTHING`, []any{sessionID, project, l.Kind, l.Ref, l.Via}}, doing: "storing links"})
	}
	return err
}

func (e executor) LinkList(ctx context.Context, sessionID string) ([]logbook.Link, error) {
	e = e.readingOther()
	rows, err := e.query(ctx, `SELECT kind, ref, via FROM links WHERE session_id = $1 ORDER BY kind, ref, via`, sessionID)
	if err != nil {
		return nil, e.interpretError(err, "listing links")
	}
	defer rows.Close()
	links := []logbook.Link{}
	for rows.Next() {
		var l logbook.Link
		if err := rows.Scan(&l.Kind, &l.Ref, &l.Via); err != nil {
			return nil, e.interpretError(err, "listing links")
		}
		links = append(links, l)
	}
	return links, e.interpretError(rows.Err(), "listing links")
}

func (e executor) EventInsert(ctx context.Context, events []*logbook.Event) error {
	if len(events) == 0 {
		return nil
	}
	e = e.writingOther()
	// Numbered as inserted where one writer commits at a time (SQLite):
	// the counter moves once for all of them. Else left for EventSequence
	// to number once committed.
	var last int64
	if !e.d.SequenceAfterCommit {
		if err := e.queryRow(ctx, `UPDATE event_counter SET n = n + $1 RETURNING n`, len(events)).Scan(&last); err != nil {
			return e.interpretError(err, "numbering events")
		}
	}
	first := last - int64(len(events)) + 1
	const columns = 6
	projects := map[string]bool{}
	for start := 0; start < len(events); start += e.d.InsertRows {
		part := events[start:min(start+e.d.InsertRows, len(events))]
		args := make([]any, 0, len(part)*columns)
		for i, ev := range part {
			data := ev.Data
			if len(data) == 0 {
				data = json.RawMessage(`{}`)
			}
			var seq sql.NullInt64
			if !e.d.SequenceAfterCommit {
				seq = sql.NullInt64{Int64: first + int64(start+i), Valid: true}
			}
			args = append(args, ev.Project, ev.Type, ev.SessionID, micros(ev.At), string(data), seq)
			ev.ID = seq.Int64
			projects[ev.Project] = true
		}
		query := `INSERT INTO events (project, type, session_id, at, data, seq) VALUES ` + placeholders(len(part), columns)
		if err := e.writeLater(ctx, piped{statement: statement{query, args}, doing: "storing events"}); err != nil {
			return err
		}
	}
	switch {
	case e.d.NotifySQL == "":
	case e.toNotify != nil: // in a transaction: by the notifier, once it commits
		maps.Copy(e.toNotify, projects)
	default:
		for project := range projects {
			if _, err := e.exec(ctx, e.d.NotifySQL, project); err != nil {
				return e.interpretError(err, "notifying followers")
			}
		}
	}
	return nil
}

// EventSequence numbers committed events that have no seq yet, after the
// highest seq, in the order they were inserted (see store.Store).
func (s *Store) EventSequence(ctx context.Context) (int64, error) {
	if !s.d.SequenceAfterCommit {
		return 0, nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.interpretError(err, "sequencing events")
	}
	defer tx.Rollback()
	var won bool
	if err := tx.QueryRowContext(ctx, s.d.SequenceLockSQL).Scan(&won); err != nil || !won {
		return 0, s.interpretError(err, "sequencing events")
	}
	res, err := tx.ExecContext(ctx, `WITH pending AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM events WHERE seq IS NULL),
		counter AS (UPDATE event_counter SET n = n + (SELECT COUNT(*) FROM pending) RETURNING n - (SELECT COUNT(*) FROM pending) AS base)
		UPDATE events SET seq = counter.base + pending.n FROM counter, pending WHERE events.id = pending.id`)
	if err != nil {
		return 0, s.interpretError(err, "sequencing events")
	}
	n, _ := res.RowsAffected()
	if err := tx.Commit(); err != nil {
		return 0, s.interpretError(err, "sequencing events")
	}
	if n > 0 && s.notifier != nil { // wake every follower: there is more to read
		s.notifier.notify(map[string]bool{"": true})
	}
	return n, nil
}

func (e executor) EventList(ctx context.Context, p store.EventListParams) ([]logbook.Event, error) {
	rows, err := e.query(ctx, `SELECT seq, project, type, session_id, at, data FROM events
		WHERE project = $1 AND seq > $2 AND seq IS NOT NULL ORDER BY seq LIMIT $3`, p.Project, p.AfterID, p.Limit)
	if err != nil {
		return nil, e.interpretError(err, "listing events")
	}
	defer rows.Close()
	events := []logbook.Event{}
	for rows.Next() {
		var ev logbook.Event
		var at int64
		var data string
		if err := rows.Scan(&ev.ID, &ev.Project, &ev.Type, &ev.SessionID, &at, &data); err != nil {
			return nil, e.interpretError(err, "listing events")
		}
		ev.At, ev.Data = fromMicros(at), json.RawMessage(data)
		events = append(events, ev)
	}
	return events, e.interpretError(rows.Err(), "listing events")
}

func (e executor) EventLatestID(ctx context.Context, project string) (int64, error) {
	var id int64
	err := e.queryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM events WHERE project = $1 AND seq IS NOT NULL`, project).Scan(&id)
	return id, e.interpretError(err, "reading the newest event")
}

func (e executor) EventPrune(ctx context.Context, before time.Time) (int64, error) {
	res, err := e.exec(ctx, `DELETE FROM events WHERE at < $1`, micros(before))
	if err != nil {
		return 0, e.interpretError(err, "pruning events")
	}
	n, err := res.RowsAffected()
	return n, e.interpretError(err, "pruning events")
}

func (e executor) ToolCallList(ctx context.Context, p store.ToolCallListParams) ([]logbook.ToolCall, error) {
	e = e.forReadAcross(ctx)
	q := &query{}
	q.and("c.kind = 'tool_call'")
	if p.SessionID != "" {
		q.and("c.session_id = " + q.arg(p.SessionID))
	}
	if p.Project != "" {
		// A correlated scalar subquery, so the planner walks the tool-call
		// index newest first and stops at a page, checking each call's
		// project. (SQLite turns an EXISTS here into a join that first
		// builds a Bloom filter over every session: 100x slower.)
		q.and("(SELECT s.project FROM sessions s WHERE s.id = c.session_id) = " + q.arg(p.Project))
	}
	if p.Tool != "" {
		q.and("c.tool = " + q.arg(p.Tool))
	}
	if !p.Since.IsZero() {
		q.and("c.at >= " + q.arg(micros(p.Since)))
	}
	order := "c.id"
	switch {
	case p.Newest && p.AfterID > 0:
		q.and("c.id < " + q.arg(p.AfterID))
		order = "c.id DESC"
	case p.Newest:
		order = "c.id DESC"
	case p.AfterID > 0:
		q.and("c.id > " + q.arg(p.AfterID))
	}
	// The first result with the call's id pairs with it, and so does the
	// first note with its id: the gate's decision on the call.
	stmt := `SELECT c.id, c.session_id, c.seq, c.at, c.tool, c.tool_call_id, c.payload, r.text, r.payload, r.at, d.text, d.payload
		FROM entries c
		LEFT JOIN entries r ON r.id = (SELECT MIN(x.id) FROM entries x WHERE x.session_id = c.session_id
			AND x.tool_call_id = c.tool_call_id AND x.tool_call_id <> '' AND x.kind = 'tool_result')
		LEFT JOIN entries d ON d.id = (SELECT MIN(x.id) FROM entries x WHERE x.session_id = c.session_id
			AND x.tool_call_id = c.tool_call_id AND x.tool_call_id <> '' AND x.kind = 'note')
		WHERE ` + q.whereSQL() + ` ORDER BY ` + order + ` LIMIT ` + q.arg(p.Limit)
	rows, err := e.query(ctx, stmt, q.args...)
	if err != nil {
		return nil, e.interpretError(err, "listing tool calls")
	}
	defer rows.Close()
	calls := []logbook.ToolCall{}
	for rows.Next() {
		var tc logbook.ToolCall
		var at int64
		var input, resultText, resultPayload, noteText, notePayload sql.NullString
		var resultAt sql.NullInt64
		if err := rows.Scan(&tc.EntryID, &tc.SessionID, &tc.Seq, &at, &tc.Tool, &tc.ToolCallID, &input, &resultText, &resultPayload, &resultAt,
			&noteText, &notePayload); err != nil {
			return nil, e.interpretError(err, "listing tool calls")
		}
		tc.At = fromMicros(at)
		if input.Valid {
			tc.Input = json.RawMessage(input.String)
		}
		if resultAt.Valid {
			tc.Result, tc.ResultAt = resultText.String, fromNullMicros(resultAt)
			if resultPayload.Valid {
				tc.ResultPayload = json.RawMessage(resultPayload.String)
			}
		}
		if notePayload.Valid {
			tc.NoteText, tc.NotePayload = noteText.String, json.RawMessage(notePayload.String)
		}
		calls = append(calls, tc)
	}
	return calls, e.interpretError(rows.Err(), "listing tool calls")
}
