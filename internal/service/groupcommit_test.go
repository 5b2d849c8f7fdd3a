package service

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestCommitterStops: a write queued after the committer stopped is
// answered ErrShuttingDown (it never ran), not left waiting.
func TestCommitterStops(t *testing.T) {
	c := newCommitter(testdb.SQLite(t), func([]*logbook.Event) {})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.run(ctx) // returns at once: ctx is done
	c.drain(10 * time.Millisecond)
	ran := false
	err := c.do(context.Background(), store.SessionKeys{}, func(*work) error { ran = true; return nil })
	if !errors.Is(err, ErrShuttingDown) || ran {
		t.Errorf("a write after the committer stopped: err %v, ran %v", err, ran)
	}
}

// TestSessionWritesShareTransactions: appends to different sessions
// queued together commit in one transaction, and a request of the group
// that fails after writing (a clash, which PostgreSQL answers by aborting
// the transaction) is undone alone, first in its group (which runs
// without a savepoint) or later: the others are stored and answered as if
// it had not been there.
func TestSessionWritesShareTransactions(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		for _, clashAt := range []int{0, 2, 5} {
			t.Run(fmt.Sprint("clash at ", clashAt), func(t *testing.T) { testSessionWritesShareTransactions(t, e, clashAt) })
		}
	})
}

func testSessionWritesShareTransactions(t *testing.T, e testdb.Engine, clashAt int) {
	st := e.Open(t)
	svc := New(st, Options{})
	ctx := context.Background()
	alice := Caller{Actor: "alice", Project: "p"}
	message := func(text string) Batch {
		return Batch{Entries: []logbook.Entry{{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: text}}}
	}
	var sessions []logbook.Session
	for i := range 6 {
		sess, _, err := svc.StartSession(ctx, alice, StartParams{Harness: "h", HarnessSessionID: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, sess)
	}
	clashing := sessions[clashAt]
	if _, err := svc.AppendEntries(ctx, alice, clashing.ID, message("first")); err != nil {
		t.Fatal(err)
	}

	// One committer that does not run yet, so every request below waits in
	// its queue, in order, and the first group takes them all.
	commits := 0 // counted on the committer's goroutine, read after its answers
	c := newCommitter(svc.store, func(events []*logbook.Event) { commits++; svc.committed(events) })
	c.maxGroup = sessionGroupMax
	svc.sessionCommitters.Store(&[]*committer{c})
	results := make(chan error, len(sessions))
	for i, sess := range sessions {
		go func() {
			if i != clashAt {
				_, err := svc.AppendEntries(ctx, alice, sess.ID, message("grouped"))
				results <- err
				return
			}
			results <- svc.inSessionTx(ctx, store.SessionKeys{ID: sess.ID}, func(tx *work) error { // writes, then clashes
				if err := tx.SessionMarkSeen(ctx, sess.ID, time.Now().Add(time.Hour)); err != nil {
					return err
				}
				_, err := tx.EntryInsert(ctx, []logbook.Entry{{SessionID: sess.ID, Seq: 1, At: time.Now(),
					Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "clash"}})
				return err
			})
		}()
		for len(c.requests) < i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go c.run(runCtx)

	var failed int
	for range sessions {
		if err := <-results; err != nil {
			if !errors.Is(err, logbook.ErrConflict) {
				t.Errorf("a request of the group failed with %v; only the clash should, with ErrConflict", err)
			}
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("%d requests failed, want the clashing one alone", failed)
	}
	db := st.(interface{ DB() *sql.DB }).DB()
	var grouped int
	if err := db.QueryRow(`SELECT COUNT(*) FROM entries WHERE text = 'grouped'`).Scan(&grouped); err != nil {
		t.Fatal(err)
	}
	if grouped != len(sessions)-1 || commits != 1 {
		t.Errorf("%d grouped entries stored by %d commits, want %d by one", grouped, commits, len(sessions)-1)
	}
	var clashes int
	var seen int64
	if err := db.QueryRow(`SELECT (SELECT COUNT(*) FROM entries WHERE text = 'clash'), last_seen_at FROM sessions WHERE id = $1`,
		clashing.ID).Scan(&clashes, &seen); err != nil {
		t.Fatal(err)
	}
	if clashes != 0 || seen > time.Now().UnixMicro() {
		t.Errorf("the failed request left its writes: %d clashing entries, last seen %v", clashes, time.UnixMicro(seen))
	}
}
