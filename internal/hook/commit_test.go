package hook

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
)

// TestWhyFindsEveryCommitOfAHookSession: a session recorded by the hooks
// that commits twice is found by `why` for its first commit too (not only
// for its last head commit), by the full sha and by a short one; a summary
// line naming a commit that is no longer HEAD is stored as printed and
// still found by its full sha.
func TestWhyFindsEveryCommitOfAHookSession(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed to make the commits: %v", err)
	}
	srv := newTestServer(t)
	cfg := srv.config(t)
	repo := filepath.Join(t.TempDir(), "demo")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "-b", "main")

	// commit makes a commit the way an agent's Bash tool does and reports
	// its PostToolUse with git's own output; it returns the full sha.
	n := 0
	commit := func(message string) string {
		t.Helper()
		n++
		if err := os.WriteFile(filepath.Join(repo, "f.txt"), []byte(message), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", ".")
		command := "git commit -m '" + message + "'"
		out := git("commit", "-m", message)
		if !strings.Contains(out, "] "+message) {
			t.Fatalf("git commit printed no summary line: %q", out)
		}
		runClaude(t, cfg, payload(t, map[string]any{
			"session_id": "commits-1", "cwd": repo, "hook_event_name": "PostToolUse", "tool_name": "Bash",
			"tool_use_id":   "toolu_commit_" + string(rune('0'+n)),
			"tool_input":    map[string]any{"command": command},
			"tool_response": map[string]any{"stdout": out, "stderr": "", "interrupted": false},
		}))
		return strings.TrimSpace(git("rev-parse", "HEAD"))
	}
	runClaude(t, cfg, payload(t, map[string]any{"session_id": "commits-1", "cwd": repo, "hook_event_name": "SessionStart", "source": "startup"}))
	first := commit("first change")
	second := commit("second change")

	// A commit reported by a line that names a commit HEAD has moved past
	// (a command that committed twice and printed both) is kept as printed.
	if err := os.WriteFile(filepath.Join(repo, "g.txt"), []byte("g"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-q", "-m", "made by hand")
	unreported := strings.TrimSpace(git("rev-parse", "HEAD"))
	third := commit("third change")
	late := unreported[:9]
	runClaude(t, cfg, payload(t, map[string]any{
		"session_id": "commits-1", "cwd": repo, "hook_event_name": "PostToolUse", "tool_name": "Bash",
		"tool_use_id":   "toolu_late",
		"tool_input":    map[string]any{"command": "git commit --amend --no-edit"},
		"tool_response": map[string]any{"stdout": "[main " + late + "] made by hand\n 1 file changed", "stderr": ""},
	}))
	// Output that only looks like a summary, of a command that is not a
	// commit, carries no commit.
	runClaude(t, cfg, payload(t, map[string]any{
		"session_id": "commits-1", "cwd": repo, "hook_event_name": "PostToolUse", "tool_name": "Bash",
		"tool_use_id":   "toolu_cat",
		"tool_input":    map[string]any{"command": "cat notes.txt"},
		"tool_response": map[string]any{"stdout": "[main 0123456789] not a commit", "stderr": ""},
	}))
	runClaude(t, cfg, payload(t, map[string]any{"session_id": "commits-1", "cwd": repo, "hook_event_name": "SessionEnd", "reason": "other"}))

	v := srv.session("commits-1")
	if v.Session.HeadCommit != third {
		t.Fatalf("head_commit %q, want the last commit %s", v.Session.HeadCommit, third)
	}
	var commits []string
	for _, e := range entriesOf(v, logbook.KindToolResult) {
		if e.Commit != "" {
			commits = append(commits, e.Commit)
		}
	}
	if want := []string{first, second, third, late}; strings.Join(commits, " ") != strings.Join(want, " ") {
		t.Errorf("tool results carry commits %q, want %q (full shas of HEAD, the late one as printed)", commits, want)
	}

	why := func(sha string) []string {
		t.Helper()
		var answer struct {
			Sessions []logbook.Session `json:"sessions"`
		}
		srv.call("GET", "/v1/commits/"+url.PathEscape(sha)+"/sessions?project="+testProject, srv.token, nil, &answer)
		var ids []string
		for _, s := range answer.Sessions {
			ids = append(ids, s.HarnessSessionID)
		}
		return ids
	}
	for name, sha := range map[string]string{
		"first, full": first, "first, short": first[:7], "second, full": second, "second, short": second[:8],
		"a commit only a late line printed, full": unreported,
	} {
		if got := why(sha); len(got) != 1 || got[0] != "commits-1" {
			t.Errorf("why %s (%s) found %q, want the session", name, sha, got)
		}
	}
	if got := why("0123456789"); len(got) != 0 {
		t.Errorf("why of a sha only a non-commit command printed found %q", got)
	}
}
