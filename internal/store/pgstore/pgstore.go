// Package pgstore is logbook's PostgreSQL engine, through pgx, for several
// logbook replicas on one database.
//
// The queries are shared with SQLite in package sqlstore; this package
// connects, applies its migrations under an advisory lock (so replicas
// starting together migrate once), locks rows with FOR UPDATE and says how
// PostgreSQL reports a unique-key clash.
package pgstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/logbookhq/logbook/internal/store/migrate"
	"github.com/logbookhq/logbook/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// NotifyChannel is the LISTEN/NOTIFY channel on which a replica that
// commits events wakes the followers of every other replica.
const NotifyChannel = "logbook_events"

// migrationLockID is the advisory lock key replicas take while migrating.
const migrationLockID = 7474_0001

// Open connects to the PostgreSQL database at url (postgres://…) and brings
// its schema up to date.
func Open(ctx context.Context, url string) (*sqlstore.Store, error) {
	cfg, db, err := connect(ctx, url, "PostgreSQL")
	if err != nil {
		return nil, err
	}
	steps, err := migrate.Load(migrations, "migrations")
	if err != nil {
		db.Close()
		return nil, err
	}
	lock := func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLockID)
		return err
	}
	if _, err := migrate.Apply(ctx, db, steps, lock); err != nil {
		db.Close()
		return nil, fmt.Errorf("error migrating PostgreSQL database: %w", err)
	}
	st := sqlstore.New(db, sqlstore.Dialect{
		Name:               "postgres",
		ForUpdate:          " FOR UPDATE",
		IsUniqueViolation:  isUniqueViolation,
		InsertRows:         500,
		SnapshotBeginSQL:   "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
		OverridingIdentity: " OVERRIDING SYSTEM VALUE",
		IdentityPastSQL: `SELECT setval(pg_get_serial_sequence('%[1]s', '%[2]s'),
			GREATEST((SELECT MAX(%[2]s) FROM %[1]s), nextval(pg_get_serial_sequence('%[1]s', '%[2]s'))))`,
		ForUpdateSkipLocked: " FOR UPDATE SKIP LOCKED",
		ExplainPrefix:       "EXPLAIN ",
		IsInvalidText:       isInvalidText,
		// Transaction-scoped advisory locks in a space of their own
		// (two keys: 74740004 and the subject's).
		ClaimLockSQL: `SELECT count(CASE WHEN l.ex THEN pg_advisory_xact_lock(74740004, l.k)::text
			ELSE pg_advisory_xact_lock_shared(74740004, l.k)::text END) FROM json_to_recordset($1::json) AS l(k int, ex boolean)`,
		TryLockSQL:          `SELECT pg_try_advisory_xact_lock(74740003)`,
		SequenceAfterCommit: true,
		SequenceLockSQL:     `SELECT pg_try_advisory_xact_lock(74740002)`,
		NotifySQL:           `SELECT pg_notify('` + NotifyChannel + `', $1)`,
		Unavailable:         unavailable,
		NoBackup:            ErrBackup,
		// A connection runs one transaction at a time, so transactions
		// that run side by side add to different rollup rows unless their
		// connections' process ids agree modulo 16.
		StatsShardSQL: `pg_backend_pid() % 16`,
		ModifyingCTEs: true,
		HoldWrites:    true,
		Pipeline:      pipeline,
		// Each pair through the (session_id, key) index: the LIMIT keeps
		// the planner from joining the pairs with the entries any other
		// way (scanning a session's entries).
		SessionIDsInSQL: `id = ANY($1::text[])`,
		StoredKeysSQL: `SELECT p.s, p.k FROM unnest($1::text[], $2::text[]) AS p (s, k)
			CROSS JOIN LATERAL (SELECT 1 FROM entries AS e WHERE e.session_id = p.s AND e.key = p.k LIMIT 1) AS stored`,
		StoredTouchesSQL: `SELECT p.s, p.k, p.v, t.first_at FROM unnest($1::text[], $2::text[], $3::text[]) AS p (s, k, v)
			CROSS JOIN LATERAL (SELECT first_at FROM touches WHERE session_id = p.s AND kind = p.k AND value = p.v) AS t`,
		// SHARE mode lets sessions and touches be read and locked FOR
		// UPDATE, not changed. Waiting for it holds back the writers queued
		// behind, so the backfill waits at most 200 ms and tries again later.
		StatsBackfillLockSQL: []string{`SET LOCAL lock_timeout = '200ms'`, `LOCK TABLE sessions, touches IN SHARE MODE`},
		IsLockTimeout:        isLockTimeout,
		// tsvector columns with GIN indexes, holding the words logbook
		// makes (migration 0015).
		Search:    sqlstore.TSVector,
		FreshPlan: pgx.QueryExecModeExec,
		// Entries are partitioned by the month of their session
		// (migration 0026).
		MonthPartitions: true,
	})
	st.ListenFunc = func(ctx context.Context, wake func()) error { return listen(ctx, cfg, wake) }
	return st, nil
}

// connect opens a pool of connections to the database at url (what, in
// errors: which database it is) and checks that it answers.
func connect(ctx context.Context, url, what string) (*pgx.ConnConfig, *sql.DB, error) {
	cfg, err := pgconnConfig(url)
	if err != nil {
		return nil, nil, err
	}
	// logbook's queries are short index walks; PostgreSQL's JIT compiler,
	// which it starts for plans it guesses to be costly, spends ~100 ms
	// compiling a query that runs in 1 ms.
	cfg.RuntimeParams["jit"] = "off"
	// Nor does a page of 50 gain from parallel workers: starting them cost
	// more than the walk itself (a list filtered by words in titles, 1M
	// sessions, 2 cores: 68 ms with two workers, 10 ms without).
	cfg.RuntimeParams["max_parallel_workers_per_gather"] = "0"
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("error connecting to %s at %s: %w (is it running, and does the database exist?)", what, redactURL(url), err)
	}
	return cfg, db, nil
}

// ReadFrom connects to a read replica of st's database at url (a
// streaming standby, or any copy as current) and sends st's lists,
// searches, statistics and transcript reads there while it is at most
// maxLag behind, a session's transcript only once it has what this
// process committed to it (see sqlstore.Replica). The replica is not
// migrated: it follows the primary's schema.
func ReadFrom(ctx context.Context, st *sqlstore.Store, url string, maxLag time.Duration, log *slog.Logger) error {
	_, db, err := connect(ctx, url, "the read replica")
	if err != nil {
		return err
	}
	st.ReadFrom(sqlstore.Replica{DB: db, MaxLag: maxLag, Log: log,
		PrimaryPositionSQL: PrimaryPositionSQL, ReplayedPositionSQL: ReplayedPositionSQL})
	return nil
}

// PrimaryPositionSQL answers the primary's WAL position as a number;
// ReplayedPositionSQL a standby's replayed position, NULL on a server that
// is no standby.
const (
	PrimaryPositionSQL  = `SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::BIGINT`
	ReplayedPositionSQL = `SELECT (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::BIGINT`
)

// ErrBackup is what Backup answers: PostgreSQL's own tools take a
// consistent copy of a live database.
var ErrBackup = errors.New(`logbook does not copy a PostgreSQL database itself; use pg_dump, which takes a consistent snapshot while logbook runs:
  pg_dump --format=custom --file=PATH "postgres://USER@HOST:5432/DB"
and restore it into an empty database with:
  pg_restore --no-owner --dbname="postgres://USER@HOST:5432/NEWDB" PATH`)

// unavailable reads PostgreSQL's codes for "the database cannot serve this
// now": whatever the server said while connecting (restarting, refusing
// connections, too many clients) means the request did not reach it;
// class 08 is a connection exception; 57P01-57P03 a server shutting down,
// crashed or not yet accepting connections; 53300 too many connections;
// 40001 and 40P01 a transaction that lost to a concurrent one (a
// serialization failure, a deadlock) and may simply be sent again.
func unavailable(err error) (reason string, ok bool) {
	var connectErr *pgconn.ConnectError
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &connectErr), errors.Is(err, pgconn.ErrConnClosed), pgconn.Timeout(err):
		return sqlstore.Unreachable, true
	case errors.As(err, &pgErr):
		switch code := pgErr.Code; {
		case strings.HasPrefix(code, "08"), code == "57P01", code == "57P02", code == "57P03", code == "53300":
			return sqlstore.Unreachable, true
		case code == "40001", code == "40P01":
			return "the database gave way to a concurrent request; retry shortly (nothing of this one was stored)", true
		}
	}
	return "", false
}

// isInvalidText: 22021 character_not_in_repertoire (a NUL byte in text),
// 22P05 untranslatable_character.
func isInvalidText(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && (e.Code == "22021" || e.Code == "22P05")
}

// isLockTimeout: 55P03 lock_not_available (lock_timeout ran out).
func isLockTimeout(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "55P03"
}

func isUniqueViolation(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23505"
}

// pipeline runs statements that answer no rows in one round trip on a
// transaction's connection (sqlstore.Dialect.Pipeline): pgx sends them
// all, then one Sync, and PostgreSQL answers them together. It answers
// how many rows each changed, up to the first that failed.
func pipeline(ctx context.Context, driverConn any, queries []string, args [][]any) ([]int64, error) {
	conn, ok := driverConn.(*stdlib.Conn)
	if !ok {
		return nil, fmt.Errorf("pipelining statements: the connection is a %T, not pgx's", driverConn)
	}
	batch := &pgx.Batch{}
	for i, q := range queries {
		batch.Queue(q, args[i]...)
	}
	results := conn.Conn().SendBatch(ctx, batch)
	changed := make([]int64, 0, len(queries))
	for range queries {
		tag, err := results.Exec()
		if err != nil {
			results.Close()
			return changed, err
		}
		changed = append(changed, tag.RowsAffected())
	}
	return changed, results.Close()
}
