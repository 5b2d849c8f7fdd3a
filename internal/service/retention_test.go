package service_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

func TestRetention(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Run("WhoSetsIt", func(t *testing.T) { t.Parallel(); testRetentionPolicy(t, setup(t, e)) })
		t.Run("TheSweeperEnforcesIt", func(t *testing.T) { t.Parallel(); testRetentionSweep(t, e) })
	})
}

func testRetentionPolicy(t *testing.T, b *bundle) {
	admin := service.Caller{Actor: "admin", Admin: true}
	if r, err := b.svc.Retention(b.ctx, b.alice, ""); err != nil || r != (logbook.Retention{}) {
		t.Errorf("a project never named keeps everything: %+v %v", r, err)
	}
	if _, err := b.svc.SetRetention(b.ctx, b.alice, "p", logbook.Retention{SessionsDays: 30}); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("a project's token sets its retention: %v, want ErrForbidden", err)
	}
	for _, bad := range []logbook.Retention{{SessionsDays: -1}, {PayloadsDays: logbook.MaxRetentionDays + 1}} {
		var v *logbook.ValidationError
		if _, err := b.svc.SetRetention(b.ctx, admin, "p", bad); !errors.As(err, &v) || !strings.HasSuffix(v.Field, "_days") {
			t.Errorf("retention %+v: %v, want a validation error naming the days", bad, err)
		}
	}
	want := logbook.Retention{SessionsDays: 90, PayloadsDays: 30}
	if _, err := b.svc.SetRetention(b.ctx, admin, "p", want); err != nil {
		t.Fatal(err)
	}
	if r, err := b.svc.Retention(b.ctx, b.bob, "p"); err != nil || r != want {
		t.Errorf("retention read by another actor of the project: %+v %v", r, err)
	}
	if _, err := b.svc.Retention(b.ctx, service.Caller{Actor: "carol", Project: "q"}, "p"); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("another project's token reads it: %v, want ErrForbidden", err)
	}
}

// removals collects what Options.Removed is told.
type removals struct {
	mu  sync.Mutex
	got map[string]int64
}

func (r *removals) add(what string, n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[what] += n
}

func testRetentionSweep(t *testing.T, e testdb.Engine) {
	st := e.Open(t)
	clk := &clock{now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	counted := &removals{got: map[string]int64{}}
	svc := service.New(st, service.Options{NowFunc: clk.Now, Removed: counted.add})
	b := &bundle{svc: svc, st: st, clock: clk, alice: service.Caller{Actor: "alice", Project: "p"}, ctx: t.Context()}
	admin := service.Caller{Actor: "admin", Admin: true}

	big, _ := json.Marshal(map[string]string{"file_path": "notes.md", "content": strings.Repeat("zanzibar ", logbook.LargePayload/8)})
	// record starts a session in project with a transcript and, unless
	// going is set, ends it.
	record := func(c service.Caller, goal string, going bool) logbook.Session {
		t.Helper()
		s := b.start(t, c, service.StartParams{Fields: logbook.SessionFields{Goal: &goal}})
		_, err := svc.AppendEntries(b.ctx, c, s.ID, service.Batch{Entries: []logbook.Entry{
			{Kind: logbook.KindPrompt, Text: "write the notes"},
			{Kind: logbook.KindToolCall, Tool: "Write", ToolCallID: "w", Payload: big},
			{Kind: logbook.KindToolResult, Tool: "Write", ToolCallID: "w", Text: "wrote notes.md (zanzibar)"},
			{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "b", Payload: json.RawMessage(`{"command":"make notes"}`)},
			{Kind: logbook.KindToolResult, Tool: "Bash", ToolCallID: "b", Text: "make: *** zanzibar Error 2", Payload: json.RawMessage(`{"is_error":true}`)},
			{Kind: logbook.KindSummary, Text: "Wrote the zanzibar notes"},
		}})
		must(t, err)
		if !going {
			_, err = svc.EndSession(b.ctx, c, s.ID, service.EndParams{Outcome: logbook.OutcomeSuccess, Result: "notes written"})
			must(t, err)
		}
		return s
	}
	// send leaves a message for bob in c's project, returning its id.
	send := func(c service.Caller, text string) string {
		t.Helper()
		m, err := svc.SendMessage(b.ctx, c, ledger.SendParams{ToActor: "bob", Text: text})
		must(t, err)
		return m.ID
	}
	old := record(b.alice, "the oldest notes", false) // ended 40 days before the sweep
	oldMessage := send(b.alice, "sent 40 days before the sweep")
	send(service.Caller{Actor: "carol", Project: "q"}, "another project's message, as old")
	clk.Add(30 * 24 * time.Hour)
	middle := record(b.alice, "the middle notes", false) // 10 days
	going := record(b.alice, "notes still going", true)
	elsewhere := record(service.Caller{Actor: "carol", Project: "q"}, "another project's notes", false)
	clk.Add(8 * 24 * time.Hour)
	recent := record(b.alice, "recent notes", false) // 2 days
	recentMessage := send(b.alice, "sent 2 days before the sweep")
	clk.Add(2 * 24 * time.Hour)
	// going stays seen: the sweeper would time it out otherwise.
	_, err := svc.UpdateSession(b.ctx, b.alice, going.ID, logbook.SessionFields{})
	must(t, err)

	statsBefore, err := svc.Stats(b.ctx, b.alice, service.StatsParams{By: logbook.ByOutcome, Since: clk.Now().Add(-60 * 24 * time.Hour)})
	must(t, err)
	_, err = svc.SetRetention(b.ctx, admin, "p", logbook.Retention{SessionsDays: 30, PayloadsDays: 7})
	must(t, err)
	res, err := svc.Sweep(b.ctx, 0)
	must(t, err)
	if r := res.Retention; r.Sessions != 1 || r.Entries != 6 || r.Payloads != 3 || r.Messages != 1 {
		t.Errorf("the sweep removed %+v; want the oldest session with its 6 entries, 3 payloads of the middle one, and the old message", r)
	}
	if !maps(counted.got, map[string]int64{"sessions": 1, "entries": 6, "payloads": 3, "messages": 1}) {
		t.Errorf("Options.Removed was told %v", counted.got)
	}
	inbox, err := svc.Messages(b.ctx, service.Caller{Actor: "bob", Project: "p"}, ledger.MessagesParams{})
	must(t, err)
	if len(inbox) != 1 || inbox[0].ID != recentMessage {
		t.Errorf("bob's inbox after the sweep: %+v; want only the recent message (not %s)", inbox, oldMessage)
	}
	if elsewhere, err := svc.Messages(b.ctx, service.Caller{Actor: "bob", Project: "q"}, ledger.MessagesParams{}); err != nil || len(elsewhere) != 1 {
		t.Errorf("another project's message after the sweep: %d (%v); its project keeps everything", len(elsewhere), err)
	}
	if _, err := svc.GetSession(b.ctx, b.alice, old.ID, service.GetParams{}); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("the session ended 40 days ago: %v, want it deleted", err)
	}
	statsAfter, err := svc.Stats(b.ctx, b.alice, service.StatsParams{By: logbook.ByOutcome, Since: clk.Now().Add(-60 * 24 * time.Hour)})
	must(t, err)
	succeeded := func(rows []logbook.StatsRow) int64 {
		for _, r := range rows {
			if r.Key == string(logbook.OutcomeSuccess) {
				return r.Sessions
			}
		}
		return 0
	}
	if before, after := succeeded(statsBefore), succeeded(statsAfter); before != 3 || after != 2 {
		t.Errorf("sessions that succeeded: %d before the sweep, %d after; want 3 and 2", before, after)
	}

	// The middle session lost its tool output and its large input; its
	// summary, result and the rest stay, and its calls keep their status.
	v, err := svc.GetSession(b.ctx, b.alice, middle.ID, service.GetParams{})
	must(t, err)
	e2, e3, e5 := v.Entries[1], v.Entries[2], v.Entries[4]
	if string(e2.Payload) != `{"retention":"removed"}` || e3.Text != "" || e5.Text != "" || v.Entries[3].Payload == nil ||
		v.Entries[5].Text != "Wrote the zanzibar notes" || v.Entries[0].Text != "write the notes" || v.Session.Result != "notes written" {
		t.Errorf("the middle session after the sweep: %+v", v.Entries)
	}
	calls, err := svc.ToolCalls(b.ctx, b.alice, service.ToolCallParams{SessionID: middle.ID})
	must(t, err)
	if len(calls.ToolCalls) != 2 || calls.ToolCalls[0].Status != logbook.ToolCallOK || calls.ToolCalls[1].Status != logbook.ToolCallError {
		t.Errorf("tool calls after trimming: %+v", calls.ToolCalls)
	}
	// What was removed is not found any more; what was kept is.
	page, err := svc.Search(b.ctx, b.alice, service.SearchParams{Query: "zanzibar"})
	must(t, err)
	var found []string
	for _, h := range page.Results {
		found = append(found, map[string]string{middle.ID: "middle", going.ID: "going", recent.ID: "recent"}[h.SessionID]+":"+string(h.Kind))
	}
	slices.Sort(found)
	want := []string{"going:summary", "going:tool_call", "going:tool_result", "going:tool_result", "middle:summary",
		"recent:summary", "recent:tool_call", "recent:tool_result", "recent:tool_result"}
	if !slices.Equal(found, want) {
		t.Errorf("zanzibar found in %v, want %v", found, want)
	}
	// Another project, and sessions still going, keep everything.
	for _, s := range []logbook.Session{going, recent} {
		v, err := svc.GetSession(b.ctx, b.alice, s.ID, service.GetParams{})
		must(t, err)
		if v.Entries[2].Text == "" || len(v.Entries[1].Payload) < logbook.LargePayload {
			t.Errorf("session %s was trimmed", s.Goal)
		}
	}
	if v, err := svc.GetSession(b.ctx, service.Caller{Actor: "carol", Project: "q"}, elsewhere.ID, service.GetParams{}); err != nil || v.Entries[2].Text == "" {
		t.Errorf("another project's session: %v", err)
	}

	// Nothing is left to do; 30 days on, the rest goes.
	res, err = svc.Sweep(b.ctx, 0)
	must(t, err)
	if res.Retention != (service.RetentionResult{}) {
		t.Errorf("a second sweep removed %+v", res.Retention)
	}
	clk.Add(31 * 24 * time.Hour)
	_, err = svc.UpdateSession(b.ctx, b.alice, going.ID, logbook.SessionFields{})
	must(t, err)
	res, err = svc.Sweep(b.ctx, 0)
	must(t, err)
	if res.Retention.Sessions != 2 {
		t.Errorf("31 days later the sweep removed %+v; want the middle and recent sessions", res.Retention)
	}
	if _, err := svc.GetSession(b.ctx, b.alice, going.ID, service.GetParams{}); err != nil {
		t.Errorf("the session still going: %v", err)
	}
}

func maps(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
