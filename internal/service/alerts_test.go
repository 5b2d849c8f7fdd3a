package service_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
	"github.com/logbookhq/logbook/internal/testdb"
)

var admin = service.Caller{Actor: "admin", Admin: true}

// receiver is a webhook: it checks each post's signature as a receiver
// would (its own HMAC code, not logbook's), answers with the status its
// answer func gives, and keeps what it got.
type receiver struct {
	*httptest.Server
	mu sync.Mutex
	// secrets are the rules' secrets by the path of their webhook.
	secrets map[string]string
	posts   []post
	// answer gives the status of the nth post (from 1); nil: 200.
	answer func(n int) int
}

type post struct {
	alertID, attempt string
	body             []byte
	signed           bool
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{secrets: map[string]string{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		ts := r.Header.Get("Logbook-Timestamp")
		mac := hmac.New(sha256.New, []byte(rc.secrets[r.URL.Path]))
		fmt.Fprintf(mac, "%s.%s", ts, body)
		want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
		_, tsErr := strconv.ParseInt(ts, 10, 64)
		signed := tsErr == nil && hmac.Equal([]byte(r.Header.Get("Logbook-Signature")), []byte(want))
		rc.posts = append(rc.posts, post{alertID: r.Header.Get("Logbook-Alert-Id"), attempt: r.Header.Get("Logbook-Attempt"), body: body, signed: signed})
		n := len(rc.posts)
		answer := rc.answer
		rc.mu.Unlock()
		status := http.StatusOK
		if answer != nil {
			status = answer(n)
		}
		w.WriteHeader(status)
		if status >= 300 {
			fmt.Fprint(w, "try later\nsecond line")
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) got() []post {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]post(nil), rc.posts...)
}

// addRule adds a rule for the receiver and keeps its secret there.
func addRule(t *testing.T, b *bundle, rc *receiver, r service.AlertRuleBody) logbook.AlertRule {
	t.Helper()
	rc.mu.Lock()
	path := fmt.Sprintf("/hooks/T%03d/B000/secret-part", len(rc.secrets))
	rc.mu.Unlock()
	r.WebhookURL = rc.URL + path
	added, err := b.svc.AddAlertRule(b.ctx, admin, "p", r)
	must(t, err)
	rc.mu.Lock()
	rc.secrets[path] = added.Secret
	rc.mu.Unlock()
	return added
}

func TestAlerts(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Run("Rules", func(t *testing.T) { t.Parallel(); testAlertRules(t, setup(t, e)) })
		t.Run("RaisedOnceAndDelivered", func(t *testing.T) { t.Parallel(); testAlertsRaised(t, setup(t, e)) })
		t.Run("RetriedWithBackoff", func(t *testing.T) { t.Parallel(); testAlertRetries(t, setup(t, e)) })
		t.Run("RestartLosesNothing", func(t *testing.T) { t.Parallel(); testAlertsSurviveRestart(t, e) })
	})
}

func testAlertRules(t *testing.T, b *bundle) {
	rc := newReceiver(t)
	rule := service.AlertRuleBody{Kind: logbook.AlertSessionFailed, WebhookURL: rc.URL + "/hooks/T000/B000/secret-part", Format: logbook.AlertSlack}
	if _, err := b.svc.AddAlertRule(b.ctx, b.alice, "p", rule); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("a project's token adds a rule: %v, want ErrForbidden", err)
	}
	for _, tc := range []struct {
		name  string
		rule  service.AlertRuleBody
		field string
	}{
		{"unknown kind", service.AlertRuleBody{Kind: "sad", WebhookURL: "https://x.example/h"}, "kind"},
		{"no URL", service.AlertRuleBody{Kind: logbook.AlertSessionFailed}, "webhook_url"},
		{"not http", service.AlertRuleBody{Kind: logbook.AlertSessionFailed, WebhookURL: "file:///etc/passwd"}, "webhook_url"},
		{"no host", service.AlertRuleBody{Kind: logbook.AlertSessionFailed, WebhookURL: "https:///h"}, "webhook_url"},
		{"loop of one", service.AlertRuleBody{Kind: logbook.AlertToolLoop, Threshold: 1, WebhookURL: "https://x.example/h"}, "threshold"},
		{"threshold not taken", service.AlertRuleBody{Kind: logbook.AlertCommandDenied, Threshold: 3, WebhookURL: "https://x.example/h"}, "threshold"},
		{"unknown format", service.AlertRuleBody{Kind: logbook.AlertCommandDenied, Format: "xml", WebhookURL: "https://x.example/h"}, "format"},
	} {
		var v *logbook.ValidationError
		if _, err := b.svc.AddAlertRule(b.ctx, admin, "p", tc.rule); !errors.As(err, &v) || v.Field != tc.field {
			t.Errorf("%s: %v, want a validation error naming %s", tc.name, err, tc.field)
		}
	}
	added, err := b.svc.AddAlertRule(b.ctx, admin, "p", rule)
	must(t, err)
	b.clock.Add(time.Second) // the rules are listed the oldest first
	if !strings.HasPrefix(added.Secret, "whsec_") || added.Name != "session_failed" || added.Project != "p" {
		t.Errorf("the rule added: %+v", added)
	}
	loop, err := b.svc.AddAlertRule(b.ctx, admin, "p", service.AlertRuleBody{Kind: logbook.AlertToolLoop, Name: "loops", WebhookURL: "https://x.example/h"})
	must(t, err)
	equal(t, "a loop rule's default threshold", loop.Threshold, logbook.DefaultLoopCalls)

	rules, err := b.svc.AlertRules(b.ctx, b.bob, "")
	must(t, err)
	if len(rules) != 2 || rules[0].ID != added.ID || rules[1].ID != loop.ID {
		t.Fatalf("the project's rules: %+v", rules)
	}
	// Another actor of the project sees the rule, not its webhook's path
	// (Slack's carries a secret) nor its signing secret.
	equal(t, "the webhook URL as shown", rules[0].WebhookURL, rc.URL+"/…")
	equal(t, "the secret as shown", rules[0].Secret, "")
	other := service.Caller{Actor: "carol", Project: "q"}
	if _, err := b.svc.AlertRules(b.ctx, other, "p"); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("another project's token lists the rules: %v, want ErrForbidden", err)
	}
	if _, err := b.svc.Alerts(b.ctx, other, service.AlertsParams{Project: "p"}); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("another project's token lists the alerts: %v, want ErrForbidden", err)
	}
	if _, err := b.svc.DeleteAlertRule(b.ctx, admin, "q", added.ID); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("deleting p's rule as q's: %v, want ErrNotFound", err)
	}
	if _, err := b.svc.DeleteAlertRule(b.ctx, b.alice, "p", added.ID); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("a project's token deletes a rule: %v, want ErrForbidden", err)
	}

	rc.secrets["/hooks/T000/B000/secret-part"] = added.Secret
	attempt, err := b.svc.TestAlertRule(b.ctx, admin, "p", added.ID)
	must(t, err)
	if attempt.StatusCode != 200 || attempt.Error != "" {
		t.Errorf("the test post: %+v", attempt)
	}
	posts := rc.got()
	if len(posts) != 1 || !posts[0].signed || !strings.Contains(string(posts[0].body), `"text":"[test] logbook alert in project p`) {
		t.Errorf("what the webhook got from the test: %+v", posts)
	}
	alerts, err := b.svc.Alerts(b.ctx, b.alice, service.AlertsParams{})
	must(t, err)
	equal(t, "alerts after a test (none: a test is no alert)", len(alerts), 0)

	// A webhook that redirects has not taken the alert, and where it
	// points gets nothing.
	elsewhere := newReceiver(t)
	redirecting := httptest.NewServer(http.RedirectHandler(elsewhere.URL+"/stolen", http.StatusTemporaryRedirect))
	defer redirecting.Close()
	moved, err := b.svc.AddAlertRule(b.ctx, admin, "p", service.AlertRuleBody{Kind: logbook.AlertSessionFailed, WebhookURL: redirecting.URL + "/hook"})
	must(t, err)
	attempt, err = b.svc.TestAlertRule(b.ctx, admin, "p", moved.ID)
	must(t, err)
	if attempt.StatusCode != http.StatusTemporaryRedirect || !strings.Contains(attempt.Error, "307") || len(elsewhere.got()) != 0 {
		t.Errorf("a test post to a redirecting webhook: %+v; the redirect's target got %d posts", attempt, len(elsewhere.got()))
	}
	_, err = b.svc.DeleteAlertRule(b.ctx, admin, "p", moved.ID)
	must(t, err)

	if deleted, err := b.svc.DeleteAlertRule(b.ctx, admin, "p", added.ID); err != nil || deleted.ID != added.ID || deleted.Secret != "" {
		t.Errorf("the rule deleted: %+v %v", deleted, err)
	}
	rules, err = b.svc.AlertRules(b.ctx, b.alice, "")
	must(t, err)
	if len(rules) != 1 || rules[0].ID != loop.ID {
		t.Errorf("rules after a delete: %+v", rules)
	}
}

// bashCall is a Bash tool call entry.
func bashCall(id, command string) logbook.Entry {
	return logbook.Entry{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: id, Payload: json.RawMessage(`{"command": "` + command + `"}`)}
}

func testAlertsRaised(t *testing.T, b *bundle) {
	rc := newReceiver(t)
	failed := addRule(t, b, rc, service.AlertRuleBody{Kind: logbook.AlertSessionFailed, Name: "failures"})
	denied := addRule(t, b, rc, service.AlertRuleBody{Kind: logbook.AlertCommandDenied, Format: logbook.AlertSlack})
	loop := addRule(t, b, rc, service.AlertRuleBody{Kind: logbook.AlertToolLoop, Threshold: 3})
	idle := addRule(t, b, rc, service.AlertRuleBody{Kind: logbook.AlertIdleWithClaims, Threshold: 30})

	s := b.start(t, b.alice, service.StartParams{Harness: "claude-code", HarnessSessionID: "h1", Fields: logbook.SessionFields{Goal: str("fix the login")}})
	record := func(entries ...logbook.Entry) {
		t.Helper()
		_, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: entries})
		must(t, err)
	}
	// Two of the same, another, then three of the same (spaces apart) in
	// two batches: a loop of three.
	record(bashCall("c1", "go test ./..."), bashCall("c2", "go test ./..."), bashCall("c3", "ls"))
	record(bashCall("c4", "go test ./..."), logbook.Entry{Kind: logbook.KindToolResult, ToolCallID: "c4", Text: "FAIL"}, bashCall("c5", "go test ./..."))
	if alerts, _ := b.svc.Alerts(b.ctx, b.alice, service.AlertsParams{RuleID: loop.ID}); len(alerts) != 0 {
		t.Fatalf("a loop raised at two calls in a row: %+v", alerts)
	}
	record(logbook.Entry{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "c6", Payload: json.RawMessage(`{"command":"go test ./..."}`)})
	record(bashCall("c7", "go test ./...")) // a fourth: the same alert, not another

	// The gate's note of a denied call, as the hook records it.
	deny := `{"decision":"deny","reason":"rm -rf / is destructive","command":"rm -rf /","class":"destructive"}`
	record(bashCall("c8", "rm -rf /"), logbook.Entry{Kind: logbook.KindNote, Tool: "Bash", ToolCallID: "c8", Text: "denied", Payload: json.RawMessage(deny)})
	// An ask is no denial.
	record(logbook.Entry{Kind: logbook.KindNote, Tool: "Bash", ToolCallID: "c7", Payload: json.RawMessage(`{"decision":"ask","reason":"network"}`)})

	// Another session holds a claim and goes quiet.
	quiet := b.start(t, b.bob, service.StartParams{Harness: "codex", HarnessSessionID: "h2"})
	if _, _, err := b.svc.Claim(b.ctx, b.bob, service.ClaimParams{SessionID: quiet.ID, Subject: "src/auth/", TTLMinutes: 120}); err != nil {
		t.Fatal(err)
	}
	b.clock.Add(20 * time.Minute)
	res, err := b.svc.Sweep(b.ctx, 0)
	must(t, err)
	equal(t, "idle alerts after 20 minutes", res.AlertsRaised, 0)
	record(bashCall("c9", "ls")) // alice's session stays seen
	b.clock.Add(15 * time.Minute)
	res, err = b.svc.Sweep(b.ctx, 0)
	must(t, err)
	equal(t, "idle alerts after 35 minutes", res.AlertsRaised, 1)
	res, err = b.svc.Sweep(b.ctx, 0)
	must(t, err)
	equal(t, "idle alerts swept again", res.AlertsRaised, 0)

	_, err = b.svc.EndSession(b.ctx, b.alice, s.ID, service.EndParams{Outcome: logbook.OutcomeFailed, Result: "tests still fail"})
	must(t, err)
	_, err = b.svc.EndSession(b.ctx, b.alice, s.ID, service.EndParams{Outcome: logbook.OutcomeFailed}) // no second alert
	must(t, err)
	ok := b.start(t, b.alice, service.StartParams{Harness: "claude-code", HarnessSessionID: "h3"})
	_, err = b.svc.EndSession(b.ctx, b.alice, ok.ID, service.EndParams{Outcome: logbook.OutcomeSuccess})
	must(t, err)

	alerts, err := b.svc.Alerts(b.ctx, b.alice, service.AlertsParams{})
	must(t, err)
	byRule := map[string][]logbook.Alert{}
	for _, a := range alerts {
		equal(t, "a new alert's status", a.Status, logbook.AlertPending)
		byRule[a.RuleID] = append(byRule[a.RuleID], a)
	}
	for _, tc := range []struct {
		rule    logbook.AlertRule
		subject string
		says    string
	}{
		{failed, s.ID, "ended failed, blocked by "},
		{denied, s.ID + ":c8", `the gate denied "rm -rf /"`},
		{loop, s.ID, "made the same Bash call 3 times in a row"},
		{idle, quiet.ID + "@", "has not been seen for 35 minutes and still holds src/auth/"},
	} {
		got := byRule[tc.rule.ID]
		if len(got) != 1 || !strings.HasPrefix(got[0].Subject, tc.subject) || !strings.Contains(got[0].Summary, tc.says) {
			t.Errorf("%s alerts: %+v, want one about %s saying %q", tc.rule.Kind, got, tc.subject, tc.says)
		}
	}
	if len(alerts) != 4 {
		t.Errorf("%d alerts raised, want 4", len(alerts))
	}

	delivery, err := b.svc.DeliverDue(b.ctx)
	must(t, err)
	if delivery.Taken != 4 || delivery.Delivered != 4 {
		t.Errorf("delivery: %+v", delivery)
	}
	posts := rc.got()
	seen := map[string]bool{}
	for _, p := range posts {
		if !p.signed {
			t.Errorf("alert %s came with a signature that does not verify", p.alertID)
		}
		if seen[p.alertID] {
			t.Errorf("alert %s posted twice", p.alertID)
		}
		seen[p.alertID] = true
		equal(t, "attempt header", p.attempt, "1")
		if strings.Contains(string(p.body), `"text"`) {
			if !strings.Contains(string(p.body), `rm -rf /`) || !json.Valid(p.body) {
				t.Errorf("the Slack body: %s", p.body)
			}
			continue
		}
		var body logbook.AlertBody
		if err := json.Unmarshal(p.body, &body); err != nil || body.ID != p.alertID || body.Project != "p" || body.Summary == "" {
			t.Errorf("a JSON body: %s (%v)", p.body, err)
		}
	}
	equal(t, "alerts the webhook got", len(seen), 4)
	alerts, err = b.svc.Alerts(b.ctx, b.alice, service.AlertsParams{})
	must(t, err)
	for _, a := range alerts {
		if a.Status != logbook.AlertDelivered || a.Attempts != 1 || len(a.Log) != 1 || a.Log[0].StatusCode != 200 || a.DeliveredAt == nil {
			t.Errorf("a delivered alert: %+v", a)
		}
	}
	delivery, err = b.svc.DeliverDue(b.ctx)
	must(t, err)
	equal(t, "alerts taken once all were delivered", delivery.Taken, 0)
}

func testAlertRetries(t *testing.T, b *bundle) {
	rc := newReceiver(t)
	rc.answer = func(n int) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	}
	rule := addRule(t, b, rc, service.AlertRuleBody{Kind: logbook.AlertSessionFailed})
	s := b.start(t, b.alice, service.StartParams{Harness: "claude-code", HarnessSessionID: "h1"})
	_, err := b.svc.EndSession(b.ctx, b.alice, s.ID, service.EndParams{Outcome: logbook.OutcomeFailed})
	must(t, err)

	deliver := func(want service.AlertDelivery) {
		t.Helper()
		got, err := b.svc.DeliverDue(b.ctx)
		must(t, err)
		if got != want {
			t.Errorf("delivery: %+v, want %+v", got, want)
		}
	}
	deliver(service.AlertDelivery{Taken: 1, Retrying: 1})
	b.clock.Add(logbook.FirstAlertRetry - time.Second)
	deliver(service.AlertDelivery{}) // not due yet
	b.clock.Add(time.Second)
	deliver(service.AlertDelivery{Taken: 1, Retrying: 1})
	b.clock.Add(2*logbook.FirstAlertRetry - time.Second) // the second wait is twice the first
	deliver(service.AlertDelivery{})
	b.clock.Add(time.Second)
	deliver(service.AlertDelivery{Taken: 1, Delivered: 1})

	alerts, err := b.svc.Alerts(b.ctx, b.alice, service.AlertsParams{RuleID: rule.ID})
	must(t, err)
	if len(alerts) != 1 {
		t.Fatalf("alerts: %+v", alerts)
	}
	a := alerts[0]
	if a.Status != logbook.AlertDelivered || a.Attempts != 3 || len(a.Log) != 3 {
		t.Fatalf("the alert retried: %+v", a)
	}
	for i, want := range []int{503, 503, 204} {
		equal(t, fmt.Sprintf("attempt %d's status", i+1), a.Log[i].StatusCode, want)
	}
	if e := a.Log[0].Error; !strings.Contains(e, "503 Service Unavailable try later") || strings.Contains(e, "secret-part") || strings.Contains(e, "second line") {
		t.Errorf("a failed attempt's error: %q (says the status and the answer's first line, never the URL's path)", e)
	}
	posts := rc.got()
	if len(posts) != 3 || posts[0].alertID != posts[2].alertID || posts[2].attempt != "3" {
		t.Errorf("posts: %+v", posts)
	}

	// A webhook no one answers: the error names no secret part of the URL.
	rc.Close()
	s2 := b.start(t, b.alice, service.StartParams{Harness: "claude-code", HarnessSessionID: "h2"})
	_, err = b.svc.EndSession(b.ctx, b.alice, s2.ID, service.EndParams{Outcome: logbook.OutcomeFailed})
	must(t, err)
	deliver(service.AlertDelivery{Taken: 1, Retrying: 1})
	alerts, err = b.svc.Alerts(b.ctx, b.alice, service.AlertsParams{Limit: 1})
	must(t, err)
	if e := alerts[0].Log[0].Error; alerts[0].Log[0].StatusCode != 0 || e == "" || strings.Contains(e, "secret-part") {
		t.Errorf("an attempt no one answered: %+v", alerts[0].Log[0])
	}
}

// testAlertsSurviveRestart: alerts raised and not yet delivered when the
// server stops are delivered by the next one.
func testAlertsSurviveRestart(t *testing.T, e testdb.Engine) {
	ctx := context.Background()
	url := e.URL(t)
	open := func() store.Store {
		var st store.Store
		var err error
		if e.Name == "sqlite" {
			st, err = sqlitestore.Open(ctx, url)
		} else {
			st, err = pgstore.Open(ctx, url)
		}
		must(t, err)
		return st
	}
	rc := newReceiver(t)
	st := open()
	first := &bundle{svc: service.New(st, service.Options{}), ctx: ctx, alice: service.Caller{Actor: "alice", Project: "p"}}
	addRule(t, first, rc, service.AlertRuleBody{Kind: logbook.AlertSessionFailed})
	var raised []string
	for i := range 3 {
		s := first.start(t, first.alice, service.StartParams{Harness: "claude-code", HarnessSessionID: fmt.Sprint("h", i)})
		_, err := first.svc.EndSession(ctx, first.alice, s.ID, service.EndParams{Outcome: logbook.OutcomeFailed})
		must(t, err)
		raised = append(raised, s.ID)
	}
	must(t, st.Close())

	st = open()
	t.Cleanup(func() { st.Close() })
	var mu sync.Mutex
	var results []string // what Options.AlertAttempted is told (for /metrics), by the posts side by side
	second := service.New(st, service.Options{AlertAttempted: func(result string) { mu.Lock(); defer mu.Unlock(); results = append(results, result) }})
	delivery, err := second.DeliverDue(ctx)
	must(t, err)
	equal(t, "alerts delivered after a restart", delivery.Delivered, 3)
	equal(t, "attempts counted", strings.Join(results, " "), "delivered delivered delivered")
	got := map[string]bool{}
	for _, p := range rc.got() {
		var body logbook.AlertBody
		must(t, json.Unmarshal(p.body, &body))
		got[body.SessionID] = p.signed
	}
	for _, id := range raised {
		if !got[id] {
			t.Errorf("the alert about %s was not delivered (signed) after the restart", id)
		}
	}
}

// TestAlertsDeliveredOnceByReplicas: two servers on one PostgreSQL, both
// delivering as fast as they can, post each of a batch of alerts once.
func TestAlertsDeliveredOnceByReplicas(t *testing.T) {
	ctx := context.Background()
	url := testdb.PostgresURL(t)
	var services []*service.Service
	for range 2 {
		st, err := pgstore.Open(ctx, url)
		must(t, err)
		t.Cleanup(func() { st.Close() })
		services = append(services, service.New(st, service.Options{}))
	}
	rc := newReceiver(t)
	b := &bundle{svc: services[0], ctx: ctx, alice: service.Caller{Actor: "alice", Project: "p"}}
	addRule(t, b, rc, service.AlertRuleBody{Kind: logbook.AlertSessionFailed})
	const n = 40
	for i := range n {
		s := b.start(t, b.alice, service.StartParams{Harness: "claude-code", HarnessSessionID: fmt.Sprint("h", i)})
		_, err := services[i%2].EndSession(ctx, b.alice, s.ID, service.EndParams{Outcome: logbook.OutcomeFailed})
		must(t, err)
	}
	var wg sync.WaitGroup
	results := make([]service.AlertDelivery, 4)
	for i := range results {
		wg.Go(func() {
			d, err := services[i%2].DeliverDue(ctx)
			if err != nil {
				t.Error(err)
			}
			results[i] = d
		})
	}
	wg.Wait()
	delivered := 0
	for _, r := range results {
		delivered += r.Delivered
	}
	equal(t, "alerts the deliverers delivered", delivered, n)
	times := map[string]int{}
	for _, p := range rc.got() {
		times[p.alertID]++
	}
	equal(t, "alerts the webhook got", len(times), n)
	for id, k := range times {
		if k != 1 {
			t.Errorf("alert %s posted %d times", id, k)
		}
	}
}
