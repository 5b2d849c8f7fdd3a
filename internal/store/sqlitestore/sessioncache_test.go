package sqlitestore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
	"github.com/logbookhq/logbook/internal/store/sqlstore"
)

// TestSessionCache holds the in-memory session rows to what the file
// says, through what could leave them behind: a savepoint or transaction
// rolled back, a write outside a transaction, another process writing the
// same file. These stores do not check their cache against the file, so a
// stale row would be read here as it would be in production.
func TestSessionCache(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "logbook.db")
	st := open(t, path)
	now := time.Now().UTC().Truncate(time.Microsecond)
	sess := logbook.Session{ID: "s1", Project: "p", Actor: "a", Harness: "h", Status: logbook.StatusActive, StartedAt: now, LastSeenAt: now}
	inTx(t, st, func(tx store.Tx) {
		if _, err := tx.SessionInsert(ctx, &sess); err != nil {
			t.Fatal(err)
		}
	})
	setCount := func(tx store.Tx, n int64) {
		t.Helper()
		s := get(t, tx, "s1")
		was := s
		s.EntryCount = n
		if err := tx.SessionUpdate(ctx, &s, &was); err != nil {
			t.Fatal(err)
		}
	}
	wantCount := func(st *sqlstore.Store, want int64, after string) {
		t.Helper()
		inTx(t, st, func(tx store.Tx) {
			if got := get(t, tx, "s1").EntryCount; got != want {
				t.Errorf("after %s: entry_count = %d, want %d", after, got, want)
			}
		})
	}

	inTx(t, st, func(tx store.Tx) { setCount(tx, 1) })
	wantCount(st, 1, "a committed update")

	inTx(t, st, func(tx store.Tx) {
		if err := tx.Savepoint(ctx); err != nil {
			t.Fatal(err)
		}
		setCount(tx, 2)
		if err := tx.RollbackToSavepoint(ctx); err != nil {
			t.Fatal(err)
		}
		if got := get(t, tx, "s1").EntryCount; got != 1 {
			t.Errorf("in the transaction, after its savepoint rolled back: entry_count = %d, want 1", got)
		}
	})
	wantCount(st, 1, "an update rolled back to its savepoint")

	tx, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	setCount(tx, 3)
	tx.Rollback()
	wantCount(st, 1, "a transaction rolled back")

	s := get(t, st, "s1")
	was := s
	s.EntryCount = 4
	if err := st.SessionUpdate(ctx, &s, &was); err != nil {
		t.Fatal(err)
	}
	wantCount(st, 4, "an update outside a transaction")

	other := open(t, path) // another process on the same file
	inTx(t, other, func(tx store.Tx) { setCount(tx, 5) })
	wantCount(st, 5, "another process's update")

	inTx(t, st, func(tx store.Tx) {
		if _, err := tx.SessionTimeOut(ctx, now.Add(time.Hour), now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	})
	inTx(t, st, func(tx store.Tx) {
		if got := get(t, tx, "s1"); got.Status != logbook.StatusEnded || got.EndReason != logbook.EndReasonTimedOut {
			t.Errorf("after timing out: status %q, end reason %q; want ended, timed_out", got.Status, got.EndReason)
		}
	})
}

func open(t *testing.T, path string) *sqlstore.Store {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func inTx(t *testing.T, st *sqlstore.Store, fn func(tx store.Tx)) {
	t.Helper()
	tx, err := st.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	fn(tx)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, ex store.Executor, id string) logbook.Session {
	t.Helper()
	s, err := ex.SessionGet(context.Background(), store.SessionGetParams{ID: id, ForUpdate: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
