// Package sqlitestore is logbook's embedded engine: a SQLite file through
// the pure Go driver modernc.org/sqlite, so the binary needs no C library.
//
// The queries are shared with PostgreSQL in package sqlstore; this package
// opens the file, applies its migrations and says how SQLite reports a
// unique-key clash.
package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store/migrate"
	"github.com/logbookhq/logbook/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Open opens (creating if needed) the SQLite database at path and brings
// its schema up to date.
func Open(ctx context.Context, path string) (*sqlstore.Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("error creating the database folder %s: %w", dir, err)
		}
	}
	if err := sqlstore.CreatePrivate(path); err != nil {
		return nil, fmt.Errorf("error creating the database file: %w", err)
	}
	// WAL lets readers go on while a write commits and survives a crash of
	// the process without losing a committed transaction; synchronous=FULL
	// syncs the log on every commit, so what was acknowledged survives a
	// power cut too. busy_timeout makes a second process (a CLI command
	// next to the server) wait for the lock instead of failing at once.
	// Foreign keys are off by default in SQLite; the schema relies on them
	// for cascading deletes. temp_store=MEMORY keeps the statement journal
	// in memory: the service's group commit runs each request under a
	// savepoint, and SQLite otherwise spills that journal to a temporary
	// file and writes every page a request changes into it.
	// wal_autocheckpoint(8000) copies the log back into the file once it
	// holds 8,000 pages (32 MiB) instead of SQLite's 1,000: appends keep
	// changing the same few hundred pages (the active sessions' rows and
	// the ends of the entry indexes), and a checkpoint copies each page
	// once however often the log holds it, so the work per append drops
	// (`logbook bench --batch 1`: about 10% more appends a second; see
	// BENCHMARKS.md). analysis_limit bounds ANALYZE (see refreshStatistics).
	q := url.Values{}
	for _, pragma := range []string{"journal_mode(WAL)", "synchronous(FULL)", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()), "foreign_keys(1)", "temp_store(MEMORY)", "wal_autocheckpoint(8000)", fmt.Sprintf("analysis_limit(%d)", analysisLimit)} {
		q.Add("_pragma", pragma)
	}
	// Transactions take the write lock when they begin (BEGIN IMMEDIATE):
	// a transaction that began as a reader and then writes fails at once
	// with SQLITE_BUSY when another connection (a CLI command beside the
	// server) wrote meanwhile, whereas one that locks first waits its turn
	// under busy_timeout. logbook opens transactions only to write.
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("error opening SQLite database %s: %w", path, err)
	}
	// One connection: SQLite has one writer at a time anyway, and a single
	// connection turns every transaction into a queue in database/sql
	// instead of SQLITE_BUSY errors under concurrent requests.
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("error opening SQLite database %s: %w (is the folder writable?)", path, err)
	}
	steps, err := migrate.Load(migrations, "migrations")
	if err != nil {
		db.Close()
		return nil, err
	}
	if _, err := migrate.Apply(ctx, db, steps, nil); err != nil {
		db.Close()
		return nil, fmt.Errorf("error migrating SQLite database %s: %w", path, err)
	}
	st := sqlstore.New(db, sqlstore.Dialect{
		Name:              "sqlite",
		ForUpdate:         "",
		IsUniqueViolation: isUniqueViolation,
		InsertRows:        25,
		SnapshotBeginSQL:  "BEGIN DEFERRED",
		ExplainPrefix:     "EXPLAIN QUERY PLAN ",
		// Statistics let the planner start a filtered list from the filter's
		// own index (links of one issue) instead of walking every session.
		// The sweeper refreshes them, on the connection every read and
		// write waits for.
		Optimize: func(ctx context.Context, db *sql.DB) error {
			return refreshStatistics(ctx, db, countUpTo)
		},
		SingleWriter:    true,
		CacheStatements: true,
		Positional:      true,
		Unavailable:     unavailable,
		// VACUUM INTO reads one consistent snapshot (other connections
		// keep writing meanwhile, thanks to WAL) and writes a compact copy.
		BackupSQL: `VACUUM INTO $1`,
		// Moves when another process commits to the file: the store keeps
		// active sessions' rows in memory only while nobody else writes.
		DataVersionSQL: "PRAGMA data_version",
		// FTS5, with the words logbook makes (migration 0015).
		Search: sqlstore.FTS5,
	})
	if err := tune(ctx, db, func(ctx context.Context) error { return forgetValueSamples(ctx, db) }); err != nil {
		st.Close()
		return nil, fmt.Errorf("error clearing the planner's samples in %s: %w", path, err)
	}
	if err := tune(ctx, db, st.Optimize); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// busyTimeout is how long a statement waits for a lock another process
// holds (PRAGMA busy_timeout); tuneWait how long Open waits to tune the
// planner (see tune).
const (
	busyTimeout = 10 * time.Second
	tuneWait    = time.Second
)

// tune runs a step of Open that tunes the planner, clearing its samples or
// refreshing its statistics. Both write to the file, so they wait for its
// write lock, which a server writing to the same file may hold back to
// back for longer than busy_timeout: a command that opens a live database
// (an export, `logbook migrate` beside a running server) gives them
// tuneWait, then goes on without them, as it does on a read-only file.
// The store works with the statistics it has; the server's sweeper
// refreshes them. db's one connection waits tuneWait for a lock meanwhile
// (nothing else uses the store yet).
func tune(ctx context.Context, db *sql.DB, step func(context.Context) error) error {
	if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", tuneWait.Milliseconds())); err != nil {
		return err
	}
	err := step(ctx)
	if _, resetErr := db.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", busyTimeout.Milliseconds())); resetErr != nil {
		return resetErr
	}
	if _, busy := unavailable(err); err != nil && (busy || errors.Is(err, logbook.ErrUnavailable)) {
		return nil
	}
	return err
}

// unavailable reads SQLite's result codes for "the database cannot serve
// this now" (an extended code carries its primary code in its low byte):
// a full disk, a read-only file, a disk error, a lock another process
// holds past busy_timeout.
func unavailable(err error) (reason string, ok bool) {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return "", false
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_FULL:
		return "the database's disk is full; free space on the server, then retry (nothing acknowledged was lost)", true
	case sqlite3.SQLITE_READONLY:
		return "the database file is read-only; make it writable on the server, then retry (nothing acknowledged was lost)", true
	case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
		return "the database file cannot be read or written right now (disk error or full disk); retry shortly", true
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return "the database is busy; retry shortly", true
	}
	return "", false
}

func isUniqueViolation(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}
