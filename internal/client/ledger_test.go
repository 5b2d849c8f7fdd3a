package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/client"
	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestLedgerSameOverTheWire holds the two implementations of the port to
// one script: the service in process, and the typed client against a real
// server. Each step must give the same answers and the same errors, matched
// with errors.Is and errors.As, never by their text.
func TestLedgerSameOverTheWire(t *testing.T) {
	for _, remote := range []bool{false, true} {
		name := map[bool]string{false: "in-process", true: "http"}[remote]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
			svc := service.New(testdb.SQLite(t), service.Options{Logger: quiet})
			admin := service.Caller{Actor: "admin", Admin: true}
			aliceToken, err := svc.CreateToken(ctx, admin, "demo", "alice")
			if err != nil {
				t.Fatal(err)
			}
			bobToken, err := svc.CreateToken(ctx, admin, "demo", "bob")
			if err != nil {
				t.Fatal(err)
			}
			alice := svc.For(service.Caller{Actor: "alice", Project: "demo"})
			bob := svc.For(service.Caller{Actor: "bob", Project: "demo"})
			if remote {
				mux := http.NewServeMux()
				httpapi.New(mux, svc, quiet, httpapi.Options{})
				srv := httptest.NewServer(mux)
				t.Cleanup(srv.Close)
				alice = client.New(srv.URL, aliceToken).Ledger()
				bob = client.New(srv.URL, bobToken).Ledger()
			}
			testLedgerScript(ctx, t, alice, bob)
		})
	}
}

func testLedgerScript(ctx context.Context, t *testing.T, alice, bob ledger.Ledger) {
	goal := "Fix the flaky login test"
	issue := "12"
	start := ledger.StartParams{Harness: "claude-code", HarnessSessionID: "h-1", Fields: logbook.SessionFields{Goal: &goal, Issue: &issue}}
	sess, created, err := alice.StartSession(ctx, start)
	if err != nil || !created || sess.Goal != goal || sess.Issue != "12" {
		t.Fatalf("start: %+v created %v err %v", sess, created, err)
	}
	again, created, err := alice.StartSession(ctx, start)
	if err != nil || created || again.ID != sess.ID {
		t.Fatalf("start again: %s created %v err %v; want the same session, not created", again.ID, created, err)
	}

	res, err := alice.AppendEntries(ctx, sess.ID, ledger.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindPrompt, Text: "the login test fails one run in five", Key: "p1"},
		{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "t1", Payload: []byte(`{"command":"go test ./auth"}`), Key: "c1"},
		{Kind: logbook.KindToolResult, ToolCallID: "t1", Text: "FAIL", Key: "r1"},
	}, Touched: []logbook.Touch{{Kind: "file", Value: "auth/login.go"}}})
	if err != nil || res.Recorded != 3 || res.LastSeq != 3 {
		t.Fatalf("append: %+v %v", res, err)
	}
	res, err = alice.AppendEntries(ctx, sess.ID, ledger.Batch{Entries: []logbook.Entry{{Kind: logbook.KindPrompt, Text: "again", Key: "p1"}}})
	if err != nil || res.Duplicates != 1 || res.Recorded != 0 {
		t.Errorf("a repeated key: %+v %v", res, err)
	}

	// Errors cross the wire as the domain's errors.
	_, err = alice.AppendEntries(ctx, sess.ID, ledger.Batch{Entries: []logbook.Entry{{Kind: "shout", Text: "x"}}})
	var invalid *logbook.ValidationError
	if !errors.Is(err, logbook.ErrInvalid) || !errors.As(err, &invalid) || !strings.HasPrefix(invalid.Field, "entries[0]") {
		t.Errorf("a bad kind: %v (field %+v); want ErrInvalid naming entries[0]", err, invalid)
	}
	if _, err := bob.AppendEntries(ctx, sess.ID, ledger.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote, Text: "x"}}}); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("another actor writing: %v, want ErrForbidden", err)
	}
	if _, err := alice.GetSession(ctx, "no-such-session", ledger.GetParams{}); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("a missing session: %v, want ErrNotFound", err)
	}
	claim, created, err := alice.Claim(ctx, ledger.ClaimParams{SessionID: sess.ID, Subject: "auth/"})
	if err != nil || !created || claim.Subject != "auth/" {
		t.Fatalf("claim: %+v %v %v", claim, created, err)
	}
	other, _, err := bob.StartSession(ctx, ledger.StartParams{Harness: "codex", HarnessSessionID: "h-2"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = bob.Claim(ctx, ledger.ClaimParams{SessionID: other.ID, Subject: "auth/login.go"})
	var held *logbook.ClaimConflictError
	if !errors.Is(err, logbook.ErrConflict) || !errors.As(err, &held) || held.Holder.SessionID != sess.ID {
		t.Errorf("a held subject: %v (holder %+v); want a ClaimConflictError naming %s", err, held, sess.ID)
	}
	claims, err := bob.Claims(ctx, ledger.ClaimsParams{Subject: "auth/login.go"})
	if err != nil || len(claims) != 1 || claims[0].ID != claim.ID {
		t.Errorf("who holds auth/login.go: %+v %v", claims, err)
	}

	plan, err := alice.SetPlan(ctx, sess.ID, []ledger.StepInput{{Text: "reproduce"}, {Text: "fix"}})
	if err != nil || len(plan) != 2 {
		t.Fatalf("plan: %+v %v", plan, err)
	}
	if plan, err = alice.UpdatePlanStep(ctx, sess.ID, 1, logbook.StepDone); err != nil || plan[0].Status != logbook.StepDone {
		t.Errorf("plan step: %+v %v", plan, err)
	}
	if _, err := alice.SetGoal(ctx, sess.ID, goal); err != nil {
		t.Errorf("goal: %v", err)
	}
	noted, err := bob.AddNote(ctx, ledger.NoteParams{Issue: "#12", Text: "CI is red on main", Key: "n1"})
	if err != nil || noted.Told != 1 || noted.Sessions[0] != sess.ID {
		t.Errorf("a note on issue 12: %+v %v", noted, err)
	}

	view, err := alice.GetSession(ctx, sess.ID, ledger.GetParams{})
	if err != nil || len(view.Entries) != 4 || len(view.Plan) != 2 || len(view.Claims) != 1 || len(view.Touched) != 1 {
		t.Errorf("get: %d entries, %d steps, %d claims, %d touched; %v", len(view.Entries), len(view.Plan), len(view.Claims), len(view.Touched), err)
	}
	page, err := bob.ListSessions(ctx, ledger.ListParams{Filter: logbook.SessionFilter{Harness: "claude-code", Issue: "12", Since: time.Now().Add(-time.Hour)}})
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].ID != sess.ID {
		t.Errorf("list by harness and issue: %+v %v", page, err)
	}
	found, err := bob.Search(ctx, ledger.SearchParams{Query: "login test", Limit: 1})
	if err != nil || len(found.Results) != 1 || found.Ranked != 2 || found.NextCursor == "" || found.Results[0].SessionID != sess.ID {
		t.Errorf("search, first page: %+v %v", found, err)
	}
	seen := map[string]bool{}
	for cursor := ""; ; {
		page, err := bob.Search(ctx, ledger.SearchParams{Query: "login test", Limit: 1, Cursor: cursor})
		if err != nil || len(page.Results) != 1 {
			t.Fatalf("search page at %q: %+v %v", cursor, page, err)
		}
		h := page.Results[0]
		seen[fmt.Sprintf("%s:%d", h.Field, h.Seq)] = true
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if len(seen) != 2 || !seen["goal:0"] || !seen["entry:1"] {
		t.Errorf("search pages: %v", seen)
	}
	found, err = bob.Search(ctx, ledger.SearchParams{Query: "auth", Filter: logbook.SearchFilter{Kind: logbook.KindToolCall, Tool: "Bash"}})
	if err != nil || len(found.Results) != 1 || found.Results[0].Seq != 2 ||
		logbook.SnippetString(found.Results[0].Snippet, "[", "]") != "Bash go test ./[auth]" {
		t.Errorf("search for a tool's input: %+v %v", found, err)
	}
	var noWord *logbook.ValidationError
	if _, err := bob.Search(ctx, ledger.SearchParams{Query: "!!"}); !errors.As(err, &noWord) || noWord.Field != "q" {
		t.Errorf("search without a word: %v, want a validation error naming q", err)
	}
	if r, err := bob.Retention(ctx, "demo"); err != nil || r != (logbook.Retention{}) {
		t.Errorf("retention: %+v %v", r, err)
	}
	if _, err := bob.SetRetention(ctx, "demo", logbook.Retention{SessionsDays: 30}); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("a project's token sets its retention: %v, want ErrForbidden", err)
	}
	if rules, err := bob.AlertRules(ctx, "demo"); err != nil || len(rules) != 0 {
		t.Errorf("alert rules: %+v %v", rules, err)
	}
	if _, err := bob.AddAlertRule(ctx, "demo", ledger.AlertRuleBody{Kind: logbook.AlertSessionFailed, WebhookURL: "https://hooks.example.com/x"}); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("a project's token adds an alert rule: %v, want ErrForbidden", err)
	}
	if _, err := bob.TestAlertRule(ctx, "demo", "nope"); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("a project's token tests an alert rule: %v, want ErrForbidden", err)
	}
	if _, err := bob.DeleteAlertRule(ctx, "demo", "nope"); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("a project's token deletes an alert rule: %v, want ErrForbidden", err)
	}
	if alerts, err := bob.Alerts(ctx, ledger.AlertsParams{Project: "demo", Limit: 5}); err != nil || len(alerts) != 0 {
		t.Errorf("alerts: %+v %v", alerts, err)
	}
	var badLimit *logbook.ValidationError
	if _, err := bob.Alerts(ctx, ledger.AlertsParams{Project: "demo", Limit: 500}); !errors.As(err, &badLimit) || badLimit.Field != "limit" {
		t.Errorf("alerts with a limit of 500: %v, want a validation error naming limit", err)
	}
	calls, err := bob.ToolCalls(ctx, ledger.ToolCallParams{SessionID: sess.ID})
	if err != nil || len(calls.ToolCalls) != 1 || calls.ToolCalls[0].Status != logbook.ToolCallOK {
		t.Errorf("tool calls: %+v %v", calls, err)
	}

	verdict, err := bob.Classify(ctx, "", "rm -rf /")
	if err != nil || verdict.Class != classify.Destructive || verdict.Decision != classify.Deny {
		t.Errorf("classify: %+v %v", verdict, err)
	}
	if p, err := bob.Policy(ctx, "demo"); err != nil || p.Decide(classify.ReadOnly) != classify.Defer {
		t.Errorf("policy: %+v %v", p, err)
	}

	// Events reach a follower, in order.
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var types []string
	err = bob.Follow(fctx, "demo", 0, func(e logbook.Event) error {
		types = append(types, e.Type)
		if e.Type == logbook.EventClaimTaken {
			return errStop
		}
		return nil
	})
	if !errors.Is(err, errStop) || len(types) < 2 || types[0] != logbook.EventSessionStarted {
		t.Errorf("follow: %v, events %v; want session.started first, through claim.taken", err, types)
	}
	var woke atomic.Int64
	go func() {
		time.Sleep(10 * time.Millisecond) // not a timed assertion: the follower waits for whatever comes
		alice.EndSession(ctx, sess.ID, ledger.EndParams{Outcome: logbook.OutcomeSuccess, Result: "fixed"})
	}()
	err = bob.Follow(fctx, "demo", ledger.FromNow, func(e logbook.Event) error {
		if e.Type == logbook.EventSessionEnded {
			woke.Add(1)
			return errStop
		}
		return nil
	})
	if !errors.Is(err, errStop) || woke.Load() != 1 {
		t.Errorf("following from now: %v; the end of the session never came", err)
	}
	if _, err := alice.AppendEntries(ctx, sess.ID, ledger.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote, Text: "late"}}}); !errors.Is(err, logbook.ErrEnded) {
		t.Errorf("writing to an ended session: %v, want ErrEnded", err)
	}

	// Agents and tasks.
	task, err := alice.AddTask(ctx, "demo", "engineer-1", ledger.TaskInput{TaskID: "T-1", Text: "write the changelog"})
	if err != nil || !task.Added || task.Task.ID != "T-1" {
		t.Fatalf("task: %+v %v", task, err)
	}
	rot, err := alice.RotateAgent(ctx, "demo", "engineer-1", "fresh context")
	if err != nil || rot.PreviousSessionID != task.Session.ID {
		t.Errorf("rotate: %+v %v", rot, err)
	}
	if tasks, err := bob.Tasks(ctx, "demo", "engineer-1"); err != nil || len(tasks) != 1 {
		t.Errorf("tasks: %+v %v", tasks, err)
	}
	if a, err := alice.SetRotationPolicy(ctx, "demo", "engineer-1", 24*time.Hour, 0); err != nil || a.Policy.MaxAgeSeconds != 86400 {
		t.Errorf("rotation policy: %+v %v", a, err)
	}
	if view, err := bob.Agent(ctx, "demo", "engineer-1"); err != nil || view.Session == nil || view.Session.ID != rot.Session.ID {
		t.Errorf("agent: %+v %v", view, err)
	}
}

var errStop = errors.New("stop following")

// TestLedgerRetriesRateLimited: a 429 is sent again after the pause the
// server asks for, and a 413 batch in halves, so callers never see either.
func TestLedgerRetriesRateLimited(t *testing.T) {
	var calls, splits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		switch {
		case n == 1:
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"type":"about:blank","title":"Too many requests","status":429}`)
		case r.ContentLength > 200:
			splits.Add(1)
			w.WriteHeader(http.StatusRequestEntityTooLarge)
		default:
			io.WriteString(w, `{"recorded":1,"duplicates":0,"last_seq":1}`)
		}
	}))
	defer srv.Close()
	c := client.New(srv.URL, "tok")
	c.RetryPause = time.Millisecond
	entries := []logbook.Entry{{Kind: logbook.KindNote, Text: strings.Repeat("a", 100)}, {Kind: logbook.KindNote, Text: strings.Repeat("b", 100)}}
	res, err := c.Ledger().AppendEntries(context.Background(), "s1", ledger.Batch{Entries: entries})
	if err != nil || res.Recorded != 2 {
		t.Errorf("append through a 429 and a 413: %+v %v; want both entries recorded", res, err)
	}
	if calls.Load() != 4 || splits.Load() != 1 {
		t.Errorf("%d requests, %d refused as too large; want 4 (429, 413, then each half) and 1", calls.Load(), splits.Load())
	}
}
