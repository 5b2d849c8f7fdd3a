package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// testMonthlyRetention holds retention by whole months (PostgreSQL, whose
// entries are partitioned by the month of their session) to what deleting
// session by session leaves: a month is emptied only when every session
// tree in it is due, and what is left afterwards, the search index and the
// statistics included, is the same on every engine.
func testMonthlyRetention(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()
	st := newStore(t)
	// Months ahead of the real clock, so the months get partitions of
	// their own, not the one a migration made of the entries before it.
	jan := time.Date(2031, 1, 10, 12, 0, 0, 0, time.UTC)
	must(t, st.EntryPartitionsMaintain(ctx, jan, store.PartitionMonthsAhead))
	for _, p := range []string{"p", "q"} {
		must(t, st.ProjectEnsure(ctx, p, jan))
	}
	must(t, st.ProjectRetentionSet(ctx, "p", logbook.Retention{SessionsDays: 30}))

	// mk starts a session at started with two entries holding word, and
	// ends it a day later.
	mk := func(project, parent string, started time.Time, word string) logbook.Session {
		t.Helper()
		s := logbook.Session{ID: logbook.NewID(started), Project: project, Actor: "alice", Harness: "h", ParentID: parent, RootID: parent,
			Status: logbook.StatusActive, StartedAt: started, LastSeenAt: started, Title: word + " title"}
		_, err := st.SessionInsert(ctx, &s)
		must(t, err)
		insertAll(t, st, []logbook.Entry{
			{SessionID: s.ID, Seq: 1, At: started, Kind: logbook.KindPrompt, Text: "look for " + word},
			{SessionID: s.ID, Seq: 2, At: started, Kind: logbook.KindNote, Text: word + " found", Key: "k-" + word},
		})
		return endSession(t, st, s, started.Add(24*time.Hour))
	}
	// January: a tree and a session of p, all due by late April.
	root := mk("p", "", jan, "januaryroot")
	child := mk("p", root.ID, jan.Add(time.Hour), "januarychild")
	lone := mk("p", "", jan.Add(2*time.Hour), "januarylone")
	// February: one of p, due, and one of q, which keeps everything.
	feb := jan.AddDate(0, 1, 0)
	due := mk("p", "", feb, "februarydue")
	kept := mk("q", "", feb.Add(time.Hour), "februarykept")
	// March: a subagent of a February session of p, still going, keeps
	// its whole tree and so February's month.
	mar := jan.AddDate(0, 2, 0)
	going := mk("p", "", feb.Add(2*time.Hour), "februarygoing")
	late := logbook.Session{ID: logbook.NewID(mar), Project: "p", Actor: "alice", Harness: "h", ParentID: going.ID, RootID: going.ID,
		Status: logbook.StatusActive, StartedAt: mar, LastSeenAt: mar}
	_, err := st.SessionInsert(ctx, &late)
	must(t, err)

	now := jan.AddDate(0, 3, 10) // 20 April: p keeps sessions ended after 21 March
	deletedByMonth := map[string]int64{}
	for {
		deleted, err := st.EntryPartitionPrune(ctx, now)
		must(t, err)
		if deleted["sessions"] == 0 {
			break
		}
		for table, n := range deleted {
			deletedByMonth[table] += n
		}
	}
	// Only January can go whole; an engine without partitions leaves it
	// all to SessionPruneProject.
	if n := deletedByMonth["sessions"]; n != 0 && (n != 3 || deletedByMonth["entries"] != 6 || deletedByMonth["partitions"] != 1) {
		t.Errorf("emptied by month: %v, want January alone: 3 sessions, 6 entries, 1 partition", deletedByMonth)
	}
	for {
		deleted, err := st.SessionPruneProject(ctx, "p", now.AddDate(0, 0, -30), 10)
		must(t, err)
		if deleted["sessions"] == 0 {
			break
		}
	}
	must(t, st.EntryPartitionsMaintain(ctx, now, store.PartitionMonthsAhead))

	for _, s := range []logbook.Session{root, child, lone, due} {
		if _, err := st.SessionGet(ctx, store.SessionGetParams{ID: s.ID}); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("session %q outlived its retention: %v", s.Title, err)
		}
	}
	for _, s := range []logbook.Session{kept, going} {
		entries, err := st.EntryList(ctx, store.EntryListParams{SessionID: s.ID, Limit: 10})
		must(t, err)
		if len(entries) != 2 {
			t.Errorf("session %q kept %d entries, want its 2", s.Title, len(entries))
		}
	}
	// The keys of what is kept still hold: the same batch again adds nothing.
	n, err := st.EntryInsert(ctx, []logbook.Entry{{SessionID: kept.ID, Seq: 3, At: now, Kind: logbook.KindNote, Text: "again", Key: "k-februarykept"}})
	must(t, err)
	equal(t, "entries a repeated key added", n, 0)

	for word, want := range map[string]int{"januaryroot": 0, "januarylone": 0, "februarydue": 0, "februarykept": 1, "februarygoing": 1} {
		for _, project := range []string{"p", "q"} {
			res, err := st.Search(ctx, store.SearchParams{Project: project, Query: word + " found", Candidates: 100, Limit: 100})
			must(t, err)
			if want == 0 && len(res.Hits) > 0 {
				t.Errorf("search for %q in %s finds %d hits of deleted sessions", word, project, len(res.Hits))
			}
			if want > 0 && project == map[string]string{"februarykept": "q", "februarygoing": "p"}[word] && len(res.Hits) == 0 {
				t.Errorf("search for %q in %s finds nothing of a kept session", word, project)
			}
		}
	}
	for _, project := range []string{"p", "q"} {
		p := store.SessionStatsParams{Project: project, Since: jan.AddDate(0, -1, 0), By: logbook.ByOutcome, Now: now}
		got, err := st.SessionStats(ctx, p)
		must(t, err)
		left, err := st.SessionList(ctx, store.SessionListParams{Project: project, Filter: logbook.SessionFilter{Subagents: true},
			Sort: logbook.SortStarted, Limit: 100, Now: now})
		must(t, err)
		if want := countStats(left, p); !slices.Equal(got, want) {
			t.Errorf("statistics of %s after retention:\n got %+v\nwant %+v", project, got, want)
		}
	}
}
