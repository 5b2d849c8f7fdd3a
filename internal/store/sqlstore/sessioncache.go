package sqlstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// sessionCache keeps active sessions' rows in memory as last committed, so
// that a write inside a transaction finds its session's row without reading
// it: on SQLite, under hooks' one-entry appends, reading and decoding the
// row's 38 columns was a fifth of the single writer's time (BENCHMARKS.md).
//
// It is right only where this process's transactions are the database's
// writers, one at a time: an engine with one writer (SQLite), on one
// connection. A second process (a CLI command beside the server) may write
// the same file, so each transaction first asks the engine's data version,
// which moves when another connection commits, and the cache starts over
// when it moved. Inside a transaction, what it reads and writes is kept
// aside (txSessions) and reaches the cache when it commits; a savepoint
// rolled back takes back its own. A statement outside a transaction that
// changes sessions suspends the cache while it runs.
//
// Only active sessions are kept (ended ones are seldom written again), at
// most maxCachedSessions; past that the cache starts over.
type sessionCache struct {
	versionSQL string // the engine's data version query (Dialect.DataVersionSQL)

	mu      sync.Mutex
	rows    map[string]logbook.Session
	version int64 // the data version the rows were valid at
	// outside counts statements changing sessions outside a transaction
	// that are running; while any is, the cache is neither read nor filled.
	outside int
	// check makes every row found here also read from the database and
	// compared, failing the read when they differ (tests).
	check bool
}

const maxCachedSessions = 10_000

func newSessionCache(versionSQL string) *sessionCache {
	return &sessionCache{versionSQL: versionSQL, rows: map[string]logbook.Session{}, version: -1}
}

// begin starts a transaction's view of the cache. It reads the data
// version inside the transaction, whose write lock (BEGIN IMMEDIATE) keeps
// other connections from committing until it ends.
func (c *sessionCache) begin(ctx context.Context, e executor) (*txSessions, error) {
	var version int64
	if err := e.queryRow(ctx, c.versionSQL).Scan(&version); err != nil {
		return nil, e.interpretError(err, "reading the database's data version")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if version != c.version {
		clear(c.rows)
		c.version = version
	}
	return &txSessions{cache: c, rows: map[string]*logbook.Session{}}, nil
}

// get returns the committed row of session id, if known.
func (c *sessionCache) get(id string) (logbook.Session, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.outside > 0 {
		return logbook.Session{}, false
	}
	s, ok := c.rows[id]
	return s, ok
}

// suspend is called before a statement outside a transaction changes
// sessions; the function it returns, after it.
func (c *sessionCache) suspend() (resume func()) {
	if c == nil {
		return func() {}
	}
	c.mu.Lock()
	c.outside++
	clear(c.rows)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.outside--
		clear(c.rows)
		c.mu.Unlock()
	}
}

// txSessions is one transaction's view of the session cache: the rows it
// read or wrote. A nil *txSessions (no cache) knows nothing and notes
// nothing.
//
// An engine without the cache, whose transactions run side by side
// (PostgreSQL), has a view too, that holds only the rows the transaction
// has locked (read FOR UPDATE, inserted or written): no other transaction
// changes those until it ends, so reading them again needs no statement.
type txSessions struct {
	cache *sessionCache // nil: the view holds locked rows only
	// rows holds each session the transaction read or wrote; nil where a
	// statement changed the row without saying to what.
	rows map[string]*logbook.Session
	// forgetAll: a statement changed sessions it did not name, so the
	// cache is not read for the rest of the transaction, and is cleared
	// when it commits.
	forgetAll bool
	undo      []undoRow // what each change replaced, for savepoints
	marks     []int     // len(undo) at each open savepoint
}

type undoRow struct {
	id       string
	row      *logbook.Session
	recorded bool // whether rows held id before
}

// get returns session id's row as this transaction sees it, if known.
func (t *txSessions) get(id string) (logbook.Session, bool) {
	if t == nil {
		return logbook.Session{}, false
	}
	if row, ok := t.rows[id]; ok {
		if row == nil {
			return logbook.Session{}, false
		}
		return copySession(*row), true
	}
	if t.forgetAll || t.cache == nil {
		return logbook.Session{}, false
	}
	row, ok := t.cache.get(id)
	return copySession(row), ok
}

// known records session s's row as the database now holds it; locked
// says whether the transaction holds the row's lock (a view without the
// cache keeps only those).
func (t *txSessions) known(s logbook.Session, locked bool) {
	if t == nil || (t.cache == nil && !locked) {
		return
	}
	row := storedSession(s)
	t.set(s.ID, &row)
}

// updated records session s's row after SessionUpdate(s, was) wrote the
// columns where s differs from was.
func (t *txSessions) updated(s, was *logbook.Session) {
	if _, _, ok := t.locked(s, was); !ok && t != nil {
		t.forget(s.ID) // the columns left as they were are not known here
	}
}

// locked records, where the transaction has session s's row locked (a
// view without the cache) or known (with it) as was, the row as s will
// have it once the columns where s differs from was are written, and
// returns it with the row before. ok is false where the row is not known
// as was.
func (t *txSessions) locked(s, was *logbook.Session) (before, row *logbook.Session, ok bool) {
	if t == nil {
		return nil, nil, false
	}
	prev, ok := t.get(s.ID)
	if !ok || was == nil || !sameSession(prev, storedSession(*was)) {
		return nil, nil, false
	}
	stored := storedSession(*s)
	// The columns SessionUpdate never writes.
	stored.ID, stored.Project, stored.Actor, stored.Harness, stored.HarnessSessionID = prev.ID, prev.Project, prev.Actor, prev.Harness, prev.HarnessSessionID
	stored.StartedAt, stored.RootID = prev.StartedAt, prev.RootID
	t.set(s.ID, &stored)
	kept := copySession(stored)
	return &prev, &kept, true
}

// markedSeen records SessionMarkSeen(id, at).
func (t *txSessions) markedSeen(id string, at time.Time) {
	if t == nil {
		return
	}
	row, ok := t.get(id)
	if !ok {
		t.forget(id)
		return
	}
	if row.Status == logbook.StatusActive && micros(row.LastSeenAt) < micros(at) {
		row.LastSeenAt = fromMicros(micros(at))
	}
	t.set(id, &row)
}

// forget records that session id's row changed in a way not worth
// following; it is read from the database again.
func (t *txSessions) forget(id string) {
	if t != nil {
		t.set(id, nil)
	}
}

// forgetEverything records that sessions changed that no statement named.
func (t *txSessions) forgetEverything() {
	if t != nil {
		t.forgetAll = true // not taken back by a savepoint: that only costs reads
	}
}

func (t *txSessions) set(id string, row *logbook.Session) {
	if len(t.marks) > 0 {
		was, recorded := t.rows[id]
		t.undo = append(t.undo, undoRow{id: id, row: was, recorded: recorded})
	}
	t.rows[id] = row
}

// savepoint, rollbackToSavepoint and releaseSavepoint follow the
// transaction's savepoints.
func (t *txSessions) savepoint() {
	if t != nil {
		t.marks = append(t.marks, len(t.undo))
	}
}

func (t *txSessions) rollbackToSavepoint() {
	if t == nil || len(t.marks) == 0 {
		return
	}
	mark := t.marks[len(t.marks)-1]
	for i := len(t.undo) - 1; i >= mark; i-- {
		u := t.undo[i]
		if u.recorded {
			t.rows[u.id] = u.row
		} else {
			delete(t.rows, u.id)
		}
	}
	t.undo = t.undo[:mark]
}

func (t *txSessions) releaseSavepoint() {
	if t == nil || len(t.marks) == 0 {
		return
	}
	t.marks = t.marks[:len(t.marks)-1]
	if len(t.marks) == 0 {
		t.undo = t.undo[:0] // nothing left to roll back to
	}
}

// commit runs commitTx and, when it succeeds, stores what the transaction
// read and wrote in the cache. It holds the cache meanwhile, so the next
// transaction (which may begin as soon as this one commits) cannot read
// rows older than this one's.
func (t *txSessions) commit(commitTx func() error) error {
	if t == nil || t.cache == nil {
		return commitTx()
	}
	c := t.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	err := commitTx()
	if err != nil || t.forgetAll || c.outside > 0 || len(c.rows)+len(t.rows) > maxCachedSessions {
		clear(c.rows) // a failed commit may or may not have landed
		return err
	}
	for id, row := range t.rows {
		if row == nil || row.Status != logbook.StatusActive {
			delete(c.rows, id)
		} else {
			c.rows[id] = *row
		}
	}
	return nil
}

// changingSessions is called before a statement that changes session rows.
// Outside a transaction it suspends the session cache until the function
// it returns runs; inside one, the statement tells the transaction's view
// what it changed.
func (e executor) changingSessions() (done func()) {
	if e.tx != nil {
		return func() {}
	}
	return e.rowCache.suspend()
}

// checkCached compares a row found in the cache with the database's, when
// the cache is told to (tests).
func (e executor) checkCached(ctx context.Context, cached logbook.Session) error {
	if e.txRows.cache == nil || !e.txRows.cache.check {
		return nil
	}
	stored, err := scanSession(e.queryRow(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = $1`, cached.ID))
	if err != nil {
		return fmt.Errorf("checking the session cache: %w", err)
	}
	if !sameSession(cached, stored) {
		return fmt.Errorf("session cache out of step for %s:\ncached %+v\nstored %+v", cached.ID, cached, stored)
	}
	return nil
}

// storedSession is s as reading it back from the database gives it: times
// to the microsecond in UTC, and none of the fields a reader derives.
func storedSession(s logbook.Session) logbook.Session {
	s.StartedAt, s.LastSeenAt = fromMicros(micros(s.StartedAt)), fromMicros(micros(s.LastSeenAt))
	s.ProgressedAt, s.AnnouncedAt = fromMicros(micros(s.ProgressedAt)), fromMicros(micros(s.AnnouncedAt))
	s.ClosedAt = fromNullMicros(nullMicros(s.ClosedAt))
	s.State, s.SubagentCount, s.DurationSeconds = "", 0, 0
	return s
}

// sameSession reports whether two stored rows are equal.
func sameSession(a, b logbook.Session) bool {
	aClosed, bClosed := a.ClosedAt, b.ClosedAt
	a.ClosedAt, b.ClosedAt = nil, nil
	if aClosed != nil && bClosed != nil {
		return a == b && aClosed.Equal(*bClosed)
	}
	return a == b && aClosed == bClosed
}

// copySession copies s so that the copy shares no memory a caller could
// change (ClosedAt is a pointer).
func copySession(s logbook.Session) logbook.Session {
	if s.ClosedAt != nil {
		closed := *s.ClosedAt
		s.ClosedAt = &closed
	}
	return s
}
