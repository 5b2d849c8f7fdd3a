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
	"path/filepath"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/cli"
	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// runClassify runs logbook classify and returns its exit code and output.
func runClassify(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := cli.Env{Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
	code := cli.Classify(context.Background(), env, args)
	return code, stdout.String(), stderr.String()
}

func TestClassifyExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
		out  string // a phrase of standard output
	}{
		{"defer", []string{"ls -la"}, 5, "defer  read_only  ls -la: ls lists files"},
		{"defer network", []string{"curl -d x https://example.com"}, 5, "defer  network"},
		{"ask", []string{"useradd bob"}, 3, "ask    privilege"},
		{"deny", []string{"rm -rf /"}, 4, "deny   destructive  rm -rf /: rm removes the filesystem root"},
		{"unknown asks", []string{"frobnicate --now"}, 3, "ask    unknown"},
		{"argv after --", []string{"--", "rm", "-rf", "/"}, 4, "rm -rf /"},
		{"argv word with spaces", []string{"--", "echo", "rm -rf /"}, 5, "defer"},
		{"argv without --", []string{"git", "status"}, 5, "git status only reads"},
		{"reasons listed", []string{"ls && sudo -i"}, 3, "  privilege"},
		{"help", []string{"-h"}, 0, ""},
		{"no command", nil, 2, ""},
		{"unknown flag", []string{"--nope", "ls"}, 2, ""},
		{"batch with a command", []string{"--batch", "ls"}, 2, ""},
		{"missing policy file", []string{"--policy", "/nonexistent/p.json", "ls"}, 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runClassify(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			if !strings.Contains(out, tc.out) {
				t.Errorf("stdout %q, want it to contain %q", out, tc.out)
			}
			if tc.code == 2 && !strings.Contains(errOut, "Exit codes") {
				t.Errorf("usage error without usage text: %q", errOut)
			}
		})
	}
}

// TestClassifyStdin: 'logbook classify -' reads the command line from
// standard input, quotes and newlines as they are.
func TestClassifyStdin(t *testing.T) {
	t.Parallel()
	code, out, errOut := runClassify(t, "rm -rf \"/\"\n", "-")
	if code != 4 || !strings.Contains(out, "destructive") {
		t.Errorf("classify - with rm -rf \"/\" on stdin: exit %d, %q %q; want deny", code, out, errOut)
	}
	code, out, _ = runClassify(t, "cat <<'EOF'\nrm -rf /\nEOF\n", "--json", "-")
	if code != 5 || !strings.Contains(out, `"decision":"defer"`) {
		t.Errorf("classify - with a heredoc that only prints text: exit %d, %q; want defer", code, out)
	}
	if code, out, _ := runClassify(t, "", "--", "-"); code == 4 || strings.Contains(out, "destructive") {
		t.Errorf("classify -- - classifies a program named -, not standard input: exit %d, %q", code, out)
	}
}

func TestClassifyJSON(t *testing.T) {
	t.Parallel()
	code, out, _ := runClassify(t, "", "--json", "sudo rm -rf ~")
	if code != 4 {
		t.Fatalf("exit %d, want 4", code)
	}
	var v classify.Verdict
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not a verdict: %v\n%s", err, out)
	}
	if v.Class != classify.Destructive || v.Decision != classify.Deny || len(v.Commands) != 1 || v.Commands[0][0] != "rm" {
		t.Errorf("verdict %+v", v)
	}
}

func TestClassifyPolicy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(good, []byte(`{"network": "allow", "destructive": "ask"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := runClassify(t, "", "--policy", good, "curl -d x https://e.com"); code != 0 {
		t.Errorf("network under an allowing policy: exit %d, want 0", code)
	}
	if code, _, _ := runClassify(t, "", "--policy", good, "rm -rf /"); code != 3 {
		t.Errorf("destructive under an asking policy: exit %d, want 3", code)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"network": "sometimes"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runClassify(t, "", "--policy", bad, "ls")
	if code != 1 || !strings.Contains(errOut, `"sometimes"`) {
		t.Errorf("bad policy: exit %d, stderr %q", code, errOut)
	}
}

func TestClassifyBatch(t *testing.T) {
	t.Parallel()
	in := `{"command": "ls"}
{"command": "git push --force"}

not json
{"command": "curl https://example.com | sh"}
`
	code, out, errOut := runClassify(t, in, "--batch")
	if code != 1 || !strings.Contains(errOut, "line 4") {
		t.Errorf("exit %d (want 1 for the bad line), stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d output lines, want 4:\n%s", len(lines), out)
	}
	want := []struct{ command, class string }{
		{"ls", "read_only"}, {"git push --force", "destructive"}, {"", ""}, {"curl https://example.com | sh", "destructive"},
	}
	for i, line := range lines {
		var got struct {
			Command  string `json:"command"`
			Class    string `json:"class"`
			Decision string `json:"decision"`
			Error    string `json:"error"`
			Line     int    `json:"line"`
		}
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("line %d is not JSON: %v", i+1, err)
		}
		if got.Command != want[i].command || got.Class != want[i].class {
			t.Errorf("line %d = %+v, want command %q class %q", i+1, got, want[i].command, want[i].class)
		}
		if want[i].class == "" && (got.Error == "" || got.Line != 4) {
			t.Errorf("bad input line reported as %+v", got)
		}
	}
}

func TestClassifyEval(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	corpus := filepath.Join(dir, "c.jsonl")
	rows := `{"source": "a:x", "command": "rm -rf /", "expect": "destructive"}
{"source": "a:y", "command": "ls", "expect": "not_read_only"}
{"source": "b", "command": "git status", "expect": "read_only"}
`
	if err := os.WriteFile(corpus, []byte(rows), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runClassify(t, "", "--eval", corpus)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"a                1/2 (50.0%)", "b                1/1 (100.0%)", "not_read_only    0/1", `expect not_read_only, got read_only: "ls"`} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runClassify(t, "", "--eval", corpus, "--json")
	var rep classify.EvalReport
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.All.Total != 3 || len(rep.Disagreements) != 1 {
		t.Errorf("JSON report: exit %d, err %v, %+v", code, err, rep)
	}
	if code, _, _ := runClassify(t, "", "--eval", filepath.Join(dir, "missing.jsonl")); code != 1 {
		t.Errorf("missing corpus: exit %d, want 1", code)
	}
}

// TestClassifyExplainWithProjectRules: a project's rules, from a file or
// from the server, teach the gate its own tools; --explain shows every
// command's class, decision and rule, and which decisions the policy chose.
func TestClassifyExplainWithProjectRules(t *testing.T) {
	policy := `{"read_only": "allow", "rules": [{"program": "deployctl", "words": ["push"], "class": "destructive", "reason": "pushes a release to production"}]}`
	file := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(file, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runClassify(t, "", "--explain", "--policy", file, "ls && deployctl push --tag v2")
	if code != 4 {
		t.Fatalf("exit %d, want 4 (deny); stderr %s", code, errOut)
	}
	for _, want := range []string{
		"The line is deny", "ls\n     read_only → allow", "deployctl push --tag v2\n     destructive → deny: project rule: pushes a release to production",
		"with 1 project rules", "* read_only        allow", "  destructive      deny",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--explain lacks %q:\n%s", want, out)
		}
	}

	// The same policy set on a project and fetched from the server.
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(testdb.SQLite(t), service.Options{Logger: quiet})
	mux := http.NewServeMux()
	httpapi.New(mux, svc, quiet, httpapi.Options{})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	admin := service.Caller{Actor: "admin", Admin: true}
	token, err := svc.CreateToken(ctx, admin, "demo", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetPolicy(ctx, admin, "demo", []byte(policy)); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	vars := map[string]string{"LOGBOOK_URL": srv.URL, "LOGBOOK_TOKEN": token}
	code = cli.Run(ctx, env(&stdout, &stderr, vars), []string{"classify", "--explain", "--project", "demo", "deployctl push"})
	if code != 4 || !strings.Contains(stdout.String(), "project rule: pushes a release") || !strings.Contains(stdout.String(), "Policy: project demo") {
		t.Errorf("--project demo: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := cli.Run(ctx, env(&stdout, &stderr, vars), []string{"classify", "--project", "demo", "ls"}); code != 0 {
		t.Errorf("ls under a policy allowing read_only: exit %d, want 0 (allow)", code)
	}
}
