package sqlitestore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
	"github.com/logbookhq/logbook/internal/store/sqlstore"
	"github.com/logbookhq/logbook/internal/store/storetest"
	"github.com/logbookhq/logbook/internal/testdb"
)

var _ store.Store = (*sqlstore.Store)(nil)

func TestConformance(t *testing.T) { storetest.Run(t, testdb.SQLite) }

// TestOpenWhileAnotherProcessWrites: a command opening a database a server
// is writing to (an export beside a running server) opens it even when it
// cannot get the write lock to refresh the planner's statistics: the
// server's transaction holds it here from before the open to after.
func TestOpenWhileAnotherProcessWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "live.db")
	server, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	// Enough projects that the table grew tenfold since its statistics:
	// an open then wants to analyze it, which writes.
	for i := range 200 {
		if err := server.ProjectEnsure(ctx, fmt.Sprint("p", i), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := server.DB().BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO projects (name, created_at) VALUES ('held', 1)`); err != nil {
		t.Fatal(err)
	}
	st, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatalf("opening a database another connection writes to: %v", err)
	}
	defer st.Close()
	var n int
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM projects`).Scan(&n); err != nil || n != 200 {
		t.Fatalf("projects read by the second store = %d (%v), want the 200 committed", n, err)
	}
}

// TestReopen checks that opening an existing file migrates nothing again
// and keeps its rows.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	st, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ProjectEnsure(ctx, "p", time.Now()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	defer st.Close()
	var n int
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM projects`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("projects after reopen = %d (%v), want 1", n, err)
	}
	var mode string
	if err := st.DB().QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q (%v), want wal", mode, err)
	}
}

// TestStatisticsWithoutSamples: the planner's statistics are gathered, but
// no samples of indexed values (sqlite_stat4), which would have SQLite
// prepare the hot statements again whenever a parameter changes; samples an
// earlier version gathered are dropped when the file is opened.
func TestStatisticsWithoutSamples(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	st, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	count := func(query string) int {
		t.Helper()
		var n int
		if err := st.DB().QueryRowContext(ctx, query).Scan(&n); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return n
	}
	for _, p := range []string{"a", "b", "c"} {
		if err := st.ProjectEnsure(ctx, p, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Optimize(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT COUNT(*) FROM sqlite_stat1 WHERE tbl = 'projects'`); n == 0 {
		t.Error("optimizing gathered no statistics for a table that gained rows")
	}
	if n := count(`SELECT COUNT(*) FROM sqlite_stat4`); n != 0 {
		t.Errorf("optimizing gathered %d samples of values, want none", n)
	}

	// An earlier version ran a full ANALYZE, which samples values.
	if _, err := st.DB().ExecContext(ctx, `PRAGMA analysis_limit = 0; ANALYZE`); err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT COUNT(*) FROM sqlite_stat4 WHERE tbl = 'projects'`); n == 0 {
		t.Fatal("a full ANALYZE sampled nothing; the test needs samples to start from")
	}
	st.Close()
	if st, err = sqlitestore.Open(ctx, path); err != nil {
		t.Fatalf("reopening: %v", err)
	}
	defer st.Close()
	if n := count(`SELECT COUNT(*) FROM sqlite_stat4`); n != 0 {
		t.Errorf("after reopening, %d samples of values are left, want none", n)
	}
	if n := count(`SELECT COUNT(*) FROM sqlite_stat1 WHERE tbl = 'projects'`); n == 0 {
		t.Error("reopening dropped the statistics too")
	}
}

func BenchmarkStore(b *testing.B) { storetest.Bench(b, testdb.SQLite) }
