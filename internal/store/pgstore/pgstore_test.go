package pgstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/store/sqlstore"
	"github.com/logbookhq/logbook/internal/store/storetest"
	"github.com/logbookhq/logbook/internal/testdb"
)

var _ store.Store = (*sqlstore.Store)(nil)

func TestConformance(t *testing.T) { storetest.Run(t, testdb.Postgres) }

func BenchmarkStore(b *testing.B) { storetest.Bench(b, testdb.Postgres) }

// TestConcurrentMigrate starts several replicas on one empty database at
// once: the advisory lock lets exactly one apply each migration.
func TestConcurrentMigrate(t *testing.T) {
	url := testdb.PostgresURL(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := pgstore.Open(context.Background(), url)
			if err == nil {
				st.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a replica failed to start: %v", err)
		}
	}
}

func TestBadURL(t *testing.T) {
	_, err := pgstore.Open(context.Background(), "postgres://user:secret@127.0.0.1:1/x?connect_timeout=1")
	if err == nil {
		t.Fatal("opening an unreachable server succeeded")
	}
	if got := err.Error(); strings.Contains(got, "secret") {
		t.Errorf("the error shows the password: %s", got)
	}
}
