package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

func (r recordingExecutor) MessageInsert(ctx context.Context, m *logbook.Message) error {
	r.calls.add("MessageInsert")
	return r.ex.MessageInsert(ctx, m)
}

func (r recordingExecutor) MessageGet(ctx context.Context, id string) (logbook.Message, error) {
	r.calls.add("MessageGet")
	return r.ex.MessageGet(ctx, id)
}

func (r recordingExecutor) MessageList(ctx context.Context, p store.MessageListParams) ([]logbook.Message, error) {
	r.calls.add("MessageList")
	return r.ex.MessageList(ctx, p)
}

func (r recordingExecutor) MessageMark(ctx context.Context, id string, mark logbook.MessageMark, at time.Time) (logbook.Message, error) {
	r.calls.add("MessageMark")
	return r.ex.MessageMark(ctx, id, mark, at)
}

func (r recordingExecutor) MessageDeliver(ctx context.Context, p store.MessageDeliverParams) ([]logbook.Message, error) {
	r.calls.add("MessageDeliver")
	return r.ex.MessageDeliver(ctx, p)
}

func (r recordingExecutor) MessagePrune(ctx context.Context, project string, before time.Time, limit int) (int64, error) {
	r.calls.add("MessagePrune")
	return r.ex.MessagePrune(ctx, project, before, limit)
}

// messageOpts address a test message; the rest takes defaults.
type messageOpts struct {
	Project, ToSession, ToAgent, ToActor, FromSession, ReplyTo, Thread string
	At                                                                 time.Time
}

func newMessage(t testing.TB, ex store.Executor, o messageOpts) logbook.Message {
	t.Helper()
	if o.Project == "" {
		o.Project = "p"
	}
	if o.At.IsZero() {
		o.At = base
	}
	m := logbook.Message{ID: logbook.NewID(o.At), Project: o.Project, ToSession: o.ToSession, ToAgent: o.ToAgent, ToActor: o.ToActor,
		From: logbook.Author{Actor: "carol", TokenID: "tok"}, FromSession: o.FromSession, Text: "hello from " + o.FromSession,
		ReplyTo: o.ReplyTo, Thread: o.Thread, CreatedAt: o.At}
	if m.Thread == "" {
		m.Thread = m.ID
	}
	must(t, ex.MessageInsert(t.Context(), &m))
	return m
}

func messageIDs(msgs []logbook.Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, m.ID)
	}
	return out
}

func sameIDs(t testing.TB, what string, got []logbook.Message, want ...logbook.Message) {
	t.Helper()
	g, w := messageIDs(got), messageIDs(want)
	if len(g) != len(w) {
		t.Errorf("%s = %v, want %v", what, g, w)
		return
	}
	for i := range g {
		if g[i] != w[i] {
			t.Errorf("%s = %v, want %v", what, g, w)
			return
		}
	}
}

func testMessage(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()

	t.Run("InsertGetList", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		first := newMessage(t, st, messageOpts{ToSession: "s1", FromSession: "s2"})
		reply := newMessage(t, st, messageOpts{ToSession: "s2", FromSession: "s1", ReplyTo: first.ID, Thread: first.ID, At: base.Add(time.Second)})
		toAgent := newMessage(t, st, messageOpts{ToAgent: "reviewer", At: base.Add(2 * time.Second)})
		toActor := newMessage(t, st, messageOpts{ToActor: "bob", At: base.Add(3 * time.Second)})
		newMessage(t, st, messageOpts{Project: "other", ToSession: "s1", At: base.Add(4 * time.Second)})

		got, err := st.MessageGet(ctx, reply.ID)
		must(t, err)
		if got.Text != reply.Text || got.ReplyTo != first.ID || got.Thread != first.ID || !got.CreatedAt.Equal(reply.CreatedAt) ||
			got.From != reply.From || got.FromSession != "s1" || got.DeliveredAt != nil || got.ReadAt != nil || got.AckedAt != nil {
			t.Errorf("MessageGet = %+v, want %+v", got, reply)
		}
		if _, err := st.MessageGet(ctx, "nope"); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("MessageGet of no message: err = %v, want ErrNotFound", err)
		}
		if err := st.MessageInsert(ctx, &got); !errors.Is(err, logbook.ErrConflict) {
			t.Errorf("MessageInsert of a taken id: err = %v, want ErrConflict", err)
		}

		list := func(p store.MessageListParams) []logbook.Message {
			t.Helper()
			if p.Project == "" {
				p.Project = "p"
			}
			msgs, err := st.MessageList(ctx, p)
			must(t, err)
			return msgs
		}
		sameIDs(t, "the project's messages, newest first", list(store.MessageListParams{}), toActor, toAgent, reply, first)
		sameIDs(t, "for session s1", list(store.MessageListParams{Session: "s1"}), first)
		sameIDs(t, "for s1, its agent or its actor", list(store.MessageListParams{Session: "s1", Agent: "reviewer", Actor: "bob"}), toActor, toAgent, first)
		sameIDs(t, "for or from s1", list(store.MessageListParams{Session: "s1", FromSession: "s1"}), reply, first)
		sameIDs(t, "a thread", list(store.MessageListParams{Thread: first.ID}), reply, first)
		sameIDs(t, "limited", list(store.MessageListParams{Limit: 1}), toActor)

		read, err := st.MessageMark(ctx, first.ID, logbook.MarkRead, base.Add(time.Minute))
		must(t, err)
		if read.ReadAt == nil || !read.ReadAt.Equal(base.Add(time.Minute)) || read.AckedAt != nil {
			t.Errorf("after MarkRead: read %v acked %v", read.ReadAt, read.AckedAt)
		}
		acked, err := st.MessageMark(ctx, first.ID, logbook.MarkAcked, base.Add(2*time.Minute))
		must(t, err)
		if !acked.ReadAt.Equal(base.Add(time.Minute)) || acked.AckedAt == nil || !acked.AckedAt.Equal(base.Add(2*time.Minute)) {
			t.Errorf("after MarkAcked: read %v (kept from before) acked %v", acked.ReadAt, acked.AckedAt)
		}
		ackedOnly, err := st.MessageMark(ctx, reply.ID, logbook.MarkAcked, base.Add(3*time.Minute))
		must(t, err)
		if ackedOnly.ReadAt == nil || ackedOnly.AckedAt == nil {
			t.Errorf("acknowledging reads too: read %v acked %v", ackedOnly.ReadAt, ackedOnly.AckedAt)
		}
		if _, err := st.MessageMark(ctx, "nope", logbook.MarkRead, base); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("MessageMark of no message: err = %v, want ErrNotFound", err)
		}
		sameIDs(t, "unread", list(store.MessageListParams{Unread: true}), toActor, toAgent)
	})

	t.Run("Prune", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		var old []logbook.Message
		for i := range 3 {
			old = append(old, newMessage(t, st, messageOpts{ToActor: "bob", At: base.Add(time.Duration(i) * time.Second)}))
		}
		kept := newMessage(t, st, messageOpts{ToActor: "bob", At: base.Add(time.Hour)})
		other := newMessage(t, st, messageOpts{Project: "other", ToActor: "bob"})
		_, err := st.MessageMark(ctx, old[0].ID, logbook.MarkAcked, base.Add(time.Minute))
		must(t, err)
		cutoff := base.Add(time.Minute)
		n, err := st.MessagePrune(ctx, "p", cutoff, 2)
		must(t, err)
		if n != 2 {
			t.Fatalf("MessagePrune with a limit of 2 deleted %d", n)
		}
		n, err = st.MessagePrune(ctx, "p", cutoff, 2)
		must(t, err)
		if n != 1 {
			t.Fatalf("the second MessagePrune deleted %d, want the last old one", n)
		}
		left, err := st.MessageList(ctx, store.MessageListParams{Project: "p"})
		must(t, err)
		sameIDs(t, "the project's messages after pruning", left, kept)
		if _, err := st.MessageGet(ctx, other.ID); err != nil {
			t.Errorf("another project's message as old: %v, want it kept", err)
		}
	})

	t.Run("Deliver", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		toS1 := newMessage(t, st, messageOpts{ToSession: "s1"})
		toAgent := newMessage(t, st, messageOpts{ToAgent: "reviewer", At: base.Add(time.Second)})
		toBob := newMessage(t, st, messageOpts{ToActor: "bob", At: base.Add(2 * time.Second)})
		toS2 := newMessage(t, st, messageOpts{ToSession: "s2", At: base.Add(3 * time.Second)})
		newMessage(t, st, messageOpts{Project: "other", ToActor: "bob", At: base.Add(4 * time.Second)})

		waiting, err := st.MessageList(ctx, store.MessageListParams{Project: "p", Session: "s1", Actor: "bob", Undelivered: true})
		must(t, err)
		sameIDs(t, "waiting for s1 or bob", waiting, toBob, toS1)
		now := base.Add(time.Hour)
		got, err := st.MessageDeliver(ctx, store.MessageDeliverParams{Project: "p", SessionID: "s1", Agent: "reviewer", Actor: "bob", Now: now})
		must(t, err)
		sameIDs(t, "delivered into s1, oldest first", got, toS1, toAgent, toBob)
		for _, m := range got {
			if m.DeliveredAt == nil || !m.DeliveredAt.Equal(now) || m.DeliveredTo != "s1" {
				t.Errorf("message %s: delivered %v to %q, want %v to s1", m.ID, m.DeliveredAt, m.DeliveredTo, now)
			}
		}
		waiting, err = st.MessageList(ctx, store.MessageListParams{Project: "p", Undelivered: true})
		must(t, err)
		sameIDs(t, "waiting once delivered", waiting, toS2)
		again, err := st.MessageDeliver(ctx, store.MessageDeliverParams{Project: "p", SessionID: "s3", Actor: "bob", Now: now})
		must(t, err)
		sameIDs(t, "a message delivered once is not delivered again", again)
		stored, err := st.MessageGet(ctx, toBob.ID)
		must(t, err)
		equal(t, "delivered_to as stored", stored.DeliveredTo, "s1")
		inS1, err := st.MessageList(ctx, store.MessageListParams{Project: "p", Session: "s1"})
		must(t, err)
		sameIDs(t, "a session's list holds what was delivered into it", inS1, toBob, toAgent, toS1)

		limited, err := st.MessageDeliver(ctx, store.MessageDeliverParams{Project: "p", SessionID: "s2", Now: now, Limit: 1})
		must(t, err)
		sameIDs(t, "s2's own", limited, toS2)
	})

	t.Run("DeliverOnceUnderRace", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		const n = 40
		for i := range n {
			newMessage(t, st, messageOpts{ToActor: "bob", At: base.Add(time.Duration(i) * time.Millisecond)})
		}
		// Eight sessions of bob ask at once, each in its own transaction.
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for {
					tx, err := st.Begin(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					got, err := tx.MessageDeliver(ctx, store.MessageDeliverParams{Project: "p", SessionID: "w" + string(rune('0'+w)),
						Actor: "bob", Now: base.Add(time.Hour), Limit: 3})
					if err == nil {
						err = tx.Commit()
					}
					if err != nil {
						tx.Rollback()
						t.Error(err)
						return
					}
					mu.Lock()
					for _, m := range got {
						seen[m.ID]++
					}
					total := len(seen)
					mu.Unlock()
					if len(got) == 0 && total == n {
						return
					}
				}
			})
		}
		wg.Wait()
		equal(t, "messages delivered", len(seen), n)
		for id, times := range seen {
			if times != 1 {
				t.Errorf("message %s delivered %d times", id, times)
			}
		}
	})
}
