package sqlitestore_test

import (
	"context"
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

func BenchmarkStore(b *testing.B) { storetest.Bench(b, testdb.SQLite) }
