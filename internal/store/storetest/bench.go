package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// Bench times the store's hot paths, the same on every engine, for
// regressions: what a hook's write costs inside the service's shared
// transactions, and a batch of 100 entries. Engines call it from a
// Benchmark function, as they call Run from a Test.
func Bench(b *testing.B, newStore func(tb testing.TB) store.Store) {
	ctx := context.Background()
	st := newStore(b)
	const sessions = 200 // as many as the agents of logbook bench
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = newSession(b, st, sessionOpts{StartedAt: base.Add(time.Duration(i) * time.Millisecond)}).ID
	}

	// HookWrite is one request of a group: read the session, append one
	// keyed entry, write back the columns that changed. Groups of 100
	// requests share a transaction, as under the service's group commit.
	written := 0 // keys stay unique over the runs the benchmark makes
	b.Run("HookWrite", func(b *testing.B) {
		const group = 100
		var tx store.Tx
		for i := range b.N {
			written++
			if i%group == 0 {
				tx = begin(b, st, tx)
			}
			id := ids[i%sessions]
			sess, err := tx.SessionGet(ctx, store.SessionGetParams{ID: id, ForUpdate: true})
			must(b, err)
			was := sess
			sess.EntryCount++
			sess.ToolCallCount++
			n, err := tx.EntryInsert(ctx, []logbook.Entry{{SessionID: id, Seq: sess.EntryCount, At: base,
				Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: fmt.Sprint("call-", written), Key: fmt.Sprint("key-", written),
				Payload: []byte(`{"command":"go test ./..."}`)}})
			must(b, err)
			equal(b, "inserted", n, 1)
			must(b, tx.SessionUpdate(ctx, &sess, &was))
		}
		must(b, tx.Commit())
	})

	// Batch100 stores a batch of 100 entries in a transaction of its own.
	b.Run("Batch100", func(b *testing.B) {
		id := newSession(b, st, sessionOpts{}).ID // a new session each run: numbering starts at 1
		batch := make([]logbook.Entry, 100)
		for i := range b.N {
			for j := range batch {
				batch[j] = logbook.Entry{SessionID: id, Seq: int64(i*len(batch) + j + 1), At: base,
					Kind: logbook.KindMessage, Role: "assistant", Text: "working on it", Key: fmt.Sprint(i, "-", j)}
			}
			tx, err := st.Begin(ctx)
			must(b, err)
			_, err = tx.EntryInsert(ctx, batch)
			must(b, err)
			must(b, tx.Commit())
		}
		b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "entries/s")
	})
}

// begin commits tx, when there is one, and starts the next.
func begin(b *testing.B, st store.Store, tx store.Tx) store.Tx {
	if tx != nil {
		must(b, tx.Commit())
	}
	next, err := st.Begin(context.Background())
	must(b, err)
	return next
}
