package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/logbookhq/logbook/internal/client"
	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

var quiet = slog.New(slog.DiscardHandler)

// world is a real logbook: a service on a fresh SQLite store, served over
// HTTP with /v1 and /mcp side by side, and tokens for alice and bob in
// project demo.
type world struct {
	svc        *service.Service
	url        string
	alice, bob string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	svc := service.New(testdb.SQLite(t), service.Options{Logger: quiet})
	if _, err := svc.EnsureAdminToken(ctx, "admin-token"); err != nil {
		t.Fatal(err)
	}
	admin, err := svc.Authenticate(ctx, "admin-token")
	if err != nil {
		t.Fatal(err)
	}
	w := &world{svc: svc}
	for _, tok := range []struct {
		actor string
		dst   *string
	}{{"alice", &w.alice}, {"bob", &w.bob}} {
		if *tok.dst, err = svc.CreateToken(ctx, admin, "demo", tok.actor); err != nil {
			t.Fatal(err)
		}
	}
	mux := http.NewServeMux()
	httpapi.New(mux, svc, quiet, httpapi.Options{})
	mux.Handle("/mcp", Handler(svc, quiet, Options{}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	w.url = srv.URL
	return w
}

// connect connects the SDK's client to server over an in-memory transport.
func connect(t *testing.T, server *sdk.Server) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	serverEnd, clientEnd := sdk.NewInMemoryTransports()
	ss, err := server.Connect(ctx, serverEnd, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// inProcess is an agent using the tools in process (the service itself),
// as the actor of token.
func (w *world) inProcess(t *testing.T, token string) *sdk.ClientSession {
	t.Helper()
	caller, err := w.svc.Authenticate(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, newServer(func(*sdk.CallToolRequest) (ledger.Ledger, error) {
		return w.svc.For(caller), nil
	}, true, quiet))
}

// overStdio is an agent talking to ServeStdio over a pair of pipes, as
// logbook mcp runs it: the tools call the server's /v1 API with token.
func (w *world) overStdio(t *testing.T, token string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeStdio(ctx, client.New(w.url, token).Ledger(), toServer, fromServer, quiet) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, &sdk.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		toServer.Close()
		<-done
	})
	return cs
}

// overHTTP is an agent talking to /mcp with the SDK's streamable client,
// sending token as its bearer token.
func (w *world) overHTTP(t *testing.T, token string) *sdk.ClientSession {
	t.Helper()
	transport := &sdk.StreamableClientTransport{Endpoint: w.url + "/mcp", HTTPClient: &http.Client{Transport: bearer(token)}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// bearer is an http.RoundTripper that sends a bearer token.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// call calls a tool and returns its text and whether it was a tool error.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (text string, isError bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: the call failed instead of answering a tool result: %v", tool, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks, want 1", tool, len(res.Content))
	}
	content, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("%s: content is %T, want text", tool, res.Content[0])
	}
	return content.Text, res.IsError
}

// ok calls a tool that must succeed and decodes its JSON answer into out.
func ok(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any, out any) string {
	t.Helper()
	text, isError := call(t, cs, tool, args)
	if isError {
		t.Fatalf("%s(%v): tool error %q", tool, args, text)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(text), out); err != nil {
			t.Fatalf("%s: answer is not the JSON expected: %v\n%s", tool, err, text)
		}
	}
	return text
}

// fails calls a tool that must answer a tool error and returns its text.
func fails(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	text, isError := call(t, cs, tool, args)
	if !isError {
		t.Fatalf("%s(%v): succeeded with %s, want a tool error", tool, args, text)
	}
	return text
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("%s = %q, want it to contain %q", what, got, want)
		}
	}
}

// Shapes of answers, as far as the tests read them.
type (
	session struct {
		ID           string          `json:"id"`
		Actor        string          `json:"actor"`
		Title        string          `json:"title"`
		Issue        ledger.IssueRef `json:"issue"`
		Pull         ledger.IssueRef `json:"pull"`
		State        string          `json:"state"`
		Outcome      string          `json:"outcome"`
		Blocker      string          `json:"blocker"`
		Result       string          `json:"result"`
		EntryCount   int             `json:"entry_count"`
		MessageCount int             `json:"message_count"`
		CostMicros   int64           `json:"cost_micros"`
	}
	step struct {
		N      int    `json:"n"`
		Text   string `json:"text"`
		Status string `json:"status"`
	}
	view struct {
		Session session `json:"session"`
		Entries []struct {
			Seq   int    `json:"seq"`
			Kind  string `json:"kind"`
			Text  string `json:"text"`
			Usage *struct {
				CostMicros int64 `json:"cost_micros"`
			} `json:"usage"`
		} `json:"entries"`
		Plan   []step `json:"plan"`
		Claims []struct {
			Subject string `json:"subject"`
		} `json:"claims"`
		Touched []struct {
			Value string `json:"value"`
		} `json:"touched"`
	}
	appended struct {
		Recorded   int `json:"recorded"`
		Duplicates int `json:"duplicates"`
		LastSeq    int `json:"last_seq"`
	}
	verdict struct {
		Class    string `json:"class"`
		Decision string `json:"decision"`
		Reasons  []struct {
			Rule string `json:"rule"`
		} `json:"reasons"`
	}
)

func TestToolsAreDescribed(t *testing.T) {
	w := newWorld(t)
	res, err := w.inProcess(t, w.alice).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// What each tool does to the ledger; see register.
	want := map[string]struct {
		readOnly, destructive, idempotent bool
		required                          []string
	}{
		"start_session":    {idempotent: true},
		"set_goal":         {idempotent: true, required: []string{"session_id", "goal"}},
		"record":           {required: []string{"session_id"}},
		"plan":             {destructive: true, idempotent: true, required: []string{"session_id"}},
		"classify_command": {readOnly: true, required: []string{"command"}},
		"claim":            {idempotent: true, required: []string{"session_id", "subject"}},
		"check_write":      {idempotent: true, required: []string{"session_id"}},
		"release":          {destructive: true, idempotent: true, required: []string{"claim_id"}},
		"complete_task":    {destructive: true, idempotent: true, required: []string{"session_id", "outcome", "result"}},
		"search":           {readOnly: true, required: []string{"q"}},
		"list_sessions":    {readOnly: true},
		"get_session":      {readOnly: true, required: []string{"session_id"}},
		"list_alerts":      {readOnly: true},
		"send_message":     {required: []string{"text"}},
		"read_inbox":       {required: []string{"session_id"}},
		"ack":              {idempotent: true, required: []string{"message_id"}},
	}
	if len(res.Tools) != len(want) {
		t.Errorf("%d tools, want %d", len(res.Tools), len(want))
	}
	for _, tool := range res.Tools {
		w, known := want[tool.Name]
		if !known {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		if len(tool.Description) < 60 {
			t.Errorf("%s: description %q is too short to act on", tool.Name, tool.Description)
		}
		a := tool.Annotations
		if a == nil {
			t.Errorf("%s: no annotations", tool.Name)
			continue
		}
		destructive := a.DestructiveHint == nil || *a.DestructiveHint // the spec's default is true
		if a.ReadOnlyHint != w.readOnly || (!w.readOnly && (destructive != w.destructive || a.IdempotentHint != w.idempotent)) {
			t.Errorf("%s: annotations read-only %v destructive %v idempotent %v, want %v %v %v",
				tool.Name, a.ReadOnlyHint, destructive, a.IdempotentHint, w.readOnly, w.destructive, w.idempotent)
		}
		if a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: open-world, want closed: it only reaches the ledger", tool.Name)
		}
		schema, _ := tool.InputSchema.(map[string]any)
		if schema["type"] != "object" {
			t.Errorf("%s: input schema %v is not an object schema", tool.Name, tool.InputSchema)
			continue
		}
		var required []string
		names, _ := schema["required"].([]any)
		for _, name := range names {
			required = append(required, name.(string))
		}
		if !slices.Equal(required, w.required) {
			t.Errorf("%s: required %v, want %v", tool.Name, required, w.required)
		}
		for name, prop := range schema["properties"].(map[string]any) {
			if d, _ := prop.(map[string]any)["description"].(string); d == "" {
				t.Errorf("%s: argument %s has no description", tool.Name, name)
			}
		}
	}
}

// TestSessionThroughTools runs two sessions through every tool in process:
// one that fails, then one on the same goal that is told about it.
func TestSessionThroughTools(t *testing.T) {
	w := newWorld(t)
	alice := w.inProcess(t, w.alice)

	// A first attempt that fails: the blocker comes from its last words.
	var first session
	ok(t, alice, "start_session", map[string]any{"harness": "claude-code", "harness_session_id": "run-1", "issue": 12}, &first)
	if first.Issue != "12" || first.Actor != "alice" || first.State != "active" {
		t.Errorf("started %+v, want issue 12 (sent as a number), actor alice, active", first)
	}
	var again session
	ok(t, alice, "start_session", map[string]any{"harness": "claude-code", "harness_session_id": "run-1"}, &again)
	if again.ID != first.ID || again.Issue != "12" {
		t.Errorf("a repeated start gave %+v, want the same session %s with its issue kept", again, first.ID)
	}
	ok(t, alice, "set_goal", map[string]any{"session_id": first.ID, "goal": "Fix the flaky login test"}, nil)
	ok(t, alice, "record", map[string]any{"session_id": first.ID, "entries": []map[string]any{
		{"kind": "message", "role": "assistant", "text": "The API answered 429 Too Many Requests; I stopped."}}}, nil)
	var failed session
	ok(t, alice, "complete_task", map[string]any{"session_id": first.ID, "outcome": "failed", "result": "could not run the tests"}, &failed)
	if failed.State != "ended" || failed.Outcome != "failed" || failed.Blocker != "rate_limited" {
		t.Errorf("completed %+v, want ended, failed, blocker rate_limited derived from the last message", failed)
	}
	mustContain(t, "recording into an ended session",
		fails(t, alice, "record", map[string]any{"session_id": first.ID, "entries": []map[string]any{{"kind": "note", "text": "late"}}}),
		"this session has ended: start a new one")

	// The second attempt hears about the first.
	var sess session
	ok(t, alice, "start_session", map[string]any{"harness": "claude-code", "harness_session_id": "run-2"}, &sess)
	var goal struct {
		Session session `json:"session"`
		Prior   []struct {
			ID      string `json:"id"`
			Blocker string `json:"blocker"`
			Why     string `json:"why"`
		} `json:"prior"`
	}
	ok(t, alice, "set_goal", map[string]any{"session_id": sess.ID, "goal": "Fix the flaky login test"}, &goal)
	if goal.Session.Title != "Fix the flaky login test" {
		t.Errorf("title %q, want the goal", goal.Session.Title)
	}
	if len(goal.Prior) != 1 || goal.Prior[0].ID != first.ID || goal.Prior[0].Blocker != "rate_limited" {
		t.Errorf("prior %+v, want the failed first attempt %s with its blocker", goal.Prior, first.ID)
	}

	// Entries: a repeated key is a duplicate.
	entries := []map[string]any{
		{"kind": "prompt", "text": "The login test fails one run in five"},
		{"kind": "tool_call", "tool": "Bash", "tool_call_id": "t1", "key": "t1", "payload": map[string]any{"command": "go test ./auth -count=20"},
			"usage": map[string]any{"input_tokens": 1000, "output_tokens": 100, "cost_usd": 0.05}},
		{"kind": "tool_result", "tool_call_id": "t1", "key": "t1", "text": "FAIL"},
	}
	var rec appended
	ok(t, alice, "record", map[string]any{"session_id": sess.ID, "entries": entries,
		"touched": []map[string]any{{"value": "./auth/login_test.go"}}}, &rec)
	if rec != (appended{Recorded: 2, Duplicates: 1, LastSeq: 2}) {
		t.Errorf("record answered %+v, want 2 recorded, 1 duplicate, last_seq 2", rec)
	}

	// The plan: set all steps, then move one.
	var planned struct{ Plan []step }
	ok(t, alice, "plan", map[string]any{"session_id": sess.ID, "steps": []map[string]any{
		{"text": "reproduce"}, {"text": "fix the clock", "status": "running"}, {"text": "run the tests 100 times"}}}, &planned)
	if len(planned.Plan) != 3 || planned.Plan[0].Status != "pending" || planned.Plan[1].Status != "running" {
		t.Errorf("plan %+v, want 3 steps: pending, running, pending", planned.Plan)
	}
	ok(t, alice, "plan", map[string]any{"session_id": sess.ID, "step": 1, "status": "done"}, &planned)
	if planned.Plan[0].Status != "done" || planned.Plan[1].Status != "running" {
		t.Errorf("plan %+v, want step 1 done and step 2 still running", planned.Plan)
	}
	mustContain(t, "plan with neither steps nor step", fails(t, alice, "plan", map[string]any{"session_id": sess.ID}), "steps: give steps")
	mustContain(t, "a bad step status", fails(t, alice, "plan", map[string]any{"session_id": sess.ID, "step": 2, "status": "finished"}),
		`status: "finished" is not a step status`)

	// The classifier.
	var v verdict
	ok(t, alice, "classify_command", map[string]any{"command": "rm -rf /"}, &v)
	if v.Class != "destructive" || v.Decision != "deny" || len(v.Reasons) == 0 || v.Reasons[0].Rule == "" {
		t.Errorf("rm -rf / classified %+v, want destructive, deny, with a reason", v)
	}

	// Claims: bob's session cannot take what alice's holds, until she releases it.
	var held struct {
		ID      string `json:"id"`
		Subject string `json:"subject"`
	}
	ok(t, alice, "claim", map[string]any{"session_id": sess.ID, "subject": "auth/", "ttl_minutes": 60}, &held)
	bob := w.inProcess(t, w.bob)
	var bobs session
	ok(t, bob, "start_session", map[string]any{"harness": "codex", "harness_session_id": "b1"}, &bobs)
	mustContain(t, "a conflicting claim", fails(t, bob, "claim", map[string]any{"session_id": bobs.ID, "subject": "auth/login.go"}),
		"auth/login.go is held by session "+sess.ID, "alice", "Fix the flaky login test", "work on something else")
	// The gate says the same before a write: by path, or by the command.
	var gate struct {
		Decision string   `json:"decision"`
		Reason   string   `json:"reason"`
		Paths    []string `json:"paths"`
	}
	ok(t, bob, "check_write", map[string]any{"session_id": bobs.ID, "command": "sed -i s/a/b/ auth/login.go"}, &gate)
	if gate.Decision != "deny" || !slices.Equal(gate.Paths, []string{"auth/login.go"}) || !strings.Contains(gate.Reason, "claimed by session "+sess.ID) {
		t.Errorf("check_write of a held file: %+v", gate)
	}
	ok(t, alice, "check_write", map[string]any{"session_id": sess.ID, "paths": []string{"auth/login.go"}}, &gate)
	if gate.Decision != "defer" {
		t.Errorf("check_write of the holder's own file: %+v", gate)
	}
	ok(t, alice, "release", map[string]any{"claim_id": held.ID}, nil)
	ok(t, bob, "claim", map[string]any{"session_id": bobs.ID, "subject": "auth/login.go"}, nil)
	mustContain(t, "another actor's session", fails(t, bob, "record", map[string]any{"session_id": sess.ID, "entries": []map[string]any{}}),
		`belongs to actor "alice"; only its owner changes it`)

	// Ending closes the plan's open steps; the session reads back whole.
	ok(t, alice, "complete_task", map[string]any{"session_id": sess.ID, "outcome": "success", "result": "shared clock replaced"}, nil)
	var got view
	ok(t, alice, "get_session", map[string]any{"session_id": sess.ID}, &got)
	if len(got.Entries) != 2 || got.Entries[0].Kind != "prompt" || got.Entries[1].Seq != 2 {
		t.Errorf("entries %+v, want the prompt and the tool call", got.Entries)
	} else if u := got.Entries[1].Usage; u == nil || u.CostMicros != 50_000 || got.Session.CostMicros != 50_000 {
		t.Errorf("the model call's cost %+v and the session's %d, want 50000 micro-dollars each", u, got.Session.CostMicros)
	}
	if len(got.Plan) != 3 || got.Plan[1].Status != "done" || got.Plan[2].Status != "done" {
		t.Errorf("plan after success %+v, want every step done", got.Plan)
	}
	if len(got.Touched) != 1 || got.Touched[0].Value != "auth/login_test.go" {
		t.Errorf("touched %+v, want auth/login_test.go", got.Touched)
	}
	var after view
	ok(t, alice, "get_session", map[string]any{"session_id": sess.ID, "after_seq": 1}, &after)
	if len(after.Entries) != 1 || after.Entries[0].Seq != 2 {
		t.Errorf("entries after 1: %+v, want only seq 2", after.Entries)
	}

	// Lists.
	var page struct {
		Sessions []session `json:"sessions"`
	}
	ok(t, alice, "list_sessions", map[string]any{"outcome": "failed", "since": "1h"}, &page)
	if len(page.Sessions) != 1 || page.Sessions[0].ID != first.ID {
		t.Errorf("failed sessions %+v, want only %s", page.Sessions, first.ID)
	}
	ok(t, alice, "list_sessions", map[string]any{"path": "auth/"}, &page)
	if len(page.Sessions) != 1 || page.Sessions[0].ID != sess.ID {
		t.Errorf("sessions that touched auth/: %+v, want only %s", page.Sessions, sess.ID)
	}

	// Search: has anyone tried this before?
	var found ledger.SearchPage
	ok(t, bob, "search", map[string]any{"q": "flaky login", "kind": "session"}, &found)
	if len(found.Results) != 2 { // the failed attempt, then this session
		t.Fatalf("search for the goal: %+v", found)
	}
	for _, h := range found.Results {
		if h.Field != "goal" || h.Seq != 0 || logbook.SnippetString(h.Snippet, "[", "]") != "Fix the [flaky] [login] test" {
			t.Errorf("search for the goal: %+v", h)
		}
	}
	ok(t, bob, "search", map[string]any{"q": "429 too many", "outcome": "failed", "since": "1h"}, &found)
	if len(found.Results) != 1 || found.Results[0].SessionID != first.ID || found.Results[0].Kind != "message" {
		t.Errorf("search for what the failed attempt said: %+v", found)
	}
	mustContain(t, "a search without words", fails(t, bob, "search", map[string]any{"q": "?!"}), "say what to search for")
}

func TestErrorsSayWhatToFix(t *testing.T) {
	w := newWorld(t)
	alice := w.inProcess(t, w.alice)
	var sess session
	ok(t, alice, "start_session", map[string]any{"harness": "test", "harness_session_id": "e1"}, &sess)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"record", map[string]any{"entries": []map[string]any{{"kind": "note", "text": "x"}}}, "session_id is required: the id of your session, as start_session returned it"},
		{"get_session", map[string]any{"session_id": ""}, "session_id is required"},
		{"classify_command", nil, "command is required"},
		{"complete_task", map[string]any{"session_id": sess.ID, "result": "done"}, "outcome is required: success, partial or failed"},
		{"complete_task", map[string]any{"session_id": sess.ID, "outcome": "great", "result": "done"}, `outcome: "great" is not an outcome; use success, partial or failed`},
		{"get_session", map[string]any{"session_id": "nope"}, `no session "nope" in your projects`},
		{"record", map[string]any{"session_id": sess.ID, "entries": []map[string]any{{"kind": "thought"}}}, `entries[0].kind: "thought" is not an entry kind`},
		{"claim", map[string]any{"session_id": sess.ID, "subject": "x", "ttl_minutes": 5000}, "ttl_minutes: give a TTL from 1 to 1440 minutes"},
		{"list_sessions", map[string]any{"since": "yesterday"}, `since: "yesterday" is not a time`},
		{"list_sessions", map[string]any{"project": "other"}, `this token is for project "demo", not "other"`},
		{"list_sessions", map[string]any{"q": strings.Repeat("word ", 500)}, "q: the search has 500 words; search for at most 32 words"},
		{"list_sessions", map[string]any{"q": strings.Repeat("x", 50000)}, "q: the search is 50000 characters long; search for at most 200 characters"},
		{"start_session", map[string]any{"harness": "test", "harness_session_id": "e1\u0000"}, "harness_session_id: the name holds a control character (U+0000 at byte 2)"},
		{"list_sessions", map[string]any{"project": "de\nmo"}, "project: the name holds a control character (U+000A at byte 2)"},
		{"release", map[string]any{"claim_id": "nope"}, `no claim "nope" in your projects`},
	} {
		if got := fails(t, alice, c.tool, c.args); got != c.want && !strings.HasPrefix(got, c.want) {
			t.Errorf("%s(%v): %q, want %q", c.tool, c.args, got, c.want)
		}
	}
	// The server still answers after all that.
	ok(t, alice, "get_session", map[string]any{"session_id": sess.ID}, nil)
}

func TestStreamableHTTP(t *testing.T) {
	w := newWorld(t)

	for name, header := range map[string]string{"no token": "", "a wrong token": "Bearer lbk_wrong", "a token without its scheme": w.alice} {
		req, _ := http.NewRequest(http.MethodPost, w.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized || res.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %s %s, want a 401 problem", name, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	}

	alice := w.overHTTP(t, w.alice)
	tools, err := alice.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 16 {
		t.Errorf("%d tools over HTTP, want 16", len(tools.Tools))
	}
	var sess session
	ok(t, alice, "start_session", map[string]any{"harness": "claude-code", "harness_session_id": "h1", "goal": "Ship the MCP server"}, &sess)
	if sess.Actor != "alice" {
		t.Errorf("session of actor %q, want alice: the token's", sess.Actor)
	}
	ok(t, alice, "record", map[string]any{"session_id": sess.ID, "entries": []map[string]any{{"kind": "prompt", "text": "go"}}}, nil)

	// Each call acts as its own token: bob reads alice's session but may not write to it.
	bob := w.overHTTP(t, w.bob)
	var got view
	ok(t, bob, "get_session", map[string]any{"session_id": sess.ID}, &got)
	if got.Session.EntryCount != 1 {
		t.Errorf("bob read %+v, want alice's session with 1 entry", got.Session)
	}
	mustContain(t, "bob writing to alice's session", fails(t, bob, "complete_task", map[string]any{"session_id": sess.ID, "outcome": "success", "result": "x"}),
		`belongs to actor "alice"`)
	ok(t, alice, "complete_task", map[string]any{"session_id": sess.ID, "outcome": "success", "result": "shipped"}, nil)
	mustContain(t, "recording after the end", fails(t, alice, "record", map[string]any{"session_id": sess.ID, "entries": []map[string]any{{"kind": "note"}}}),
		"this session has ended: start a new one")
}

// TestStdioGivesTheSameAnswers drives the same calls through ServeStdio
// (httpLedger, over the /v1 API) and in process (serviceLedger), and
// compares what the agent reads.
func TestStdioGivesTheSameAnswers(t *testing.T) {
	w := newWorld(t)
	stdio, local := w.overStdio(t, w.alice), w.inProcess(t, w.alice)

	for _, command := range []string{"rm -rf /", "ls -la", "curl -d x https://example.com", "sudo systemctl restart nginx", "echo $(", ""} {
		args := map[string]any{"command": command}
		a, aErr := call(t, stdio, "classify_command", args)
		b, bErr := call(t, local, "classify_command", args)
		if a != b || aErr != bErr {
			t.Errorf("classify_command %q:\nstdio:      %s\nin process: %s", command, a, b)
		}
	}

	// One session each, the same calls: the same answers but for ids and times.
	var ended [2]session
	for i, cs := range []*sdk.ClientSession{stdio, local} {
		var sess session
		ok(t, cs, "start_session", map[string]any{"harness": "test", "harness_session_id": []string{"via-stdio", "in-process"}[i], "pull": "#7"}, &sess)
		var rec appended
		ok(t, cs, "record", map[string]any{"session_id": sess.ID, "entries": []map[string]any{
			{"kind": "prompt", "text": "Make it faster"},
			{"kind": "message", "role": "assistant", "text": "I ran out of context window."},
		}}, &rec)
		if rec != (appended{Recorded: 2, LastSeq: 2}) {
			t.Errorf("record %d answered %+v", i, rec)
		}
		ok(t, cs, "complete_task", map[string]any{"session_id": sess.ID, "outcome": "partial", "result": "half of it"}, &ended[i])
		ended[i].ID = ""
	}
	if ended[0] != ended[1] {
		t.Errorf("complete_task answered differently:\nstdio:      %+v\nin process: %+v", ended[0], ended[1])
	}
	if ended[0].Blocker != "context_exhausted" || ended[0].Title != "Make it faster" || ended[0].MessageCount != 2 || ended[0].Pull != "7" {
		t.Errorf("ended %+v, want blocker context_exhausted, titled by the prompt, 2 messages, pull 7", ended[0])
	}

	// Errors read the same too.
	var done session
	ok(t, local, "start_session", map[string]any{"harness": "test", "harness_session_id": "done"}, &done)
	ok(t, local, "complete_task", map[string]any{"session_id": done.ID, "outcome": "success", "result": "ok"}, nil)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"record", map[string]any{"session_id": done.ID, "entries": []map[string]any{{"kind": "note", "text": "late"}}}},
		{"get_session", map[string]any{"session_id": "nope"}},
		{"get_session", map[string]any{"session_id": done.ID, "after_seq": -1}},
		{"complete_task", map[string]any{"session_id": done.ID, "outcome": "great", "result": "x"}},
		{"plan", map[string]any{"session_id": done.ID, "step": 1, "status": "done"}},
		{"list_sessions", map[string]any{"limit": 500}},
		{"list_sessions", map[string]any{"project": "other"}},
		{"claim", map[string]any{"session_id": done.ID}},
	} {
		a := fails(t, stdio, c.tool, c.args)
		b := fails(t, local, c.tool, c.args)
		if a != b {
			t.Errorf("%s(%v) failed differently:\nstdio:      %s\nin process: %s", c.tool, c.args, a, b)
		}
	}
}

func TestStdioCannotReachServer(t *testing.T) {
	w := newWorld(t)
	w.url = "http://127.0.0.1:1" // nothing listens there
	text := fails(t, w.overStdio(t, w.alice), "classify_command", map[string]any{"command": "ls"})
	mustContain(t, "an unreachable server", text, "cannot reach the logbook server at http://127.0.0.1:1")
}

// brokenLedger panics on every call: its Ledger is nil.
type brokenLedger struct{ ledger.Ledger }

func TestPanicIsAToolError(t *testing.T) {
	cs := connect(t, newServer(func(*sdk.CallToolRequest) (ledger.Ledger, error) { return brokenLedger{}, nil }, true, quiet))
	for range 2 { // and the server still answers
		if got := fails(t, cs, "classify_command", map[string]any{"command": "ls"}); got != errInternal.Error() {
			t.Errorf("a panicking call answered %q, want %q", got, errInternal)
		}
	}
}
