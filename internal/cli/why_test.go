package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/cli"
	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
)

// gitRepo makes a repository in a temporary folder and returns a function
// that runs git in it.
func gitRepo(t *testing.T) (string, func(args ...string) string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	return dir, run
}

// TestWhy records two sessions, each of which made one commit in a
// repository, and asks why about lines of each.
func TestWhy(t *testing.T) {
	dir, git := gitRepo(t)
	file := filepath.Join(dir, "login.go")

	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "logbook.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := service.New(st, service.Options{})
	alice := service.Caller{Actor: "alice", Project: "demo"}
	record := func(goal, commit string, entries ...logbook.Entry) logbook.Session {
		t.Helper()
		sess, _, err := svc.StartSession(ctx, alice, service.StartParams{Harness: "claude-code", HarnessSessionID: goal,
			Fields: logbook.SessionFields{Goal: &goal, HeadCommit: &commit}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.AppendEntries(ctx, alice, sess.ID, service.Batch{Entries: entries}); err != nil {
			t.Fatal(err)
		}
		return sess
	}

	// Session one writes the file and commits; it ran at that commit.
	if err := os.WriteFile(file, []byte("package login\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "login.go")
	git("commit", "-q", "-m", "Start the login package")
	first := git("rev-parse", "HEAD")
	one := record("Start the login package", first,
		logbook.Entry{Kind: logbook.KindPrompt, Text: "Make a login package"})

	// Session two adds a line; its commit is recorded on the entry that
	// made it (short, as git commit prints it), not as its head commit.
	if err := os.WriteFile(file, []byte("package login\n\nfunc Login() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("commit", "-q", "-am", "Add Login")
	second := git("rev-parse", "HEAD")
	two := record("Add the Login function", first,
		logbook.Entry{Kind: logbook.KindPrompt, Text: "Add a Login function"},
		logbook.Entry{Kind: logbook.KindMessage, Role: "assistant", Text: "An empty function will do.", Payload: json.RawMessage(`{"thinking":true}`)},
		logbook.Entry{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "c1", Payload: json.RawMessage(`{"command":"git commit -am 'Add Login'"}`)},
		logbook.Entry{Kind: logbook.KindToolResult, ToolCallID: "c1", Text: "[main " + second[:7] + "] Add Login", Commit: second[:7]},
		logbook.Entry{Kind: logbook.KindMessage, Role: "assistant", Text: "Done, and more after the commit."},
	)

	server := whyServer(t, svc)
	token, err := svc.CreateToken(ctx, service.Caller{Actor: "admin", Admin: true}, "demo", "alice")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"LOGBOOK_URL": server.URL, "LOGBOOK_TOKEN": token}
	why := func(args ...string) (string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := cli.Why(ctx, env(&stdout, &stderr, vars), args); code != 0 {
			t.Fatalf("why %v: exit %d: %s", args, code, stderr.String())
		}
		return stdout.String(), stderr.String()
	}

	// Line 1 came with the first commit: session one (its head commit);
	// session two also ran at that commit, and is newer, so it comes first.
	out, _ := why(file + ":1")
	if !strings.Contains(out, first[:10]) || !strings.Contains(out, "Start the login package") {
		t.Errorf("why line 1:\n%s", out)
	}
	if i, j := strings.Index(out, two.ID), strings.Index(out, one.ID); i < 0 || j < 0 || i > j {
		t.Errorf("why line 1 should list session two, then session one:\n%s", out)
	}

	// Line 3 came with the second commit: only session two made it, and the
	// story stops at the commit.
	var report struct {
		Commit struct {
			SHA, Subject string
		}
		Sessions []struct {
			Session logbook.Session
			Matched string
			Entries []logbook.Entry
		}
	}
	out, _ = why("--json", file+":3")
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if report.Commit.SHA != second || report.Commit.Subject != "Add Login" || len(report.Sessions) != 1 {
		t.Fatalf("why line 3: %+v", report)
	}
	got := report.Sessions[0]
	var kinds []string
	for _, e := range got.Entries {
		kinds = append(kinds, string(e.Kind))
	}
	if got.Session.ID != two.ID || got.Matched != "entry" || strings.Join(kinds, ",") != "prompt,message,tool_call,tool_result" {
		t.Errorf("why line 3: session %s matched %q with entries %v; want %s by entry: prompt, thinking, the commit call and its result",
			got.Session.ID, got.Matched, kinds, two.ID)
	}

	// Without a line: the file's last commit, the second.
	out, _ = why(file)
	if !strings.Contains(out, second[:10]) || !strings.Contains(out, "thinking") || !strings.Contains(out, "Bash git commit") ||
		strings.Contains(out, one.ID) || strings.Contains(out, "more after the commit") {
		t.Errorf("why file:\n%s", out)
	}

	// An uncommitted line is said so.
	if err := os.WriteFile(file, []byte("package login\n\nfunc Login() {}\n// new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := cli.Why(ctx, env(&stdout, &stderr, vars), []string{file + ":4"}); code != 1 || !strings.Contains(stderr.String(), "not committed yet") {
		t.Errorf("uncommitted line: exit %d, %s", code, stderr.String())
	}
}

// whyServer is the API on svc. Until api.go mounts GET
// /v1/commits/{sha}/sessions, it stands in for the route with the same
// service call, so the command is tested either way.
func whyServer(t *testing.T, svc *service.Service) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	httpapi.New(mux, svc, slog.New(slog.NewTextHandler(io.Discard, nil)), httpapi.Options{})
	probe := httptest.NewRequest(http.MethodGet, "/v1/commits/abc1234/sessions", nil)
	if _, pattern := mux.Handler(probe); pattern == "/v1/" {
		mux.HandleFunc("GET /v1/commits/{sha}/sessions", func(w http.ResponseWriter, r *http.Request) {
			c, err := svc.Authenticate(r.Context(), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			if err != nil {
				http.Error(w, err.Error(), http.StatusUnauthorized)
				return
			}
			sessions, err := svc.SessionsByCommit(r.Context(), c, r.URL.Query().Get("project"), r.PathValue("sha"))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"sessions": sessions})
		})
	}
	server := httptest.NewServer(mux)
	t.Cleanup(server.Close)
	return server
}
