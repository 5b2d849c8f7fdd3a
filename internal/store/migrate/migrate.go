// Package migrate applies an engine's numbered SQL migrations.
//
// Migrations are files named NNNN_name.up.sql in an fs.FS (embedded in the
// binary by each engine). Versions are positive and each is used once; a
// version may be missing (a number reserved for work that lands later, in
// any order). Each is applied once, in its own transaction, in version
// order among those not applied yet, and recorded in schema_migrations:
// a number that lands after a higher one was applied is applied then.
// Migrations are additive: a new column or table, never a rewrite of live
// rows without a backfill plan.
package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Migration is one numbered step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Load reads the migrations in dir of fsys, in version order, and checks
// that each version is positive and used once.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	files, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("error reading migrations: %w", err)
	}
	var migrations []Migration
	for _, f := range files {
		name, ok := strings.CutSuffix(f.Name(), ".up.sql")
		if !ok {
			continue
		}
		number, label, ok := strings.Cut(name, "_")
		version, err := strconv.Atoi(number)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration file %q: name it NNNN_name.up.sql", f.Name())
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, f.Name()))
		if err != nil {
			return nil, fmt.Errorf("error reading migration %q: %w", f.Name(), err)
		}
		migrations = append(migrations, Migration{Version: version, Name: label, SQL: string(body)})
	}
	sort.Slice(migrations, func(i, j int) bool { return migrations[i].Version < migrations[j].Version })
	for i, m := range migrations {
		if m.Version < 1 {
			return nil, fmt.Errorf("migration %q: number it from 1", m.Name)
		}
		if i > 0 && migrations[i-1].Version == m.Version {
			return nil, fmt.Errorf("migrations %q and %q have the same number %d: give each its own", migrations[i-1].Name, m.Name, m.Version)
		}
	}
	return migrations, nil
}

// Apply brings db up to the newest migration and returns the versions it
// applied. lock, when not nil, runs inside the first statement's
// transaction to keep several processes from migrating at once (PostgreSQL
// takes an advisory lock there; SQLite's single writer needs none).
//
// The versions already applied are read first, outside any transaction:
// a process opening a database that is up to date (a CLI command beside
// a running server) then takes no write lock at all. Each migration still
// to apply is checked again under the lock, in its own transaction.
func Apply(ctx context.Context, db *sql.DB, migrations []Migration, lock func(context.Context, *sql.Tx) error) ([]int, error) {
	before := appliedVersions(ctx, db)
	var applied []int
	for _, m := range migrations {
		if before[m.Version] {
			continue
		}
		done, err := applyOne(ctx, db, m, lock)
		if err != nil {
			return applied, err
		}
		if done {
			applied = append(applied, m.Version)
		}
	}
	return applied, nil
}

// appliedVersions reads which migrations db has, or none where it cannot
// tell (no schema_migrations yet): applyOne finds out under the lock.
func appliedVersions(ctx context.Context, db *sql.DB) map[int]bool {
	versions := map[int]bool{}
	rows, err := db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return versions
	}
	defer rows.Close()
	for rows.Next() {
		var v int
		if rows.Scan(&v) != nil {
			return map[int]bool{}
		}
		versions[v] = true
	}
	if rows.Err() != nil {
		return map[int]bool{}
	}
	return versions
}

func applyOne(ctx context.Context, db *sql.DB, m Migration, lock func(context.Context, *sql.Tx) error) (bool, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("error starting migration %d: %w", m.Version, err)
	}
	defer tx.Rollback()
	if lock != nil {
		if err := lock(ctx, tx); err != nil {
			return false, fmt.Errorf("error locking for migration %d: %w", m.Version, err)
		}
	}
	// Created under the lock: two PostgreSQL replicas creating it at once
	// would clash in the catalog even with IF NOT EXISTS.
	const create = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version BIGINT PRIMARY KEY,
		name TEXT NOT NULL,
		applied_at BIGINT NOT NULL)`
	if _, err := tx.ExecContext(ctx, create); err != nil {
		return false, fmt.Errorf("error creating schema_migrations: %w", err)
	}
	var count int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = $1`, m.Version).Scan(&count); err != nil {
		return false, fmt.Errorf("error reading schema_migrations: %w", err)
	}
	if count > 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return false, fmt.Errorf("error applying migration %d (%s): %w", m.Version, m.Name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
		m.Version, m.Name, time.Now().UnixMicro()); err != nil {
		return false, fmt.Errorf("error recording migration %d: %w", m.Version, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("error committing migration %d: %w", m.Version, err)
	}
	return true, nil
}
