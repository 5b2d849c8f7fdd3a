package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
	"github.com/logbookhq/logbook/internal/store/sqlstore"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestFreshStore: the raw baseline gets an empty, migrated database of the
// load's engine beside the load's, which its cleanup removes, and the
// load's database keeps what it held.
func TestFreshStore(t *testing.T) {
	open := func(ctx context.Context, db string) (store.Store, error) {
		if strings.HasPrefix(db, "postgres://") {
			return pgstore.Open(ctx, db)
		}
		return sqlitestore.Open(ctx, db)
	}
	ctx := context.Background()
	sqlitePath := filepath.Join(t.TempDir(), "load.db")
	for _, dsn := range []string{sqlitePath, testdb.PostgresURL(t)} {
		st, err := open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if _, err := RawInsert(ctx, st, "load", 10); err != nil {
			t.Fatal(err)
		}
		fresh, cleanup, err := FreshStore(ctx, st, dsn, open)
		if err != nil {
			t.Fatalf("%s: %v", st.Engine(), err)
		}
		count := func(s store.Store) (n int) {
			t.Helper()
			if err := s.(*sqlstore.Store).DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM entries`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := count(fresh); n != 0 {
			t.Errorf("%s: the fresh database holds %d entries, want none", st.Engine(), n)
		}
		if _, err := RawInsert(ctx, fresh, "raw", 10); err != nil {
			t.Fatalf("%s: raw insert into the fresh database: %v", st.Engine(), err)
		}
		var name string
		if st.Engine() == "postgres" {
			if err := fresh.(*sqlstore.Store).DB().QueryRowContext(ctx, `SELECT current_database()`).Scan(&name); err != nil {
				t.Fatal(err)
			}
		}
		cleanup()
		if n := count(st); n != 10 {
			t.Errorf("%s: the load's database holds %d entries after the raw baseline, want its 10", st.Engine(), n)
		}
		if st.Engine() == "postgres" {
			var left int
			if err := st.(*sqlstore.Store).DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_database WHERE datname = $1`, name).Scan(&left); err != nil || left != 0 {
				t.Errorf("the fresh database %s is still there after its cleanup (%v)", name, err)
			}
		} else if _, err := os.Stat(filepath.Join(filepath.Dir(sqlitePath), "raw-load.db")); !os.IsNotExist(err) {
			t.Errorf("the fresh SQLite file is still there after its cleanup (%v)", err)
		}
	}
}
