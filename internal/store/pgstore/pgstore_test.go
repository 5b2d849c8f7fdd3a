package pgstore_test

import (
	"context"
	"errors"
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

// TestCutConnectionIsUnavailable: a transaction whose connection the
// server terminates (an admin, a failover) fails as logbook.ErrUnavailable,
// which the API answers 503 with Retry-After, not as an internal error.
func TestCutConnectionIsUnavailable(t *testing.T) {
	ctx := context.Background()
	dbURL := testdb.PostgresURL(t)
	st, err := pgstore.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tx, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.ProjectEnsure(ctx, "p", time.Now()); err != nil {
		t.Fatal(err)
	}
	admin, name := testdb.PostgresAdmin(t, dbURL)
	if _, err := admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, name); err != nil {
		t.Fatal(err)
	}
	_, err = tx.SessionGet(ctx, store.SessionGetParams{ID: "x"})
	if !errors.Is(err, logbook.ErrUnavailable) {
		t.Fatalf("a query on a terminated connection: %v, want logbook.ErrUnavailable", err)
	}
	var unavailable *logbook.UnavailableError
	if !errors.As(err, &unavailable) || !strings.Contains(unavailable.Reason, "cannot be reached") {
		t.Errorf("the reason %q does not say the database cannot be reached", unavailable.Reason)
	}
	tx.Rollback()

	// The store recovers: the pool's other cut connections are found
	// broken and replaced, at worst one failed transaction each (the pool
	// holds at most 20).
	for try := 0; ; try++ {
		err := func() error {
			tx, err := st.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			if err := tx.ProjectEnsure(ctx, "after", time.Now()); err != nil {
				return err
			}
			return tx.Commit()
		}()
		if err == nil {
			break
		}
		if try == 20 {
			t.Fatalf("no transaction commits after the connections were cut: %v", err)
		}
	}
	if _, err := st.ProjectPolicyGet(ctx, "after"); err != nil {
		t.Errorf("the project committed after the connections were cut is not stored: %v", err)
	}
}

// TestBackupSaysPgDump: logbook does not copy a PostgreSQL database; Backup
// says which tools do.
func TestBackupSaysPgDump(t *testing.T) {
	st := testdb.Postgres(t)
	if st.CanBackup() {
		t.Error("CanBackup is true on PostgreSQL")
	}
	err := st.Backup(context.Background(), t.TempDir()+"/backup")
	if err == nil || !strings.Contains(err.Error(), "pg_dump") || !strings.Contains(err.Error(), "pg_restore") {
		t.Fatalf("Backup on PostgreSQL: err = %v, want one that explains pg_dump and pg_restore", err)
	}
}

// TestClaimsThatCannotConflictDoNotWait: while one transaction holds the
// lock of a file it claims, claims of another file in the same folder and
// of another folder take theirs at once (on SQLite one transaction writes
// at a time, so only PostgreSQL can show it).
func TestClaimsThatCannotConflictDoNotWait(t *testing.T) {
	ctx := context.Background()
	st := testdb.Postgres(t)
	first, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback()
	if err := first.ClaimLock(ctx, "p", []string{"src/api/a.go"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		second, err := st.Begin(ctx)
		if err != nil {
			done <- err
			return
		}
		defer second.Rollback()
		done <- second.ClaimLock(ctx, "p", []string{"src/api/b.go", "src/web/", "issue:7"})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a claim of another file waited for the lock of src/api/a.go")
	}
	// The same file, in another project, does not wait either.
	other, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback()
	go func() { done <- other.ClaimLock(ctx, "q", []string{"src/api/a.go"}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a claim in project q waited for the lock of project p's src/api/a.go")
	}
}
