package cli_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/logbookhq/logbook/internal/cli"
	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestSessionsCommands runs `logbook sessions list|show|stats|tail` and
// `logbook claims` against a real server, as a person at a terminal would.
func TestSessionsCommands(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(testdb.SQLite(t), service.Options{Logger: quiet})
	// The service's background work runs as in logbook serve: it announces
	// appends (session.appended) that came too soon after the last.
	svcCtx, stopSvc := context.WithCancel(ctx)
	svcDone := make(chan struct{})
	go func() { svc.Run(svcCtx); close(svcDone) }()
	defer func() { stopSvc(); <-svcDone }()
	mux := http.NewServeMux()
	httpapi.New(mux, svc, quiet, httpapi.Options{})
	// following closes once an event stream is open: the server has then
	// fixed where it starts, so what is written afterwards reaches it.
	following := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/events" {
			w = &onWriteHeader{ResponseWriter: w, do: func() { once.Do(func() { close(following) }) }}
		}
		mux.ServeHTTP(w, r)
	}))
	defer srv.Close()
	token, err := svc.CreateToken(ctx, service.Caller{Actor: "admin", Admin: true}, "demo", "alice")
	if err != nil {
		t.Fatal(err)
	}
	alice := service.Caller{Actor: "alice", Project: "demo"}
	goal := "Fix the flaky login test"
	reportedCost := 0.42
	subject := "auth"
	s, _, _ := svc.StartSession(ctx, alice, service.StartParams{Harness: "claude-code", Fields: logbook.SessionFields{Goal: &goal, Subject: &subject}})
	_, _ = svc.AppendEntries(ctx, alice, s.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindPrompt, Text: "the login test fails one run in five"},
		{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "t1", Payload: []byte(`{"command":"go test ./auth"}`)},
		{Kind: logbook.KindToolResult, ToolCallID: "t1", Text: "FAIL: TestLogin"},
		{Kind: logbook.KindMessage, Role: "assistant", Text: "It shares a clock with another test.",
			Usage: &logbook.Usage{InputTokens: 1000, OutputTokens: 100, CostUSD: &reportedCost}},
	}})
	_, _ = svc.AddNote(ctx, service.Caller{Actor: "bob", Project: "demo"}, service.NoteParams{Subject: "auth", Text: "login is down in staging"})
	_, _, _ = svc.Claim(ctx, alice, service.ClaimParams{SessionID: s.ID, Subject: "src/auth/"})
	other, _, _ := svc.StartSession(ctx, alice, service.StartParams{Harness: "codex"})
	_, _ = svc.EndSession(ctx, alice, other.ID, service.EndParams{Outcome: logbook.OutcomeFailed, Blocker: logbook.BlockerRateLimited})

	vars := map[string]string{"LOGBOOK_URL": srv.URL, "LOGBOOK_TOKEN": token, "LOGBOOK_PROJECT": "demo"}
	run := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := cli.Run(ctx, env(&stdout, &stderr, vars), args); code != 0 {
			t.Fatalf("logbook %s: exit %d, %s", strings.Join(args, " "), code, stderr.String())
		}
		return stdout.String()
	}
	list := run("sessions", "list")
	if !strings.Contains(list, "STATE") || !strings.Contains(list, goal) || !strings.Contains(list, other.ID) {
		t.Errorf("sessions list:\n%s", list)
	}
	failed := run("sessions", "list", "--outcome", "failed")
	if strings.Contains(failed, s.ID) || !strings.Contains(failed, "rate_limited") {
		t.Errorf("sessions list --outcome failed:\n%s", failed)
	}
	if out := run("sessions", "list", "--json", "--harness", "codex"); !strings.HasPrefix(out, `{"sessions":[`) || strings.Contains(out, s.ID) {
		t.Errorf("sessions list --json --harness codex: %s", out)
	}
	show := run("sessions", "show", s.ID)
	for _, want := range []string{goal, "1000 in / 100 out tokens, cost $0.42", "PROMPT", "the login test fails", "→ Bash", "go test ./auth", "← result", "FAIL: TestLogin", "ASSISTANT", "NOTE from bob"} {
		if !strings.Contains(show, want) {
			t.Errorf("sessions show lacks %q:\n%s", want, show)
		}
	}
	stats := run("sessions", "stats", "--by", "blocker", "--since", "7d")
	if !strings.Contains(stats, "rate_limited") || !strings.Contains(stats, "█") {
		t.Errorf("sessions stats --by blocker:\n%s", stats)
	}
	stats = run("sessions", "stats", "--by", "harness", "--then", "outcome", "--tz", "Asia/Kolkata")
	if !regexp.MustCompile(`HARNESS +OUTCOME +SESSIONS.* COST\n`).MatchString(stats) || !regexp.MustCompile(`\ncodex +failed +1 `).MatchString(stats) ||
		!regexp.MustCompile(`\nclaude-code +- +1 .* 1000/100 +\$0\.42\n`).MatchString(stats) {
		t.Errorf("sessions stats --by harness --then outcome:\n%s", stats)
	}
	found := run("search", "login", "test")
	for _, want := range []string{s.ID + " the session's goal", "Fix the flaky »login« »test«", s.ID + " #1 prompt", "the »login« »test« fails",
		s.ID + " #3 tool_result", "FAIL: »TestLogin«"} {
		if !strings.Contains(found, want) {
			t.Errorf("search login test lacks %q:\n%s", want, found)
		}
	}
	found = run("search", "--kind", "tool_call", "--limit", "1", "go", "test", "./auth")
	if !strings.Contains(found, "#2 tool_call Bash") || !strings.Contains(found, "Bash »go« »test« ./»auth«") {
		t.Errorf("search --kind tool_call:\n%s", found)
	}
	if out := run("search", "--json", "staging"); !strings.HasPrefix(out, `{"results":[{`) || !strings.Contains(out, `"kind":"note"`) {
		t.Errorf("search --json staging: %s", out)
	}
	if out := run("search", "nowhere"); !strings.Contains(out, "nothing found") {
		t.Errorf("search nowhere: %s", out)
	}
	var errOut bytes.Buffer
	if code := cli.Run(ctx, env(io.Discard, &errOut, vars), []string{"search", "--kind", "memo", "login"}); code != 1 || !strings.Contains(errOut.String(), "kind") {
		t.Errorf("search --kind memo: exit %d, %s", code, errOut.String())
	}
	if out := run("prices"); !regexp.MustCompile(`\nclaude-sonnet-4-5 +3 +15 +0\.3 +3\.75 +https://`).MatchString(out) {
		t.Errorf("prices: %s", out)
	}
	errOut.Reset()
	if code := cli.Run(ctx, env(io.Discard, &errOut, vars), []string{"prices", "--set", "in-house=1,2,0.1,1.25"}); code != 1 || !strings.Contains(errOut.String(), "only the admin") {
		t.Errorf("prices set by alice: exit %d, %s", code, errOut.String())
	}
	if out := run("retention"); !strings.Contains(out, "project demo keeps an ended session for ever, and its tool output and large payloads for ever") {
		t.Errorf("retention: %s", out)
	}
	errOut.Reset()
	if code := cli.Run(ctx, env(io.Discard, &errOut, vars), []string{"retention", "--sessions-days", "90"}); code != 1 || !strings.Contains(errOut.String(), "only the admin") {
		t.Errorf("retention set by alice: exit %d, %s", code, errOut.String())
	}
	if _, err := svc.EnsureAdminToken(ctx, "cli-test-admin-token"); err != nil {
		t.Fatal(err)
	}
	adminVars := map[string]string{"LOGBOOK_URL": srv.URL, "LOGBOOK_TOKEN": "cli-test-admin-token", "LOGBOOK_PROJECT": "demo"}
	var pricesOut bytes.Buffer
	if code := cli.Run(ctx, env(&pricesOut, io.Discard, adminVars), []string{"prices", "--set", "in-house=1,2,0.1,1.25", "--set", "claude-sonnet-4-5=2.7,13.5,0.27,3.375"}); code != 0 ||
		!regexp.MustCompile(`\nin-house +1 +2 +0\.1 +1\.25 +project\n`).MatchString(pricesOut.String()) ||
		!regexp.MustCompile(`\nclaude-sonnet-4-5 +2\.7 +13\.5 +0\.27 +3\.375 +project\n`).MatchString(pricesOut.String()) {
		t.Errorf("prices --set by the admin: exit %d\n%s", code, pricesOut.String())
	}
	pricesOut.Reset()
	if code := cli.Run(ctx, env(&pricesOut, io.Discard, adminVars), []string{"prices", "--drop", "claude-sonnet-4-5", "--json"}); code != 0 ||
		!strings.Contains(pricesOut.String(), `"own":{"in-house":{"input":1,"output":2,"cache_read":0.1,"cache_write":1.25}}`) {
		t.Errorf("prices --drop: exit %d\n%s", code, pricesOut.String())
	}
	var setOut bytes.Buffer
	errOut.Reset()
	if code := cli.Run(ctx, env(&setOut, &errOut, adminVars), []string{"retention", "--sessions-days", "90", "--payloads-days", "30"}); code != 0 ||
		!strings.Contains(setOut.String(), "keeps an ended session 90 days after it ended, and its tool output and large payloads 30 days after it ended") {
		t.Errorf("retention set by the admin: exit %d, %s%s", code, setOut.String(), errOut.String())
	}
	if out := run("retention", "--json"); strings.TrimSpace(out) != `{"sessions_days":90,"payloads_days":30}` {
		t.Errorf("retention --json: %s", out)
	}
	claims := run("claims", "--subject", "src/auth/login.go")
	if !strings.Contains(claims, "src/auth/") || !strings.Contains(claims, s.ID) {
		t.Errorf("claims --subject:\n%s", claims)
	}
	// The claims gate: a held path stops a script (exit 1) naming the
	// holder; the holder itself and a free path pass.
	var checkOut bytes.Buffer
	if code := cli.Run(ctx, env(&checkOut, io.Discard, vars), []string{"claims", "check", "./src/auth/login.go", "README.md"}); code != 1 ||
		!strings.Contains(checkOut.String(), "deny: logbook: src/auth/login.go is claimed by session "+s.ID) ||
		!strings.Contains(checkOut.String(), "Fix the flaky login test") {
		t.Errorf("claims check of a held path: exit %d\n%s", code, checkOut.String())
	}
	if out := run("claims", "check", "--session", s.ID, "src/auth/login.go"); !strings.HasPrefix(out, "defer: no other live session holds src/auth/login.go") {
		t.Errorf("claims check by the holder: %s", out)
	}

	// tail prints events as they happen, until it is stopped.
	tailCtx, stop := context.WithCancel(ctx)
	defer stop()
	tailOut := &watchedBuffer{want: "session.appended", seen: make(chan struct{})}
	var tailErr bytes.Buffer
	done := make(chan int)
	go func() { done <- cli.Run(tailCtx, env(tailOut, &tailErr, vars), []string{"sessions", "tail"}) }()
	select {
	case <-following:
	case code := <-done:
		t.Fatalf("sessions tail ended before it followed: exit %d: %s", code, tailErr.String())
	}
	_, _ = svc.AppendEntries(ctx, alice, s.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote, Text: "later"}}})
	select {
	case <-tailOut.seen:
		stop()
	case <-done:
		t.Fatalf("sessions tail ended before it printed the append: %s\n%s", tailErr.String(), tailOut.String())
	}
	if code := <-done; code != 0 {
		t.Fatalf("sessions tail: exit %d: %s", code, tailErr.String())
	}
	if strings.Contains(tailOut.String(), "session.started") {
		t.Errorf("sessions tail printed (want only what happened after it started):\n%s", tailOut.String())
	}

	var stdout, stderr bytes.Buffer
	if code := cli.Run(ctx, env(&stdout, &stderr, vars), []string{"sessions", "show", "no-such-id"}); code != 1 || !strings.Contains(stderr.String(), "404") {
		t.Errorf("show of an unknown id: exit %d, %s", code, stderr.String())
	}
}

// onWriteHeader calls do when the handler writes its status line.
type onWriteHeader struct {
	http.ResponseWriter
	do func()
}

func (w *onWriteHeader) WriteHeader(status int) {
	w.do()
	w.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController flush the stream underneath.
func (w *onWriteHeader) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// watchedBuffer collects what a command prints from another goroutine and
// closes seen once it holds want.
type watchedBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (b *watchedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	had := strings.Contains(b.buf.String(), b.want)
	n, err := b.buf.Write(p)
	if !had && strings.Contains(b.buf.String(), b.want) {
		close(b.seen)
	}
	return n, err
}

func (b *watchedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
