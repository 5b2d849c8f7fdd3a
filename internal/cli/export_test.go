package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
	"github.com/logbookhq/logbook/internal/testdb"
)

// bothEnginesEnv is an Env that opens SQLite files and PostgreSQL URLs.
func bothEnginesEnv() (Env, *bytes.Buffer, *bytes.Buffer) {
	env, stdout, stderr := testEnv("")
	env.OpenStore = func(ctx context.Context, db string) (store.Store, error) {
		if IsPostgres(db) {
			return pgstore.Open(ctx, db)
		}
		return sqlitestore.Open(ctx, db)
	}
	return env, stdout, stderr
}

// seedLedger records what an export must carry, through the service as
// the surfaces do: two projects with a policy and a retention, sessions
// with every field set, a subagent, prompts, messages with usage, tool
// calls and results with a commit, touched files, a compaction (superseded
// entries), a plan, claims taken and released, a note from outside, an
// agent with tasks and a rotation, and outcomes with blockers. It returns
// the ids of the sessions and the commit recorded.
func seedLedger(t *testing.T, svc *service.Service) (sessions []string, commit string) {
	t.Helper()
	ctx := context.Background()
	admin := service.Caller{Actor: "admin", Admin: true}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	commit = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"
	for i, project := range []string{"demo", "ops"} {
		alice := svc.For(service.Caller{Actor: "alice", Project: project})
		_, err := svc.SetPolicy(ctx, admin, project, []byte(`{"network": "ask", "rules": [{"program": "deployctl", "class": "destructive", "reason": "ships to production"}]}`))
		must(err)
		_, err = svc.SetRetention(ctx, admin, project, logbook.Retention{SessionsDays: 400 + i, PayloadsDays: 90})
		must(err)
		str := func(s string) *string { return &s }
		sess, _, err := alice.StartSession(ctx, ledger.StartParams{Project: project, Harness: "claude-code", HarnessSessionID: project + "-1",
			StartedAt: time.Now().Add(-3 * time.Hour),
			Fields: logbook.SessionFields{Title: str("Fix the flaky login test"), Goal: str("make login_test pass 100 times"),
				Task: str("TASK-7"), Model: str("claude-opus"), AgentType: str("coder"), Issue: str("12"), Pull: str("34"),
				Branch: str("fix-login"), HeadCommit: str(commit[:12]), Subject: str("auth/")}})
		must(err)
		sessions = append(sessions, sess.ID)
		_, err = alice.AppendEntries(ctx, sess.ID, ledger.Batch{Entries: []logbook.Entry{
			{Kind: logbook.KindPrompt, Text: "the login test flakes; see #12 — 登录测试不稳定", Key: "p1"},
			{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "Looking at auth/login_test.go", Usage: &logbook.Usage{InputTokens: 1200, OutputTokens: 80}},
			{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "tc1", Payload: []byte(`{"command":"git commit -m fix"}`), Key: "tc1:call"},
			{Kind: logbook.KindToolResult, Tool: "Bash", ToolCallID: "tc1", Text: "[fix-login 1a2b3c4] fix", Commit: commit[:7], Key: "tc1:result"},
			{Kind: logbook.KindToolCall, Tool: "Edit", ToolCallID: "tc2", Payload: []byte(`{"file_path":"auth/login_test.go"}`)},
		}, Touched: []logbook.Touch{{Kind: logbook.TouchFile, Value: "auth/login_test.go"}, {Kind: logbook.TouchCommand, Value: "go test ./auth"}}})
		must(err)
		_, err = alice.SetPlan(ctx, sess.ID, []ledger.StepInput{{Text: "reproduce"}, {Text: "fix", Status: logbook.StepRunning}, {Text: "verify"}})
		must(err)
		claim, _, err := alice.Claim(ctx, ledger.ClaimParams{SessionID: sess.ID, Subject: "auth/login.go"})
		must(err)
		_, err = alice.Release(ctx, claim.ID)
		must(err)
		_, _, err = alice.Claim(ctx, ledger.ClaimParams{SessionID: sess.ID, Subject: "issue:12"})
		must(err)
		sub, _, err := alice.StartSession(ctx, ledger.StartParams{Project: project, Harness: "claude-code", HarnessSessionID: project + "-1/agent-a", ParentID: sess.ID})
		must(err)
		sessions = append(sessions, sub.ID)
		_, err = alice.AppendEntries(ctx, sub.ID, ledger.Batch{Entries: []logbook.Entry{{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "subagent found a race in the session store"}}})
		must(err)
		_, err = svc.For(service.Caller{Actor: "bob", Project: project}).AddNote(ctx, ledger.NoteParams{Project: project, Issue: "12", Text: "bob: CI is red on main too"})
		must(err)
		_, err = svc.For(service.Caller{Actor: "bob", Project: project}).SendMessage(ctx, ledger.SendParams{Project: project, ToAgent: "engineer-1", Text: "please look at #12 next"})
		must(err)
		_, err = alice.SendMessage(ctx, ledger.SendParams{Project: project, ToActor: "bob", FromSession: sess.ID, Text: "on it"})
		must(err)
		_, err = alice.Compact(ctx, sess.ID, []logbook.Entry{{Kind: logbook.KindSummary, Text: "summary: the race is in the session cache"}})
		must(err)
		_, err = svc.For(admin).AddAlertRule(ctx, project, ledger.AlertRuleBody{Name: "failures", Kind: logbook.AlertSessionFailed, WebhookURL: "http://127.0.0.1:9/hook"})
		must(err)
		_, err = alice.EndSession(ctx, sess.ID, ledger.EndParams{Outcome: logbook.OutcomeFailed, Result: "could not reproduce", Blocker: logbook.BlockerToolError})
		must(err)

		// An agent with tasks that rotated once.
		_, err = alice.AddTask(ctx, project, "engineer-1", ledger.TaskInput{TaskID: "T-1", Title: "triage", Text: "triage the flaky tests"})
		must(err)
		rot, err := alice.RotateAgent(ctx, project, "engineer-1", "context full")
		must(err)
		_, err = alice.AddTask(ctx, project, "engineer-1", ledger.TaskInput{TaskID: "T-2", Text: "write the fix"})
		must(err)
		sessions = append(sessions, rot.PreviousSessionID, rot.Session.ID)
		_, err = alice.EndSession(ctx, rot.Session.ID, ledger.EndParams{Outcome: logbook.OutcomeSuccess, Result: "fixed"})
		must(err)
	}
	return sessions, commit
}

// apiAnswers asks a server on db the questions a user asks and returns
// each answer's body by question.
func apiAnswers(t *testing.T, env Env, db string, sessions []string, commit string) map[string]string {
	t.Helper()
	ctx := context.Background()
	st, err := env.OpenStore(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := service.New(st, service.Options{Logger: quietLog})
	const admin = "round-trip-admin-token"
	if _, err := svc.EnsureAdminToken(ctx, admin); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	httpapi.New(mux, svc, quietLog, httpapi.Options{})
	server := httptest.NewServer(mux)
	defer server.Close()
	questions := []string{}
	for _, project := range []string{"demo", "ops"} {
		questions = append(questions,
			"/v1/sessions?project="+project+"&limit=200",
			"/v1/sessions?project="+project+"&subagents=true&sort=started",
			"/v1/sessions?project="+project+"&q=login",
			"/v1/stats?project="+project+"&by=outcome&since=2020-01-01T00:00:00Z",
			"/v1/stats?project="+project+"&by=model&since=2020-01-01T00:00:00Z",
			"/v1/stats?project="+project+"&by=blocker&since=2020-01-01T00:00:00Z",
			"/v1/search?project="+project+"&q=race",
			"/v1/search?project="+project+"&q=登录",
			"/v1/search?project="+project+"&q=auth/login_test.go",
			"/v1/claims?project="+project,
			"/v1/tool_calls?project="+project,
			"/v1/commits/"+commit+"/sessions?project="+project,
			"/v1/projects/"+project+"/policy",
			"/v1/projects/"+project+"/retention",
			"/v1/agents/engineer-1?project="+project,
			"/v1/agents/engineer-1/tasks?project="+project,
			"/v1/tasks/T-1?project="+project,
			"/v1/projects/"+project+"/alert_rules",
			"/v1/projects/"+project+"/alerts",
			"/v1/messages?project="+project+"&agent=engineer-1",
			"/v1/messages?project="+project+"&actor=bob",
		)
	}
	for _, id := range sessions {
		questions = append(questions, "/v1/sessions/"+url.PathEscape(id)+"?all=true", "/v1/sessions/"+url.PathEscape(id)+"/tool_calls")
	}
	answers := map[string]string{}
	for _, q := range questions {
		req, _ := http.NewRequest("GET", server.URL+q, nil)
		req.Header.Set("Authorization", "Bearer "+admin)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s on %s: %d %s", q, describeDB(db), res.StatusCode, body)
		}
		answers[q] = string(body)
	}
	return answers
}

// exportRows is an export's lines but the first (which says when it was
// made).
func exportRows(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	return lines[1:]
}

// TestExportRoundTrip moves a ledger SQLite → PostgreSQL → SQLite with
// logbook export and logbook import logbook, and asks each database the
// same questions through the API: every answer is the same, and each
// export holds the same rows. Restoring again changes nothing.
func TestExportRoundTrip(t *testing.T) {
	ctx := context.Background()
	env, stdout, stderr := bothEnginesEnv()
	dir := t.TempDir()
	src, pg, dst := filepath.Join(dir, "src.db"), testdb.PostgresURL(t), filepath.Join(dir, "dst.db")

	st, err := env.OpenStore(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	sessions, commit := seedLedger(t, service.New(st, service.Options{Logger: quietLog}))
	st.Close()

	run := func(cmd func(context.Context, Env, []string) int, args ...string) string {
		t.Helper()
		stdout.Reset()
		stderr.Reset()
		if code := cmd(ctx, env, args); code != 0 {
			t.Fatalf("%v exited %d: %s", args, code, stderr)
		}
		return stdout.String()
	}
	first, second, third := filepath.Join(dir, "1.jsonl"), filepath.Join(dir, "2.jsonl"), filepath.Join(dir, "3.jsonl")
	run(exportCmd, "--db", src, "--out", first)
	if info, err := os.Stat(first); err != nil {
		t.Fatal(err)
	} else if info.Mode().Perm() != 0o600 {
		t.Errorf("the export file has mode %v; want 0600 (it holds every transcript)", info.Mode().Perm())
	}
	if !strings.Contains(stderr.String(), "exported ") {
		t.Errorf("export said %q, want its count on stderr", stderr)
	}
	summary := run(importLogbook, "--db", pg, first)
	again := run(importLogbook, first, "--db", pg)
	if !strings.Contains(again, "(0 new") {
		t.Errorf("a second restore said %q (the first %q), want nothing new", again, summary)
	}
	run(exportCmd, "--db", pg, "--out", second)
	run(importLogbook, "--db", dst, second)
	run(exportCmd, "--db", dst, "--out", third)

	want := exportRows(t, first)
	if len(want) < 40 {
		t.Fatalf("the export holds %d rows, fewer than the ledger seeded", len(want))
	}
	for _, path := range []string{second, third} {
		if got := exportRows(t, path); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s differs from the first export:\n%s", filepath.Base(path), firstDifference(want, got))
		}
	}
	for _, table := range []string{"projects", "sessions", "entries", "plan_steps", "touches", "links", "claims", "agents", "agent_tasks", "task_sessions", "agent_rotations", "messages", "alert_rules", "alerts"} {
		if !strings.Contains(strings.Join(want, "\n"), `{"type":"`+table+`"`) {
			t.Errorf("the export holds no %s", table)
		}
	}
	if strings.Contains(strings.Join(want, "\n"), `"type":"tokens"`) {
		t.Error("the export holds tokens")
	}

	answers := apiAnswers(t, env, src, sessions, commit)
	for _, db := range []string{pg, dst} {
		got := apiAnswers(t, env, db, sessions, commit)
		for q, body := range answers {
			if got[q] != body {
				t.Errorf("GET %s on %s:\n got %s\nwant %s", q, describeDB(db), got[q], body)
			}
		}
	}
	for _, q := range []string{"/v1/search?project=demo&q=race", "/v1/stats?project=demo&by=outcome&since=2020-01-01T00:00:00Z"} {
		if !strings.Contains(answers[q], "failed") && !strings.Contains(answers[q], "race") {
			t.Errorf("GET %s found nothing to compare: %s", q, answers[q])
		}
	}
}

func firstDifference(want, got []string) string {
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+2) + ":\n got " + g + "\nwant " + w
		}
	}
	return ""
}

// TestExportProjectAndBadInput: --project exports one project's rows
// only; restoring a file cut short keeps what it held and says so; a file
// that is not an export, or rows held as other rows, are refused with what
// to do.
func TestExportProjectAndBadInput(t *testing.T) {
	ctx := context.Background()
	env, stdout, stderr := bothEnginesEnv()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	st, err := env.OpenStore(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	seedLedger(t, service.New(st, service.Options{Logger: quietLog}))
	st.Close()

	stdout.Reset()
	if code := exportCmd(ctx, env, []string{"--db", src, "--project", "ops"}); code != 0 {
		t.Fatalf("export exited %d: %s", code, stderr)
	}
	onlyOps := stdout.String()
	if strings.Contains(onlyOps, `"demo"`) || !strings.Contains(onlyOps, `"project":"ops"`) {
		t.Errorf("--project ops exported rows of demo, or none of ops")
	}
	if code := exportCmd(ctx, env, []string{"--db", src, "--project", "nope"}); code != 1 || !strings.Contains(stderr.String(), `no project "nope"`) {
		t.Errorf("export of a missing project: exit %d, %s", code, stderr)
	}

	// Cut short: the rows before the cut are restored, and the error says so.
	lines := strings.SplitAfter(onlyOps, "\n")
	cut := filepath.Join(dir, "cut.jsonl")
	if err := os.WriteFile(cut, []byte(strings.Join(lines[:len(lines)/2], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	half := filepath.Join(dir, "half.db")
	stderr.Reset()
	if code := importLogbook(ctx, env, []string{"--db", half, cut}); code != 1 || !strings.Contains(stderr.String(), "cut short") {
		t.Errorf("restore of a cut file: exit %d, %s", code, stderr)
	}
	whole := filepath.Join(dir, "whole.jsonl")
	if err := os.WriteFile(whole, []byte(onlyOps), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := importLogbook(ctx, env, []string{"--db", half, whole}); code != 0 || strings.Contains(stdout.String(), " 0 new") {
		t.Errorf("restore of the whole file after the cut one: exit %d, %s %s", code, stdout, stderr)
	}

	notExport := filepath.Join(dir, "transcript.jsonl")
	if err := os.WriteFile(notExport, []byte(`{"type":"user","message":{}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := importLogbook(ctx, env, []string{"--db", half, notExport}); code != 1 || !strings.Contains(stderr.String(), "not a logbook export") {
		t.Errorf("restore of a transcript: exit %d, %s", code, stderr)
	}

	// Another database's rows under the same ids are refused.
	other := filepath.Join(dir, "other.db")
	st, err = env.OpenStore(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	seedLedger(t, service.New(st, service.Options{Logger: quietLog}))
	st.Close()
	stderr.Reset()
	if code := importLogbook(ctx, env, []string{"--db", other, whole}); code != 1 || !strings.Contains(stderr.String(), "restore into an empty database") {
		t.Errorf("restore over another database's rows: exit %d, %s", code, stderr)
	}
}

// TestExportFormat: the first line says what the file is and how many rows
// of each table follow, the last counts them.
func TestExportFormat(t *testing.T) {
	ctx := context.Background()
	env, stdout, stderr := bothEnginesEnv()
	src := filepath.Join(t.TempDir(), "src.db")
	st, err := env.OpenStore(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	seedLedger(t, service.New(st, service.Options{Logger: quietLog}))
	st.Close()
	if code := exportCmd(ctx, env, []string{"--db", src}); code != 0 {
		t.Fatalf("export exited %d: %s", code, stderr)
	}
	sc := bufio.NewScanner(strings.NewReader(stdout.String()))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if !strings.HasPrefix(lines[0], `{"logbook_export":1,"exported_at":"`) || !strings.Contains(lines[0], `{"name":"entries","rows":`) {
		t.Errorf("first line %s", lines[0])
	}
	if last := lines[len(lines)-1]; last != `{"type":"end","rows":`+strconv.Itoa(len(lines)-2)+`}` {
		t.Errorf("last line %s, want the count of the %d rows", last, len(lines)-2)
	}
}

// TestExportWhileWriting exports a SQLite database while four writers keep
// appending, then restores the export: the rows come from one snapshot, so
// every session's counter equals its entries, numbered without a gap.
func TestExportWhileWriting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	live := filepath.Join(dir, "live.db")
	st, err := sqlitestore.Open(ctx, live)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := service.New(st, service.Options{Logger: quietLog})
	written, stopWriters := startWriters(t, svc, 10)
	for written.Load() < 300 {
		time.Sleep(5 * time.Millisecond)
	}
	env, _, stderr := testEnv("")
	export := filepath.Join(dir, "live.jsonl")
	before := written.Load()
	if code := exportCmd(ctx, env, []string{"--db", live, "--out", export}); code != 0 {
		t.Fatalf("export exited %d: %s", code, stderr)
	}
	during := written.Load() - before
	stopWriters()
	restored := filepath.Join(dir, "restored.db")
	if code := importLogbook(ctx, env, []string{"--db", restored, export}); code != 0 {
		t.Fatalf("restore exited %d: %s", code, stderr)
	}
	sessions, entries := checkConsistent(t, restored)
	if entries < 300 {
		t.Errorf("the restore holds %d entries; at least 300 were written before the export began", entries)
	}
	t.Logf("export of a live database: %d sessions, %d entries (%d entries written while it ran, %d in all)", sessions, entries, during, written.Load())
}
