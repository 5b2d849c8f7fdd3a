package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// The callers of the authorization matrix: no token, a token of another
// project (same actor name, so only the project tells them apart), another
// actor of the session's project, the actor that owns the session, and the
// admin token.
const (
	noToken = iota
	otherProject
	otherActor
	owner
	admin
	callers
)

var callerNames = [callers]string{"no token", "other project", "other actor", "owner", "admin"}

// authzFixture is what one matrix cell acts on, all made by the owner in
// project demo and unique to the cell, so cells cannot disturb each other.
type authzFixture struct {
	session, claim, agent, task, subject, message, alertRule string
}

// Secrets the fixture stores. They must never appear in an error body.
const (
	secretGoal    = "SECRET-GOAL rebuild the payroll ledger"
	secretEntry   = "SECRET-ENTRY the database password is hunter2"
	secretTask    = "SECRET-TASK migrate payroll"
	secretSubject = "secret-subject/"
	// secretHook is the path of the alert rules' webhook, which may hold
	// a secret (Slack's do): no answer shows it.
	secretHook = "/services/SECRET-HOOK"
)

// authzRoute is one row of the matrix: a route, the request that exercises
// it, and the status each caller must get.
type authzRoute struct {
	pattern string // as registered in api.go
	path    func(f authzFixture) string
	body    func(f authzFixture) string
	want    [callers]int
}

// The statuses the rules give. Reads are open to every token of the
// project and the admin; a session, its plan and its claims are changed by
// their owner only (the admin too gets 403 there: it is another actor),
// except that the admin may delete a session; another project's session
// is 404 (not 403: its existence is not revealed); naming another project
// is 403; tokens and policies are the admin's.
var (
	readProject   = [callers]int{401, 403, 200, 200, 200}
	readSession   = [callers]int{401, 404, 200, 200, 200}
	writeSession  = [callers]int{401, 404, 403, 200, 403}
	adminOnly     = [callers]int{401, 403, 403, 403, 201}
	projectCreate = [callers]int{401, 403, 201, 201, 201}
	// A session of project demo named as one of project other.
	sessionElsewhere = [callers]int{401, 404, 403, 403, 404}
)

func authzRoutes() []authzRoute {
	static := func(s string) func(authzFixture) string { return func(authzFixture) string { return s } }
	none := static("")
	return []authzRoute{
		{"GET /healthz", static("/healthz"), none, [callers]int{200, 200, 200, 200, 200}},
		{"GET /openapi.json", static("/openapi.json"), none, [callers]int{200, 200, 200, 200, 200}},
		{"POST /v1/tokens", static("/v1/tokens"), static(`{"project":"demo","actor":"mallory"}`), adminOnly},

		{"POST /v1/sessions", static("/v1/sessions"), static(`{"project":"demo","harness":"h"}`), projectCreate},
		{"GET /v1/sessions", static("/v1/sessions?project=demo"), none, readProject},
		{"GET /v1/sessions/{id}", func(f authzFixture) string { return "/v1/sessions/" + f.session + "?all=true" }, none, readSession},
		{"PATCH /v1/sessions/{id}", func(f authzFixture) string { return "/v1/sessions/" + f.session }, static(`{"branch":"b"}`), writeSession},
		{"DELETE /v1/sessions/{id}", func(f authzFixture) string { return "/v1/sessions/" + f.session }, none,
			[callers]int{401, 404, 403, 200, 200}},
		{"POST /v1/sessions/{id}/entries", func(f authzFixture) string { return "/v1/sessions/" + f.session + "/entries" },
			static(`{"entries":[{"kind":"note","text":"n"}]}`), writeSession},
		{"POST /v1/sessions/{id}/end", func(f authzFixture) string { return "/v1/sessions/" + f.session + "/end" },
			static(`{"outcome":"success"}`), writeSession},
		{"POST /v1/sessions/{id}/compact", func(f authzFixture) string { return "/v1/sessions/" + f.session + "/compact" },
			static(`{"entries":[{"kind":"summary","text":"s"}]}`), writeSession},
		{"PUT /v1/sessions/{id}/plan", func(f authzFixture) string { return "/v1/sessions/" + f.session + "/plan" },
			static(`{"steps":[{"text":"one"}]}`), writeSession},
		{"PATCH /v1/sessions/{id}/plan/{n}", func(f authzFixture) string { return "/v1/sessions/" + f.session + "/plan/1" },
			static(`{"status":"done"}`), writeSession},
		{"POST /v1/sessions/{id}/goal", func(f authzFixture) string { return "/v1/sessions/" + f.session + "/goal" },
			static(`{"goal":"another goal"}`), writeSession},
		{"GET /v1/sessions/{id}/tool_calls", func(f authzFixture) string { return "/v1/sessions/" + f.session + "/tool_calls" }, none, readSession},
		{"GET /v1/tool_calls", static("/v1/tool_calls?project=demo"), none, readProject},
		// A session named with a project must be that project's: refused,
		// never an empty list.
		{"GET /v1/tool_calls", func(f authzFixture) string { return "/v1/tool_calls?project=other&session=" + f.session }, none, sessionElsewhere},
		{"GET /v1/search", static("/v1/search?project=demo&q=payroll+ledger"), none, readProject},
		{"GET /v1/stats", static("/v1/stats?project=demo&by=outcome"), none, readProject},
		{"GET /v1/commits/{sha}/sessions", static("/v1/commits/abc1234/sessions?project=demo"), none, readProject},

		{"POST /v1/claims", static("/v1/claims"), func(f authzFixture) string {
			return `{"session_id":"` + f.session + `","subject":"` + f.subject + `other.go"}`
		}, [callers]int{401, 404, 403, 201, 403}},
		{"GET /v1/claims", static("/v1/claims?project=demo"), none, readProject},
		{"GET /v1/claims", func(f authzFixture) string { return "/v1/claims?project=other&session_id=" + f.session }, none, sessionElsewhere},
		{"DELETE /v1/claims/{id}", func(f authzFixture) string { return "/v1/claims/" + f.claim }, none, [callers]int{401, 404, 403, 200, 403}},

		{"POST /v1/gate", static("/v1/gate"), func(f authzFixture) string {
			return `{"session_id":"` + f.session + `","paths":["` + f.subject + `x.go"]}`
		}, readSession},
		{"POST /v1/gate", static("/v1/gate"), static(`{"project":"demo","paths":["a.go"]}`), readProject},

		{"GET /v1/events", static("/v1/events?project=demo&after=latest"), none, readProject},

		{"POST /v1/classify", static("/v1/classify"), static(`{"project":"demo","command":"ls -la"}`), readProject},
		{"GET /v1/projects/{project}/policy", static("/v1/projects/demo/policy"), none, readProject},
		{"PUT /v1/projects/{project}/policy", static("/v1/projects/demo/policy"), static(`{"read_only":"allow"}`),
			[callers]int{401, 403, 403, 403, 200}},
		{"GET /v1/projects/{project}/retention", static("/v1/projects/demo/retention"), none, readProject},
		// Days far beyond the fixture's sessions: nothing is deleted.
		{"PUT /v1/projects/{project}/retention", static("/v1/projects/demo/retention"), static(`{"sessions_days":3650,"payloads_days":3650}`),
			[callers]int{401, 403, 403, 403, 200}},
		{"GET /v1/projects/{project}/alert_rules", static("/v1/projects/demo/alert_rules"), none, readProject},
		{"POST /v1/projects/{project}/alert_rules", static("/v1/projects/demo/alert_rules"),
			static(`{"kind":"tool_loop","threshold":3,"webhook_url":"https://hooks.example.com` + secretHook + `"}`), adminOnly},
		{"DELETE /v1/projects/{project}/alert_rules/{id}", func(f authzFixture) string { return "/v1/projects/demo/alert_rules/" + f.alertRule }, none,
			[callers]int{401, 403, 403, 403, 200}},
		{"POST /v1/projects/{project}/alert_rules/{id}/test", func(f authzFixture) string { return "/v1/projects/demo/alert_rules/" + f.alertRule + "/test" }, none,
			[callers]int{401, 403, 403, 403, 200}},
		{"GET /v1/projects/{project}/alerts", static("/v1/projects/demo/alerts"), none, readProject},
		{"GET /v1/projects/{project}/prices", static("/v1/projects/demo/prices"), none, readProject},
		{"PUT /v1/projects/{project}/prices", static("/v1/projects/demo/prices"), static(`{"models":{"in-house":{"input":1,"output":2,"cache_read":0.1,"cache_write":1.25}}}`),
			[callers]int{401, 403, 403, 403, 200}},

		// An agent belongs to the project, and every token of the project
		// may read it; but its session belongs to the actor that started
		// it, so continuing it, rotating it, handing it tasks and setting
		// its rotation policy (which decides when that session ends) are
		// the owner's.
		{"POST /v1/agents/{agent}/session", func(f authzFixture) string { return "/v1/agents/" + f.agent + "/session?project=demo" }, none,
			[callers]int{401, 403, 403, 200, 403}},
		{"POST /v1/agents/{agent}/rotate", func(f authzFixture) string { return "/v1/agents/" + f.agent + "/rotate" },
			static(`{"project":"demo","reason":"matrix"}`), [callers]int{401, 403, 403, 201, 403}},
		{"GET /v1/agents/{agent}", func(f authzFixture) string { return "/v1/agents/" + f.agent + "?project=demo" }, none, readProject},
		{"PUT /v1/agents/{agent}/rotation_policy", func(f authzFixture) string {
			return "/v1/agents/" + f.agent + "/rotation_policy?project=demo"
		}, static(`{"max_age":"24h"}`), [callers]int{401, 403, 403, 200, 403}},
		{"POST /v1/agents/{agent}/tasks", func(f authzFixture) string { return "/v1/agents/" + f.agent + "/tasks?project=demo" },
			static(`{"task_id":"another","text":"do another thing"}`), [callers]int{401, 403, 403, 201, 403}},
		{"GET /v1/agents/{agent}/tasks", func(f authzFixture) string { return "/v1/agents/" + f.agent + "/tasks?project=demo" }, none, readProject},
		{"GET /v1/tasks/{task_id}", func(f authzFixture) string { return "/v1/tasks/" + f.task + "?project=demo" }, none, readProject},
		// Every actor of the project may send a note into the sessions on
		// a subject (it records who sent it); the admin writes into no
		// actor's session.
		{"POST /v1/notes", static("/v1/notes"), func(f authzFixture) string {
			return `{"project":"demo","subject":"` + f.subject + `","text":"a note"}`
		}, [callers]int{401, 403, 200, 200, 403}},

		// Messages: every actor of the project sends and reads them (the
		// admin reads, but sends none: no agent could answer it); a
		// session's inbox is its owner's, and so is marking a message
		// addressed to it.
		{"POST /v1/messages", static("/v1/messages"), static(`{"project":"demo","to_actor":"bob","text":"hi"}`),
			[callers]int{401, 403, 201, 201, 403}},
		{"GET /v1/messages", static("/v1/messages?project=demo"), none, readProject},
		{"POST /v1/sessions/{id}/inbox", func(f authzFixture) string { return "/v1/sessions/" + f.session + "/inbox" }, none, writeSession},
		{"POST /v1/messages/{id}/read", func(f authzFixture) string { return "/v1/messages/" + f.message + "/read" }, none, writeSession},
		{"POST /v1/messages/{id}/ack", func(f authzFixture) string { return "/v1/messages/" + f.message + "/ack" }, none, writeSession},
	}
}

// TestAuthzMatrix sends every route as every kind of caller and checks the
// status, that no error body shows what the caller may not see, that no
// log line shows a token, and that every answer that succeeds is what
// /openapi.json says the route answers.
func TestAuthzMatrix(t *testing.T) {
	testdb.Each(t, testAuthzMatrix)
}

func testAuthzMatrix(t *testing.T, e testdb.Engine) {
	var logs syncBuffer
	quiet := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	svc := service.New(e.Open(t), service.Options{Logger: quiet, RateLimit: -1})
	if _, err := svc.EnsureAdminToken(context.Background(), adminToken); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	// The matrix makes hundreds of requests a second with one token.
	httpapi.New(mux, svc, quiet, httpapi.Options{})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := &client{t: t, url: srv.URL}

	alice := c.token("demo", "alice")
	tokens := [callers]string{
		noToken:      "",
		otherProject: c.token("other", "alice"),
		otherActor:   c.token("demo", "bob"),
		owner:        alice,
		admin:        adminToken,
	}

	n := 0
	newFixture := func() authzFixture {
		n++
		f := authzFixture{agent: fmt.Sprintf("agent-%d", n), task: fmt.Sprintf("task-%d", n), subject: fmt.Sprintf("%s%d/", secretSubject, n)}
		f.session = c.do("POST", "/v1/sessions", alice, map[string]any{"project": "demo", "harness": "h",
			"harness_session_id": "fx-" + strconv.Itoa(n), "goal": secretGoal, "subject": f.subject}).expect(t, 201).body["id"].(string)
		c.do("POST", "/v1/sessions/"+f.session+"/entries", alice, map[string]any{"entries": []map[string]any{
			{"kind": "prompt", "text": secretEntry},
			{"kind": "tool_call", "tool": "Bash", "tool_call_id": "t1", "payload": map[string]string{"command": secretEntry}},
			{"kind": "tool_result", "tool_call_id": "t1", "text": secretEntry},
		}}).expect(t, 200)
		c.do("PUT", "/v1/sessions/"+f.session+"/plan", alice, `{"steps":[{"text":"step one"},{"text":"step two"}]}`).expect(t, 200)
		f.claim = c.do("POST", "/v1/claims", alice, map[string]any{"session_id": f.session, "subject": f.subject}).expect(t, 201).body["id"].(string)
		c.do("POST", "/v1/agents/"+f.agent+"/tasks?project=demo", alice, map[string]string{"task_id": f.task, "text": secretTask}).expect(t, 201)
		f.message = c.do("POST", "/v1/messages", alice, map[string]string{"to_session": f.session, "text": "a message"}).expect(t, 201).body["id"].(string)
		// Port 1 refuses at once: a test post answers what went wrong.
		f.alertRule = c.do("POST", "/v1/projects/demo/alert_rules", adminToken, map[string]any{"kind": "session_failed",
			"webhook_url": "http://127.0.0.1:1" + secretHook}).expect(t, 201).body["id"].(string)
		return f
	}

	// Every answer below that succeeds must match what /openapi.json says
	// the route answers.
	res, err := http.Get(srv.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromIoReader(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	validated := 0

	routes := authzRoutes()
	for _, route := range routes {
		method, _, _ := strings.Cut(route.pattern, " ")
		for who := range callers {
			t.Run(route.pattern+"/"+callerNames[who], func(t *testing.T) {
				f := newFixture()
				path := route.path(f)
				status, header, body := authzDo(t, srv.URL, method, path, tokens[who], route.body(f))
				if status != route.want[who] {
					t.Errorf("%s %s as %s: status %d, want %d; body %s", method, path, callerNames[who], status, route.want[who], body)
				}
				if _, template, _ := strings.Cut(route.pattern, " "); status/100 == 2 && strings.HasPrefix(template, "/v1/") && template != "/v1/events" {
					if err := answerMatchesDocument(doc, method, template, body); err != nil {
						t.Errorf("%s %s as %s: the answer does not match /openapi.json: %v\n%s", method, path, callerNames[who], err, body)
					}
					validated++
				}
				if status >= 400 {
					if ct := header.Get("Content-Type"); ct != "application/problem+json" {
						t.Errorf("error with content type %q, want a problem document", ct)
					}
					for _, secret := range []string{secretGoal, secretEntry, secretTask, secretSubject, alice, tokens[otherActor], adminToken} {
						if strings.Contains(body, secret) {
							t.Errorf("the %d body shows %q: %s", status, secret, body)
						}
					}
				}
				if who == otherProject && status < 400 && route.pattern != "GET /healthz" && route.pattern != "GET /openapi.json" {
					t.Errorf("a token of another project got %d", status)
				}
				if strings.Contains(body, secretHook) {
					t.Errorf("the body shows the webhook's path: %s", body)
				}
				for _, tok := range tokens {
					if tok != "" && strings.Contains(body, tok) {
						t.Errorf("the body shows a bearer token: %s", body)
					}
				}
			})
		}
	}

	for _, tok := range tokens {
		if tok != "" && strings.Contains(logs.String(), tok) {
			t.Errorf("the logs show a bearer token")
		}
	}
	if validated < 30 {
		t.Errorf("only %d answers were checked against /openapi.json, want one or more for every route", validated)
	}

	// Every route of the matrix is one the mux serves under that pattern,
	// and every route api.go registers has a row.
	listed := map[string]bool{}
	for _, route := range routes {
		listed[route.pattern] = true
		method, _, _ := strings.Cut(route.pattern, " ")
		req := httptest.NewRequest(method, route.path(authzFixture{session: "s", claim: "c", agent: "a", task: "t", message: "m", alertRule: "r"}), nil)
		if _, pattern := mux.Handler(req); pattern != route.pattern {
			t.Errorf("matrix row %q is served by pattern %q", route.pattern, pattern)
		}
	}
	for _, pattern := range registeredPatterns(t) {
		if !listed[pattern] {
			t.Errorf("route %q is registered in api.go but has no row in the authorization matrix", pattern)
		}
	}
}

// syncBuffer is a bytes.Buffer that the server's goroutines may write
// to at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// authzDo sends one request. An event stream is closed once its headers
// arrive.
func authzDo(t *testing.T, base, method, path, token, body string) (int, http.Header, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(ctx, method, base+path, reader)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	if res.Header.Get("Content-Type") == "text/event-stream" {
		return res.StatusCode, res.Header, ""
	}
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(raw)
}

// registeredPatterns reads api.go and returns the patterns it registers:
// the string literal first argument of every v1(...), mux.Handle(...) and
// mux.HandleFunc(...) call, but the catch-all "/v1/".
func registeredPatterns(t *testing.T) []string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "api.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	ast.Inspect(file, func(n ast.Node) bool {
		// A row of the routes table: {"POST /v1/sessions", h.startSession, …}.
		if row, ok := n.(*ast.CompositeLit); ok && len(row.Elts) > 0 {
			if lit, ok := row.Elts[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if pattern, err := strconv.Unquote(lit.Value); err == nil && strings.Contains(pattern, " /v1/") {
					patterns = append(patterns, pattern)
				}
			}
			return true
		}
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		var name string
		switch fn := call.Fun.(type) {
		case *ast.Ident:
			name = fn.Name
		case *ast.SelectorExpr:
			name = fn.Sel.Name
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		if (name != "v1" && name != "Handle" && name != "HandleFunc") || !ok || lit.Kind != token.STRING {
			return true
		}
		if pattern, err := strconv.Unquote(lit.Value); err == nil && pattern != "/v1/" {
			patterns = append(patterns, pattern)
		}
		return true
	})
	sort.Strings(patterns)
	if len(patterns) < 30 {
		t.Fatalf("found only %d route patterns in api.go: %v", len(patterns), patterns)
	}
	return patterns
}

// answerMatchesDocument checks a successful answer against the schema
// /openapi.json gives the operation.
func answerMatchesDocument(doc *openapi3.T, method, template, body string) error {
	item := doc.Paths.Value(template)
	if item == nil || item.GetOperation(method) == nil {
		return fmt.Errorf("no operation %s %s", method, template)
	}
	done := item.GetOperation(method).Responses.Value("2XX")
	if done == nil || done.Value.Content.Get("application/json") == nil {
		return fmt.Errorf("no JSON answer described")
	}
	var value any
	if err := json.Unmarshal([]byte(body), &value); err != nil {
		return err
	}
	return done.Value.Content.Get("application/json").Schema.Value.VisitJSON(value)
}
