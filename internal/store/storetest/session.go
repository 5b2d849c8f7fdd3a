package storetest

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

func testSession(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()

	t.Run("InsertAndGetRoundTrip", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		closed := base.Add(time.Hour)
		s := logbook.Session{
			ID: logbook.NewID(base), Project: "p", Actor: "a", Harness: "h", HarnessSessionID: "x",
			ParentID: "", Agent: "ag", Title: "t", GivenTitle: "gt", Goal: "g", Task: "tk", Prompt: "pr",
			Model: "m", AgentType: "at", Issue: "12", Pull: "7", Branch: "b", HeadCommit: "c",
			Subject: "vm:1", Status: logbook.StatusEnded, Outcome: logbook.OutcomeFailed,
			Blocker: logbook.BlockerToolError, EndReason: "ended", Result: "r",
			StartedAt: base, LastSeenAt: base.Add(time.Minute), ClosedAt: &closed,
			EntryCount: 3, MessageCount: 2, ToolCallCount: 1, InputTokens: 10, OutputTokens: 20,
			FirstAssistant: "fa", LastAssistant: "la",
		}
		inserted, err := st.SessionInsert(ctx, &s)
		must(t, err)
		equal(t, "inserted", inserted, true)
		got, err := st.SessionGet(ctx, store.SessionGetParams{ID: s.ID})
		must(t, err)
		if got.ClosedAt == nil || !got.ClosedAt.Equal(closed) {
			t.Fatalf("closed_at = %v, want %v", got.ClosedAt, closed)
		}
		got.ClosedAt, s.ClosedAt = nil, nil
		if got != s {
			t.Errorf("round trip changed the session:\n got %+v\nwant %+v", got, s)
		}
	})

	t.Run("MissingIsErrNotFound", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		_, err := st.SessionGet(ctx, store.SessionGetParams{ID: "nope"})
		if !errors.Is(err, logbook.ErrNotFound) {
			t.Fatalf("SessionGet(missing) err = %v, want ErrNotFound", err)
		}
		_, err = st.SessionGetByHarnessID(ctx, store.SessionGetByHarnessIDParams{Project: "p", Actor: "a", Harness: "h", HarnessSessionID: "x"})
		if !errors.Is(err, logbook.ErrNotFound) {
			t.Fatalf("SessionGetByHarnessID(missing) err = %v, want ErrNotFound", err)
		}
		s := logbook.Session{ID: "nope", Status: logbook.StatusActive}
		if err := st.SessionUpdate(ctx, &s, nil); !errors.Is(err, logbook.ErrNotFound) {
			t.Fatalf("SessionUpdate(missing) err = %v, want ErrNotFound", err)
		}
	})

	t.Run("HarnessKeyIsUnique", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		first := newSession(t, st, sessionOpts{HarnessID: "h-1"})
		again := logbook.Session{ID: logbook.NewID(base), Project: "p", Actor: "alice", Harness: "test",
			HarnessSessionID: "h-1", Status: logbook.StatusActive, StartedAt: base, LastSeenAt: base}
		inserted, err := st.SessionInsert(ctx, &again)
		must(t, err)
		equal(t, "second insert with the same harness id inserted", inserted, false)
		got, err := st.SessionGetByHarnessID(ctx, store.SessionGetByHarnessIDParams{Project: "p", Actor: "alice", Harness: "test", HarnessSessionID: "h-1"})
		must(t, err)
		equal(t, "found id", got.ID, first.ID)
		// Another actor, or no harness id at all, is another session.
		newSession(t, st, sessionOpts{HarnessID: "h-1", Actor: "bob"})
		newSession(t, st, sessionOpts{})
		newSession(t, st, sessionOpts{})
	})

	t.Run("UpdateWritesMutableFields", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		s.Goal, s.Status, s.EntryCount, s.LastSeenAt = "new goal", logbook.StatusEnded, 9, base.Add(time.Hour)
		must(t, st.SessionUpdate(ctx, &s, nil))
		got, err := st.SessionGet(ctx, store.SessionGetParams{ID: s.ID})
		must(t, err)
		equal(t, "goal", got.Goal, "new goal")
		equal(t, "status", got.Status, logbook.StatusEnded)
		equal(t, "entry_count", got.EntryCount, int64(9))
		equal(t, "last_seen_at", got.LastSeenAt, base.Add(time.Hour))
	})

	t.Run("UpdateFromWasWritesWhatDiffers", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		was := s
		// Another writer sets the goal; an update that read the session
		// before and changed only the counters must not put the old goal back.
		other := s
		other.Goal = "set by another writer"
		must(t, st.SessionUpdate(ctx, &other, &s))
		s.EntryCount, s.LastAssistant, s.ClosedAt = 3, "done", &base
		must(t, st.SessionUpdate(ctx, &s, &was))
		got, err := st.SessionGet(ctx, store.SessionGetParams{ID: s.ID})
		must(t, err)
		equal(t, "goal", got.Goal, "set by another writer")
		equal(t, "entry_count", got.EntryCount, int64(3))
		equal(t, "last_assistant", got.LastAssistant, "done")
		if got.ClosedAt == nil || !got.ClosedAt.Equal(base) {
			t.Errorf("closed_at = %v, want %v", got.ClosedAt, base)
		}
		// Nothing changed: nothing written, no error.
		must(t, st.SessionUpdate(ctx, &got, &got))
	})

	t.Run("MarkSeenOnlyMovesForwardOnActive", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		must(t, st.SessionMarkSeen(ctx, s.ID, base.Add(time.Minute)))
		must(t, st.SessionMarkSeen(ctx, s.ID, base.Add(-time.Minute)))
		got, _ := st.SessionGet(ctx, store.SessionGetParams{ID: s.ID})
		equal(t, "last_seen_at", got.LastSeenAt, base.Add(time.Minute))
		got.Status = logbook.StatusEnded
		must(t, st.SessionUpdate(ctx, &got, nil))
		must(t, st.SessionMarkSeen(ctx, s.ID, base.Add(time.Hour)))
		got, _ = st.SessionGet(ctx, store.SessionGetParams{ID: s.ID})
		equal(t, "last_seen_at of an ended session", got.LastSeenAt, base.Add(time.Minute))
	})

	t.Run("Children", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		parent := newSession(t, st, sessionOpts{})
		c1 := newSession(t, st, sessionOpts{ParentID: parent.ID, StartedAt: base.Add(time.Second)})
		c2 := newSession(t, st, sessionOpts{ParentID: parent.ID, StartedAt: base.Add(2 * time.Second)})
		newSession(t, st, sessionOpts{})
		children, err := st.SessionListChildren(ctx, parent.ID)
		must(t, err)
		equal(t, "children, oldest first", ids(children), c1.ID+" "+c2.ID+" ")
		none, err := st.SessionListChildren(ctx, "")
		must(t, err)
		equal(t, "children of the empty id", len(none), 0)
	})

	t.Run("Unannounced", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		quiet := newSession(t, st, sessionOpts{})
		pending := newSession(t, st, sessionOpts{})
		ended := newSession(t, st, sessionOpts{})
		none, err := st.SessionListUnannounced(ctx)
		must(t, err)
		equal(t, "pending before any entry", len(none), 0)
		at := base.Add(time.Minute)
		for _, s := range []*logbook.Session{&pending, &ended} {
			was := *s
			s.Unannounced, s.AnnouncedAt = 3, at
			must(t, st.SessionUpdate(ctx, s, &was))
		}
		was := ended
		ended.Status = logbook.StatusEnded
		must(t, st.SessionUpdate(ctx, &ended, &was))
		got, err := st.SessionListUnannounced(ctx)
		must(t, err)
		equal(t, "pending sessions", strings.Join(got, " "), pending.ID)
		read, _ := st.SessionGet(ctx, store.SessionGetParams{ID: pending.ID})
		equal(t, "unannounced", read.Unannounced, int64(3))
		equal(t, "announced_at", read.AnnouncedAt, at)
		read, _ = st.SessionGet(ctx, store.SessionGetParams{ID: quiet.ID})
		equal(t, "unannounced of a quiet session", read.Unannounced, int64(0))
	})

	t.Run("TimeOut", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		old := newSession(t, st, sessionOpts{StartedAt: base})
		fresh := newSession(t, st, sessionOpts{StartedAt: base.Add(time.Hour)})
		ended, err := st.SessionTimeOut(ctx, base.Add(30*time.Minute), base.Add(2*time.Hour))
		must(t, err)
		if len(ended) != 1 || ended[0].ID != old.ID {
			t.Fatalf("timed out %v, want only %s", ids(ended), old.ID)
		}
		got, _ := st.SessionGet(ctx, store.SessionGetParams{ID: old.ID})
		equal(t, "status", got.Status, logbook.StatusEnded)
		equal(t, "end_reason", got.EndReason, logbook.EndReasonTimedOut)
		if got.ClosedAt == nil || !got.ClosedAt.Equal(base.Add(2*time.Hour)) {
			t.Errorf("closed_at = %v, want the sweep time", got.ClosedAt)
		}
		got, _ = st.SessionGet(ctx, store.SessionGetParams{ID: fresh.ID})
		equal(t, "fresh status", got.Status, logbook.StatusActive)
	})
}

func testSessionList(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()
	st := newStore(t)
	var want []logbook.Session
	for i := 0; i < 7; i++ {
		// Two sessions per instant, so the id breaks ties.
		s := newSession(t, st, sessionOpts{StartedAt: base.Add(time.Duration(i/2) * time.Second)})
		want = append(want, s)
		newSession(t, st, sessionOpts{ParentID: s.ID, StartedAt: s.StartedAt}) // subagents are left out by default
	}
	newSession(t, st, sessionOpts{Project: "other"})
	for _, sort := range []logbook.SessionSort{logbook.SortStarted, logbook.SortLastSeen, logbook.SortDuration} {
		var all []logbook.Session
		var after *store.SessionCursor
		for {
			page, err := st.SessionList(ctx, store.SessionListParams{Project: "p", Sort: sort, Limit: 3, After: after, Now: base.Add(time.Hour)})
			must(t, err)
			all = append(all, page...)
			if len(page) < 3 {
				break
			}
			last := page[len(page)-1]
			value := last.StartedAt.UnixMicro()
			if sort == logbook.SortDuration {
				value = last.DurationSeconds
			} else if sort == logbook.SortLastSeen {
				value = last.LastSeenAt.UnixMicro()
			}
			after = &store.SessionCursor{Value: value, ID: last.ID}
		}
		if len(all) != len(want) {
			t.Fatalf("sort %s: paged through %d sessions, want %d", sort, len(all), len(want))
		}
		for i := 1; i < len(all); i++ {
			a, b := all[i-1], all[i]
			ka, kb := a.StartedAt.UnixMicro(), b.StartedAt.UnixMicro()
			if sort == logbook.SortDuration {
				ka, kb = a.DurationSeconds, b.DurationSeconds
			}
			if ka < kb || (ka == kb && a.ID < b.ID) {
				t.Errorf("sort %s: sessions %d and %d are out of order", sort, i-1, i)
			}
		}
		if all[0].SubagentCount != 1 {
			t.Errorf("sort %s: subagent_count = %d, want 1", sort, all[0].SubagentCount)
		}
	}
}

// testSessionStats: sums are exact for counts a project reaches, and the
// token sums saturate at math.MaxInt64 where they would overflow.
func testSessionStats(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()
	st := newStore(t)
	withTokens := func(project string, in, out int64) {
		t.Helper()
		s := newSession(t, st, sessionOpts{Project: project})
		s.InputTokens, s.OutputTokens, s.ToolCallCount = in, out, 2
		must(t, st.SessionUpdate(ctx, &s, nil))
	}
	stats := func(project string) logbook.StatsRow {
		t.Helper()
		rows, err := st.SessionStats(ctx, store.SessionStatsParams{Project: project, Since: base, By: logbook.ByHarness, Now: base.Add(time.Minute)})
		must(t, err)
		if len(rows) != 1 {
			t.Fatalf("project %s: %d rows, want 1", project, len(rows))
		}
		return rows[0]
	}

	// Exact: 2^53 is where a double stops counting every integer.
	withTokens("exact", 1<<53-10, 3)
	withTokens("exact", 9, 4)
	got := stats("exact")
	equal(t, "sessions", got.Sessions, 2)
	equal(t, "input tokens", got.InputTokens, 1<<53-1)
	equal(t, "output tokens", got.OutputTokens, 7)
	equal(t, "tool calls", got.ToolCalls, 4)
	equal(t, "duration", got.DurationSeconds, 120)

	withTokens("huge", math.MaxInt64, math.MaxInt64)
	withTokens("huge", math.MaxInt64, 1)
	got = stats("huge")
	equal(t, "saturated input tokens", got.InputTokens, math.MaxInt64)
	equal(t, "saturated output tokens", got.OutputTokens, math.MaxInt64)
}
