package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// endSession ends a session at closed, as the service does.
func endSession(t testing.TB, ex store.Executor, s logbook.Session, closed time.Time) logbook.Session {
	t.Helper()
	ended := s
	ended.Status, ended.Outcome, ended.EndReason, ended.ClosedAt, ended.LastSeenAt = logbook.StatusEnded, logbook.OutcomeSuccess, logbook.EndReasonEnded, &closed, closed
	must(t, ex.SessionUpdate(context.Background(), &ended, &s))
	return ended
}

func testRetention(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()

	t.Run("Prices", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		if _, err := st.ProjectPricesGet(ctx, "p"); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("the prices of a project never named: %v, want ErrNotFound", err)
		}
		if err := st.ProjectPricesSet(ctx, "p", nil); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("setting the prices of a project never named: %v, want ErrNotFound", err)
		}
		for _, p := range []string{"p", "q"} {
			must(t, st.ProjectEnsure(ctx, p, base))
		}
		got, err := st.ProjectPricesGet(ctx, "p")
		must(t, err)
		if got != nil {
			t.Errorf("a new project's own prices: %+v, want none", got)
		}
		own := map[string]logbook.Price{"claude-sonnet-4-5": {Input: 2.5, Output: 12.5, CacheRead: 0.25, CacheWrite: 3.125},
			"in-house": {Input: 0.000001, Output: 10_000}}
		must(t, st.ProjectPricesSet(ctx, "p", own))
		got, err = st.ProjectPricesGet(ctx, "p")
		must(t, err)
		if !maps.Equal(got, own) {
			t.Errorf("prices read back: %+v, want %+v", got, own)
		}
		if other, err := st.ProjectPricesGet(ctx, "q"); err != nil || other != nil {
			t.Errorf("another project's prices: %+v, %v; want none", other, err)
		}
		must(t, st.ProjectPricesSet(ctx, "p", nil))
		got, err = st.ProjectPricesGet(ctx, "p")
		must(t, err)
		if got != nil {
			t.Errorf("prices after dropping them: %+v", got)
		}
	})

	t.Run("Policy", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		if _, err := st.ProjectRetentionGet(ctx, "p"); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("the retention of a project never named: %v, want ErrNotFound", err)
		}
		if err := st.ProjectRetentionSet(ctx, "p", logbook.Retention{SessionsDays: 1}); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("setting the retention of a project never named: %v, want ErrNotFound", err)
		}
		for _, p := range []string{"p", "q", "r"} {
			must(t, st.ProjectEnsure(ctx, p, base))
		}
		r, err := st.ProjectRetentionGet(ctx, "p")
		must(t, err)
		equal(t, "a new project's retention", r, logbook.Retention{})
		must(t, st.ProjectRetentionSet(ctx, "r", logbook.Retention{SessionsDays: 90, PayloadsDays: 30}))
		must(t, st.ProjectRetentionSet(ctx, "p", logbook.Retention{PayloadsDays: 7}))
		r, err = st.ProjectRetentionGet(ctx, "r")
		must(t, err)
		equal(t, "retention read back", r, logbook.Retention{SessionsDays: 90, PayloadsDays: 30})
		list, err := st.ProjectRetentionList(ctx)
		must(t, err)
		want := []logbook.ProjectRetention{{Project: "p", Retention: logbook.Retention{PayloadsDays: 7}}, {Project: "r", Retention: logbook.Retention{SessionsDays: 90, PayloadsDays: 30}}}
		if !slices.Equal(list, want) {
			t.Errorf("projects with a retention: %+v, want %+v", list, want)
		}
		must(t, st.ProjectRetentionSet(ctx, "p", logbook.Retention{}))
		list, err = st.ProjectRetentionList(ctx)
		must(t, err)
		if len(list) != 1 || list[0].Project != "r" {
			t.Errorf("after p keeps everything again: %+v", list)
		}
	})

	t.Run("PruneProject", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		old := base.Add(-100 * 24 * time.Hour)
		closedOld, closedRecent := old.Add(time.Hour), base.Add(time.Hour)
		// mk makes a session with an entry, ended at closed (nil: going).
		mk := func(project, parent string, closed *time.Time) logbook.Session {
			t.Helper()
			s := logbook.Session{ID: logbook.NewID(old), Project: project, Actor: "alice", ParentID: parent, RootID: parent,
				Status: logbook.StatusActive, StartedAt: old, LastSeenAt: old}
			if closed != nil {
				s.Status, s.ClosedAt, s.EndReason = logbook.StatusEnded, closed, logbook.EndReasonEnded
			}
			must(t, st.ProjectEnsure(ctx, project, old))
			_, err := st.SessionInsert(ctx, &s)
			must(t, err)
			insertAll(t, st, []logbook.Entry{{SessionID: s.ID, Seq: 1, At: old, Kind: logbook.KindNote, Text: "kept or not"}})
			return s
		}
		gone := mk("p", "", &closedOld)
		mk("p", gone.ID, &closedOld)
		busy := mk("p", "", &closedOld)
		mk("p", busy.ID, nil) // still going
		recent := mk("p", "", &closedRecent)
		elsewhere := mk("q", "", &closedOld)

		deleted, err := st.SessionPruneProject(ctx, "p", base.Add(-24*time.Hour), 10)
		must(t, err)
		equal(t, "sessions pruned (the tree of two)", deleted["sessions"], int64(2))
		equal(t, "entries pruned", deleted["entries"], int64(2))
		for _, s := range []logbook.Session{busy, recent, elsewhere} {
			if _, err := st.SessionGet(ctx, store.SessionGetParams{ID: s.ID}); err != nil {
				t.Errorf("session %s was pruned: %v", s.ID, err)
			}
		}
		if _, err := st.SessionGet(ctx, store.SessionGetParams{ID: gone.ID}); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("the pruned session reads back: %v", err)
		}
		deleted, err = st.SessionPruneProject(ctx, "p", base.Add(-24*time.Hour), 10)
		must(t, err)
		equal(t, "sessions pruned again", deleted["sessions"], int64(0))
	})

	t.Run("TrimPayloads", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		big := json.RawMessage(`{"file_path":"a.go","content":"` + strings.Repeat("x", logbook.LargePayload) + `"}`)
		failed := json.RawMessage(`{"error":"exit status 1"}`)
		insertAll(t, st, []logbook.Entry{
			{SessionID: s.ID, Seq: 1, At: base, Kind: logbook.KindPrompt, Text: "write the file"},
			{SessionID: s.ID, Seq: 2, At: base, Kind: logbook.KindToolCall, Tool: "Write", ToolCallID: "w", Payload: big},
			{SessionID: s.ID, Seq: 3, At: base, Kind: logbook.KindToolResult, Tool: "Write", ToolCallID: "w", Text: "wrote a.go: zanzibar"},
			{SessionID: s.ID, Seq: 4, At: base, Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "b", Payload: json.RawMessage(`{"command":"make"}`)},
			{SessionID: s.ID, Seq: 5, At: base, Kind: logbook.KindToolResult, Tool: "Bash", ToolCallID: "b", Text: "make: *** zanzibar Error 1", Payload: failed},
			{SessionID: s.ID, Seq: 6, At: base, Kind: logbook.KindSummary, Text: "zanzibar summary", Payload: big},
			{SessionID: s.ID, Seq: 7, At: base, Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "zanzibar done"},
		})
		other := newSession(t, st, sessionOpts{Project: "q"})
		active := newSession(t, st, sessionOpts{HarnessID: "still-going"})
		cutoff := base.Add(24 * time.Hour)
		list, err := st.SessionListTrimmable(ctx, "p", cutoff, 10)
		must(t, err)
		equal(t, "trimmable before the session ended", len(list), 0)
		s = endSession(t, st, s, base.Add(time.Hour))
		endSession(t, st, other, base.Add(time.Hour))
		list, err = st.SessionListTrimmable(ctx, "p", cutoff, 10)
		must(t, err)
		if !slices.Equal(list, []string{s.ID}) {
			t.Errorf("trimmable sessions of p: %v, want only %s (not %s, still going)", list, s.ID, active.ID)
		}
		list, err = st.SessionListTrimmable(ctx, "p", base, 10)
		must(t, err)
		equal(t, "trimmable when it ended after the cutoff", len(list), 0)

		first, err := st.EntryListTrimmable(ctx, s.ID, 2)
		must(t, err)
		if len(first) != 2 || first[0].Seq != 2 || first[1].Seq != 3 {
			t.Fatalf("first two trimmable entries: %+v", first)
		}
		all, err := st.EntryListTrimmable(ctx, s.ID, 10)
		must(t, err)
		var seqs []int64
		for i := range all {
			seqs = append(seqs, all[i].Seq)
			if !logbook.Trimmable(all[i]) {
				t.Errorf("entry %d is listed but not trimmable", all[i].Seq)
			}
			logbook.TrimEntry(&all[i])
		}
		if !slices.Equal(seqs, []int64{2, 3, 5}) {
			t.Fatalf("trimmable entries %v, want 2 (a large input), 3 and 5 (results)", seqs)
		}
		must(t, st.EntryUpdateContent(ctx, all))
		again, err := st.EntryListTrimmable(ctx, s.ID, 10)
		must(t, err)
		equal(t, "trimmable after trimming", len(again), 0)
		got, err := st.EntryList(ctx, store.EntryListParams{SessionID: s.ID, Limit: 10})
		must(t, err)
		if got[2].Text != "" || string(got[2].Payload) != `{"retention":"removed"}` || got[4].Text != "" ||
			string(got[4].Payload) != `{"is_error":true,"retention":"removed"}` || string(got[1].Payload) != `{"retention":"removed"}` {
			t.Errorf("trimmed entries read back as %+v", got[1:5])
		}
		if got[5].Text != "zanzibar summary" || len(got[5].Payload) != len(big) || got[6].Text != "zanzibar done" || got[0].Text != "write the file" {
			t.Errorf("kept entries changed: %+v", []logbook.Entry{got[0], got[5], got[6]})
		}
		// The index forgets what was removed and keeps what was kept.
		res, err := st.Search(ctx, store.SearchParams{Project: "p", Query: "zanzibar", Candidates: 10, Limit: 10})
		must(t, err)
		var found []int64
		for _, h := range res.Hits {
			if h.Entry != nil {
				found = append(found, h.Entry.Seq)
			}
		}
		slices.Sort(found)
		if !slices.Equal(found, []int64{6, 7}) {
			t.Errorf("zanzibar is found in entries %v after trimming, want 6 and 7", found)
		}

		must(t, st.SessionMarkTrimmed(ctx, s.ID, cutoff))
		list, err = st.SessionListTrimmable(ctx, "p", cutoff, 10)
		must(t, err)
		equal(t, "trimmable after marking", len(list), 0)
		if err := st.SessionMarkTrimmed(ctx, "no-such-session", cutoff); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("marking an unknown session: %v, want ErrNotFound", err)
		}
		if err := st.EntryUpdateContent(ctx, []logbook.Entry{{ID: 1 << 40, SessionID: s.ID, Seq: 99}}); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("updating an unknown entry: %v, want ErrNotFound", err)
		}
	})
}
