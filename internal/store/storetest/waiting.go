package storetest

import (
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// testWaiting holds a transaction's writes that answer nothing (a project
// ensured, links, events) to what the transaction's next statements see
// and what its savepoints take back, whichever way the engine sends them:
// PostgreSQL lets them wait and sends them with the next statement or the
// commit in one pipeline; SQLite runs each at once.
func testWaiting(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := t.Context()
	st := newStore(t)
	s := newSession(t, st, sessionOpts{})
	link := func(ref string) logbook.Link {
		return logbook.Link{Kind: "issue", Ref: ref, Via: "attached"}
	}
	refs := func(links []logbook.Link) map[string]bool {
		got := map[string]bool{}
		for _, l := range links {
			got[l.Ref] = true
		}
		return got
	}

	tx, err := st.Begin(ctx)
	must(t, err)
	defer tx.Rollback()
	// Written with no savepoint: each is seen by the next statement.
	must(t, tx.ProjectEnsure(ctx, "waiting-kept", base))
	if _, err := tx.ProjectPolicyGet(ctx, "waiting-kept"); err != nil {
		t.Errorf("a project ensured is not found by the transaction's next statement: %v", err)
	}
	must(t, tx.LinkSet(ctx, s.ID, s.Project, []logbook.Link{link("1"), link("2")}, nil))
	must(t, tx.LinkSet(ctx, s.ID, s.Project, []logbook.Link{link("2"), link("3")}, nil))
	links, err := tx.LinkList(ctx, s.ID)
	must(t, err)
	equal(t, "links after two LinkSets in one transaction", len(links), 2)
	if got := refs(links); !got["2"] || !got["3"] {
		t.Errorf("links read in the transaction: %v, want 2 and 3 (the second LinkSet replaced the first)", got)
	}
	must(t, tx.EventInsert(ctx, []*logbook.Event{{Project: s.Project, Type: logbook.EventSessionAppended, SessionID: s.ID, At: base, Data: []byte(`{"n":1}`)}}))

	// Waiting before a savepoint rolled back before anything was sent:
	// kept.
	must(t, tx.ProjectEnsure(ctx, "waiting-before-mark", base))
	must(t, tx.Savepoint(ctx))
	must(t, tx.RollbackToSavepoint(ctx))
	// Waiting before a savepoint rolled back after a write: kept; the
	// write after it is taken back.
	must(t, tx.ProjectEnsure(ctx, "waiting-before-sent-mark", base))
	must(t, tx.Savepoint(ctx))
	must(t, tx.ProjectEnsure(ctx, "after-mark", base))
	must(t, tx.LinkSet(ctx, s.ID, s.Project, []logbook.Link{link("4")}, nil))
	if _, err := tx.ProjectPolicyGet(ctx, "after-mark"); err != nil {
		t.Errorf("a project ensured after a savepoint is not found before rolling back to it: %v", err)
	}
	must(t, tx.RollbackToSavepoint(ctx))
	// Waiting at the commit: written by it.
	must(t, tx.EventInsert(ctx, []*logbook.Event{{Project: s.Project, Type: logbook.EventSessionAppended, SessionID: s.ID, At: base, Data: []byte(`{"n":2}`)}}))
	must(t, tx.ProjectEnsure(ctx, "waiting-at-commit", base))
	must(t, tx.Commit())

	for _, p := range []string{"waiting-kept", "waiting-before-mark", "waiting-before-sent-mark", "waiting-at-commit"} {
		if _, err := st.ProjectPolicyGet(ctx, p); err != nil {
			t.Errorf("project %s ensured in the transaction is not stored: %v", p, err)
		}
	}
	if _, err := st.ProjectPolicyGet(ctx, "after-mark"); err == nil {
		t.Error("a project ensured after a savepoint rolled back to is stored")
	}
	links, err = st.LinkList(ctx, s.ID)
	must(t, err)
	if got := refs(links); len(got) != 2 || !got["2"] || !got["3"] {
		t.Errorf("links stored: %v, want 2 and 3 (4 came after the savepoint rolled back to)", got)
	}
	if _, err := st.EventSequence(ctx); err != nil {
		t.Fatal(err)
	}
	events, err := st.EventList(ctx, store.EventListParams{Project: s.Project, Limit: 100})
	must(t, err)
	var appended []string
	for _, e := range events {
		if e.Type == logbook.EventSessionAppended && e.SessionID == s.ID {
			appended = append(appended, string(e.Data))
		}
	}
	if len(appended) != 2 || appended[0] != `{"n":1}` {
		t.Errorf("events stored of the transaction: %q, want its two, in order", appended)
	}

	// A transaction rolled back leaves nothing of what waited.
	tx, err = st.Begin(ctx)
	must(t, err)
	must(t, tx.ProjectEnsure(ctx, "rolled-back", base))
	must(t, tx.LinkSet(ctx, s.ID, s.Project, nil, nil))
	must(t, tx.Rollback())
	if _, err := st.ProjectPolicyGet(ctx, "rolled-back"); err == nil {
		t.Error("a project ensured in a transaction rolled back is stored")
	}
	links, err = st.LinkList(ctx, s.ID)
	must(t, err)
	equal(t, "links after a transaction that cleared them rolled back", len(links), 2)
}
