package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/buildinfo"
	"github.com/logbookhq/logbook/internal/cli"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
)

func env(stdout, stderr io.Writer, vars map[string]string) cli.Env {
	return cli.Env{
		Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr,
		Getenv: func(k string) string { return vars[k] },
		OpenStore: func(ctx context.Context, db string) (store.Store, error) {
			return sqlitestore.Open(ctx, db)
		},
	}
}

// TestServe runs `logbook serve` as a user would: it says where it listens,
// makes and saves the admin token, answers, and stops on a signal.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "data", "logbook.db")
	out, outW := io.Pipe()
	var stderr bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- cli.Run(ctx, env(outW, &stderr, nil), []string{"serve", "--addr", "127.0.0.1:0", "--db", db})
		outW.Close()
	}()
	lines := bufio.NewScanner(out)
	lines.Scan()
	first := lines.Text()
	if !strings.Contains(first, "listening on http://127.0.0.1:") || !strings.Contains(first, "SQLite "+db) {
		t.Fatalf("first line %q does not say where it listens and which database", first)
	}
	url := strings.Fields(strings.SplitAfter(first, "listening on ")[1])[0]
	url = strings.TrimSuffix(url, ",")
	lines.Scan() // "admin token (shown once, saved to …):"
	lines.Scan()
	token := strings.TrimSpace(lines.Text())
	go io.Copy(io.Discard, out)

	saved, err := os.ReadFile(filepath.Join(dir, "data", "admin-token"))
	if err != nil || strings.TrimSpace(string(saved)) != token || token == "" {
		t.Fatalf("admin token file: %q, %v; printed %q", saved, err, token)
	}
	if info, _ := os.Stat(filepath.Join(dir, "data", "admin-token")); info.Mode().Perm() != 0o600 {
		t.Errorf("admin token file mode %v, want 0600", info.Mode().Perm())
	}
	res, err := http.Get(url + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", res, err)
	}
	req, _ := http.NewRequest("GET", url+"/v1/sessions?project=x", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("the printed admin token does not work: %v %v", res, err)
	}
	// /metrics needs no token, and counts the requests above by route.
	res, err = http.Get(url + "/metrics")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("metrics: %v %v", res, err)
	}
	scraped, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if want := `logbook_http_requests_total{code="200",route="GET /v1/sessions"} 1`; !strings.Contains(string(scraped), want) {
		t.Errorf("metrics do not count the session list: no %q in\n%.2000s", want, scraped)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve exited %d after the signal; stderr: %s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop after the signal")
	}
}

func TestTokenCreateAndAdminFromEnv(t *testing.T) {
	db := filepath.Join(t.TempDir(), "l.db")
	var stdout, stderr bytes.Buffer
	code := cli.Run(context.Background(), env(&stdout, &stderr, nil), []string{"token", "create", "--project", "demo", "--actor", "ci", "--db", db})
	if code != 0 || !strings.HasPrefix(stdout.String(), "lbk_") {
		t.Fatalf("token create: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	code = cli.Run(context.Background(), env(&stdout, &stderr, nil), []string{"token", "create", "--project", "demo", "--db", db})
	if code != 1 || !strings.Contains(stderr.String(), "actor") {
		t.Errorf("token create without --actor: exit %d, stderr %q", code, stderr.String())
	}
}

// TestServePublicURL: logbook serve behind a TLS-terminating proxy, told
// its public address by LOGBOOK_PUBLIC_URL, says so and gives the web UI's
// cookies the Secure flag though it speaks plain HTTP; an address it
// cannot use is refused at start, saying what to give.
func TestServePublicURL(t *testing.T) {
	for _, bad := range []string{"logbook.example.com", "ftp://logbook.example.com", "https://logbook.example.com/logbook", "https://"} {
		var stdout, stderr bytes.Buffer
		code := cli.Run(context.Background(), env(&stdout, &stderr, nil), []string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "l.db"), "--public-url", bad})
		if code != 2 || !strings.Contains(stderr.String(), "https://logbook.example.com") {
			t.Errorf("--public-url %q: exit %d, %q; want 2 and an example", bad, code, stderr.String())
		}
	}

	out, outW := io.Pipe()
	var stderr bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	vars := map[string]string{"LOGBOOK_PUBLIC_URL": "https://logbook.example.com"}
	go func() {
		done <- cli.Run(ctx, env(outW, &stderr, vars), []string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "l.db")})
		outW.Close()
	}()
	lines := bufio.NewScanner(out)
	lines.Scan()
	url := strings.TrimSuffix(strings.Fields(strings.SplitAfter(lines.Text(), "listening on ")[1])[0], ",")
	lines.Scan()
	if lines.Text() != "browsers reach it at https://logbook.example.com" {
		t.Errorf("second line %q does not name the public address", lines.Text())
	}
	go io.Copy(io.Discard, out)
	res, err := http.Get(url + "/sign-in")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if cookies := res.Cookies(); len(cookies) != 1 || !cookies[0].Secure {
		t.Errorf("the sign-in page's cookies behind the public URL: %v, want one, Secure", cookies)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve exited %d; stderr: %s", code, stderr.String())
	}
}

// TestUsageHidesTheToken: every command's usage message, asked for or
// shown after a wrong flag, says -token defaults to LOGBOOK_TOKEN and never
// shows the token itself.
func TestUsageHidesTheToken(t *testing.T) {
	const token = "lbk_SECRET-TOKEN-VALUE"
	vars := map[string]string{"LOGBOOK_TOKEN": token}
	var commands [][]string
	for _, c := range [][]string{{"serve"}, {"token", "create"}, {"token", "revoke"}, {"migrate"}, {"classify"},
		{"sessions", "list"}, {"sessions", "show"}, {"sessions", "tail"}, {"sessions", "stats"}, {"claims"},
		{"hook", "claude"}, {"hook", "install"}, {"mcp"}, {"import", "claude"}, {"why"}, {"backup"}, {"prune"}, {"bench"}} {
		commands = append(commands, append(c[:len(c):len(c)], "--help"), append(c[:len(c):len(c)], "--no-such-flag"))
	}
	shown := 0
	for _, args := range commands {
		var stdout, stderr bytes.Buffer
		cli.Run(context.Background(), env(&stdout, &stderr, vars), args)
		out := stdout.String() + stderr.String()
		if strings.Contains(out, token) {
			t.Errorf("logbook %s shows the token:\n%s", strings.Join(args, " "), out)
		}
		if strings.Contains(out, "-token") {
			shown++
			if !strings.Contains(out, "env LOGBOOK_TOKEN") {
				t.Errorf("logbook %s does not say where -token comes from:\n%s", strings.Join(args, " "), out)
			}
		}
	}
	if shown < 16 { // sessions ×4, claims, mcp, import, why, bench: --help and a wrong flag
		t.Errorf("only %d usage messages show -token", shown)
	}
}

func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), env(&stdout, &stderr, nil), []string{"--help"}); code != 0 || !strings.Contains(stdout.String(), "serve") {
		t.Errorf("--help: exit %d, %q", code, stdout.String())
	}
	if code := cli.Run(context.Background(), env(&stdout, &stderr, nil), []string{"fly"}); code != 2 || !strings.Contains(stderr.String(), `unknown command "fly"`) {
		t.Errorf("unknown command: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	if code := cli.Run(context.Background(), env(&stdout, &stderr, nil), []string{"serve", "--help"}); code != 0 || !strings.Contains(stderr.String(), "-addr") {
		t.Errorf("serve --help: exit %d, %q", code, stderr.String())
	}
}

// TestVersion: logbook version and --version print the module version the
// binary was built as (and, from a checkout, its commit: see buildinfo).
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var stdout, stderr bytes.Buffer
		if code := cli.Run(context.Background(), env(&stdout, &stderr, nil), args); code != 0 {
			t.Fatalf("logbook %s: exit %d %s", args[0], code, stderr.String())
		}
		if want := "logbook " + buildinfo.Read().String() + "\n"; stdout.String() != want {
			t.Errorf("logbook %s printed %q, want %q", args[0], stdout.String(), want)
		}
	}
}

// TestServeReadDBNeedsPostgres: a read replica is for PostgreSQL; with a
// SQLite --db, or a --read-db that is no postgres:// URL, serve refuses to
// start and says what to give.
func TestServeReadDBNeedsPostgres(t *testing.T) {
	for _, args := range [][]string{
		{"--db", filepath.Join(t.TempDir(), "l.db"), "--read-db", "postgres://replica/logbook"},
		{"--db", "postgres://primary/logbook", "--read-db", filepath.Join(t.TempDir(), "r.db")},
	} {
		var stdout, stderr bytes.Buffer
		code := cli.Run(context.Background(), env(&stdout, &stderr, nil), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...))
		if code != 2 || !strings.Contains(stderr.String(), "--read-db is for PostgreSQL") {
			t.Errorf("serve %v: exit %d, %q; want 2 and what --read-db takes", args, code, stderr.String())
		}
	}
}
