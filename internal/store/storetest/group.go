package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// testGroup holds a transaction shared by a group of requests (the
// service's group commit) to what each request sees and what is stored,
// whichever way the engine writes them: PostgreSQL holds back a group's
// entries and session rows and writes them set-based, SQLite writes each
// at once. Each request runs under a savepoint; one that fails is rolled
// back to it.
func testGroup(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := t.Context()
	st := newStore(t)
	a, b, c := newSession(t, st, sessionOpts{}), newSession(t, st, sessionOpts{}), newSession(t, st, sessionOpts{})
	// a and c have one keyed entry stored before the group.
	insertAll(t, st, []logbook.Entry{msg(a.ID, 1, "k1", "stored before"), msg(c.ID, 1, "c1", "c's first")})
	before := a
	a.EntryCount = 1
	must(t, st.SessionUpdate(ctx, &a, &before))
	// a touched kept.go the day before.
	file := func(value string, at time.Time) logbook.Touch {
		return logbook.Touch{Kind: logbook.TouchFile, Value: value, FirstAt: at}
	}
	dayBefore := base.Add(-24 * time.Hour)
	must(t, st.TouchUpsert(ctx, a.ID, a.Project, []logbook.Touch{file("kept.go", dayBefore)}))

	tx, err := st.Begin(ctx)
	must(t, err)
	defer tx.Rollback()
	must(t, tx.LockSessions(ctx, []store.SessionKeys{
		{ID: a.ID, Keys: []string{"k1", "k2", "k3"}, Touches: []logbook.Touch{file("kept.go", base), file("new.go", base)}},
		{ID: b.ID, Keys: []string{}}, {ID: c.ID, Keys: []string{"c1", "c2"}},
		{ID: "no-such-session", Keys: []string{"x"}},
	}))
	locked, err := tx.SessionGet(ctx, store.SessionGetParams{ID: a.ID, ForUpdate: true})
	must(t, err)
	equal(t, "a session's row read after LockSessions: entry_count", locked.EntryCount, 1)
	if _, err := tx.SessionGet(ctx, store.SessionGetParams{ID: "no-such-session", ForUpdate: true}); err == nil {
		t.Error("a session LockSessions did not find is found")
	}

	// request 1: a stored key alone (not new: the service then records
	// nothing), then a new key and an entry without one.
	must(t, tx.Savepoint(ctx))
	n, err := tx.EntryInsert(ctx, []logbook.Entry{msg(a.ID, 2, "k1", "a stored key again")})
	must(t, err)
	equal(t, "entries new of a batch of a stored key", n, 0)
	n, err = tx.EntryInsert(ctx, []logbook.Entry{msg(a.ID, 2, "k2", "new"), msg(a.ID, 3, "", "no key")})
	must(t, err)
	equal(t, "entries new", n, 2)
	must(t, tx.TouchUpsert(ctx, a.ID, a.Project, []logbook.Touch{file("new.go", base), file("kept.go", base)}))
	a.EntryCount, a.Goal, a.Prompt = 3, "request 1", "request 1"
	was := locked
	must(t, tx.SessionUpdate(ctx, &a, &was))
	must(t, tx.ReleaseSavepoint(ctx))

	// request 2 writes b, and repeats request 1's new key: not new.
	must(t, tx.Savepoint(ctx))
	n, err = tx.EntryInsert(ctx, []logbook.Entry{msg(a.ID, 4, "k2", "the same key in the same transaction")})
	must(t, err)
	equal(t, "entries new whose key an earlier request of the transaction inserted", n, 0)
	insertAll(t, tx, []logbook.Entry{msg(b.ID, 1, "b1", "b's first")})
	bWas := b
	b.EntryCount = 1
	must(t, tx.SessionUpdate(ctx, &b, &bWas))
	// and writes another column of a than request 1 did (one no search
	// document holds: a session's document written would send the
	// savepoint, and write request 1's row by itself).
	aBefore := a
	a.Unannounced = 7
	must(t, tx.SessionUpdate(ctx, &a, &aBefore))
	must(t, tx.TouchUpsert(ctx, a.ID, a.Project, []logbook.Touch{file("new.go", base.Add(time.Hour))}))
	must(t, tx.ReleaseSavepoint(ctx))

	// request 3 writes a again, then fails: rolled back, nothing of it
	// stays, not its key either.
	must(t, tx.Savepoint(ctx))
	insertAll(t, tx, []logbook.Entry{msg(a.ID, 4, "k3", "rolled back")})
	must(t, tx.TouchUpsert(ctx, a.ID, a.Project, []logbook.Touch{file("new.go", base)}))
	aWas := a
	a.EntryCount, a.Goal = 4, "request 3, rolled back"
	must(t, tx.SessionUpdate(ctx, &a, &aWas))
	must(t, tx.RollbackToSavepoint(ctx))
	a = aWas

	// request 4 writes a and sends a statement that writes another table
	// (the savepoint is then sent, after everything before it), then
	// fails: rolled back to its savepoint, requests 1 and 2 stay whole.
	must(t, tx.Savepoint(ctx))
	insertAll(t, tx, []logbook.Entry{msg(a.ID, 4, "k3", "rolled back after a write")})
	a.EntryCount, a.Goal = 4, "request 4, rolled back"
	must(t, tx.SessionUpdate(ctx, &a, &aWas))
	must(t, tx.TouchUpsert(ctx, a.ID, a.Project, []logbook.Touch{{Kind: logbook.TouchFile, Value: "rolled/back.go", FirstAt: base}}))
	must(t, tx.RollbackToSavepoint(ctx))
	a = aWas

	// request 5: k3 is new again; the entries a reader of the transaction
	// sees are every one written so far.
	must(t, tx.Savepoint(ctx))
	insertAll(t, tx, []logbook.Entry{msg(a.ID, 4, "k3", "kept")})
	got, err := tx.EntryList(ctx, store.EntryListParams{SessionID: a.ID, Limit: 100})
	must(t, err)
	equal(t, "entries of a read inside the transaction", texts(got), "stored before|new|no key|kept")
	aWas = a
	a.EntryCount, a.Goal = 4, "request 5"
	must(t, tx.SessionUpdate(ctx, &a, &aWas))
	inTx, err := tx.SessionGet(ctx, store.SessionGetParams{ID: a.ID, ForUpdate: true})
	must(t, err)
	equal(t, "goal read inside the transaction", inTx.Goal, "request 5")
	must(t, tx.ReleaseSavepoint(ctx))

	// request 6: a batch that repeats a stored key among new ones skips it
	// and leaves a gap; the service takes the batch back and numbers it
	// again, as here.
	must(t, tx.Savepoint(ctx))
	n, err = tx.EntryInsert(ctx, []logbook.Entry{msg(c.ID, 2, "c1", "c's stored key again"), msg(c.ID, 3, "c2", "c's new")})
	must(t, err)
	equal(t, "entries new of a batch repeating a stored key", n, 1)
	must(t, tx.EntryDeleteAfter(ctx, c.ID, 1))
	insertAll(t, tx, []logbook.Entry{msg(c.ID, 2, "c2", "c's new")})
	must(t, tx.ReleaseSavepoint(ctx))

	// A project's prices, read once a transaction, are read again once
	// changed in it.
	must(t, tx.ProjectEnsure(ctx, "p", base))
	prices, err := tx.ProjectPricesGet(ctx, "p")
	must(t, err)
	equal(t, "a project's own prices before any", len(prices), 0)
	must(t, tx.ProjectPricesSet(ctx, "p", map[string]logbook.Price{"m": {Input: 1, Output: 2}}))
	prices, err = tx.ProjectPricesGet(ctx, "p")
	must(t, err)
	equal(t, "a project's own price read after it was set in the same transaction", prices["m"].Output, 2.0)
	must(t, tx.Commit())

	stored, err := st.EntryList(ctx, store.EntryListParams{SessionID: a.ID, Limit: 100})
	must(t, err)
	equal(t, "a's entries stored", texts(stored), "stored before|new|no key|kept")
	for i, en := range stored {
		equal(t, fmt.Sprintf("seq of a's entry %d", i+1), en.Seq, int64(i+1))
	}
	storedB, err := st.EntryList(ctx, store.EntryListParams{SessionID: b.ID, Limit: 100})
	must(t, err)
	equal(t, "b's entries stored", texts(storedB), "b's first")
	storedC, err := st.EntryList(ctx, store.EntryListParams{SessionID: c.ID, Limit: 100})
	must(t, err)
	equal(t, "c's entries stored", texts(storedC), "c's first|c's new")
	for _, want := range []logbook.Session{a, b} {
		row, err := st.SessionGet(ctx, store.SessionGetParams{ID: want.ID})
		must(t, err)
		equal(t, "goal stored of "+want.ID, row.Goal, want.Goal)
		equal(t, "entry_count stored of "+want.ID, row.EntryCount, want.EntryCount)
		equal(t, "unannounced stored of "+want.ID, row.Unannounced, want.Unannounced)
		equal(t, "prompt stored of "+want.ID, row.Prompt, want.Prompt)
	}
	// Touches: counted once a request kept, first made as the database or
	// the transaction first made them; the busiest files' rollup agrees.
	touches, err := st.TouchList(ctx, a.ID)
	must(t, err)
	list := ""
	for _, touch := range touches {
		list += fmt.Sprintf("%s x%d %s|", touch.Value, touch.Count, touch.FirstAt.Format(time.DateOnly))
	}
	equal(t, "a's touches", list, "kept.go x2 "+dayBefore.Format(time.DateOnly)+"|new.go x2 "+base.Format(time.DateOnly)+"|")
	top, err := st.TouchTop(ctx, "p", base, 10)
	must(t, err)
	list = ""
	for _, touch := range top {
		list += fmt.Sprintf("%s x%d|", touch.Value, touch.Count)
	}
	equal(t, "files first touched from base's day on, most touched first", list, "new.go x2|")
	res, err := st.Search(ctx, store.SearchParams{Project: "p", Query: "kept", Candidates: 10, Limit: 10})
	must(t, err)
	equal(t, "search hits for an entry written by a group", len(res.Hits), 1)
	// b's entry was written before request 4's savepoint was sent, and its
	// document with it: request 4 rolled back did not take it.
	res, err = st.Search(ctx, store.SearchParams{Project: "p", Query: "first", Candidates: 10, Limit: 10})
	must(t, err)
	equal(t, "search hits for entries written before a savepoint rolled back to", len(res.Hits), 2)
	res, err = st.Search(ctx, store.SearchParams{Project: "p", Query: "back", Candidates: 10, Limit: 10})
	must(t, err)
	equal(t, "search hits for entries rolled back", len(res.Hits), 0)
}

func msg(session string, seq int64, key, text string) logbook.Entry {
	return logbook.Entry{SessionID: session, Seq: seq, At: base, Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Key: key, Text: text}
}

func texts(entries []logbook.Entry) string {
	out := ""
	for i, en := range entries {
		if i > 0 {
			out += "|"
		}
		out += en.Text
	}
	return out
}
