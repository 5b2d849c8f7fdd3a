package sqlitestore

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRefreshStatistics: a table that grew tenfold gets statistics for
// its new size. Up to maxCounted rows it is analyzed (counted); beyond, its
// counts are scaled to the span of its rowids and the rest kept, so the
// server does not stop for an ANALYZE of a large table. An index without
// statistics has the table analyzed, whatever its size.
func TestRefreshStatistics(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db := st.DB()
	exec := func(query string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, query); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	stat := func(index string) string {
		t.Helper()
		var s string
		if err := db.QueryRowContext(ctx, `SELECT stat FROM sqlite_stat1 WHERE idx = ?`, index).Scan(&s); err != nil {
			t.Fatalf("statistics of %s: %v", index, err)
		}
		return s
	}
	insert := func(from, to int) { // rows with ids from..to, ten keys
		t.Helper()
		_, err := db.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO t (id, k) SELECT i, i % 10 FROM n`, from, to)
		if err != nil {
			t.Fatal(err)
		}
	}
	refresh := func(maxCounted int64) {
		t.Helper()
		if err := refreshStatistics(ctx, db, maxCounted); err != nil {
			t.Fatal(err)
		}
	}

	// 100 rows, ten to a key.
	exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER NOT NULL)`)
	exec(`CREATE INDEX t_k ON t (k)`)
	insert(1, 100)
	refresh(1000)
	if got := stat("t_k"); got != "100 10" {
		t.Fatalf("after the first refresh t_k = %q, want 100 rows, 10 a key", got)
	}

	// Grown 50-fold, with a gap: 4,000 rows over rowids 1 to 5,000.
	insert(101, 5000)
	exec(`DELETE FROM t WHERE id BETWEEN 2001 AND 3000`)
	refresh(1000)
	if got := stat("t_k"); got != "5000 10" {
		t.Errorf("over maxCounted, t_k = %q, want the counts scaled to the rowid span and the shape kept: 5000 10", got)
	}
	tables, err := tablesToAnalyze(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(tables, "t") {
		t.Errorf("after scaling, SQLite still lists t as needing statistics (%v): the planner did not reload them", tables)
	}

	// A new index has no statistics: the table is counted, big or not.
	exec(`CREATE INDEX t_k_id ON t (k, id)`)
	refresh(1000)
	if got := stat("t_k"); !strings.HasPrefix(got, "4000 ") {
		t.Errorf("with a new index, t_k = %q, want 4000 rows counted", got)
	}
	stat("t_k_id")

	// Shrunk tenfold, under maxCounted: counted again.
	exec(`DELETE FROM t WHERE id > 300`)
	refresh(1000)
	if got := stat("t_k"); got != "300 30" {
		t.Errorf("shrunk under maxCounted, t_k = %q, want 300 30", got)
	}
}
