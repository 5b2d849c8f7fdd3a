package hook

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
)

// TestGitGuard installs the git guard into a real repository and commits
// through it: a commit of a file another live session claimed is refused,
// naming the holder and how to override; the override, the holder's own
// commit and a commit of free files go through; the pre-commit hook that
// was there before still runs; installing again changes nothing and
// uninstalling puts the old hook back.
func TestGitGuard(t *testing.T) {
	srv := newTestServer(t)
	repo := newGateRepo(t)
	logbookBinary := hookBinaries(t)["logbook"][0]
	git := func(env []string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=Dev", "-c", "user.email=dev@example.com"}, args...)...)
		cmd.Dir = repo.root
		cmd.Env = append(os.Environ(), "LOGBOOK_URL="+srv.url(), "LOGBOOK_TOKEN="+srv.token, "LOGBOOK_SPOOL_DIR="+t.TempDir(),
			"LOGBOOK_PROJECT=", "LOGBOOK_SESSION_ID=", "LOGBOOK_HARNESS_SESSION_ID=", "LOGBOOK_ALLOW_CLAIMED=", "CODEX_THREAD_ID=")
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	mustGit := func(args ...string) {
		t.Helper()
		if out, err := git(nil, args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}

	// Someone's own pre-commit hook, which must keep running.
	hooksDir, err := GitHooksDir(context.Background(), repo.root)
	must(t, err)
	ran := filepath.Join(t.TempDir(), "ran")
	must(t, os.MkdirAll(hooksDir, 0o755))
	theirs := "#!/bin/sh\necho ran >> '" + ran + "'\n"
	must(t, os.WriteFile(filepath.Join(hooksDir, "pre-commit"), []byte(theirs), 0o755))
	if changed, err := InstallGit(hooksDir, logbookBinary); err != nil || !changed {
		t.Fatalf("install: %v %v", changed, err)
	}
	if changed, err := InstallGit(hooksDir, logbookBinary); err != nil || changed {
		t.Fatalf("installing again: changed %v, %v; want nothing to do", changed, err)
	}
	if kept, err := os.ReadFile(filepath.Join(hooksDir, "pre-commit.before-logbook")); err != nil || string(kept) != theirs {
		t.Fatalf("the existing hook was not kept: %q %v", kept, err)
	}

	// Bob's session holds internal/auth/; alice's hook session holds mine.go.
	var bobTok struct {
		Token string `json:"token"`
	}
	srv.call("POST", "/v1/tokens", testAdminToken, map[string]string{"project": testProject, "actor": "bob"}, &bobTok)
	var bob logbook.Session
	srv.call("POST", "/v1/sessions", bobTok.Token, map[string]any{"project": testProject, "harness": "codex",
		"harness_session_id": "bob-1", "goal": "Rework login"}, &bob)
	srv.call("POST", "/v1/claims", bobTok.Token, map[string]any{"session_id": bob.ID, "subject": "internal/auth/"}, nil)
	var mine logbook.Session
	srv.call("POST", "/v1/sessions", srv.token, map[string]any{"project": testProject, "harness": HarnessClaude,
		"harness_session_id": "claude-1"}, &mine)
	srv.call("POST", "/v1/claims", srv.token, map[string]any{"session_id": mine.ID, "subject": "mine.go"}, nil)

	mustGit("add", "internal/auth/login.go")
	out, err := git(nil, "commit", "-m", "touch auth")
	if err == nil {
		t.Fatalf("a commit of a claimed file went through:\n%s", out)
	}
	for _, want := range []string{"internal/auth/login.go", bob.ID, "bob", `"Rework login"`, "through its claim on internal/auth/",
		"LOGBOOK_ALLOW_CLAIMED=1 git commit", "--no-verify"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	if got, _ := os.ReadFile(ran); string(got) != "ran\n" {
		t.Errorf("the chained hook ran %q times, want once", got)
	}
	// The override lets it through.
	if out, err := git([]string{"LOGBOOK_ALLOW_CLAIMED=1"}, "commit", "-m", "touch auth anyway"); err != nil {
		t.Fatalf("the override did not let the commit through: %v\n%s", err, out)
	}

	// A commit of alice's own claimed file: refused for a person, let
	// through for her session, named as the Claude Code hook names it.
	must(t, os.WriteFile(filepath.Join(repo.root, "mine.go"), []byte("package x\n"), 0o644))
	mustGit("add", "mine.go")
	if out, err := git(nil, "commit", "-m", "mine"); err == nil {
		t.Fatalf("a person's commit of a session's claimed file went through:\n%s", out)
	}
	// A session id the server does not know commits as a person would.
	if out, err := git([]string{"LOGBOOK_SESSION_ID=no-such-session"}, "commit", "-m", "mine"); err == nil || !strings.Contains(out, "knows no session") {
		t.Errorf("a commit under an unknown session id: %v\n%s; want it refused, saying so", err, out)
	}
	if out, err := git([]string{"LOGBOOK_HARNESS_SESSION_ID=claude-1"}, "commit", "-m", "mine"); err != nil {
		t.Fatalf("the holder's own commit was refused: %v\n%s", err, out)
	}
	// A Codex session's commit names itself by Codex's own variable.
	const thread = "019dba93-8214-7d50-a089-9690b4ce6b9e"
	var codex logbook.Session
	srv.call("POST", "/v1/sessions", srv.token, map[string]any{"project": testProject, "harness": HarnessCodex,
		"harness_session_id": thread}, &codex)
	srv.call("POST", "/v1/claims", srv.token, map[string]any{"session_id": codex.ID, "subject": "codex.go"}, nil)
	must(t, os.WriteFile(filepath.Join(repo.root, "codex.go"), []byte("package x\n"), 0o644))
	mustGit("add", "codex.go")
	if out, err := git([]string{"CODEX_THREAD_ID=019dba93-0000-7000-8000-000000000000"}, "commit", "-m", "codex"); err == nil {
		t.Fatalf("another Codex thread's commit of a claimed file went through:\n%s", out)
	}
	if out, err := git([]string{"CODEX_THREAD_ID=" + thread}, "commit", "-m", "codex"); err != nil {
		t.Fatalf("the Codex session's own commit was refused: %v\n%s", err, out)
	}

	// A free file goes through.
	must(t, os.WriteFile(filepath.Join(repo.root, "free.go"), []byte("package x\n"), 0o644))
	mustGit("add", "free.go")
	if out, err := git(nil, "commit", "-m", "free"); err != nil {
		t.Fatalf("a commit of a free file was refused: %v\n%s", err, out)
	}

	// With the server down the commit goes ahead, saying so.
	srv.stop()
	must(t, os.WriteFile(filepath.Join(repo.root, "internal", "auth", "login.go"), []byte("package auth // 2\n"), 0o644))
	mustGit("add", "internal/auth/login.go")
	if out, err := git(nil, "commit", "-m", "server down"); err != nil || !strings.Contains(out, "git guard skipped") {
		t.Errorf("server down: %v\n%s; want the commit made, saying the guard was skipped", err, out)
	}

	if changed, err := UninstallGit(hooksDir); err != nil || !changed {
		t.Fatalf("uninstall: %v %v", changed, err)
	}
	if back, err := os.ReadFile(filepath.Join(hooksDir, "pre-commit")); err != nil || string(back) != theirs {
		t.Errorf("after uninstall the pre-commit hook is %q (%v), want theirs back", back, err)
	}
}

// TestSessionStartExportsTheSession: the Claude Code SessionStart hook
// names the session in CLAUDE_ENV_FILE, which Claude Code sources before
// the session's shell commands, so the git guard knows who commits.
func TestSessionStartExportsTheSession(t *testing.T) {
	srv := newTestServer(t)
	cfg := srv.config(t)
	cfg.EnvFile = filepath.Join(t.TempDir(), "env.sh")
	runClaude(t, cfg, fixturePayload(t, "SessionStart.json", map[string]any{"session_id": "it's-1"}))
	out, err := exec.Command("sh", "-c", ". '"+cfg.EnvFile+"' && printf '%s %s' \"$LOGBOOK_HARNESS\" \"$LOGBOOK_HARNESS_SESSION_ID\"").CombinedOutput()
	if err != nil || string(out) != "claude-code it's-1" {
		t.Errorf("sourcing CLAUDE_ENV_FILE: %q %v", out, err)
	}
}
