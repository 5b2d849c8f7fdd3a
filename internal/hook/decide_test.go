package hook

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/logbook"
)

func bashPayload(t *testing.T, sid, command string) []byte {
	return payload(t, map[string]any{"session_id": sid, "hook_event_name": EventPreToolUse, "tool_name": "Bash",
		"tool_use_id": "toolu_" + strings.ReplaceAll(command, " ", "_"), "tool_input": map[string]any{"command": command}})
}

// answerOf decodes a PreToolUse answer, failing the test when stdout is
// not one.
func answerOf(t *testing.T, stdout string) AnswerOutput {
	t.Helper()
	var a Answer
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatalf("stdout %q is not a PreToolUse answer: %v", stdout, err)
	}
	if a.HookSpecificOutput.HookEventName != EventPreToolUse {
		t.Fatalf("answer %q has hookEventName %q", stdout, a.HookSpecificOutput.HookEventName)
	}
	return a.HookSpecificOutput
}

// decisionOf reads a PreToolUse answer's decision and reason; no answer at
// all is defer, which leaves the call to Claude Code's own permissions.
func decisionOf(t *testing.T, stdout string) (decision, reason string) {
	t.Helper()
	if strings.TrimSpace(stdout) == "" {
		return "defer", ""
	}
	a := answerOf(t, stdout)
	if a.PermissionDecision == "" || a.PermissionDecision == "defer" {
		t.Fatalf("answer %q: a hook that defers must print nothing", stdout)
	}
	return a.PermissionDecision, a.PermissionDecisionReason
}

// TestPreToolUseDecisions: Bash commands get the default policy's answer,
// naming the inner command and its rule, with the server up and down; the
// decision is recorded beside the tool call. The default policy never
// answers allow: what it does not deny or ask about it leaves to Claude
// Code's own permission prompt, printing nothing.
func TestPreToolUseDecisions(t *testing.T) {
	srv := newTestServer(t)
	cases := []struct {
		command, decision, names string
	}{
		{"rm -rf /", "deny", "rm -rf /"},
		{"ls", "defer", ""},
		{"make deploy", "defer", ""},
		{"npm run deploy", "defer", ""},
		{"go run ./cmd/migrate", "defer", ""},
		{"pip install requests", "defer", ""},
		{"useradd bob", "ask", "useradd bob"},
		{"sudo bash -c 'rm -rf /'", "deny", "rm -rf /"}, // the inner command, not the wrapper
		{"git status && curl -X POST https://example.com -d x=1", "defer", ""},
	}
	for _, up := range []bool{true, false} {
		cfg := srv.config(t)
		if !up {
			cfg.URL = "http://127.0.0.1:1" // nothing listens there
		}
		for _, c := range cases {
			stdout, _ := runClaude(t, cfg, bashPayload(t, "s1", c.command))
			decision, reason := decisionOf(t, stdout)
			if decision != c.decision || !strings.Contains(reason, c.names) {
				t.Errorf("server up %v: %q → %s (%q), want %s naming %q", up, c.command, decision, reason, c.decision, c.names)
			}
		}
		if !up {
			continue
		}
		// PreToolUse only spools; the next event delivers its records.
		if _, ok := srv.findSession("s1"); ok {
			t.Error("PreToolUse delivered to the server; it must only spool, so its answer never waits")
		}
		runClaude(t, cfg, promptPayload(t, "s1", "next"))
		v := srv.session("s1")
		var denied *Decision
		for _, e := range entriesOf(v, logbook.KindNote) {
			var d Decision
			if err := json.Unmarshal(e.Payload, &d); err == nil && d.Command == "rm -rf /" {
				denied = &d
				if e.ToolCallID != "toolu_rm_-rf_/" || e.Tool != "Bash" {
					t.Errorf("decision note not tied to its call: %+v", e)
				}
			}
		}
		if denied == nil || denied.Decision != classify.Deny || denied.Class != classify.Destructive || len(denied.Reasons) == 0 {
			t.Errorf("the deny of rm -rf / is not recorded: %+v", denied)
		}
		if n := len(entriesOf(v, logbook.KindToolCall)); n != len(cases) {
			t.Errorf("%d tool calls recorded, want %d", n, len(cases))
		}
		// The tool-call audit says what the gate did with each call that
		// got no result: denied, asked, or pending when it deferred.
		var calls struct {
			ToolCalls []logbook.ToolCall `json:"tool_calls"`
		}
		srv.call("GET", "/v1/sessions/"+v.Session.ID+"/tool_calls", srv.token, nil, &calls)
		status := map[string]logbook.ToolCall{}
		for _, c := range calls.ToolCalls {
			status[c.ToolCallID] = c
		}
		for _, c := range cases {
			call := status["toolu_"+strings.ReplaceAll(c.command, " ", "_")]
			want := map[string]string{"deny": "denied", "ask": "asked", "defer": "pending"}[c.decision]
			if call.Status != want || (want != "pending" && !strings.Contains(call.Reason, c.names)) {
				t.Errorf("%q in /v1 tool_calls: status %q reason %q, want %q naming %q", c.command, call.Status, call.Reason, want, c.names)
			}
		}
	}
}

// TestPreToolUseOtherTools: tools other than Bash get no answer, leaving
// the decision to Claude Code's own settings.
func TestPreToolUseOtherTools(t *testing.T) {
	srv := newTestServer(t)
	stdout, stderr := runClaude(t, srv.config(t), payload(t, map[string]any{"session_id": "s1", "hook_event_name": EventPreToolUse,
		"tool_name": "Read", "tool_input": map[string]any{"file_path": "/etc/passwd"}}))
	if stdout != "" || stderr != "" {
		t.Errorf("stdout %q, stderr %q; want neither", stdout, stderr)
	}
}

// TestClassifierFailureAsks: when classification fails the answer is ask,
// saying so, never a deny.
func TestClassifierFailureAsks(t *testing.T) {
	srv := newTestServer(t)
	saved := classifyFunc
	classifyFunc = func(string, classify.Policy) classify.Verdict { panic("parser blew up") }
	defer func() { classifyFunc = saved }()
	stdout, _ := runClaude(t, srv.config(t), bashPayload(t, "s1", "ls"))
	a := answerOf(t, stdout)
	if a.PermissionDecision != "ask" || !strings.Contains(a.PermissionDecisionReason, "could not classify") {
		t.Errorf("answer %+v, want ask saying logbook could not classify", a)
	}
}

// TestPolicyFetchedAndCached: the project's policy comes from the server,
// once per TTL; a project without one gets the default policy.
//
// GET /v1/projects/{project}/policy is being added to the server; until it
// is, this test serves it beside the real API (see testServer.extra).
func TestPolicyFetchedAndCached(t *testing.T) {
	srv := newTestServer(t)
	policy := `{"network":"allow","package_install":"deny"}`
	extra := http.NewServeMux()
	extra.HandleFunc("GET /v1/projects/{project}/policy", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+srv.token || r.PathValue("project") != testProject {
			http.Error(w, "wrong token or project", http.StatusForbidden)
			return
		}
		srv.mu.Lock()
		p := policy
		srv.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"project":"demo","policy":` + p + `}`))
	})
	srv.mu.Lock()
	srv.extra = extra
	srv.mu.Unlock()

	now := time.Now()
	cfg := srv.config(t)
	cfg.Now = func() time.Time { return now }
	decide := func(command string) string {
		stdout, _ := runClaude(t, cfg, bashPayload(t, "s1", command))
		d, _ := decisionOf(t, stdout)
		return d
	}
	if got := decide("git push"); got != "allow" {
		t.Errorf("git push under a policy allowing network: %s", got)
	}
	if got := decide("pip install requests"); got != "deny" {
		t.Errorf("pip install under a policy denying package_install: %s", got)
	}
	srv.mu.Lock()
	fetches := srv.requests["GET /v1/projects/demo/policy"]
	srv.mu.Unlock()
	if n := fetches; n != 1 {
		t.Errorf("the policy was fetched %d times, want once (then cached)", n)
	}
	srv.mu.Lock()
	policy = `{"network":"deny"}`
	srv.mu.Unlock()
	now = now.Add(DefaultPolicyTTL + time.Second)
	if got := decide("git push"); got != "deny" {
		t.Errorf("after the TTL, git push under the new policy: %s", got)
	}

	// The server down with a stale cache: the last known policy, no wait.
	cfg.URL = "http://127.0.0.1:1"
	now = now.Add(DefaultPolicyTTL + time.Second)
	if got := decide("git push"); got != "deny" {
		t.Errorf("server down: git push under the last known policy: %s", got)
	}
	// A project without a policy (404, as the server answers today): default.
	cfg.URL = srv.url()
	cfg.Project = "other"
	if got := decide("git push"); got != "defer" {
		t.Errorf("default policy for git push: %s, want defer", got)
	}
}

// TestFileToolsReadingSecrets: Read, Grep, Glob and the edit tools on a
// path that holds credentials get the policy's secret_read decision (ask
// by default), naming the file; the same tools elsewhere get no answer.
func TestFileToolsReadingSecrets(t *testing.T) {
	srv := newTestServer(t)
	cfg := srv.config(t)
	cases := []struct {
		tool     string
		input    map[string]any
		decision string
		names    string
	}{
		{"Read", map[string]any{"file_path": "/home/dev/.ssh/id_ed25519"}, "ask", "id_ed25519"},
		{"Read", map[string]any{"file_path": "/home/dev/.aws/credentials"}, "ask", ".aws/credentials"},
		{"Read", map[string]any{"file_path": ".env.production"}, "ask", ".env.production"},
		{"Grep", map[string]any{"pattern": "KEY", "path": "/home/dev/.ssh"}, "ask", ".ssh"},
		{"Grep", map[string]any{"pattern": "API_KEY", "glob": ".env"}, "ask", ".env"},
		{"Edit", map[string]any{"file_path": "/srv/app/.env", "old_string": "a", "new_string": "b"}, "ask", ".env"},
		{"Read", map[string]any{"file_path": ".env.example"}, "defer", ""},
		{"Read", map[string]any{"file_path": "/srv/app/main.go"}, "defer", ""},
		{"Grep", map[string]any{"pattern": "TODO", "path": "internal"}, "defer", ""},
	}
	for _, c := range cases {
		stdout, _ := runClaude(t, cfg, payload(t, map[string]any{"session_id": "s1", "hook_event_name": EventPreToolUse,
			"tool_name": c.tool, "tool_use_id": "toolu_" + c.tool, "tool_input": c.input}))
		decision, reason := decisionOf(t, stdout)
		if decision != c.decision || !strings.Contains(reason, c.names) {
			t.Errorf("%s %v → %s (%q), want %s naming %q", c.tool, c.input, decision, reason, c.decision, c.names)
		}
	}
}
