package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/testdb"
)

func TestQueries(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Run("Filters", func(t *testing.T) { t.Parallel(); testFilters(t, setup(t, e)) })
		t.Run("OneQueryPerPage", func(t *testing.T) { t.Parallel(); testOneQueryPerPage(t, e) })
		t.Run("CursorUnderConcurrentInserts", func(t *testing.T) { t.Parallel(); testCursorConcurrent(t, setup(t, e)) })
		t.Run("GoalMemory", func(t *testing.T) { t.Parallel(); testGoalMemory(t, setup(t, e)) })
		t.Run("StatsAndToolCalls", func(t *testing.T) { t.Parallel(); testStatsAndToolCalls(t, setup(t, e)) })
	})
}

// fleet is a set of sessions with known attributes, named for the test.
type fleet map[string]logbook.Session

func (b *bundle) makeFleet(t *testing.T) fleet {
	f := fleet{}
	add := func(name string, p service.StartParams) logbook.Session {
		s := b.start(t, b.alice, p)
		f[name] = s
		b.clock.Add(time.Minute)
		return s
	}
	add("old-failed", service.StartParams{Harness: "codex", Fields: logbook.SessionFields{Goal: str("Migrate the billing database"), Issue: str("12")}})
	_, err := b.svc.AppendEntries(b.ctx, b.alice, f["old-failed"].ID, service.Batch{
		Entries: []logbook.Entry{{Kind: logbook.KindMessage, Role: "assistant", Text: "Error: permission denied on /var/lib"}},
		Touched: []logbook.Touch{{Value: "db/migrate.sql"}}})
	must(t, err)
	b.clock.Add(2 * time.Hour)
	_, err = b.svc.EndSession(b.ctx, b.alice, f["old-failed"].ID, service.EndParams{Outcome: logbook.OutcomeFailed})
	must(t, err)

	add("busy", service.StartParams{Harness: "claude-code", Fields: logbook.SessionFields{Title: str("Refactor the API"), Agent: str("engineer-1"), Branch: str("feat-x")}})
	var calls []logbook.Entry
	for i := range 5 {
		calls = append(calls, logbook.Entry{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: string(rune('a' + i))})
	}
	_, err = b.svc.AppendEntries(b.ctx, b.alice, f["busy"].ID, service.Batch{Entries: calls, Touched: []logbook.Touch{{Value: "src/api/x.go"}}})
	must(t, err)
	add("child", service.StartParams{Harness: "claude-code", ParentID: f["busy"].ID})
	add("pulled", service.StartParams{Harness: "claude-code", Fields: logbook.SessionFields{Pull: str("7"), Branch: str("feat-x"), Subject: str("vm:101")}})
	bob := b.start(t, b.bob, service.StartParams{Harness: "codex", Fields: logbook.SessionFields{Prompt: str("see #12 please")}})
	f["bob"] = bob
	_, err = b.svc.EndSession(b.ctx, b.bob, bob.ID, service.EndParams{Outcome: logbook.OutcomeSuccess})
	must(t, err)
	return f
}

func (b *bundle) list(t *testing.T, f logbook.SessionFilter) []string {
	t.Helper()
	page, err := b.svc.ListSessions(b.ctx, b.alice, service.ListParams{Filter: f, Limit: 200})
	must(t, err)
	var ids []string
	for _, s := range page.Sessions {
		ids = append(ids, s.ID)
	}
	slices.Sort(ids)
	return ids
}

func (f fleet) ids(names ...string) []string {
	var ids []string
	for _, n := range names {
		ids = append(ids, f[n].ID)
	}
	slices.Sort(ids)
	return ids
}

func testFilters(t *testing.T, b *bundle) {
	f := b.makeFleet(t)
	b.clock.Add(5 * time.Minute) // "pulled" has been quiet 5 minutes, "busy" longer
	tests := []struct {
		name   string
		filter logbook.SessionFilter
		want   []string
	}{
		{"default lists the tops of trees", logbook.SessionFilter{}, f.ids("old-failed", "busy", "pulled", "bob")},
		{"subagents too", logbook.SessionFilter{Subagents: true}, f.ids("old-failed", "busy", "child", "pulled", "bob")},
		{"children of a session", logbook.SessionFilter{ParentID: f["busy"].ID}, f.ids("child")},
		{"ended", logbook.SessionFilter{State: logbook.StateEnded}, f.ids("old-failed", "bob")},
		{"active", logbook.SessionFilter{State: logbook.StateActive}, f.ids("busy", "pulled")},
		{"outcome", logbook.SessionFilter{Outcome: logbook.OutcomeFailed}, f.ids("old-failed")},
		{"blocker", logbook.SessionFilter{Blocker: logbook.BlockerToolError}, f.ids("old-failed")},
		{"harness", logbook.SessionFilter{Harness: "codex"}, f.ids("old-failed", "bob")},
		{"actor", logbook.SessionFilter{Actor: "bob"}, f.ids("bob")},
		{"agent", logbook.SessionFilter{Agent: "engineer-1"}, f.ids("busy")},
		{"issue attached or named", logbook.SessionFilter{Issue: "12"}, f.ids("old-failed", "bob")},
		{"pull attached or by branch", logbook.SessionFilter{Pull: "7"}, f.ids("busy", "pulled")},
		{"subject", logbook.SessionFilter{Subject: "vm:101"}, f.ids("pulled")},
		{"path exact", logbook.SessionFilter{Path: "db/migrate.sql"}, f.ids("old-failed")},
		{"path prefix", logbook.SessionFilter{Path: "src/"}, f.ids("busy")},
		{"path prefix matches no sibling", logbook.SessionFilter{Path: "sr/"}, nil},
		{"min tool calls", logbook.SessionFilter{MinToolCalls: 5}, f.ids("busy")},
		{"min duration", logbook.SessionFilter{MinDuration: 90 * time.Minute}, f.ids("old-failed")},
		{"words in title or goal", logbook.SessionFilter{Query: "billing MIGRATE"}, f.ids("old-failed")},
		{"words side by side, whatever stands between", logbook.SessionFilter{Query: "billing-database"}, f.ids("old-failed")},
		{"a word and a star find longer ones", logbook.SessionFilter{Query: "migr*"}, f.ids("old-failed")},
		{"a word is a word", logbook.SessionFilter{Query: "migr"}, nil},
		{"words of the transcript are not the session's", logbook.SessionFilter{Query: "permission denied"}, nil},
		{"since: seen in the window", logbook.SessionFilter{Since: f["busy"].StartedAt.Add(30 * time.Second)}, f.ids("busy", "pulled", "bob")},
		{"until", logbook.SessionFilter{Until: f["busy"].StartedAt.Add(-time.Second)}, f.ids("old-failed")},
		{"combined", logbook.SessionFilter{Harness: "claude-code", State: logbook.StateActive, Pull: "7", MinToolCalls: 1}, f.ids("busy")},
	}
	for _, tc := range tests {
		if got := b.list(t, tc.filter); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %d sessions %v, want %v", tc.name, len(got), got, tc.want)
		}
	}
	if _, err := b.svc.ListSessions(b.ctx, b.alice, service.ListParams{Filter: logbook.SessionFilter{Query: "% _"}}); !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("a q without a word: %v, want ErrInvalid", err)
	}
	b.clock.Add(10 * time.Minute)
	if got := b.list(t, logbook.SessionFilter{State: logbook.StateIdle}); !slices.Equal(got, f.ids("busy", "pulled")) {
		t.Errorf("idle: %v", got)
	}

	// Aggregates agree with counting the rows themselves.
	page, err := b.svc.ListSessions(b.ctx, b.alice, service.ListParams{Filter: logbook.SessionFilter{Subagents: true}, Limit: 200})
	must(t, err)
	db := rawDB(b.st)
	for _, s := range page.Sessions {
		var entries, tools, children int64
		must(t, db.QueryRow(`SELECT COUNT(*) FROM entries WHERE session_id = $1`, s.ID).Scan(&entries))
		must(t, db.QueryRow(`SELECT COUNT(*) FROM entries WHERE session_id = $1 AND kind = 'tool_call'`, s.ID).Scan(&tools))
		must(t, db.QueryRow(`SELECT COUNT(*) FROM sessions WHERE parent_id = $1`, s.ID).Scan(&children))
		if s.EntryCount != entries || s.ToolCallCount != tools || s.SubagentCount != children {
			t.Errorf("%s: counters %d/%d/%d, rows %d/%d/%d", s.ID, s.EntryCount, s.ToolCallCount, s.SubagentCount, entries, tools, children)
		}
		want := int64(b.clock.Now().Sub(s.StartedAt) / time.Second)
		if s.ClosedAt != nil {
			want = int64(s.ClosedAt.Sub(s.StartedAt) / time.Second)
		}
		if s.DurationSeconds != want {
			t.Errorf("%s (%s): duration %d s, want %d", s.ID, s.State, s.DurationSeconds, want)
		}
	}
	longest, err := b.svc.ListSessions(b.ctx, b.alice, service.ListParams{Sort: logbook.SortDuration, Limit: 1})
	must(t, err)
	if longest.Sessions[0].ID != f["old-failed"].ID && longest.Sessions[0].ID != f["busy"].ID {
		t.Errorf("longest first: %s", longest.Sessions[0].ID)
	}
	if _, err := b.svc.ListSessions(b.ctx, b.alice, service.ListParams{Sort: "alphabetical"}); !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("a bad sort: %v", err)
	}
}

// countingStore counts the store calls a service makes.
type countingStore struct {
	store.Store
	calls atomic.Int64
}

func (c *countingStore) SessionList(ctx context.Context, p store.SessionListParams) ([]logbook.Session, error) {
	c.calls.Add(1)
	return c.Store.SessionList(ctx, p)
}

func testOneQueryPerPage(t *testing.T, e testdb.Engine) {
	b := setup(t, e)
	for range 210 {
		s := b.start(t, b.alice, service.StartParams{})
		b.start(t, b.alice, service.StartParams{ParentID: s.ID})
	}
	counting := &countingStore{Store: b.st}
	svc := service.New(counting, service.Options{NowFunc: b.clock.Now})
	page, err := svc.ListSessions(b.ctx, b.alice, service.ListParams{Limit: 200})
	must(t, err)
	if len(page.Sessions) != 200 || page.Sessions[0].SubagentCount != 1 {
		t.Fatalf("page: %d sessions", len(page.Sessions))
	}
	// The service makes one store call for the page, and the store answers
	// it with one SQL statement (sqlstore.SessionList runs one QueryContext).
	if n := counting.calls.Load(); n != 1 {
		t.Errorf("a page of 200 made %d store calls, want 1", n)
	}
}

func testCursorConcurrent(t *testing.T, b *bundle) {
	for range 30 {
		b.start(t, b.alice, service.StartParams{})
		b.clock.Add(time.Second)
	}
	seen := map[string]bool{}
	cursor := ""
	for first := true; first || cursor != ""; first = false {
		page, err := b.svc.ListSessions(b.ctx, b.alice, service.ListParams{Sort: logbook.SortStarted, Limit: 7, Cursor: cursor})
		must(t, err)
		for _, s := range page.Sessions {
			if seen[s.ID] {
				t.Fatalf("session %s seen twice", s.ID)
			}
			seen[s.ID] = true
		}
		cursor = page.NextCursor
		// Sessions keep arriving while the client pages.
		b.start(t, b.alice, service.StartParams{})
		b.clock.Add(time.Second)
	}
	if len(seen) < 30 {
		t.Errorf("paged through %d of the 30 sessions that existed at the start", len(seen))
	}
	if _, err := b.svc.ListSessions(b.ctx, b.alice, service.ListParams{Cursor: cursor + "x"}); cursor != "" && !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("a damaged cursor: %v", err)
	}
}

func testGoalMemory(t *testing.T, b *bundle) {
	failed := b.start(t, b.alice, service.StartParams{Fields: logbook.SessionFields{Goal: str("Upgrade the Postgres cluster to 16")}})
	_, err := b.svc.EndSession(b.ctx, b.alice, failed.ID, service.EndParams{Outcome: logbook.OutcomeFailed, Result: "pg_upgrade failed: extension mismatch"})
	must(t, err)
	b.clock.Add(time.Minute)
	sameIssue := b.start(t, b.bob, service.StartParams{Fields: logbook.SessionFields{Goal: str("Something else"), Issue: str("99")}})
	_, err = b.svc.EndSession(b.ctx, b.bob, sameIssue.ID, service.EndParams{Outcome: logbook.OutcomePartial, Blocker: logbook.BlockerApprovalTimeout})
	must(t, err)
	unrelated := b.start(t, b.alice, service.StartParams{Fields: logbook.SessionFields{Goal: str("Write release notes")}})
	_, err = b.svc.EndSession(b.ctx, b.alice, unrelated.ID, service.EndParams{Outcome: logbook.OutcomeFailed})
	must(t, err)
	succeeded := b.start(t, b.alice, service.StartParams{Fields: logbook.SessionFields{Goal: str("Upgrade the Postgres cluster")}})
	_, err = b.svc.EndSession(b.ctx, b.alice, succeeded.ID, service.EndParams{Outcome: logbook.OutcomeSuccess})
	must(t, err)

	b.clock.Add(time.Hour)
	now := b.start(t, b.alice, service.StartParams{Fields: logbook.SessionFields{Issue: str("99")}})
	res, err := b.svc.SetGoal(b.ctx, b.alice, now.ID, "upgrade postgres cluster to version 16")
	must(t, err)
	if res.Session.Goal != "upgrade postgres cluster to version 16" || res.Session.Title != res.Session.Goal {
		t.Errorf("session after SetGoal: %+v", res.Session)
	}
	var got []string
	for _, p := range res.Prior {
		got = append(got, p.ID)
	}
	if want := []string{sameIssue.ID, failed.ID}; !slices.Equal(got, want) {
		t.Fatalf("prior: %v, want the same-issue session then the similar failed one (newest first): %v", res.Prior, want)
	}
	if res.Prior[1].Result != "pg_upgrade failed: extension mismatch" || !strings.HasPrefix(res.Prior[1].Why, "similar goal") ||
		res.Prior[0].Blocker != logbook.BlockerApprovalTimeout || res.Prior[0].Why != "same issue 99" {
		t.Errorf("prior details: %+v", res.Prior)
	}
	b.clock.Add(48 * time.Hour)
	later, err := b.svc.SetGoal(b.ctx, b.alice, now.ID, "upgrade postgres cluster to version 16")
	must(t, err)
	if len(later.Prior) != 0 {
		t.Errorf("two days later the 24 h window still shows %d prior sessions", len(later.Prior))
	}
	if _, err := b.svc.SetGoal(b.ctx, b.alice, now.ID, " "); !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("a blank goal: %v", err)
	}
}

func testStatsAndToolCalls(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{Harness: "claude-code"})
	_, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "t1", Payload: json.RawMessage(`{"command":"ls"}`)},
		{Kind: logbook.KindToolCall, Tool: "Edit", ToolCallID: "t2"},
		{Kind: logbook.KindToolResult, ToolCallID: "t2", Text: "no such file", Payload: json.RawMessage(`{"is_error":true}`), At: b.clock.Now().Add(1500 * time.Millisecond)},
		{Kind: logbook.KindToolResult, ToolCallID: "t1", Text: "a.go b.go", At: b.clock.Now().Add(250 * time.Millisecond)},
		{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "t3"},
	}})
	must(t, err)
	gated := b.start(t, b.alice, service.StartParams{Harness: "claude-code"})
	_, err = b.svc.AppendEntries(b.ctx, b.alice, gated.ID, service.Batch{Entries: []logbook.Entry{
		// The gate's decisions, as the hook records them: a denied call,
		// an asked call that got no result, an asked call the person let
		// run, and a deferred one.
		{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "t4"},
		{Kind: logbook.KindNote, Tool: "Bash", ToolCallID: "t4", Text: "logbook: deny (class destructive)", Payload: json.RawMessage(`{"decision":"deny","reason":"logbook: deny (class destructive): rm -rf /"}`)},
		{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "t5"},
		{Kind: logbook.KindNote, Tool: "Bash", ToolCallID: "t5", Payload: json.RawMessage(`{"decision":"ask","reason":"logbook: ask (class secret_read)"}`)},
		{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "t6"},
		{Kind: logbook.KindNote, Tool: "Bash", ToolCallID: "t6", Payload: json.RawMessage(`{"decision":"ask","reason":"asked"}`)},
		{Kind: logbook.KindToolResult, ToolCallID: "t6", Text: "done"},
		{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "t7"},
		{Kind: logbook.KindNote, Tool: "Bash", ToolCallID: "t7", Payload: json.RawMessage(`{"decision":"defer","reason":"deferred"}`)},
	}})
	must(t, err)
	gate, err := b.svc.ToolCalls(b.ctx, b.alice, service.ToolCallParams{SessionID: gated.ID})
	must(t, err)
	if len(gate.ToolCalls) != 4 {
		t.Fatalf("tool calls: %+v", gate.ToolCalls)
	}
	for _, want := range []struct{ id, status, reason string }{
		{"t4", "denied", "rm -rf /"}, {"t5", "asked", "secret_read"}, {"t6", "ok", ""}, {"t7", "pending", ""},
	} {
		i := slices.IndexFunc(gate.ToolCalls, func(c logbook.ToolCall) bool { return c.ToolCallID == want.id })
		if c := gate.ToolCalls[i]; c.Status != want.status || !strings.Contains(c.Reason, want.reason) || (want.reason == "" && c.Reason != "") {
			t.Errorf("call %s: status %q reason %q, want %q with a reason mentioning %q", want.id, c.Status, c.Reason, want.status, want.reason)
		}
	}
	// Gated calls are in another session and project-wide pages below
	// filter by tool: take them out of the project-wide listing.
	_, err = b.svc.DeleteSession(b.ctx, b.alice, gated.ID, true)
	must(t, err)
	page, err := b.svc.ToolCalls(b.ctx, b.alice, service.ToolCallParams{SessionID: s.ID})
	must(t, err)
	if len(page.ToolCalls) != 3 {
		t.Fatalf("tool calls: %+v", page.ToolCalls)
	}
	c1, c2, c3 := page.ToolCalls[0], page.ToolCalls[1], page.ToolCalls[2]
	if c1.Tool != "Bash" || c1.Result != "a.go b.go" || c1.Status != "ok" || c1.DurationMS == nil || *c1.DurationMS != 250 || string(c1.Input) != `{"command":"ls"}` {
		t.Errorf("first call: %+v", c1)
	}
	if c2.Status != "error" || c2.Result != "no such file" || *c2.DurationMS != 1500 {
		t.Errorf("second call: %+v", c2)
	}
	if c3.Status != "pending" || c3.DurationMS != nil {
		t.Errorf("third call: %+v", c3)
	}
	bash, err := b.svc.ToolCalls(b.ctx, b.alice, service.ToolCallParams{Tool: "Bash", Limit: 1})
	must(t, err)
	if len(bash.ToolCalls) != 1 || bash.ToolCalls[0].ToolCallID != "t3" || bash.NextCursor == "" {
		t.Fatalf("project-wide Bash calls, newest first, page 1: %+v", bash)
	}
	next, err := b.svc.ToolCalls(b.ctx, b.alice, service.ToolCallParams{Tool: "Bash", Limit: 1, Cursor: bash.NextCursor})
	must(t, err)
	if len(next.ToolCalls) != 1 || next.ToolCalls[0].ToolCallID != "t1" || next.NextCursor != "" {
		t.Errorf("page 2: %+v", next)
	}

	_, err = b.svc.EndSession(b.ctx, b.alice, s.ID, service.EndParams{Outcome: logbook.OutcomeFailed, Blocker: logbook.BlockerToolError})
	must(t, err)
	other := b.start(t, b.alice, service.StartParams{Harness: "codex"})
	_, err = b.svc.EndSession(b.ctx, b.alice, other.ID, service.EndParams{Outcome: logbook.OutcomeFailed, Blocker: logbook.BlockerRateLimited})
	must(t, err)
	rows, err := b.svc.Stats(b.ctx, b.alice, service.StatsParams{By: logbook.ByOutcome})
	must(t, err)
	if len(rows) != 1 || rows[0].Key != "failed" || rows[0].Sessions != 2 || rows[0].ToolCalls != 3 {
		t.Errorf("by outcome: %+v", rows)
	}
	rows, err = b.svc.Stats(b.ctx, b.alice, service.StatsParams{By: logbook.ByBlocker})
	must(t, err)
	if len(rows) != 2 || rows[0].Key != "rate_limited" || rows[1].Key != "tool_error" {
		t.Errorf("by blocker: %+v", rows)
	}
	rows, err = b.svc.Stats(b.ctx, b.alice, service.StatsParams{By: logbook.ByDay})
	must(t, err)
	if len(rows) != 1 || rows[0].Key != "2026-11-30" || rows[0].Sessions != 2 {
		t.Errorf("by day: %+v", rows)
	}
	rows, err = b.svc.Stats(b.ctx, b.alice, service.StatsParams{By: logbook.ByDay, Then: logbook.ByBlocker})
	must(t, err)
	if len(rows) != 2 || rows[0].Key != "2026-11-30" || rows[0].Then != "rate_limited" || rows[1].Then != "tool_error" || rows[1].Sessions != 1 {
		t.Errorf("by day then blocker: %+v", rows)
	}
	if _, err := b.svc.Stats(b.ctx, b.alice, service.StatsParams{By: "colour"}); !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("by colour: %v", err)
	}
}
