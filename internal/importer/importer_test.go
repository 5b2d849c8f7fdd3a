package importer_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/client"
	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/importer"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
	"github.com/logbookhq/logbook/internal/testshared"
)

var admin = service.Caller{Actor: "admin", Admin: true}

// longAgo is a "now" well after every fixture's last line, so imported
// sessions are ended.
var longAgo = func() time.Time { return time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) }

// fixturesDir is shared/fixtures (see package testshared).
func fixturesDir(t *testing.T) string { return testshared.Dir(t, "fixtures") }

// upstreamCopy copies every file of a fixtures folder into a new temporary
// folder under the name it had upstream, as the harness wrote it: the
// fixtures carry a "<source>_" prefix, and the parsers read the file name
// (agent-*.jsonl is a subagent, a line without sessionId belongs to the
// file's session).
func upstreamCopy(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	names, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no fixtures in %s: %v", dir, err)
	}
	for _, name := range names {
		_, upstream, ok := strings.Cut(filepath.Base(name), "_")
		if !ok {
			t.Fatalf("fixture %s has no source prefix", name)
		}
		copyFile(t, name, filepath.Join(out, upstream))
	}
	return out
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// stored is what the database holds for a project, counted from its
// sessions and their entries.
type stored struct {
	Sessions, Subagents                            int
	Entries, Prompts, Messages, ToolCalls, Results int
	InputTokens, OutputTokens                      int64
}

// storedIn reads every session of the project (subagents too) and every
// entry of each, and counts them. It also returns the sessions by harness
// session id.
func storedIn(t *testing.T, svc *service.Service, project string) (stored, map[string]logbook.Session) {
	t.Helper()
	ctx := context.Background()
	page, err := svc.ListSessions(ctx, admin, service.ListParams{Project: project, Filter: logbook.SessionFilter{Subagents: true}, Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	var c stored
	byHarnessID := make(map[string]logbook.Session)
	for _, s := range page.Sessions {
		byHarnessID[s.HarnessSessionID] = s
		if s.ParentID == "" {
			c.Sessions++
		} else {
			c.Subagents++
		}
		c.InputTokens += s.InputTokens
		c.OutputTokens += s.OutputTokens
		for after := int64(0); ; {
			view, err := svc.GetSession(ctx, admin, s.ID, service.GetParams{AfterSeq: after})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range view.Entries {
				c.Entries++
				switch e.Kind {
				case logbook.KindPrompt:
					c.Prompts++
				case logbook.KindMessage:
					c.Messages++
				case logbook.KindToolCall:
					c.ToolCalls++
				case logbook.KindToolResult:
					c.Results++
				}
			}
			if len(view.Entries) == 0 {
				break
			}
			after = view.NextAfterSeq
		}
	}
	return c, byHarnessID
}

func newService(t testing.TB) *service.Service {
	return service.New(testdb.SQLite(t), service.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

func run(t *testing.T, sink ledger.Ledger, opts importer.Options, paths ...string) importer.Counts {
	t.Helper()
	opts.Warn = func(err error) { t.Errorf("warning: %v", err) }
	im, err := importer.New(sink, opts)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := im.Run(context.Background(), paths)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return counts
}

// The Claude Code fixtures hold, by the transcript package's own tables
// (counted with jq, see TestFixtures there): 5 sessions (edge_cases and
// todowrite_session, test_session, 1af7fc5e, 5c0375b4) and 3 subagents
// (two sidechains of 5c0375b4 and agent-test-hash-123, also under
// 5c0375b4); 13 prompts (4+4+1+3+1), 38 tool calls (3+2+12+21), 36 tool
// results (1+2+12+21), 109 entries, 488,951 input and 5,472 output tokens,
// 7 malformed lines (all in edge_cases).
var claudeFixtures = stored{Sessions: 5, Subagents: 3, Entries: 109, Prompts: 13, Messages: 16, ToolCalls: 38, Results: 36,
	InputTokens: 488951, OutputTokens: 5472}

func TestClaudeFixturesIntoDatabase(t *testing.T) {
	dir := upstreamCopy(t, filepath.Join(fixturesDir(t), "claude-code"))
	svc := newService(t)
	opts := importer.Options{Format: importer.Claude, Project: "fixtures", Now: longAgo}

	first := run(t, importAs(svc), opts, dir)
	want := importer.Counts{Files: 5, Bytes: first.Bytes, Sessions: 5, Subagents: 3, New: 8, Ended: 8,
		Entries: 109, Recorded: 109, Skipped: 7, Ignored: first.Ignored}
	if first != want {
		t.Errorf("first import:\n got %+v\nwant %+v", first, want)
	}
	got, sessions := storedIn(t, svc, "fixtures")
	if got != claudeFixtures {
		t.Errorf("stored after the first import:\n got %+v\nwant %+v", got, claudeFixtures)
	}
	parent := sessions["5c0375b4-57a5-4f26-b12d-d022ee4e51b7"]
	subagents := 0
	for hid, s := range sessions {
		if s.State != logbook.StateEnded || s.Outcome != logbook.OutcomeSuccess || s.EndReason != importer.EndReason {
			t.Errorf("session %s: state %s, outcome %q, end reason %q; want ended success %q", hid, s.State, s.Outcome, s.EndReason, importer.EndReason)
		}
		if s.ParentID != "" {
			subagents++
			if s.ParentID != parent.ID || !strings.HasPrefix(hid, parent.HarnessSessionID+"/") {
				t.Errorf("subagent %s hangs under %s, want 5c0375b4's session %s", hid, s.ParentID, parent.ID)
			}
		}
	}
	if subagents != 3 {
		t.Errorf("%d subagents under 5c0375b4, want 3", subagents)
	}
	// Every session keeps the 2025 times of its lines (see also
	// TestHistoryKeepsItsTime).
	for hid, s := range sessions {
		if s.StartedAt.Year() != 2025 || s.ClosedAt == nil || s.ClosedAt.Year() != 2025 || s.ClosedAt.Before(s.StartedAt) {
			t.Errorf("session %s: started %v, closed %v; want its transcript's 2025 times", hid, s.StartedAt, s.ClosedAt)
		}
	}
	if s := sessions["test_session"]; s.Title == "" || s.Model == "" {
		t.Errorf("test_session lost its summary title or model: %+v", s)
	}
	// Tool results that reported an error read as errors in the audit:
	// 1 in edge_cases, 1 in 1af7fc5e, 3 in 5c0375b4.
	calls, err := svc.ToolCalls(context.Background(), admin, service.ToolCallParams{Project: "fixtures", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	errorsSeen := 0
	for _, c := range calls.ToolCalls {
		if c.Status == "error" {
			errorsSeen++
		}
	}
	if errorsSeen != 5 {
		t.Errorf("%d tool calls with status error, want 5", errorsSeen)
	}

	// The same files again add nothing.
	second := run(t, importAs(svc), opts, dir)
	// The top-level sessions are reopened and ended again; the subagents,
	// ended for good, are left alone.
	want.New, want.Recorded, want.Duplicates, want.Ended = 0, 0, 109, 5
	if second != want {
		t.Errorf("second import:\n got %+v\nwant %+v", second, want)
	}
	if again, _ := storedIn(t, svc, "fixtures"); again != claudeFixtures {
		t.Errorf("stored after the second import:\n got %+v\nwant %+v", again, claudeFixtures)
	}
}

// The Codex fixture holds one session: 1 prompt, 2 assistant messages
// (one of them reasoning), 3 tool calls and their 3 outputs; its 2
// event_msg lines and one unknown record type are ignored (counted with jq,
// see the transcript package's TestFixtures).
func TestCodexFixturesIntoDatabase(t *testing.T) {
	dir := filepath.Join(upstreamCopy(t, filepath.Join(fixturesDir(t), "codex")))
	svc := newService(t)
	opts := importer.Options{Format: importer.Codex, Project: "fixtures", Now: longAgo}
	want := stored{Sessions: 1, Entries: 9, Prompts: 1, Messages: 2, ToolCalls: 3, Results: 3}
	for i, recorded := range []int{9, 0} {
		counts := run(t, importAs(svc), opts, dir)
		if counts.Sessions != 1 || counts.Recorded != recorded || counts.Duplicates != 9-recorded || counts.Ignored != 3 || counts.Skipped != 0 {
			t.Errorf("import %d: %+v", i+1, counts)
		}
		got, sessions := storedIn(t, svc, "fixtures")
		if got != want {
			t.Errorf("stored after import %d:\n got %+v\nwant %+v", i+1, got, want)
		}
		s := sessions["11111111-1111-4111-8111-111111111111"]
		if s.Harness != "codex" || s.Model != "synthetic-model" {
			t.Errorf("session: harness %q, model %q", s.Harness, s.Model)
		}
	}
}

// A transcript that grew since it was imported is topped up with its new
// lines, in the same session, which ends again.
func TestGrownTranscriptIsToppedUp(t *testing.T) {
	const name = "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
	data, err := os.ReadFile(filepath.Join(fixturesDir(t), "claude-code", "ccviewer_"+name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	cut := bytes.IndexByte(data[len(data)/2:], '\n') + len(data)/2 + 1
	if err := os.WriteFile(path, data[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	svc := newService(t)
	opts := importer.Options{Format: importer.Claude, Project: "p", Now: longAgo}
	first := run(t, importAs(svc), opts, path)
	if first.Recorded == 0 || first.Recorded >= 29 {
		t.Fatalf("the first half recorded %d entries, want some of the 29", first.Recorded)
	}
	_, before := storedIn(t, svc, "p")

	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	second := run(t, importAs(svc), opts, path)
	if second.New != 0 || second.Recorded != 29-first.Recorded || second.Duplicates != first.Recorded {
		t.Errorf("top-up: %+v, want %d recorded and %d duplicates", second, 29-first.Recorded, first.Recorded)
	}
	got, after := storedIn(t, svc, "p")
	if got.Sessions != 1 || got.Entries != 29 || got.ToolCalls != 12 || got.Prompts != 1 {
		t.Errorf("stored: %+v", got)
	}
	s := after["1af7fc5e-8455-4414-9ccd-011d40f70b2a"]
	if s.ID != before["1af7fc5e-8455-4414-9ccd-011d40f70b2a"].ID || s.State != logbook.StateEnded || s.EndReason != importer.EndReason {
		t.Errorf("session after the top-up: %+v", s)
	}
	// It still starts at the first line and now ends at the new last one.
	firstLine, lastLine := lineTimes(t, path)
	if !s.StartedAt.Equal(firstLine) || s.ClosedAt == nil || !s.ClosedAt.Equal(lastLine) {
		t.Errorf("after the top-up: started %v, closed %v; want %v to %v", s.StartedAt, s.ClosedAt, firstLine, lastLine)
	}
}

// A session whose last line is recent may still be running: it is left
// open.
func TestRecentSessionStaysOpen(t *testing.T) {
	const name = "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
	path := filepath.Join(t.TempDir(), name)
	copyFile(t, filepath.Join(fixturesDir(t), "claude-code", "ccviewer_"+name), path)
	svc := newService(t)
	justAfter := func() time.Time { return time.Date(2025, 9, 3, 1, 30, 0, 0, time.UTC) } // 42 min after its last line
	counts := run(t, importAs(svc), importer.Options{Format: importer.Claude, Project: "p", Now: justAfter}, path)
	if counts.Open != 1 || counts.Ended != 0 {
		t.Errorf("counts: %+v, want 1 open and none ended", counts)
	}
	_, sessions := storedIn(t, svc, "p")
	if s := sessions["1af7fc5e-8455-4414-9ccd-011d40f70b2a"]; s.State != logbook.StateActive || s.Outcome != "" {
		t.Errorf("session: state %s, outcome %q; want active without outcome", s.State, s.Outcome)
	}
}

// Our own transcript: the project comes from the cwd, an edit is a touch,
// the commit a `git commit` made is on its result, a malformed line is
// skipped and counted.
func TestOwnTranscript(t *testing.T) {
	svc := newService(t)
	counts := run(t, importAs(svc), importer.Options{Format: importer.Claude, ProjectFromCwd: true, Now: longAgo},
		filepath.Join("testdata", "claude"))
	if counts.Sessions != 1 || counts.Recorded != 7 || counts.Skipped != 1 {
		t.Errorf("counts: %+v, want 1 session, 7 entries, 1 skipped line", counts)
	}
	got, sessions := storedIn(t, svc, "demo") // the cwd /repo/demo
	if got != (stored{Sessions: 1, Entries: 7, Prompts: 1, Messages: 2, ToolCalls: 2, Results: 2, InputTokens: 420, OutputTokens: 62}) {
		t.Errorf("stored: %+v", got)
	}
	s := sessions["0d4c5b2e-0000-4000-8000-000000000001"]
	if s.Branch != "fix-login" || s.Model != "claude-sonnet-4" || s.Title != "Fix the flaky login test" {
		t.Errorf("session: branch %q, model %q, title %q", s.Branch, s.Model, s.Title)
	}
	view, err := svc.GetSession(context.Background(), admin, s.ID, service.GetParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(view.Touched) != 1 || view.Touched[0].Value != "auth/login_test.go" {
		t.Errorf("touched: %+v, want auth/login_test.go", view.Touched)
	}
	var commits []string
	for _, e := range view.Entries {
		if e.Commit != "" {
			commits = append(commits, string(e.Kind)+" "+e.Commit)
		}
	}
	if strings.Join(commits, ",") != "tool_result 3f2a9c1" {
		t.Errorf("entries with a commit: %v, want the git commit's result with 3f2a9c1", commits)
	}
}

// The same fixtures through a real server, with a project token: the same
// sessions and entries, and a second import adds nothing.
func TestClaudeFixturesThroughServer(t *testing.T) {
	dir := upstreamCopy(t, filepath.Join(fixturesDir(t), "claude-code"))
	svc := newService(t)
	sink := throughServer(t, svc, "history")
	opts := importer.Options{Format: importer.Claude, Now: longAgo} // the token's project

	for i, recorded := range []int{109, 0} {
		counts := run(t, sink, opts, dir)
		if counts.Recorded != recorded || counts.Duplicates != 109-recorded || counts.Sessions != 5 || counts.Subagents != 3 {
			t.Errorf("import %d: %+v", i+1, counts)
		}
		got, sessions := storedIn(t, svc, "history")
		if got != claudeFixtures {
			t.Errorf("stored after import %d:\n got %+v\nwant %+v", i+1, got, claudeFixtures)
		}
		for hid, s := range sessions {
			if s.Actor != "alice" || s.State != logbook.StateEnded {
				t.Errorf("session %s: actor %q, state %s", hid, s.Actor, s.State)
			}
		}
	}
}

// throughServer is the ledger `logbook import` writes to with a token:
// a real server on svc, as alice with a token of project.
func throughServer(tb testing.TB, svc *service.Service, project string) ledger.Ledger {
	tb.Helper()
	mux := http.NewServeMux()
	httpapi.New(mux, svc, slog.New(slog.NewTextHandler(io.Discard, nil)), httpapi.Options{})
	server := httptest.NewServer(mux)
	tb.Cleanup(server.Close)
	token, err := svc.CreateToken(context.Background(), admin, project, "alice")
	if err != nil {
		tb.Fatal(err)
	}
	return client.New(server.URL, token).Ledger()
}

// importAs is the ledger `logbook import --db` writes to: the service, as
// importer.ImportActor with the admin's rights.
func importAs(svc *service.Service) ledger.Ledger {
	return svc.For(service.Caller{Actor: importer.ImportActor, Admin: true})
}

func TestSummary(t *testing.T) {
	got := importer.Summary(importer.Counts{Files: 40, Bytes: 8_000_000, Sessions: 38, New: 12, Subagents: 5,
		Recorded: 5120, Skipped: 7})
	want := "imported 40 files (8.0 MB): 38 sessions (12 new), 5 subagents, 5,120 entries recorded, 0 already there, 7 malformed lines skipped"
	if got != want {
		t.Errorf("Summary:\n got %q\nwant %q", got, want)
	}
}
