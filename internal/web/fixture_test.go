package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
	"github.com/logbookhq/logbook/internal/web"
)

const adminToken = "test-admin-token"

// malicious is a transcript entry that would run script if it were not
// escaped.
const malicious = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`

// bundle is a server with the JSON API and the UI on a fresh SQLite store,
// and the tokens and sessions of the fixture.
type bundle struct {
	svc   *service.Service
	srv   *httptest.Server
	ctx   context.Context
	admin service.Caller
	alice service.Caller
	// aliceToken is the bearer token of alice in project demo.
	aliceToken string
	// sessions of the fixture by name: main (with a subagent, plan, claim,
	// files, a tool call and the malicious entry), child, failed, partial,
	// success, compacted.
	sessions map[string]logbook.Session
	// offset moves the service's clock, to start sessions on past days.
	offset atomic.Int64
}

// setup starts a server on a fresh store. seeded adds the fixture's
// sessions in project demo.
func setup(t testing.TB, seeded bool) *bundle {
	t.Helper()
	return setupWith(t, seeded, web.Options{})
}

// setupWith is setup with the UI's options.
func setupWith(t testing.TB, seeded bool, opts web.Options) *bundle {
	t.Helper()
	b := &bundle{ctx: context.Background(), sessions: map[string]logbook.Session{}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.svc = service.New(testdb.SQLite(t), service.Options{Logger: quiet,
		NowFunc: func() time.Time { return time.Now().Add(time.Duration(b.offset.Load())) }})
	if _, err := b.svc.EnsureAdminToken(b.ctx, adminToken); err != nil {
		t.Fatal(err)
	}
	var err error
	if b.admin, err = b.svc.Authenticate(b.ctx, adminToken); err != nil {
		t.Fatal(err)
	}
	b.aliceToken = b.token(t, "demo", "alice")
	b.alice, _ = b.svc.Authenticate(b.ctx, b.aliceToken)
	ctx, cancel := context.WithCancel(context.Background())
	running := make(chan struct{})
	go func() { b.svc.Run(ctx); close(running) }() // as logbook serve runs it
	t.Cleanup(func() { cancel(); <-running })
	mux := http.NewServeMux()
	httpapi.New(mux, b.svc, quiet, httpapi.Options{})
	web.New(mux, b.svc, quiet, opts)
	b.srv = httptest.NewServer(mux)
	t.Cleanup(b.srv.Close)
	if seeded {
		b.seed(t)
	}
	return b
}

// token makes a token for actor in project.
func (b *bundle) token(t testing.TB, project, actor string) string {
	t.Helper()
	token, err := b.svc.CreateToken(b.ctx, b.admin, project, actor)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func ptr(s string) *string { return &s }

// startAs starts a claude-code session of c's project as c, its harness
// session id name, a subagent of parent when given.
func (b *bundle) startAs(t testing.TB, c service.Caller, name, parent string) logbook.Session {
	t.Helper()
	s, _, err := b.svc.StartSession(b.ctx, c, service.StartParams{Project: c.Project, Harness: "claude-code", HarnessSessionID: name, ParentID: parent})
	if err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	return s
}

// start starts a session for alice in demo.
func (b *bundle) start(t testing.TB, name string, p service.StartParams) logbook.Session {
	t.Helper()
	p.Project = "demo"
	s, _, err := b.svc.StartSession(b.ctx, b.alice, p)
	if err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	b.sessions[name] = s
	return s
}

func (b *bundle) append(t testing.TB, id string, batch service.Batch) {
	t.Helper()
	if _, err := b.svc.AppendEntries(b.ctx, b.alice, id, batch); err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) end(t testing.TB, id string, p service.EndParams) {
	t.Helper()
	if _, err := b.svc.EndSession(b.ctx, b.alice, id, p); err != nil {
		t.Fatal(err)
	}
}

// seed records the fixture: three ended sessions on past days, a compacted
// one, and the main session with a subagent, which is still going.
func (b *bundle) seed(t testing.TB) {
	t.Helper()
	day := int64(24 * time.Hour)

	b.offset.Store(-3 * day)
	failed := b.start(t, "failed", service.StartParams{Harness: "codex", HarnessSessionID: "f1",
		Fields: logbook.SessionFields{Goal: ptr("Upgrade the database driver"), Model: ptr("gpt-5")}})
	b.append(t, failed.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "Rate limit reached; 429 Too Many Requests."}}})
	b.end(t, failed.ID, service.EndParams{Outcome: logbook.OutcomeFailed})

	b.offset.Store(-2 * day)
	partial := b.start(t, "partial", service.StartParams{Harness: "claude-code", HarnessSessionID: "p1",
		Fields: logbook.SessionFields{Goal: ptr("Document the claims API")}})
	b.append(t, partial.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "The context window is full; stopping here."}}})
	b.end(t, partial.ID, service.EndParams{Outcome: logbook.OutcomePartial, Result: "half of the routes documented"})

	b.offset.Store(-1 * day)
	success := b.start(t, "success", service.StartParams{Harness: "claude-code", HarnessSessionID: "s1",
		Fields: logbook.SessionFields{Goal: ptr("Add a healthz route"), Agent: ptr("engineer-1")}})
	b.append(t, success.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindPrompt, Text: "Add /healthz"}},
		Touched: []logbook.Touch{{Value: "internal/httpapi/api.go"}}})
	b.end(t, success.ID, service.EndParams{Outcome: logbook.OutcomeSuccess, Result: "route added, tested"})
	b.offset.Store(0)

	compacted := b.start(t, "compacted", service.StartParams{Harness: "pi", HarnessSessionID: "c1",
		Fields: logbook.SessionFields{Title: ptr("Nightly ops agent")}})
	b.append(t, compacted.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindPrompt, Text: "Check the backups"},
		{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "All 12 backups are fresh."}}})
	if _, err := b.svc.Compact(b.ctx, b.alice, compacted.ID, []logbook.Entry{
		{Kind: logbook.KindSummary, Text: "Checked the backups: all fresh."}}); err != nil {
		t.Fatal(err)
	}

	main := b.start(t, "main", service.StartParams{Harness: "claude-code", HarnessSessionID: "m1",
		Fields: logbook.SessionFields{Goal: ptr("Fix the flaky login test"), Model: ptr("claude-opus-4"),
			Issue: ptr("12"), Branch: ptr("fix-login"), HeadCommit: ptr("9f2c1e7a5b")}})
	input, _ := json.Marshal(map[string]any{"command": "go test ./auth -count=20 -run TestLogin", "timeout": 120000})
	longOutput := strings.Repeat("=== RUN   TestLogin\n--- PASS: TestLogin (0.01s)\n", 30) + "--- FAIL: TestLogin (0.02s)\n    login_test.go:41: session clock went backwards\nFAIL"
	b.append(t, main.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindPrompt, Text: "The login test fails one run in five. Find out why and fix it."},
		{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "I'll run the test many times to catch the failure.",
			Usage: &logbook.Usage{InputTokens: 12400, OutputTokens: 310}},
		{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "t1", Payload: input},
		{Kind: logbook.KindToolResult, ToolCallID: "t1", Text: longOutput},
		{Kind: logbook.KindToolCall, Tool: "Edit", ToolCallID: "t2", Payload: json.RawMessage(`{"file_path":"internal/auth/clock.go","old_string":"time.Now()","new_string":"s.clock.Now()"}`)},
		{Kind: logbook.KindToolResult, ToolCallID: "t2", Text: "The file internal/auth/clock.go has been updated."},
		{Kind: logbook.KindMessage, Role: logbook.RoleUser, Text: malicious},
		{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "That message looks like markup; I will treat it as text. The test shares a clock between sessions; I injected one per session.",
			Usage: &logbook.Usage{InputTokens: 15800, OutputTokens: 420}},
	}, Touched: []logbook.Touch{{Value: "internal/auth/clock.go"}, {Value: "internal/auth/login_test.go"}}})
	if _, err := b.svc.SetPlan(b.ctx, b.alice, main.ID, []service.StepInput{
		{Text: "Reproduce the failure", Status: logbook.StepDone},
		{Text: "Find the shared state", Status: logbook.StepDone},
		{Text: "Inject a clock per session", Status: logbook.StepRunning},
		{Text: "Run the test 100 times", Status: logbook.StepPending}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.svc.Claim(b.ctx, b.alice, service.ClaimParams{SessionID: main.ID, Subject: "internal/auth/"}); err != nil {
		t.Fatal(err)
	}
	child := b.start(t, "child", service.StartParams{Harness: "claude-code", HarnessSessionID: "m1-explore", ParentID: main.ID,
		Fields: logbook.SessionFields{Title: ptr("Explore how sessions use the clock"), AgentType: ptr("Explore")}})
	b.append(t, child.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindPrompt, Text: "Find every use of time.Now in internal/auth"}}})
}

// browserClient is an HTTP client with a cookie jar that does not follow
// redirects, so tests see them.
func (b *bundle) browserClient(t testing.TB) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrfOf reads the CSRF token of the first form of a page.
func csrfOf(t testing.TB, html string) string {
	t.Helper()
	m := csrfInput.FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no CSRF field in %.300s", html)
	}
	return m[1]
}

// signIn signs a new client in with token and returns it.
func (b *bundle) signIn(t testing.TB, token string) *http.Client {
	t.Helper()
	c := b.browserClient(t)
	page := b.get(t, c, "/sign-in", 200)
	res := b.post(t, c, "/sign-in", url.Values{"csrf": {csrfOf(t, page.body)}, "token": {token}, "next": {"/"}})
	if res.status != http.StatusSeeOther {
		t.Fatalf("signing in: %d %.300s", res.status, res.body)
	}
	return c
}

// result is what a request got back.
type result struct {
	status int
	header http.Header
	body   string
	res    *http.Response
}

func (b *bundle) do(t testing.TB, c *http.Client, req *http.Request) result {
	t.Helper()
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return result{status: res.StatusCode, header: res.Header, body: string(body), res: res}
}

// get fetches path and checks its status (0: any).
func (b *bundle) get(t testing.TB, c *http.Client, path string, status int) result {
	t.Helper()
	req, _ := http.NewRequest("GET", b.srv.URL+path, nil)
	r := b.do(t, c, req)
	if status != 0 && r.status != status {
		t.Fatalf("GET %s: status %d, want %d; %.500s", path, r.status, status, r.body)
	}
	return r
}

func (b *bundle) post(t testing.TB, c *http.Client, path string, form url.Values) result {
	t.Helper()
	req, _ := http.NewRequest("POST", b.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(t, c, req)
}

// cookie returns the Set-Cookie of name in r, or nil.
func (r result) cookie(name string) *http.Cookie {
	for _, c := range r.res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}
