// Package sqlstore implements store.Store over database/sql for both of
// logbook's engines.
//
// SQLite (3.35 and later) and PostgreSQL speak the same SQL for everything
// the ledger needs: $N placeholders, INSERT … ON CONFLICT DO NOTHING,
// RETURNING, partial indexes. Times are stored as Unix microseconds in
// BIGINT columns in both. So the queries live here once, and an engine
// package (sqlitestore, pgstore) supplies only what differs: how to open the
// database, its migrations, row locking, and how it reports a unique-key
// clash. The conformance suite in storetest runs against both.
package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// Dialect is what an engine does differently.
type Dialect struct {
	// Name is the engine's name: "sqlite" or "postgres".
	Name string
	// ForUpdate is appended to a SELECT that must lock its rows until the
	// transaction ends: " FOR UPDATE" on PostgreSQL, "" on SQLite, where
	// one connection serialises every transaction already.
	ForUpdate string
	// ForUpdateSkipLocked ends a subquery that picks rows to take, as a
	// queue does: " FOR UPDATE SKIP LOCKED" on PostgreSQL, so that
	// concurrent takers pass over each other's rows instead of waiting;
	// "" on SQLite, where one transaction writes at a time.
	ForUpdateSkipLocked string
	// IsUniqueViolation reports whether err is a unique-key clash.
	IsUniqueViolation func(error) bool
	// IsInvalidText reports whether err says a text value cannot be stored
	// or compared at all (PostgreSQL refuses NUL bytes). Nil: never.
	IsInvalidText func(error) bool
	// Unavailable reports whether err, in the engine's own codes, means
	// the database cannot serve this now (out of reach, shutting down,
	// busy, a full disk) and says why in words an operator can act on.
	// interpretError turns it into a *logbook.UnavailableError; a lost
	// connection is recognised for every engine. Nil: only that.
	Unavailable func(err error) (reason string, ok bool)
	// ClaimLockSQL takes the locks of ClaimLock, given as a JSON array
	// of {"k": key, "ex": exclusive} in $1, in that order, and answers one
	// number. Empty where one transaction writes at a time (SQLite).
	ClaimLockSQL string
	// TryLockSQL answers one boolean: whether this transaction won the
	// sweep lock. Empty means always won (SQLite has one process).
	TryLockSQL string
	// SequenceAfterCommit: events are numbered by EventSequence once
	// committed (PostgreSQL, where concurrent writers take ids before they
	// commit), not as they are inserted (SQLite, one writer at a time).
	SequenceAfterCommit bool
	// SequenceLockSQL answers whether this transaction may sequence events
	// (one process at a time).
	SequenceLockSQL string
	// BackupSQL copies the whole database into the new file named by $1
	// while other connections keep writing (SQLite's VACUUM INTO). Empty
	// where the engine's own tools copy a live database: Backup then
	// answers NoBackup, which says how.
	BackupSQL string
	NoBackup  error
	// Optimize refreshes the planner's statistics (nil where the engine
	// keeps them fresh by itself).
	Optimize func(ctx context.Context, db *sql.DB) error
	// ExplainPrefix turns a query into its plan: "EXPLAIN QUERY PLAN " on
	// SQLite, "EXPLAIN " on PostgreSQL.
	ExplainPrefix string
	// InsertRows is how many rows one multi-row INSERT takes (an entry has
	// 20 parameters). SQLite took small chunks (10: in `logbook bench
	// --batch 100` that inserted 40% more rows a second than 60) when it
	// looked each $N parameter up by name, in time that grew with their
	// number; with ? parameters (Positional) 25 inserts 7-8% more than 10
	// (BENCHMARKS.md, "Twelfth pass"). Each chunk size is a statement of
	// its own in the statement cache (maxStatements), for the entries, the
	// events and each rollup table, which bounds it. PostgreSQL takes a
	// whole batch (500).
	InsertRows int
	// CacheStatements keeps prepared statements (SQLite, where parsing a
	// statement costs more than running it).
	CacheStatements bool
	// Positional prepares cached statements with ? parameters in place of
	// $1, $2, … where they come in order (SQLite, which binds a ? by its
	// place but looks a $N up by name).
	Positional bool
	// SingleWriter: the engine commits one transaction at a time, and the
	// service should group concurrent writes (see store.Store).
	SingleWriter bool
	// NotifySQL wakes followers on other replicas at commit, with the
	// project as $1 (PostgreSQL NOTIFY). Empty for none.
	NotifySQL string
	// DataVersionSQL answers a number that moves when another connection
	// commits (SQLite's PRAGMA data_version). With it, an engine with one
	// writer on one connection keeps its active sessions' rows in memory
	// between transactions (see sessionCache). Empty: no cache.
	DataVersionSQL string
	// StatsShardSQL picks the shard of the statistics' rollup rows a
	// transaction adds to ("" for 0). Where transactions commit side by
	// side (PostgreSQL), those adding to the same row would each wait for
	// the one before to commit; spread over shards, few do.
	StatsShardSQL string
	// ModifyingCTEs: the engine runs INSERTs as WITH queries of another
	// statement (PostgreSQL), so the statistics' rollups of a transaction
	// are written in one statement, one round trip, instead of one a table.
	ModifyingCTEs bool
	// StatsBackfillLockSQL runs first in each transaction of the
	// statistics backfill, to keep other transactions from changing
	// sessions until it commits (none where one transaction writes at a
	// time).
	StatsBackfillLockSQL []string
	// IsLockTimeout reports whether err says a lock was not granted within
	// the lock timeout (nil: never).
	IsLockTimeout func(error) bool
	// Search is how the engine keeps the search index (FTS5 or TSVector).
	Search SearchIndex
	// FreshPlan, when set, goes before the arguments of the queries whose
	// best plan depends on their values (searches, a list's q): it makes
	// the engine plan them with those values each time. PostgreSQL would
	// otherwise settle, after five runs of a statement, on a generic plan
	// that walks every entry for a rare word (pgx.QueryExecModeExec).
	FreshPlan any
	// MonthPartitions: entries are partitioned by the UTC month of their
	// session (PostgreSQL, migration 0026), so retention empties a month
	// at a time (see EntryPartitionPrune) and the server makes the months
	// ahead (EntryPartitionsMaintain).
	MonthPartitions bool
	// SnapshotBeginSQL starts the read-only transaction an export reads
	// in: one snapshot of every table, holding no lock a writer waits on
	// (SQLite's deferred BEGIN, which WAL readers take; PostgreSQL's
	// REPEATABLE READ).
	SnapshotBeginSQL string
	// OverridingIdentity goes between a restore's column list and its
	// VALUES where an identity column takes only the database's numbers
	// unless told (PostgreSQL's GENERATED ALWAYS); "" elsewhere.
	OverridingIdentity string
	// HoldWrites: inside a transaction, entries inserted and session rows
	// written are held back and written set-based when a statement needs
	// them or the transaction commits (see heldWrites): PostgreSQL, where
	// each statement is a round trip planned and run on its own.
	HoldWrites bool
	// Pipeline runs statements that answer no rows in one round trip on
	// the connection of a transaction (driverConn, as database/sql's
	// Conn.Raw gives it), in order, stopping at the first that fails, and
	// answers how many rows each changed: PostgreSQL's pipeline through
	// pgx. Nil where each statement runs by itself (SQLite, where a
	// statement is no round trip). See executor.execPiped.
	Pipeline func(ctx context.Context, driverConn any, queries []string, args [][]any) ([]int64, error)
	// SessionIDsInSQL says that a session's id is one of the array $1:
	// with it, Tx.LockSessions reads and locks a group's sessions in one
	// statement; empty: one at a time (SQLite, where a statement is no
	// round trip).
	SessionIDsInSQL string
	// StoredKeysSQL answers (session_id, key) for each pair of the text
	// arrays $1 (session ids) and $2 (entry keys), index by index, that
	// entries hold: looked up pair by pair through the (session_id, key)
	// index.
	StoredKeysSQL string
	// StoredTouchesSQL answers (session_id, kind, value, first_at) for each
	// triple of the text arrays $1 (session ids), $2 (kinds) and $3
	// (values), index by index, that touches hold. Empty: touches are not
	// held back.
	StoredTouchesSQL string
	// IdentityPastSQL moves the numbering of an identity column (table in
	// %[1]s, column in %[2]s) past the values a restore wrote into it
	// (PostgreSQL's sequences); "" where the next number is always past
	// the highest (SQLite's rowid).
	IdentityPastSQL string
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Store is a store.Store on a database/sql handle.
type Store struct {
	executor
	db *sql.DB
	// ListenFunc, set by an engine whose other processes commit events
	// (PostgreSQL replicas), implements Listen.
	ListenFunc func(ctx context.Context, wake func()) error
	// notifier wakes other replicas' followers after commits with events
	// (nil where the engine has no NotifySQL).
	notifier *notifier
	// statsDone is set once the statistics backfill is known to have
	// counted every session (see statsBackfilled).
	statsDone atomic.Bool
	// reads routes reads to a replica (nil: none; see ReadFrom).
	reads *readRouter
}

// Listen calls wake when another process commits events; see store.Store.
func (s *Store) Listen(ctx context.Context, wake func()) error {
	if s.ListenFunc == nil {
		return nil
	}
	return s.ListenFunc(ctx, wake)
}

// New returns a Store on db, which must already be migrated.
func New(db *sql.DB, d Dialect) *Store {
	var cache *stmtCache
	if d.CacheStatements {
		cache = newStmtCache(db, d.Positional)
	}
	var rows *sessionCache
	if d.SingleWriter && d.DataVersionSQL != "" {
		rows = newSessionCache(d.DataVersionSQL)
	}
	st := &Store{executor: executor{q: db, d: d, cache: cache, rowCache: rows}, db: db}
	st.root = st
	if d.NotifySQL != "" {
		st.notifier = newNotifier(db, d.NotifySQL)
	}
	return st
}

// CheckSessionCache makes every session row the store finds in memory also
// be read from the database and compared, failing the read when they
// differ. Tests turn it on to hold the cache to the database.
func (s *Store) CheckSessionCache() {
	if s.rowCache != nil {
		s.rowCache.check = true
	}
}

// DB returns the underlying handle, for engine-specific work (migrations,
// backups) and tests.
func (s *Store) DB() *sql.DB { return s.db }

// Engine names the engine.
func (s *Store) Engine() string { return s.d.Name }

// CanBackup reports whether Backup copies the database (see store.Store).
func (s *Store) CanBackup() bool { return s.d.BackupSQL != "" }

// Optimize refreshes the planner's statistics (see store.Store).
func (s *Store) Optimize(ctx context.Context) error {
	if s.d.Optimize == nil {
		return nil
	}
	return s.interpretError(s.d.Optimize(ctx, s.db), "optimizing")
}

// SingleWriter reports whether the engine commits one transaction at a time.
func (s *Store) SingleWriter() bool { return s.d.SingleWriter }

// Close closes the database.
func (s *Store) Close() error {
	if s.notifier != nil {
		s.notifier.close()
	}
	if s.reads != nil {
		s.reads.DB.Close()
	}
	return s.db.Close()
}

// Begin starts a transaction.
func (s *Store) Begin(ctx context.Context) (store.Tx, error) {
	t, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (s *Store) begin(ctx context.Context) (*txStore, error) {
	tx, conn, err := s.beginTx(ctx)
	if err != nil {
		return nil, s.interpretError(err, "starting transaction")
	}
	var stmts *txStatements
	if s.cache != nil {
		stmts = &txStatements{cache: s.cache, stmts: map[string]*sql.Stmt{}}
	}
	t := &txStore{executor: executor{q: tx, d: s.d, cache: s.cache, txStmts: stmts, tx: tx, conn: conn, rowCache: s.rowCache, root: s, stats: &txStats{}},
		notifier: s.notifier}
	t.docs, t.prices = &txDocs{}, map[string]string{}
	if s.d.HoldWrites {
		t.held = newHeldWrites()
	}
	if s.notifier != nil {
		t.toNotify = map[string]bool{}
	}
	if s.reads != nil {
		t.written = map[string]bool{}
	}
	if s.rowCache != nil {
		if t.txRows, err = s.rowCache.begin(ctx, t.executor); err != nil {
			t.Rollback()
			return nil, err
		}
	} else {
		t.txRows = &txSessions{rows: map[string]*logbook.Session{}} // the rows it locks
		t.owners = map[string]sessionOwner{}
	}
	return t, nil
}

// beginTx starts a transaction. Where the engine pipelines, it holds the
// connection too (conn: the transaction's, given back by releaseConn),
// and tries another connection where one turns out broken, as
// db.BeginTx does.
func (s *Store) beginTx(ctx context.Context) (tx *sql.Tx, conn *sql.Conn, err error) {
	if s.d.Pipeline == nil {
		tx, err = s.db.BeginTx(ctx, nil)
		return tx, nil, err
	}
	for range 3 {
		if conn, err = s.db.Conn(ctx); err != nil {
			return nil, nil, err
		}
		if tx, err = conn.BeginTx(ctx, nil); err == nil {
			return tx, conn, nil
		}
		conn.Close()
		if !errors.Is(err, driver.ErrBadConn) {
			break
		}
	}
	return nil, nil, err
}

type txStore struct {
	executor
	notifier *notifier
}

// Commit writes the transaction's changes to the statistics' rollups and
// commits.
func (t *txStore) Commit() error {
	defer t.releaseConn()
	if t.held != nil {
		if err := t.held.commit(context.Background(), t.executor); err != nil {
			t.Rollback()
			return err
		}
	}
	if err := t.flushDocs(context.Background()); err != nil {
		t.Rollback()
		return err
	}
	if err := t.flushStats(context.Background()); err != nil {
		t.Rollback()
		return err
	}
	if t.held != nil {
		if err := t.held.flush(context.Background(), t.executor); err != nil {
			t.Rollback()
			return err
		}
	}
	err := t.txRows.commit(t.tx.Commit)
	t.txStmts.prepareLater(context.Background())
	if err != nil {
		return t.interpretError(err, "committing transaction")
	}
	t.notifier.notify(t.toNotify)
	t.root.reads.wrote(t.written)
	return nil
}

// Savepoint marks a savepoint (see store.Tx). Where writes are held back
// it sends nothing yet (see heldWrites).
func (t *txStore) Savepoint(ctx context.Context) error {
	if t.held != nil {
		t.held.savepoint()
	} else if _, err := t.exec(ctx, `SAVEPOINT request`); err != nil {
		return t.interpretError(err, "marking a savepoint")
	}
	t.txRows.savepoint()
	t.stats.savepoint()
	t.docs.savepoint()
	return nil
}

func (t *txStore) RollbackToSavepoint(ctx context.Context) error {
	send := t.held == nil
	if t.held != nil {
		var err error
		if send, err = t.held.rollbackToSavepoint(); err != nil {
			return err
		}
	}
	if send {
		if _, err := t.direct().exec(ctx, `ROLLBACK TO SAVEPOINT request`); err != nil {
			return t.interpretError(err, "rolling back to a savepoint")
		}
	}
	t.txRows.rollbackToSavepoint()
	t.stats.rollbackToSavepoint()
	t.docs.rollbackToSavepoint()
	if t.held != nil {
		t.releaseSavepoint() // the held writes' savepoint is gone already
		return nil
	}
	return t.ReleaseSavepoint(ctx)
}

// ReleaseSavepoint keeps everything since the savepoint. Where writes are
// held back it sends nothing (see heldWrites.releaseSavepoint).
func (t *txStore) ReleaseSavepoint(ctx context.Context) error {
	if t.held != nil {
		t.held.releaseSavepoint()
	} else if _, err := t.exec(ctx, `RELEASE SAVEPOINT request`); err != nil {
		return t.interpretError(err, "releasing a savepoint")
	}
	t.releaseSavepoint()
	return nil
}

// releaseSavepoint drops the latest savepoint of what the transaction
// keeps in memory.
func (t *txStore) releaseSavepoint() {
	t.txRows.releaseSavepoint()
	t.stats.releaseSavepoint()
	t.docs.releaseSavepoint()
}

func (t *txStore) Rollback() error {
	defer t.releaseConn()
	err := t.tx.Rollback()
	t.txStmts.prepareLater(context.Background())
	if err != nil && !errors.Is(err, sql.ErrTxDone) {
		return t.interpretError(err, "rolling back transaction")
	}
	return nil
}

// releaseConn gives the connection the transaction held for pipelining
// back to the pool, once the transaction is over.
func (t *txStore) releaseConn() {
	if t.conn != nil {
		t.conn.Close() // ErrConnDone the second time, after Commit
	}
}

// executor runs the queries on a *sql.DB or a *sql.Tx.
type executor struct {
	q       querier
	d       Dialect
	cache   *stmtCache    // nil: statements are not cached
	txStmts *txStatements // inside a transaction, with cache
	tx      *sql.Tx       // set inside a transaction
	conn    *sql.Conn     // tx's connection, where the engine pipelines (Dialect.Pipeline)
	// rowCache keeps active sessions' rows (nil: none; see sessionCache);
	// txRows is a transaction's view of it.
	rowCache *sessionCache
	txRows   *txSessions
	// toNotify collects, inside a transaction on an engine that notifies
	// other replicas, the projects whose events it inserted, for the
	// notifier once it commits.
	toNotify map[string]bool
	// root is the store this executor runs on.
	root *Store
	// stats collects, inside a transaction, what its changes of sessions
	// add to the statistics' rollups (nil outside one).
	stats *txStats
	// written collects, inside a transaction of a store that reads from a
	// replica, the sessions whose entries it changed (see readRouter).
	written map[string]bool
	// docs collects, inside a transaction on an engine whose index writes
	// at savepoints, the documents of the entries it inserts (see txDocs;
	// nil otherwise).
	docs *txDocs
	// held holds back, inside a transaction on an engine that does (see
	// Dialect.HoldWrites), entries and session rows to write set-based;
	// access says what the next statement touches of them.
	held   *heldWrites
	access stmtAccess
	// prices keeps, inside a transaction, the prices each project's were
	// read as, stored (see ProjectPricesGet).
	prices map[string]string
	// owners remembers, inside a transaction on an engine without the
	// session cache, whose each session read or inserted in it is: what
	// its entries' documents are tagged with (see sessionDocContext), so
	// indexing an append does not read the row the append just read.
	owners map[string]sessionOwner
}

// sessionOwner is what never changes of a session and tags its entries'
// search documents: its project, actor and harness.
type sessionOwner struct{ project, actor, harness string }

// knownSession notes, inside a transaction, a session row it read or
// wrote (see executor.owners and txSessions.known).
func (e executor) knownSession(s *logbook.Session, locked bool) {
	e.txRows.known(*s, locked)
	if e.owners != nil {
		e.owners[s.ID] = sessionOwner{s.Project, s.Actor, s.Harness}
	}
}

// interpretError maps engine errors onto the logbook sentinels, so callers
// test errors.Is(err, logbook.ErrNotFound) or logbook.ErrUnavailable
// whatever the engine.
func (e executor) interpretError(err error, doing string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%s: %w", doing, logbook.ErrNotFound)
	case e.d.IsUniqueViolation(err):
		return fmt.Errorf("%s: %w: %v", doing, logbook.ErrConflict, err)
	case e.d.IsInvalidText != nil && e.d.IsInvalidText(err):
		return logbook.Invalid("", "a value holds a character the database cannot store (a NUL byte); remove it")
	default:
		return fmt.Errorf("error %s: %w", doing, e.d.unavailable(err))
	}
}

// queryStrings runs a query of one text column and returns its rows.
func (e executor) queryStrings(ctx context.Context, doing, query string, args ...any) ([]string, error) {
	rows, err := e.query(ctx, query, args...)
	if err != nil {
		return nil, e.interpretError(err, doing)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, e.interpretError(err, doing)
		}
		out = append(out, s)
	}
	return out, e.interpretError(rows.Err(), doing)
}

// micros and fromMicros convert between time.Time and the stored Unix
// microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

func fromNullMicros(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMicros(n.Int64)
	return &t
}

func (e executor) ProjectEnsure(ctx context.Context, name string, now time.Time) error {
	return e.writingOther().writeLater(ctx, piped{statement: statement{`INSERT INTO projects (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
		[]any{name, micros(now)}}, doing: "ensuring project"})
}

func (e executor) ProjectPolicyGet(ctx context.Context, name string) (string, error) {
	var policy string
	err := e.queryRow(ctx, `SELECT policy FROM projects WHERE name = $1`, name).Scan(&policy)
	return policy, e.interpretError(err, "reading policy")
}

func (e executor) ProjectPolicySet(ctx context.Context, name, policy string) error {
	res, err := e.exec(ctx, `UPDATE projects SET policy = $2 WHERE name = $1`, name, policy)
	if err != nil {
		return e.interpretError(err, "storing policy")
	}
	return e.expectOne(res, "storing policy")
}

func (e executor) KeyEnsure(ctx context.Context, name, value string, now time.Time) (string, error) {
	if _, err := e.exec(ctx, `INSERT INTO keys (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
		name, value, micros(now)); err != nil {
		return "", e.interpretError(err, "storing key")
	}
	var stored string
	err := e.queryRow(ctx, `SELECT value FROM keys WHERE name = $1`, name).Scan(&stored)
	return stored, e.interpretError(err, "reading key")
}

func (e executor) TokenInsert(ctx context.Context, t *logbook.Token) error {
	_, err := e.exec(ctx, `INSERT INTO tokens (id, hash, project, actor, admin, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		t.ID, t.Hash, t.Project, t.Actor, t.Admin, micros(t.CreatedAt))
	return e.interpretError(err, "storing token")
}

func (e executor) TokenGetByHash(ctx context.Context, hash string) (logbook.Token, error) {
	var t logbook.Token
	var created int64
	var revoked sql.NullInt64
	err := e.queryRow(ctx, `SELECT id, hash, project, actor, admin, created_at, revoked_at FROM tokens WHERE hash = $1 AND revoked_at IS NULL`, hash).
		Scan(&t.ID, &t.Hash, &t.Project, &t.Actor, &t.Admin, &created, &revoked)
	t.CreatedAt, t.RevokedAt = fromMicros(created), fromNullMicros(revoked)
	return t, e.interpretError(err, "reading token")
}

func (e executor) TokenAdminExists(ctx context.Context) (bool, error) {
	var n int
	err := e.queryRow(ctx, `SELECT COUNT(*) FROM tokens WHERE admin AND revoked_at IS NULL`).Scan(&n)
	return n > 0, e.interpretError(err, "counting admin tokens")
}
