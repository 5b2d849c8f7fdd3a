package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

func testEvent(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()

	// commitEvents inserts events of project p in one transaction, commits
	// it and numbers them as a reader does (EventSequence).
	commitEvents := func(t *testing.T, st store.Store, types ...string) {
		t.Helper()
		tx, err := st.Begin(ctx)
		must(t, err)
		defer tx.Rollback()
		var events []*logbook.Event
		for _, typ := range types {
			events = append(events, &logbook.Event{Project: "p", Type: typ, SessionID: "s", At: base, Data: json.RawMessage(`{"n":1}`)})
		}
		must(t, tx.EventInsert(ctx, events))
		must(t, tx.Commit())
		_, err = st.EventSequence(ctx)
		must(t, err)
	}
	types := func(events []logbook.Event) []string {
		var out []string
		for _, ev := range events {
			out = append(out, ev.Type)
		}
		return out
	}

	t.Run("OrderAndCursor", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		latest, err := st.EventLatestID(ctx, "p")
		must(t, err)
		equal(t, "latest id with no events", latest, int64(0))
		must(t, st.EventInsert(ctx, nil)) // nothing to insert

		commitEvents(t, st, "a", "b", "c")
		commitEvents(t, st, "d")
		must(t, st.EventInsert(ctx, []*logbook.Event{{Project: "q", Type: "other", At: base}}))
		_, err = st.EventSequence(ctx)
		must(t, err)

		all, err := st.EventList(ctx, store.EventListParams{Project: "p", Limit: 10})
		must(t, err)
		equal(t, "events in the order written", slices.Equal(types(all), []string{"a", "b", "c", "d"}), true)
		for i := 1; i < len(all); i++ {
			if all[i].ID <= all[i-1].ID {
				t.Errorf("event ids do not grow: %d after %d", all[i].ID, all[i-1].ID)
			}
		}
		equal(t, "project", all[0].Project, "p")
		equal(t, "session", all[0].SessionID, "s")
		equal(t, "at", all[0].At, base)
		equal(t, "data", string(all[0].Data), `{"n":1}`)

		page, err := st.EventList(ctx, store.EventListParams{Project: "p", AfterID: all[1].ID, Limit: 1})
		must(t, err)
		equal(t, "a page after a cursor", slices.Equal(types(page), []string{"c"}), true)
		latest, err = st.EventLatestID(ctx, "p")
		must(t, err)
		equal(t, "latest id", latest, all[3].ID)

		// Events become visible in order: nothing appears behind a cursor
		// a follower has passed.
		commitEvents(t, st, "e")
		more, err := st.EventList(ctx, store.EventListParams{Project: "p", AfterID: latest, Limit: 10})
		must(t, err)
		equal(t, "events after the latest", slices.Equal(types(more), []string{"e"}), true)
	})

	t.Run("VisibleInCommitOrder", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		if st.SingleWriter() {
			// One transaction at a time: the order of commits is the
			// order of inserts, which OrderAndCursor holds.
			commitEvents(t, st, "first", "second")
			return
		}
		// An event inserted first but committed last is numbered after
		// one that committed while it waited: a follower that saw the
		// other one's id misses nothing.
		slow, err := st.Begin(ctx)
		must(t, err)
		defer slow.Rollback()
		must(t, slow.EventInsert(ctx, []*logbook.Event{{Project: "p", Type: "slow", At: base}}))
		commitEvents(t, st, "fast")
		seen, err := st.EventList(ctx, store.EventListParams{Project: "p", Limit: 10})
		must(t, err)
		equal(t, "visible before the slow commit", slices.Equal(types(seen), []string{"fast"}), true)
		must(t, slow.Commit())
		n, err := st.EventSequence(ctx)
		must(t, err)
		equal(t, "events numbered", n, int64(1))
		after, err := st.EventList(ctx, store.EventListParams{Project: "p", AfterID: seen[0].ID, Limit: 10})
		must(t, err)
		equal(t, "the slow event after the follower's cursor", slices.Equal(types(after), []string{"slow"}), true)
	})

	t.Run("Prune", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		must(t, st.EventInsert(ctx, []*logbook.Event{
			{Project: "p", Type: "old", At: base.Add(-48 * time.Hour)},
			{Project: "p", Type: "new", At: base},
		}))
		_, err := st.EventSequence(ctx)
		must(t, err)
		n, err := st.EventPrune(ctx, base.Add(-24*time.Hour))
		must(t, err)
		equal(t, "events pruned", n, int64(1))
		left, err := st.EventList(ctx, store.EventListParams{Project: "p", Limit: 10})
		must(t, err)
		equal(t, "events left", slices.Equal(types(left), []string{"new"}), true)
	})
}

func testToolCall(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()
	st := newStore(t)
	s := newSession(t, st, sessionOpts{})
	other := newSession(t, st, sessionOpts{Actor: "bob"})
	elsewhere := newSession(t, st, sessionOpts{Project: "q"})
	insertAll(t, st, []logbook.Entry{
		{SessionID: s.ID, Seq: 1, At: base, Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "c1", Payload: json.RawMessage(`{"command":"ls"}`)},
		{SessionID: s.ID, Seq: 2, At: base.Add(time.Second), Kind: logbook.KindNote, ToolCallID: "c1", Text: "allowed", Payload: json.RawMessage(`{"decision":"allow"}`)},
		{SessionID: s.ID, Seq: 3, At: base.Add(2 * time.Second), Kind: logbook.KindToolResult, ToolCallID: "c1", Text: "a.go"},
		{SessionID: s.ID, Seq: 4, At: base.Add(3 * time.Second), Kind: logbook.KindToolResult, ToolCallID: "c1", Text: "a second result"},
		{SessionID: s.ID, Seq: 5, At: base.Add(time.Minute), Kind: logbook.KindToolCall, Tool: "Read", ToolCallID: "c2"},
		{SessionID: s.ID, Seq: 6, At: base.Add(time.Minute), Kind: logbook.KindMessage, Role: "assistant", Text: "not a call"},
	})
	insertAll(t, st, []logbook.Entry{{SessionID: other.ID, Seq: 1, At: base.Add(time.Hour), Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "c1"}})
	insertAll(t, st, []logbook.Entry{{SessionID: elsewhere.ID, Seq: 1, At: base, Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "c1"}})

	calls, err := st.ToolCallList(ctx, store.ToolCallListParams{SessionID: s.ID, Limit: 10})
	must(t, err)
	equal(t, "a session's tool calls", len(calls), 2)
	c := calls[0]
	equal(t, "tool", c.Tool, "Bash")
	equal(t, "seq", c.Seq, int64(1))
	equal(t, "input", string(c.Input), `{"command":"ls"}`)
	equal(t, "the first result pairs with the call", c.Result, "a.go")
	if c.ResultAt == nil || !c.ResultAt.Equal(base.Add(2*time.Second)) {
		t.Errorf("result at %v, want %v", c.ResultAt, base.Add(2*time.Second))
	}
	equal(t, "the gate's note pairs with the call", c.NoteText, "allowed")
	equal(t, "the note's payload", string(c.NotePayload), `{"decision":"allow"}`)
	if calls[1].ResultAt != nil || calls[1].Result != "" {
		t.Errorf("a call with no result has one: %+v", calls[1])
	}

	calls, err = st.ToolCallList(ctx, store.ToolCallListParams{Project: "p", Limit: 10})
	must(t, err)
	equal(t, "a project's tool calls", len(calls), 3)
	calls, err = st.ToolCallList(ctx, store.ToolCallListParams{Project: "p", Tool: "Bash", Limit: 10})
	must(t, err)
	equal(t, "a project's Bash calls", len(calls), 2)
	calls, err = st.ToolCallList(ctx, store.ToolCallListParams{Project: "p", Since: base.Add(30 * time.Minute), Limit: 10})
	must(t, err)
	equal(t, "calls since a time", len(calls) == 1 && calls[0].SessionID == other.ID, true)

	newest, err := st.ToolCallList(ctx, store.ToolCallListParams{Project: "p", Newest: true, Limit: 2})
	must(t, err)
	equal(t, "newest first", len(newest) == 2 && newest[0].SessionID == other.ID && newest[1].Tool == "Read", true)
	older, err := st.ToolCallList(ctx, store.ToolCallListParams{Project: "p", Newest: true, AfterID: newest[1].EntryID, Limit: 10})
	must(t, err)
	equal(t, "newest first, before a cursor", len(older) == 1 && older[0].ToolCallID == "c1" && older[0].SessionID == s.ID, true)
	later, err := st.ToolCallList(ctx, store.ToolCallListParams{Project: "p", AfterID: older[0].EntryID, Limit: 1})
	must(t, err)
	equal(t, "in recorded order, after a cursor", len(later) == 1 && later[0].Tool == "Read", true)
}

func testWhy(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()

	t.Run("ByCommit", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		const sha = "0123456789abcdef0123456789abcdef01234567"
		head := newSession(t, st, sessionOpts{})
		head.HeadCommit = sha
		must(t, st.SessionUpdate(ctx, &head, nil))
		short := newSession(t, st, sessionOpts{StartedAt: base.Add(time.Hour)})
		short.HeadCommit = sha[:7] // a short sha git printed
		must(t, st.SessionUpdate(ctx, &short, nil))
		byEntry := newSession(t, st, sessionOpts{StartedAt: base.Add(2 * time.Hour), ParentID: head.ID})
		insertAll(t, st, []logbook.Entry{{SessionID: byEntry.ID, Seq: 1, At: base, Kind: logbook.KindNote, Commit: sha}})
		tooShort := newSession(t, st, sessionOpts{StartedAt: base.Add(3 * time.Hour)})
		tooShort.HeadCommit = sha[:6]
		must(t, st.SessionUpdate(ctx, &tooShort, nil))
		other := newSession(t, st, sessionOpts{StartedAt: base.Add(4 * time.Hour)})
		other.HeadCommit = "fedcba9876543210"
		must(t, st.SessionUpdate(ctx, &other, nil))
		elsewhere := newSession(t, st, sessionOpts{Project: "q"})
		elsewhere.HeadCommit = sha
		must(t, st.SessionUpdate(ctx, &elsewhere, nil))

		got, err := st.SessionListByCommit(ctx, "p", sha, 10)
		must(t, err)
		equal(t, "sessions behind a full sha, newest first", ids(got), ids([]logbook.Session{byEntry, short, head}))
		got, err = st.SessionListByCommit(ctx, "p", sha[:10], 10)
		must(t, err)
		equal(t, "a prefix finds the longer shas", ids(got), ids([]logbook.Session{byEntry, short, head}))
		got, err = st.SessionListByCommit(ctx, "p", sha, 1)
		must(t, err)
		equal(t, "limit", ids(got), ids([]logbook.Session{byEntry}))
		got, err = st.SessionListByCommit(ctx, "p", "ffff000", 10)
		must(t, err)
		equal(t, "an unknown sha", len(got), 0)
	})

	t.Run("Skills", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		root := newSession(t, st, sessionOpts{})
		child := logbook.Session{ID: logbook.NewID(base), Project: "p", Actor: "alice", ParentID: root.ID, RootID: root.ID,
			Status: logbook.StatusActive, StartedAt: base, LastSeenAt: base}
		_, err := st.SessionInsert(ctx, &child)
		must(t, err)
		unrelated := newSession(t, st, sessionOpts{})
		insertAll(t, st, []logbook.Entry{
			{SessionID: root.ID, Seq: 1, At: base, Kind: logbook.KindSkill, Text: "review"},
			{SessionID: root.ID, Seq: 2, At: base, Kind: logbook.KindSkill, Text: "deploy"},
			{SessionID: root.ID, Seq: 3, At: base, Kind: logbook.KindNote, Text: "not a skill"},
		})
		insertAll(t, st, []logbook.Entry{{SessionID: child.ID, Seq: 1, At: base, Kind: logbook.KindSkill, Text: "review"},
			{SessionID: child.ID, Seq: 2, At: base, Kind: logbook.KindSkill, Text: "bisect"}})
		insertAll(t, st, []logbook.Entry{{SessionID: unrelated.ID, Seq: 1, At: base, Kind: logbook.KindSkill, Text: "other"}})
		skills, err := st.SkillList(ctx, root.ID)
		must(t, err)
		equal(t, "skills used in the tree, once each", slices.Equal(skills, []string{"bisect", "deploy", "review"}), true)
		if t.Failed() {
			t.Logf("got %q", skills)
		}
	})

	t.Run("Prior", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		end := func(s logbook.Session, outcome logbook.Outcome, at time.Time) logbook.Session {
			t.Helper()
			s.Status, s.Outcome, s.ClosedAt = logbook.StatusEnded, outcome, &at
			must(t, st.SessionUpdate(ctx, &s, nil))
			return s
		}
		failed := end(newSession(t, st, sessionOpts{}), logbook.OutcomeFailed, base.Add(time.Hour))
		partial := end(newSession(t, st, sessionOpts{}), logbook.OutcomePartial, base.Add(2*time.Hour))
		end(newSession(t, st, sessionOpts{}), logbook.OutcomeSuccess, base.Add(3*time.Hour))
		end(newSession(t, st, sessionOpts{}), logbook.OutcomeFailed, base.Add(-time.Hour)) // before Since
		end(newSession(t, st, sessionOpts{Project: "q"}), logbook.OutcomeFailed, base.Add(time.Hour))
		current := newSession(t, st, sessionOpts{})
		excluded := end(newSession(t, st, sessionOpts{}), logbook.OutcomeFailed, base.Add(4*time.Hour))

		prior, err := st.SessionListPrior(ctx, store.SessionListPriorParams{Project: "p", Since: base, ExcludeID: excluded.ID, Limit: 10})
		must(t, err)
		equal(t, "partial and failed sessions since, newest first", ids(prior), ids([]logbook.Session{partial, failed}))
		prior, err = st.SessionListPrior(ctx, store.SessionListPriorParams{Project: "p", Since: base, ExcludeID: current.ID, Limit: 1})
		must(t, err)
		equal(t, "limit", ids(prior), ids([]logbook.Session{excluded}))
	})

	t.Run("DeleteTree", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		root := newSession(t, st, sessionOpts{})
		child := newSession(t, st, sessionOpts{ParentID: root.ID})
		grandchild := newSession(t, st, sessionOpts{ParentID: child.ID})
		kept := newSession(t, st, sessionOpts{})
		for _, s := range []logbook.Session{root, child, grandchild, kept} {
			insertAll(t, st, []logbook.Entry{{SessionID: s.ID, Seq: 1, At: base, Kind: logbook.KindNote, Text: "n"}})
			must(t, st.TouchUpsert(ctx, s.ID, "p", []logbook.Touch{{Kind: logbook.TouchFile, Value: "a.go", FirstAt: base}}))
			must(t, st.LinkSet(ctx, s.ID, "p", []logbook.Link{{Kind: "issue", Ref: "1", Via: logbook.ViaAttached}}, nil))
		}
		must(t, st.PlanReplace(ctx, child.ID, []logbook.PlanStep{{N: 1, Text: "x", Status: logbook.StepPending, UpdatedAt: base}}))
		c := logbook.Claim{ID: "c1", Project: "p", SessionID: grandchild.ID, Actor: "alice", Subject: "a", TTLSeconds: 60, CreatedAt: base, ExpiresAt: base.Add(time.Minute)}
		must(t, st.ClaimInsert(ctx, &c))
		must(t, st.EventInsert(ctx, []*logbook.Event{{Project: "p", Type: "x", SessionID: root.ID, At: base}}))

		deleted, err := st.SessionDeleteTree(ctx, root.ID)
		must(t, err)
		for table, want := range map[string]int64{"sessions": 3, "entries": 3, "touches": 3, "links": 3, "plan_steps": 1, "claims": 1, "events": 1} {
			equal(t, "rows deleted from "+table, deleted[table], want)
		}
		for _, s := range []logbook.Session{root, child, grandchild} {
			if _, err := st.SessionGet(ctx, store.SessionGetParams{ID: s.ID}); !errors.Is(err, logbook.ErrNotFound) {
				t.Errorf("session %s of the tree is still there: %v", s.ID, err)
			}
		}
		if _, err := st.ClaimGet(ctx, "c1"); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("a claim of the tree is still there: %v", err)
		}
		touches, err := st.TouchList(ctx, kept.ID)
		must(t, err)
		equal(t, "another session's touches are kept", len(touches), 1)
		if _, err := st.SessionDeleteTree(ctx, root.ID); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("deleting a missing session: err = %v, want ErrNotFound", err)
		}
	})
}

// testEngine holds the methods that tell how an engine runs to what they
// promise.
func testEngine(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()

	t.Run("Describe", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		if st.Engine() == "" {
			t.Error("the engine has no name")
		}
		newSession(t, st, sessionOpts{})
		must(t, st.Optimize(ctx))
		got, err := st.SessionList(ctx, store.SessionListParams{Project: "p", Limit: 10, Now: base})
		must(t, err)
		equal(t, "sessions listed after Optimize", len(got), 1)
	})

	t.Run("Writers", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		first, err := st.Begin(ctx)
		must(t, err)
		defer first.Rollback()
		a := newSession(t, first, sessionOpts{})
		if st.SingleWriter() {
			// A second transaction begins only once the first has ended,
			// so it sees what the first committed.
			seen := make(chan error, 1)
			go func() {
				second, err := st.Begin(ctx)
				if err != nil {
					seen <- err
					return
				}
				defer second.Rollback()
				_, err = second.SessionGet(ctx, store.SessionGetParams{ID: a.ID})
				seen <- err
			}()
			must(t, first.Commit())
			if err := <-seen; err != nil {
				t.Errorf("a transaction that began while another wrote does not see its commit: %v", err)
			}
			return
		}
		// Several transactions write at once and each commits.
		second, err := st.Begin(ctx)
		must(t, err)
		defer second.Rollback()
		b := newSession(t, second, sessionOpts{})
		must(t, second.Commit())
		must(t, first.Commit())
		for _, s := range []logbook.Session{a, b} {
			if _, err := st.SessionGet(ctx, store.SessionGetParams{ID: s.ID}); err != nil {
				t.Errorf("session %s written by concurrent transactions: %v", s.ID, err)
			}
		}
	})

	t.Run("ListenEndsWithContext", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		listenCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- st.Listen(listenCtx, func() {}) }()
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Listen after its context ended: %v", err)
		}
	})

	t.Run("Close", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		must(t, st.Close())
		if _, err := st.SessionGet(ctx, store.SessionGetParams{ID: s.ID}); err == nil {
			t.Error("a closed store still reads")
		}
	})
}
