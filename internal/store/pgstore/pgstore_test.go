package pgstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
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

// TestCommittedEventsWakeOtherReplicas: a transaction that commits events
// through one store wakes Listen on another store of the same database
// (the followers of another replica), once it commits and not before.
func TestCommittedEventsWakeOtherReplicas(t *testing.T) {
	url := testdb.PostgresURL(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	writer, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	reader, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	woken := make(chan struct{}, 100)
	go reader.Listen(ctx, func() { woken <- struct{}{} })

	// Listen connects in the background: write until a wake comes back.
	deadline := time.After(10 * time.Second)
	for {
		tx, err := writer.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.EventInsert(ctx, []*logbook.Event{{Project: "demo", Type: logbook.EventSessionStarted, At: time.Now()}}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-woken:
			t.Fatal("woken before the events' transaction committed")
		case <-time.After(200 * time.Millisecond):
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-woken:
			return
		case <-time.After(500 * time.Millisecond):
		case <-deadline:
			t.Fatal("committing events through one store never woke Listen on the other")
		}
	}
}
