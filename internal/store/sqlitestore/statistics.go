package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// analysisLimit bounds how many entries of each index ANALYZE reads to
// estimate how many rows a key selects (PRAGMA analysis_limit; it is set
// on every connection). A bounded ANALYZE also gathers no samples of values
// (see forgetValueSamples).
const analysisLimit = 2000

// countUpTo is the largest table whose statistics are refreshed by
// analyzing it. ANALYZE counts every entry of each of the table's indexes,
// limit or not (SQLite 3.54): 4.3 s for the 6 million entries of a server
// under load, 22 s for 20 million from a cold page cache (BENCHMARKS.md,
// ninth pass); at this size, well under a second even from a cold cache.
const countUpTo = 100_000

// refreshStatistics keeps the planner's statistics (sqlite_stat1) in step
// with tables that grow or shrink, without the long pause of analyzing a
// large table: the server has one connection, so every read and write
// waits for an ANALYZE.
//
// SQLite decides which tables need it, as PRAGMA optimize does on its own
// (a table that grew or shrank tenfold since its statistics were taken, or
// has an index without statistics); it is asked only to list them. A table
// of up to maxCounted rows is analyzed. A larger one that has statistics
// keeps their shape, how many rows a key of each index selects, and its
// counts of rows are scaled to its size now, estimated from the span of its
// rowids. A large table with an index that never had statistics is
// analyzed once: there is no shape to scale.
func refreshStatistics(ctx context.Context, db *sql.DB, maxCounted int64) error {
	tables, err := tablesToAnalyze(ctx, db)
	if err != nil {
		return fmt.Errorf("error asking SQLite which tables need statistics: %w", err)
	}
	scaled := false
	for _, table := range tables {
		quoted := quoteName(table)
		// A table without rowids (the statistics' rollups, small) is
		// analyzed.
		var withoutRowid bool
		err := db.QueryRowContext(ctx, `SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?`, table).Scan(&withoutRowid)
		if err != nil {
			return fmt.Errorf("error reading the kind of table %s: %w", table, err)
		}
		var size int64
		if !withoutRowid {
			// Two subqueries: SQLite finds a lone max() or min() at an end
			// of the table, but scans the table for both in one.
			err = db.QueryRowContext(ctx, `SELECT coalesce((SELECT max(rowid) FROM `+quoted+`) - (SELECT min(rowid) FROM `+quoted+`) + 1, 0)`).Scan(&size)
			if err != nil {
				return fmt.Errorf("error estimating the size of table %s: %w", table, err)
			}
		}
		if size > maxCounted {
			done, err := scaleStatistics(ctx, db, table, size)
			if err != nil {
				return fmt.Errorf("error scaling the statistics of table %s: %w", table, err)
			}
			if done {
				scaled = true
				continue
			}
		}
		if _, err := db.ExecContext(ctx, `ANALYZE `+quoted); err != nil {
			return fmt.Errorf("error analyzing table %s: %w", table, err)
		}
	}
	if scaled {
		// The planner reads sqlite_stat1 when it is analyzed, not when it
		// is written; this reloads it.
		if _, err := db.ExecContext(ctx, `ANALYZE sqlite_schema`); err != nil {
			return fmt.Errorf("error reloading the planner's statistics: %w", err)
		}
	}
	return nil
}

// tablesToAnalyze lists the tables that PRAGMA optimize would analyze:
// 0x10000 looks at every table, 0x02 analyzes, and 0x01 only lists the
// statements (ANALYZE "main"."entries") instead of running them. The
// search index's own tables (FTS5's shadow tables, read by their keys
// only) are left out.
func tablesToAnalyze(ctx context.Context, db *sql.DB) ([]string, error) {
	shadow, err := shadowTables(ctx, db)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `PRAGMA optimize=0x10003`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var stmt string
		if err := rows.Scan(&stmt); err != nil {
			return nil, err
		}
		_, name, ok := strings.Cut(stmt, `"."`)
		if !ok || !strings.HasSuffix(name, `"`) {
			return nil, fmt.Errorf("unexpected statement %q", stmt)
		}
		if name := strings.ReplaceAll(strings.TrimSuffix(name, `"`), `""`, `"`); !shadow[name] {
			tables = append(tables, name)
		}
	}
	return tables, rows.Err()
}

// shadowTables names the tables a virtual table keeps its data in.
func shadowTables(ctx context.Context, db *sql.DB) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_list WHERE type = 'shadow'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		names[name] = true
	}
	return names, rows.Err()
}

// scaleStatistics multiplies the counts of rows in table's statistics by
// size over the size they were taken at, and keeps how many rows each key
// selects. It reports false, and changes nothing, when an index of the
// table has no statistics (a new index needs its shape measured) or the
// table has none at all.
func scaleStatistics(ctx context.Context, db *sql.DB, table string, size int64) (bool, error) {
	type statRow struct {
		index  sql.NullString // NULL: the table's own row, for a table without indexes
		fields []string       // the stat: rows, then rows per key of the first 1, 2, … columns
		rows   int64          // fields[0]
	}
	// Every index of the table with its statistics, and the table's own row.
	rows, err := db.QueryContext(ctx, `
		SELECT l.name, l.partial, s.stat
		FROM pragma_index_list(?1) l LEFT JOIN sqlite_stat1 s ON s.tbl = ?1 AND s.idx = l.name
		UNION ALL
		SELECT NULL, 0, stat FROM sqlite_stat1 WHERE tbl = ?1 AND idx IS NULL`, table)
	if err != nil {
		return false, err
	}
	var stats []statRow
	var was int64 // the table's rows when the statistics were taken
	missing := false
	for rows.Next() {
		var r statRow
		var partial bool
		var stat sql.NullString
		if err := rows.Scan(&r.index, &partial, &stat); err != nil {
			rows.Close()
			return false, err
		}
		r.fields = strings.Fields(stat.String)
		if len(r.fields) == 0 {
			missing = true
			continue
		}
		r.rows, _ = strconv.ParseInt(r.fields[0], 10, 64)
		if !partial { // a partial index holds some of the rows only
			was = max(was, r.rows)
		}
		stats = append(stats, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil || missing || was == 0 {
		return false, err
	}

	factor := float64(size) / float64(was)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	for _, r := range stats {
		scaled := int64(math.Round(float64(r.rows) * factor))
		if r.rows > 0 {
			scaled = max(scaled, 1)
		}
		r.fields[0] = strconv.FormatInt(scaled, 10)
		// Each further number is how many rows a key of the index's first
		// columns selects on average, which cannot exceed the index's rows.
		for i := 1; i < len(r.fields); i++ {
			if v, err := strconv.ParseInt(r.fields[i], 10, 64); err == nil && v > max(scaled, 1) {
				r.fields[i] = strconv.FormatInt(max(scaled, 1), 10)
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE sqlite_stat1 SET stat = ? WHERE tbl = ? AND idx IS ?`,
			strings.Join(r.fields, " "), table, r.index)
		if err != nil {
			return false, err
		}
	}
	return true, tx.Commit()
}

// forgetValueSamples deletes the samples of indexed values (sqlite_stat4)
// that a full ANALYZE gathers, as earlier versions of logbook ran it. With
// samples, SQLite plans a statement for the values bound to it, and
// prepares it again whenever a sampled parameter's value changes: on a
// large file every start, claim and end of a session re-prepared its
// statements, a fifth of the appends a second (BENCHMARKS.md). The
// statistics of sqlite_stat1 stay; the planner reads them again.
func forgetValueSamples(ctx context.Context, db *sql.DB) error {
	var exists bool
	err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat4')`).Scan(&exists)
	if err != nil || !exists {
		return err
	}
	// Only a table holding samples is written to: a DELETE takes the write
	// lock even when it deletes nothing.
	if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_stat4)`).Scan(&exists); err != nil || !exists {
		return err
	}
	res, err := db.ExecContext(ctx, `DELETE FROM sqlite_stat4`)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	_, err = db.ExecContext(ctx, `ANALYZE sqlite_schema`) // reloads the statistics
	return err
}

// quoteName quotes an SQL identifier.
func quoteName(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
