package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// heldWrites holds back, inside a transaction on an engine that writes a
// group's rows set-based (Dialect.HoldWrites: PostgreSQL), the entries it
// inserts, the session rows it writes and the touches it counts until a
// statement needs them or it commits. A group of requests sharing a
// transaction (the service's group commit) then writes its entries in one
// INSERT, its touches in another and each session's row once, with what
// every request changed of it, instead of statements of each request, each
// a round trip that PostgreSQL plans, executes and logs on its own
// (BENCHMARKS.md, "Thirteenth pass"). The
// rows are written one UPDATE each, all in one round trip with the touches
// and the statements waiting (see writeLater): one UPDATE of them all,
// from arrays, cost PostgreSQL more than the single ones it replaced. SQLite does not
// hold writes back: tried, its one writer made a fifth fewer entries a
// second, as a request writing another table (touches, claims) sends its
// savepoint and writes what was held back before it, request by request,
// and a statement there is no round trip to save.
//
// Nothing about what a caller sees changes:
//
//   - An entry is held back only where the transaction has locked its
//     session's row and learnt which of the batch's keys the session has
//     stored (LockSessions), so EntryInsert answers how many entries are
//     new without a statement, as ON CONFLICT DO NOTHING will; a touch
//     only where it learnt when the touch was first made, if it was, so
//     the busiest files' rollup counts it on the day its row says.
//   - Any statement that may read or write entries or sessions writes
//     what is held back first (the default; see stmtAccess), so every
//     statement sees every earlier write of its transaction.
//   - Savepoints are held back too: one is sent (SAVEPOINT) only before
//     the first statement after it that writes, after everything held
//     back before it, so rolling back to it undoes exactly what came
//     after. One never sent is rolled back by dropping what was held
//     back since, with no statement at all.
type heldWrites struct {
	ops  []heldOp
	base int // how many ops were written before ops[0]; positions count from the transaction's start
	// storedKeys holds, for each session LockSessions was given keys of,
	// which of them the database had stored. Only entries of these
	// sessions are held back.
	storedKeys map[string]map[string]bool
	// added holds the keys of the entries the transaction inserted or
	// holds back, in the order of addedLog (for savepoints to take back).
	added    map[entryKeyRef]bool
	addedLog []entryKeyRef
	// touchesAsked holds the touches LockSessions was given, storedTouches
	// when each of those the database had was first made; only these
	// are held back. addedTouches holds the same of the touches the
	// transaction added, in the order of touchLog.
	touchesAsked  map[touchRef]bool
	storedTouches map[touchRef]int64
	addedTouches  map[touchRef]int64
	touchLog      []touchRef
	marks         []heldMark
	// waiting holds the statements that answer no rows and wait to go
	// with the next round trip (see writeLater): the group's session rows
	// and touches, and, in a transaction with no savepoint, its events,
	// search documents, links and rollups.
	waiting []piped
	// err is the first failure to write what was held back, where the
	// statement that needed it could not return it (queryRow); the
	// transaction then fails at the latest when it commits.
	err error
}

type entryKeyRef struct{ session, key string }

type touchRef struct{ session, kind, value string }

// heldOp is an entry to insert, a session row to write, or a touch to
// count.
type heldOp struct {
	entry   *logbook.Entry
	session *logbook.Session
	before  *logbook.Session // the session's row before
	touch   *heldTouch
}

// heldTouch is a touch to count, and when its row says it was first made.
type heldTouch struct {
	ref     touchRef
	project string
	first   int64
}

// heldMark is a savepoint: where it was taken, and whether it was sent.
type heldMark struct {
	ops, keys, touches int // len of the ops (from the start), of addedLog and of touchLog then
	state              markState
}

type markState uint8

const (
	markHeld   markState = iota // not sent: nothing after it was written yet
	markSent                    // sent as SAVEPOINT
	markMerged                  // what came after it was written without it: it cannot be rolled back to
)

// stmtAccess says what a statement touches of what a transaction may hold
// back, so the executor knows what to write before it.
type stmtAccess uint8

const (
	// touchesHeld: it may read or write entries or session rows. What is
	// held back is written first. The default: a statement left unmarked
	// costs speed, never correctness.
	touchesHeld stmtAccess = iota
	// readsOther: it reads only tables nothing is held back for.
	readsOther
	// writesOther: it writes only such tables; the savepoint it may be
	// rolled back to is sent first.
	writesOther
)

// readingOther and writingOther mark the statements an executor runs next
// (see stmtAccess).
func (e executor) readingOther() executor { e.access = readsOther; return e }
func (e executor) writingOther() executor { e.access = writesOther; return e }

func newHeldWrites() *heldWrites {
	return &heldWrites{storedKeys: map[string]map[string]bool{}, added: map[entryKeyRef]bool{},
		touchesAsked: map[touchRef]bool{}, storedTouches: map[touchRef]int64{}, addedTouches: map[touchRef]int64{}}
}

// before readies the transaction for a statement of e's access.
func (h *heldWrites) before(ctx context.Context, e executor) error {
	if h.err != nil {
		return h.err
	}
	switch e.access {
	case readsOther:
		return h.flush(ctx, e)
	case writesOther:
		if err := h.sendSavepoint(ctx, e); err != nil {
			return err
		}
		return h.flush(ctx, e)
	}
	if err := h.sendSavepoint(ctx, e); err != nil {
		return err
	}
	return h.write(ctx, e, len(h.ops), false)
}

// writeLater runs st, a statement that answers no rows (an event, a
// search document, a link, a rollup), with the transaction's next round
// trip where it may: in a transaction that holds writes back and has no
// savepoint (a start, a claim, an end; a group's own statements at its
// commit), it waits for the next statement, or the commit, and goes before
// it in one pipeline (execPiped). Its failure then fails the transaction
// there, as it would have at once: with no savepoint, nothing less than
// the transaction can be rolled back. Inside a savepoint (a request of a
// group) it runs at once, so that its request alone fails.
func (e executor) writeLater(ctx context.Context, st piped) error {
	if h := e.held; h != nil && h.err == nil && len(h.marks) == 0 {
		h.waiting = append(h.waiting, st)
		return nil
	}
	return e.execPiped(ctx, []piped{st})
}

// flush runs the statements waiting (see writeLater), in one round trip.
func (h *heldWrites) flush(ctx context.Context, e executor) error {
	if len(h.waiting) == 0 {
		return nil
	}
	waiting := h.waiting
	h.waiting = nil
	if err := e.direct().execPiped(ctx, waiting); err != nil {
		return h.fail(err)
	}
	return nil
}

// sendSavepoint sends the latest savepoint if it is held back, after
// writing what was held back before it. Older savepoints still held back
// are merged: nothing can roll back to them any more (the service's group
// commit rolls back only to the latest).
func (h *heldWrites) sendSavepoint(ctx context.Context, e executor) error {
	if len(h.marks) == 0 || h.marks[len(h.marks)-1].state != markHeld {
		return nil
	}
	last := &h.marks[len(h.marks)-1]
	if err := h.write(ctx, e, last.ops-h.base, true); err != nil {
		return err
	}
	for i := range h.marks[:len(h.marks)-1] {
		if h.marks[i].state == markHeld {
			h.marks[i].state = markMerged
		}
	}
	if _, err := e.direct().exec(ctx, `SAVEPOINT request`); err != nil {
		return h.fail(e.interpretError(err, "marking a savepoint"))
	}
	last.state = markSent
	return nil
}

// write writes the first n ops held back (see stage) and the statements
// waiting, in one round trip after the entries'.
func (h *heldWrites) write(ctx context.Context, e executor, n int, beforeMark bool) error {
	if err := h.stage(ctx, e, n, beforeMark); err != nil {
		return err
	}
	return h.flush(ctx, e)
}

// stage writes the entries of the first n ops held back in multi-row
// INSERTs, and queues each of their session's rows once, and their
// touches, to be written with the statements waiting (flush). beforeMark
// says they come before the latest savepoint: their search documents,
// kept for the commit, are kept before it too, so rolling back to it does
// not take them.
func (h *heldWrites) stage(ctx context.Context, e executor, n int, beforeMark bool) error {
	if n <= 0 {
		return nil
	}
	ops := h.ops[:n]
	h.ops, h.base = h.ops[n:], h.base+n
	d := e.direct()
	var entries []logbook.Entry
	rows, befores := map[string]*logbook.Session{}, map[string]*logbook.Session{}
	var order []string
	touches := map[touchRef]*touchCount{}
	var touched []touchRef
	for _, op := range ops {
		switch {
		case op.entry != nil:
			entries = append(entries, *op.entry)
		case op.session != nil:
			if _, ok := rows[op.session.ID]; !ok {
				order = append(order, op.session.ID)
				befores[op.session.ID] = op.before
			}
			rows[op.session.ID] = op.session
		case op.touch != nil:
			c, ok := touches[op.touch.ref]
			if !ok {
				c = &touchCount{project: op.touch.project, first: op.touch.first}
				touches[op.touch.ref] = c
				touched = append(touched, op.touch.ref)
			}
			c.count++
		}
	}
	if len(entries) > 0 {
		if d.docs != nil {
			d.docs.beforeMark = beforeMark // kept for the commit, before the savepoint
		}
		inserted, err := d.insertEntries(ctx, entries)
		if d.docs != nil {
			d.docs.beforeMark = false
		}
		if err != nil {
			return h.fail(err)
		}
		if inserted != len(entries) {
			return h.fail(fmt.Errorf("writing a group's entries: %d of %d were stored already though their keys were looked up under the session's lock; nothing of the group was recorded, retry it",
				len(entries)-inserted, len(entries)))
		}
	}
	for _, id := range order {
		if update, ok := sessionUpdate(rows[id], befores[id]); ok {
			h.waiting = append(h.waiting, update)
		}
	}
	h.waiting = append(h.waiting, d.touchCounts(touches, touched)...)
	return nil
}

// touchCount is what a flush adds to a touch's row.
type touchCount struct {
	project      string
	first, count int64
}

// touchCounts adds the touches held back to their rows, a multi-row
// INSERT a chunk: a touch repeated in the group once, with its count.
func (e executor) touchCounts(touches map[touchRef]*touchCount, order []touchRef) []piped {
	const columns = 6
	var inserts []piped
	for start := 0; start < len(order); start += e.d.InsertRows {
		part := order[start:min(start+e.d.InsertRows, len(order))]
		args := make([]any, 0, len(part)*columns)
		for _, ref := range part {
			c := touches[ref]
			args = append(args, ref.session, c.project, ref.kind, ref.value, c.first, c.count)
		}
		inserts = append(inserts, piped{statement: statement{`INSERT INTO touches (session_id, project, kind, value, first_at, count) VALUES ` + placeholders(len(part), columns) +
			` ON CONFLICT (session_id, kind, value) DO UPDATE SET count = touches.count + excluded.count`, args}, doing: "recording touches"})
	}
	return inserts
}

func (h *heldWrites) fail(err error) error {
	if h.err == nil {
		h.err = err
	}
	return err
}

// direct is e without held writes: for the statements that write them.
func (e executor) direct() executor {
	e.held, e.access = nil, touchesHeld
	return e
}

// holdEntries holds back entries if it may (see heldWrites) and says how
// many of them are new; ok is false where they must be inserted now.
func (h *heldWrites) holdEntries(entries []logbook.Entry) (inserted int, ok bool) {
	for i := range entries {
		en := &entries[i]
		if _, known := h.storedKeys[en.SessionID]; !known || !storableEntry(en) {
			return 0, false
		}
	}
	for i := range entries {
		en := entries[i]
		if en.Key != "" {
			ref := entryKeyRef{en.SessionID, en.Key}
			if h.storedKeys[en.SessionID][en.Key] || h.added[ref] {
				continue // stored already: ON CONFLICT DO NOTHING would skip it
			}
			h.added[ref] = true
			h.addedLog = append(h.addedLog, ref)
		}
		h.ops = append(h.ops, heldOp{entry: &en})
		inserted++
	}
	return inserted, true
}

// inserted notes the keys of entries inserted at once, so that those held
// back later in the transaction are checked against them too.
func (h *heldWrites) inserted(entries []logbook.Entry, ids map[entryKey]int64) {
	for _, en := range entries {
		if _, ok := ids[entryKey{en.SessionID, en.Seq}]; !ok || en.Key == "" {
			continue
		}
		if _, known := h.storedKeys[en.SessionID]; known {
			ref := entryKeyRef{en.SessionID, en.Key}
			h.added[ref] = true
			h.addedLog = append(h.addedLog, ref)
		}
	}
}

// forgetKeys stops holding back the entries of session: a statement
// deleted some of its entries, whose keys it no longer follows.
func (h *heldWrites) forgetKeys(session string) {
	delete(h.storedKeys, session)
}

// holdTouches holds back counting touches of session if it may (see
// heldWrites), noting each file's touch in stats as TouchUpsert does; ok
// is false where they must be counted now.
func (h *heldWrites) holdTouches(session, project string, touches []logbook.Touch, stats *txStats) (ok bool) {
	if !storableTexts(project) {
		return false
	}
	for _, t := range touches {
		ref := touchRef{session, t.Kind, t.Value}
		if _, added := h.addedTouches[ref]; !(h.touchesAsked[ref] || added) || !storableTexts(t.Kind, t.Value) {
			return false
		}
	}
	for _, t := range touches {
		ref := touchRef{session, t.Kind, t.Value}
		first := h.touchFirst(ref, micros(t.FirstAt))
		if t.Kind == logbook.TouchFile {
			stats.touched(session, project, t.Value, first, 1)
		}
		h.ops = append(h.ops, heldOp{touch: &heldTouch{ref, project, first}})
	}
	return true
}

// touchFirst says when the touch ref was first made: as stored, as the
// transaction first made it, or else at (and notes it).
func (h *heldWrites) touchFirst(ref touchRef, at int64) int64 {
	if first, ok := h.storedTouches[ref]; ok {
		return first
	}
	if first, ok := h.addedTouches[ref]; ok {
		return first
	}
	h.addedTouches[ref] = at
	h.touchLog = append(h.touchLog, ref)
	return at
}

// holdSession holds back writing s's row, which was before.
func (h *heldWrites) holdSession(before, s *logbook.Session) {
	h.ops = append(h.ops, heldOp{session: s, before: before})
}

// storableEntry reports whether PostgreSQL will store every text of en as
// it is: valid UTF-8 without NUL bytes. An entry that is not is inserted
// at once, so that its request alone fails, with the engine's own error.
func storableEntry(en *logbook.Entry) bool {
	texts := []string{string(en.Kind), en.Role, en.Text, en.Tool, en.ToolCallID, string(en.Payload), en.Commit, en.Key}
	if en.Author != nil {
		texts = append(texts, en.Author.Actor, en.Author.TokenID)
	}
	if en.Usage != nil {
		texts = append(texts, en.Usage.Model)
	}
	return storableTexts(texts...)
}

// storableTexts reports whether every one of texts is valid UTF-8 without
// NUL bytes (see storableEntry).
func storableTexts(texts ...string) bool {
	for _, s := range texts {
		if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// savepoint, rollbackToSavepoint and releaseSavepoint are the transaction's
// savepoints where writes are held back: see txStore.Savepoint.
func (h *heldWrites) savepoint() {
	h.marks = append(h.marks, heldMark{ops: h.base + len(h.ops), keys: len(h.addedLog), touches: len(h.touchLog)})
}

// rollbackToSavepoint takes back what was held back since the latest
// savepoint, and says whether the savepoint was sent (the engine must roll
// back to it too).
func (h *heldWrites) rollbackToSavepoint() (sent bool, err error) {
	if len(h.marks) == 0 {
		return false, errors.New("rolling back to a savepoint: there is none")
	}
	last := h.marks[len(h.marks)-1]
	h.marks = h.marks[:len(h.marks)-1]
	if last.state == markMerged {
		return false, h.fail(errors.New("rolling back to a savepoint whose writes were sent without it: the transaction cannot be undone in part; roll it back whole"))
	}
	if keep := last.ops - h.base; keep >= 0 {
		h.ops = h.ops[:keep]
	} else {
		h.ops = h.ops[:0] // written after the savepoint: rolling back to it takes them back
	}
	for _, ref := range h.addedLog[last.keys:] {
		delete(h.added, ref)
	}
	h.addedLog = h.addedLog[:last.keys]
	for _, ref := range h.touchLog[last.touches:] {
		delete(h.addedTouches, ref)
	}
	h.touchLog = h.touchLog[:last.touches]
	if last.state == markSent {
		h.err = nil // a failed statement after it is rolled back with it
	}
	return last.state == markSent, nil
}

// releaseSavepoint drops the latest savepoint. Nothing is sent: one never
// sent has nothing to release, and one sent is left for the commit to end
// (a round trip less a request; PostgreSQL rolls back to the latest of
// savepoints of one name).
func (h *heldWrites) releaseSavepoint() {
	if len(h.marks) > 0 {
		h.marks = h.marks[:len(h.marks)-1]
	}
}

// commit writes the entries held back and queues the rest (stage): no
// savepoint can be rolled back to once the transaction commits. What the
// commit writes next (search documents, rollups) waits with them, and
// flush sends it all in one round trip before the COMMIT.
func (h *heldWrites) commit(ctx context.Context, e executor) error {
	if h.err != nil {
		return h.err
	}
	h.marks = nil
	return h.stage(ctx, e, len(h.ops), false)
}

// LockSessions reads and locks the sessions named and learns which of the
// keys given are stored (see store.Tx).
func (t *txStore) LockSessions(ctx context.Context, sessions []store.SessionKeys) error {
	var missing []string
	for _, s := range sessions {
		if _, ok := t.txRows.get(s.ID); !ok {
			missing = append(missing, s.ID)
		}
	}
	switch {
	case len(missing) == 0:
	case t.d.SessionIDsInSQL != "":
		// In id order, as every group locks them, so two groups never each
		// wait for a row the other holds.
		rows, err := t.query(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE `+t.d.SessionIDsInSQL+` ORDER BY id`+t.d.ForUpdate, missing)
		if err != nil {
			return t.interpretError(err, "locking sessions")
		}
		locked, err := t.collectSessions(rows, "locking sessions")
		if err != nil {
			return err
		}
		for i := range locked {
			t.knownSession(&locked[i], true)
		}
	default: // one at a time: an engine whose statements are no round trips
		for _, id := range missing {
			if _, err := t.SessionGet(ctx, store.SessionGetParams{ID: id, ForUpdate: true}); err != nil && !errors.Is(err, logbook.ErrNotFound) {
				return err
			}
		}
	}
	if t.held == nil {
		return nil
	}
	if err := t.lockKeys(ctx, sessions); err != nil {
		return err
	}
	return t.lockTouches(ctx, sessions)
}

// lockKeys learns, for the sessions locked whose keys are given, which of
// those keys the database holds (see heldWrites).
func (t *txStore) lockKeys(ctx context.Context, sessions []store.SessionKeys) error {
	var ids, keys []string
	for _, s := range sessions {
		if _, locked := t.txRows.get(s.ID); !locked || s.Keys == nil {
			continue
		}
		if t.held.storedKeys[s.ID] == nil {
			t.held.storedKeys[s.ID] = map[string]bool{}
		}
		for _, k := range s.Keys {
			ids, keys = append(ids, s.ID), append(keys, k)
		}
	}
	return t.lookUp(ctx, "reading entry keys", t.d.StoredKeysSQL, func(rows *sql.Rows) error {
		var id, key string
		if err := rows.Scan(&id, &key); err != nil {
			return err
		}
		t.held.storedKeys[id][key] = true
		return nil
	}, ids, keys)
}

// lockTouches learns, for the sessions locked whose touches are given,
// when each of those the database holds was first made (see heldWrites).
func (t *txStore) lockTouches(ctx context.Context, sessions []store.SessionKeys) error {
	if t.d.StoredTouchesSQL == "" {
		return nil
	}
	var ids, kinds, values []string
	for _, s := range sessions {
		if _, locked := t.txRows.get(s.ID); !locked || s.Touches == nil {
			continue
		}
		for _, touch := range s.Touches {
			t.held.touchesAsked[touchRef{s.ID, touch.Kind, touch.Value}] = true
			ids, kinds, values = append(ids, s.ID), append(kinds, touch.Kind), append(values, touch.Value)
		}
	}
	return t.lookUp(ctx, "reading touches", t.d.StoredTouchesSQL, func(rows *sql.Rows) error {
		var ref touchRef
		var first int64
		if err := rows.Scan(&ref.session, &ref.kind, &ref.value, &first); err != nil {
			return err
		}
		t.held.storedTouches[ref] = first
		return nil
	}, ids, kinds, values)
}

// lookUp runs query with columns, one array parameter each (the same
// length, a row of values at each index), and hands each row of the
// answer to each. Arrays, not one JSON parameter: PostgreSQL parses a
// json value again at each ->> of it, which made a group's lookup of
// 6,400 keys a fifth slower (BENCHMARKS.md, "Sixteenth pass").
func (t *txStore) lookUp(ctx context.Context, doing, query string, each func(*sql.Rows) error, columns ...[]string) error {
	if len(columns) == 0 || len(columns[0]) == 0 {
		return nil
	}
	args := make([]any, len(columns))
	for i, c := range columns {
		args[i] = c
	}
	rows, err := t.readingOther().query(ctx, query, args...)
	if err != nil {
		return t.interpretError(err, doing)
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return t.interpretError(err, doing)
		}
	}
	return t.interpretError(rows.Err(), doing)
}
