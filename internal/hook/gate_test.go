package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
)

// fixturePayload reads a Claude Code hook payload of the fixtures and sets
// fields on it (tool_input replaced whole).
func fixturePayload(t *testing.T, name string, fields map[string]any) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixturesDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	for k, v := range fields {
		p[k] = v
	}
	return payload(t, p)
}

// gateRepo is a git work tree named demo (the project's name) for the
// claims gate's tests, with a link to it from outside and a link inside it
// to internal/auth.
type gateRepo struct {
	root string // the work tree, its links resolved
	link string // a symbolic link to the work tree
}

func newGateRepo(t *testing.T) gateRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "demo")
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	root, _ = filepath.EvalSymlinks(root)
	must(t, os.MkdirAll(filepath.Join(root, "internal", "auth"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "internal", "auth", "login.go"), []byte("package auth\n"), 0o644))
	must(t, os.Symlink(filepath.Join(root, "internal", "auth"), filepath.Join(root, "authlink")))
	link := filepath.Join(dir, "elsewhere")
	must(t, os.Symlink(root, link))
	return gateRepo{root: root, link: link}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestClaimsGate: a write to a file under another live session's claim is
// denied by the PreToolUse hook, naming the holder, its goal and the
// claim's expiry, whichever tool writes it and however the path is
// spelled; the session's own claims, its parent's and unclaimed files
// pass; without the server's answer nothing is denied.
func TestClaimsGate(t *testing.T) {
	srv := newTestServer(t)
	repo := newGateRepo(t)

	// Bob's session holds internal/auth/.
	var bobTok struct {
		Token string `json:"token"`
	}
	srv.call("POST", "/v1/tokens", testAdminToken, map[string]string{"project": testProject, "actor": "bob"}, &bobTok)
	var bob logbook.Session
	srv.call("POST", "/v1/sessions", bobTok.Token, map[string]any{"project": testProject, "harness": "codex",
		"harness_session_id": "bob-1", "goal": "Rework login"}, &bob)
	var held logbook.Claim
	srv.call("POST", "/v1/claims", bobTok.Token, map[string]any{"session_id": bob.ID, "subject": "internal/auth/"}, &held)

	cfg := srv.config(t)
	cfg.Project = "" // the repository's folder names the project: demo
	// This session's own claim on mine.go.
	runClaude(t, cfg, fixturePayload(t, "SessionStart.json", map[string]any{"session_id": "s1", "cwd": repo.root}))
	mine := srv.session("s1").Session.ID
	srv.call("POST", "/v1/claims", srv.token, map[string]any{"session_id": mine, "subject": "mine.go"}, nil)

	call := func(fixture, cwd, tool string, input map[string]any) map[string]any {
		return map[string]any{"session_id": "s1", "cwd": cwd, "tool_name": tool, "tool_input": input,
			"tool_use_id": "toolu_" + strings.ReplaceAll(tool+filepath.Base(cwd)+jsonText(t, input), " ", "_")}
	}
	edit := func(cwd, path string) []byte {
		return fixturePayload(t, "PreToolUse.Edit.json", call("", cwd, "Edit", map[string]any{"file_path": path, "old_string": "a", "new_string": "b"}))
	}
	write := func(cwd, path string) []byte {
		return fixturePayload(t, "PreToolUse.Write.json", call("", cwd, "Write", map[string]any{"file_path": path, "content": "x"}))
	}
	bash := func(cwd, command string) []byte {
		return fixturePayload(t, "PreToolUse.Bash.json", call("", cwd, "Bash", map[string]any{"command": command}))
	}
	denied := []struct {
		what    string
		payload []byte
	}{
		{"Edit, absolute path", edit(repo.root, filepath.Join(repo.root, "internal/auth/login.go"))},
		{"Write, relative path", write(repo.root, "internal/auth/new.go")},
		{"Write, ./ and .. from a subfolder", write(filepath.Join(repo.root, "internal"), "./auth/../auth/new.go")},
		{"Edit through a link to the repository", edit(repo.link, filepath.Join(repo.link, "internal/auth/login.go"))},
		{"Edit through a link inside it, of a file not there yet", edit(repo.root, "authlink/later.go")},
		{"MultiEdit", fixturePayload(t, "PreToolUse.Edit.json", call("", repo.root, "MultiEdit",
			map[string]any{"file_path": "internal/auth/login.go", "edits": []any{}}))},
		{"NotebookEdit", fixturePayload(t, "PreToolUse.NotebookEdit.json", call("", repo.root, "NotebookEdit",
			map[string]any{"notebook_path": "internal/auth/nb.ipynb", "new_source": "x"}))},
		{"Bash redirection after cd", bash(repo.root, "cd internal && echo x >> auth/login.go")},
		{"Bash rm", bash(repo.root, "rm -f internal/auth/login.go")},
		{"Bash sed -i", bash(filepath.Join(repo.root, "internal"), "sed -i s/a/b/ auth/login.go")},
		{"Bash mv away", bash(repo.root, "mv internal/auth/login.go /tmp/")},
	}
	for _, tc := range denied {
		stdout, stderr := runClaude(t, cfg, tc.payload)
		a := answerOf(t, stdout)
		if a.PermissionDecision != "deny" {
			t.Errorf("%s: answer %+v (stderr %q), want deny", tc.what, a, stderr)
			continue
		}
		for _, want := range []string{"internal/auth/", bob.ID, "actor bob", `"Rework login"`, held.ExpiresAt.UTC().Format("2006-01-02T15:04")} {
			if !strings.Contains(a.PermissionDecisionReason, want) {
				t.Errorf("%s: the reason %q does not say %q", tc.what, a.PermissionDecisionReason, want)
			}
		}
	}

	passed := []struct {
		what    string
		payload []byte
	}{
		{"Edit of a free file", edit(repo.root, "free.go")},
		{"Edit of the session's own claim", edit(repo.root, filepath.Join(repo.root, "mine.go"))},
		{"Bash that writes nothing", bash(repo.root, "go vet ./internal/auth/")},
		{"Bash writing a free file", bash(repo.root, "echo x > notes.md")},
		{"Edit outside the repository", edit(repo.root, "/tmp/test-edit-target.json")},
		// A subagent works for its parent: the parent's claim passes.
		{"a subagent's Edit of its parent's claim", func() []byte {
			p := call("", repo.root, "Edit", map[string]any{"file_path": "mine.go", "old_string": "a", "new_string": "b"})
			p["agent_id"], p["agent_type"] = "a1", "general-purpose"
			return fixturePayload(t, "PreToolUse.Edit.json", p)
		}()},
	}
	for _, tc := range passed {
		if stdout, stderr := runClaude(t, cfg, tc.payload); stdout != "" || stderr != "" {
			t.Errorf("%s: answer %q (stderr %q), want none", tc.what, stdout, stderr)
		}
	}
	// A deny from the classifier stays a deny; the gate adds nothing.
	if d, reason := decisionOf(t, first(runClaude(t, cfg, bash(repo.root, "rm -rf internal")))); d != "deny" || strings.Contains(reason, "Rework login") {
		t.Errorf("rm -rf internal: %s %q, want the classifier's deny", d, reason)
	}

	// Codex: a patch's files, and the deny in Codex's form. Codex (0.123
	// and later) passes apply_patch to PreToolUse hooks with the raw patch
	// as tool_input.command; a shell may pipe one into apply_patch too.
	patch := "*** Begin Patch\n*** Update File: internal/auth/login.go\n@@\n-package auth\n+package auth // x\n*** End Patch"
	for _, call := range []struct{ tool, command string }{
		{"apply_patch", patch},
		{"Bash", "apply_patch <<'EOF'\n" + patch + "\nEOF"},
	} {
		tool := call.tool
		raw := payload(t, map[string]any{"session_id": "codex-1", "turn_id": "t1", "hook_event_name": EventPreToolUse,
			"cwd": repo.root, "tool_name": tool, "tool_use_id": "call_" + tool, "tool_input": map[string]any{"command": call.command}})
		var out, errOut bytes.Buffer
		New(cfg, &errOut).CodexHook(context.Background(), bytes.NewReader(raw), &out)
		if d, reason := decisionOf(t, out.String()); d != "deny" || !strings.Contains(reason, bob.ID) {
			t.Errorf("Codex %s of a held file: %s %q (stderr %q)", tool, d, reason, errOut.String())
		}
	}

	// The project's policy may ask instead; Codex, which cannot ask, is
	// refused saying a person must approve.
	srv.call("PUT", "/v1/projects/demo/policy", testAdminToken, map[string]any{"claims": map[string]any{"guard": "ask"}}, nil)
	if d, reason := decisionOf(t, first(runClaude(t, cfg, edit(repo.root, "internal/auth/login.go")))); d != "ask" || !strings.Contains(reason, "approve only if") {
		t.Errorf("guard ask: %s %q", d, reason)
	}

	// Turned off for this hook (--guard-claims=false): no answer.
	cfg.IgnoreClaims = true
	if stdout, _ := runClaude(t, cfg, edit(repo.root, "internal/auth/login.go")); stdout != "" {
		t.Errorf("with the gate off: answer %q, want none", stdout)
	}
	cfg.IgnoreClaims = false

	// With the server down the gate says why on stderr and denies nothing.
	srv.stop()
	stdout, stderr := runClaude(t, cfg, edit(repo.root, "internal/auth/login.go"))
	if stdout != "" || !strings.Contains(stderr, "claims guard skipped") {
		t.Errorf("server down: stdout %q stderr %q; want no answer and a note", stdout, stderr)
	}
}

// TestAutoClaimsThroughHooks: with the project's auto claims on, the first
// session to write a file claims it, and a second session's write of it
// is denied naming the first.
func TestAutoClaimsThroughHooks(t *testing.T) {
	srv := newTestServer(t)
	repo := newGateRepo(t)
	srv.call("PUT", "/v1/projects/demo/policy", testAdminToken, map[string]any{"claims": map[string]any{"auto": true}}, nil)
	cfg := srv.config(t)
	cfg.Project = ""
	write := func(session, path string) (string, string) {
		return runClaude(t, cfg, fixturePayload(t, "PreToolUse.Write.json", map[string]any{"session_id": session, "cwd": repo.root,
			"tool_use_id": "toolu_" + session + path, "tool_input": map[string]any{"file_path": path, "content": "x"}}))
	}
	if stdout, stderr := write("first", "internal/auth/login.go"); stdout != "" || stderr != "" {
		t.Fatalf("the first write: %q %q, want no answer", stdout, stderr)
	}
	first := srv.session("first").Session
	var claims struct {
		Claims []logbook.Claim `json:"claims"`
	}
	srv.call("GET", "/v1/claims?project=demo", srv.token, nil, &claims)
	if len(claims.Claims) != 1 || claims.Claims[0].SessionID != first.ID || claims.Claims[0].Subject != "internal/auth/login.go" {
		t.Fatalf("claims after the first write: %+v", claims.Claims)
	}
	stdout, _ := write("second", filepath.Join(repo.link, "internal/auth/login.go"))
	if d, reason := decisionOf(t, stdout); d != "deny" || !strings.Contains(reason, first.ID) {
		t.Errorf("the second session's write: %s %q, want a deny naming %s", d, reason, first.ID)
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func first(a, _ string) string { return a }
