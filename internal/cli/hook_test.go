package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/cli"
)

// runHook runs `logbook hook args...` with stdin and environment vars.
func runHook(t *testing.T, stdin string, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut,
		Getenv: func(k string) string { return vars[k] }}
	code = cli.Hook(context.Background(), e, args)
	return code, out.String(), errOut.String()
}

// TestHookClaudeCLI: the hook answers a PreToolUse with exit 0 and the
// JSON answer, with the server unreachable, and exits 0 even when its own
// command line is wrong (exit 2 would block the agent).
func TestHookClaudeCLI(t *testing.T) {
	vars := map[string]string{"LOGBOOK_URL": "http://127.0.0.1:1", "LOGBOOK_SPOOL_DIR": t.TempDir(), "LOGBOOK_PROJECT": "demo"}
	pre := `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"rm -rf /"}}`
	code, stdout, _ := runHook(t, pre, vars, "claude")
	var answer struct {
		Out struct {
			Decision string `json:"permissionDecision"`
			Reason   string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(stdout), &answer); err != nil || code != 0 {
		t.Fatalf("exit %d, stdout %q (%v)", code, stdout, err)
	}
	if answer.Out.Decision != "deny" || !strings.Contains(answer.Out.Reason, "rm -rf /") {
		t.Errorf("answer %+v", answer.Out)
	}
	if code, stdout, stderr := runHook(t, pre, vars, "claude", "--no-such-flag"); code != 0 || !strings.Contains(stdout, "deny") || stderr == "" {
		t.Errorf("with a wrong flag: exit %d stdout %q stderr %q; want 0, the answer, and a complaint", code, stdout, stderr)
	}
	if code, stdout, stderr := runHook(t, "garbage", vars, "claude"); code != 0 || stdout != "" || !strings.Contains(stderr, "not a JSON object") {
		t.Errorf("with a broken payload: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	// The two PreToolUse records wait in the spool; flush says so and fails.
	code, stdout, _ = runHook(t, "", vars, "flush", "--timeout", "1s")
	if code != 1 || !strings.Contains(stdout, "2 waiting") {
		t.Errorf("flush with the server down: exit %d, %q", code, stdout)
	}
}

func TestHookInstallCLI(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{"HOME": t.TempDir()}
	code, stdout, stderr := runHook(t, "", vars, "install", "claude", "--dir", dir)
	if code != 0 || !strings.Contains(stdout, "added logbook's hooks") {
		t.Fatalf("install: exit %d, %q %q", code, stdout, stderr)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, ".claude", "settings.json"))
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	if !strings.Contains(string(raw), exe+" hook claude") {
		t.Errorf("settings %s do not run %s", raw, exe)
	}
	if code, stdout, _ := runHook(t, "", vars, "install", "claude", "--dir", dir); code != 0 || !strings.Contains(stdout, "already") {
		t.Errorf("second install: exit %d, %q", code, stdout)
	}
	if code, stdout, _ := runHook(t, "", vars, "uninstall", "claude", "--dir", dir); code != 0 || !strings.Contains(stdout, "removed") {
		t.Errorf("uninstall: exit %d, %q", code, stdout)
	}
	if code, _, _ := runHook(t, "", vars, "install", "claude", "--user"); code != 0 {
		t.Errorf("install --user: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(vars["HOME"], ".claude", "settings.json")); err != nil {
		t.Errorf("install --user wrote no user settings: %v", err)
	}
	for _, args := range [][]string{{}, {"nope"}, {"install"}, {"install", "codex"}} {
		if code, _, _ := runHook(t, "", vars, args...); code != 2 {
			t.Errorf("hook %v: exit %d, want 2", args, code)
		}
	}
	// Without an argument, hook codex is a Codex hook call: it reads the
	// event on stdin and, like every hook call, never exits 2 (which would
	// block the tool), saying on stderr what was wrong.
	if code, stdout, stderr := runHook(t, "", vars, "codex"); code != 0 || stdout != "" || stderr == "" {
		t.Errorf("hook codex with nothing on stdin: exit %d, stdout %q, stderr %q; want 0, nothing, a complaint", code, stdout, stderr)
	}
	if code, stdout, _ := runHook(t, "", vars, "--help"); code != 0 || !strings.Contains(stdout, "logbook hook claude") {
		t.Errorf("--help: exit %d, %q", code, stdout)
	}
	// install and uninstall answer --help with their own help, not a
	// complaint about the missing harness.
	for _, verb := range []string{"install", "uninstall"} {
		code, stdout, stderr := runHook(t, "", vars, verb, "--help")
		if code != 0 || !strings.Contains(stdout, "Usage: logbook hook "+verb+" claude") || !strings.Contains(stdout, "-dir") || strings.Contains(stderr, "say which harness") {
			t.Errorf("hook %s --help: exit %d, stdout %q, stderr %q; want its help", verb, code, stdout, stderr)
		}
	}
}

// TestHookInstallGitCLI: `logbook hook install git` writes the git guard
// into the repository's hooks folder, says so, changes nothing a second
// time, refuses a folder outside any repository, and `uninstall git`
// removes it; `logbook hook git` only knows pre-commit.
func TestHookInstallGitCLI(t *testing.T) {
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	hookFile := filepath.Join(repo, ".git", "hooks", "pre-commit")
	code, stdout, stderr := runHook(t, "", nil, "install", "git", "--dir", repo)
	if code != 0 || !strings.Contains(stdout, "added logbook's pre-commit hook") || !strings.Contains(stdout, "LOGBOOK_ALLOW_CLAIMED=1 git commit") {
		t.Fatalf("install git: exit %d, %q %q", code, stdout, stderr)
	}
	script, err := os.ReadFile(hookFile)
	if err != nil || !strings.Contains(string(script), "hook git pre-commit") {
		t.Fatalf("the pre-commit hook written: %q %v", script, err)
	}
	if info, _ := os.Stat(hookFile); info.Mode()&0o111 == 0 {
		t.Errorf("the pre-commit hook is not executable: %v", info.Mode())
	}
	if code, stdout, _ := runHook(t, "", nil, "install", "git", "--dir", repo); code != 0 || !strings.Contains(stdout, "already") {
		t.Errorf("install git again: exit %d, %q", code, stdout)
	}
	if code, _, stderr := runHook(t, "", nil, "install", "git", "--dir", t.TempDir()); code != 1 || !strings.Contains(stderr, "not in a git repository") {
		t.Errorf("install git outside a repository: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runHook(t, "", nil, "git", "post-commit"); code != 2 || !strings.Contains(stderr, "only git hook is pre-commit") {
		t.Errorf("hook git post-commit: exit %d, %q", code, stderr)
	}
	if code, stdout, _ := runHook(t, "", nil, "uninstall", "git", "--dir", repo); code != 0 || !strings.Contains(stdout, "removed") {
		t.Errorf("uninstall git: exit %d, %q", code, stdout)
	}
	if _, err := os.Stat(hookFile); !os.IsNotExist(err) {
		t.Errorf("the pre-commit hook is still there after uninstall: %v", err)
	}
}
