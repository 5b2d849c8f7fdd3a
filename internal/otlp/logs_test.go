package otlp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/proto"

	"github.com/logbookhq/logbook/internal/hook"
	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/otlp"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/testdb"
)

// testEvent is a harness event as an OTLP log record: its body (Claude
// Code puts the full event name there) and its attributes.
type testEvent struct {
	body  string
	attrs map[string]any
}

// Claude Code's events, shaped as its monitoring documentation describes
// them: the body is the event's name, event.name its short name; every
// event carries the standard attributes (session.id, organization.id,
// user.account_uuid, terminal.type…), event.timestamp, event.sequence and,
// within a prompt, prompt.id. Numbers travel as strings, as Claude Code
// sends them.
func claudeEvent(session, name string, seq int, at time.Time, attrs map[string]any) testEvent {
	all := map[string]any{
		"event.name": name, "event.timestamp": at.Format("2006-01-02T15:04:05.000Z07:00"), "event.sequence": int64(seq),
		"session.id": session, "prompt.id": "5c1b7f2e-0d3a-4e7b-9a61-3f2d8c4b1e90",
		"organization.id": "org-1", "user.account_uuid": "acct-1", "user.id": "u-1", "terminal.type": "vscode",
	}
	for k, v := range attrs {
		all[k] = v
	}
	return testEvent{body: "claude_code." + name, attrs: all}
}

// claudeResource is the resource Claude Code exports its events with.
var claudeResource = map[string]any{"service.name": "claude-code", "service.version": "2.1.118", "os.type": "linux", "host.arch": "amd64"}

// exportLogsJSON writes events as an OTLP/JSON ExportLogsServiceRequest.
func exportLogsJSON(t *testing.T, events []testEvent, resource map[string]any) []byte {
	t.Helper()
	var records []any
	for i, e := range events {
		records = append(records, map[string]any{
			"timeUnixNano": fmt.Sprint(nanos(i)), "severityNumber": 9, "severityText": "INFO",
			"body": map[string]any{"stringValue": e.body}, "attributes": jsonAttrs(e.attrs),
		})
	}
	return marshal(t, map[string]any{"resourceLogs": []any{map[string]any{
		"resource":  map[string]any{"attributes": jsonAttrs(resource)},
		"scopeLogs": []any{map[string]any{"scope": map[string]any{"name": "com.anthropic.claude_code.events", "version": "2.1.118"}, "logRecords": records}},
	}}})
}

// exportLogsProtobuf writes events as a protobuf ExportLogsServiceRequest.
func exportLogsProtobuf(t *testing.T, events []testEvent, resource map[string]any) []byte {
	t.Helper()
	var records []*logspb.LogRecord
	for i, e := range events {
		r := &logspb.LogRecord{TimeUnixNano: nanos(i), SeverityNumber: logspb.SeverityNumber_SEVERITY_NUMBER_INFO, Attributes: protoAttrs(e.attrs)}
		if e.body != "" {
			r.Body = &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: e.body}}
		}
		records = append(records, r)
	}
	body, err := proto.Marshal(&logspb.LogsData{ResourceLogs: []*logspb.ResourceLogs{{
		Resource: &resourcepb.Resource{Attributes: protoAttrs(resource)}, ScopeLogs: []*logspb.ScopeLogs{{LogRecords: records}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// harnessFixture is a server with the API, /v1/traces and /v1/logs, a
// token for actor agent in project demo, and logbook's Claude Code hook
// pointed at it, as a user who installed both would have them.
type harnessFixture struct {
	*fixture
	clock time.Time // the hook's now
	hook  *hook.Hook
}

func newHarnessFixture(t *testing.T, engine func(testing.TB) store.Store) *harnessFixture {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(engine(t), service.Options{Logger: log})
	mux := http.NewServeMux()
	httpapi.New(mux, svc, log, httpapi.Options{})
	mux.Handle("POST /v1/traces", otlp.Handler(svc, log))
	mux.Handle("POST /v1/logs", otlp.LogsHandler(svc, log))
	mux.Handle("POST /v1/metrics", otlp.MetricsHandler(svc, log))
	server := httptest.NewServer(mux)
	t.Cleanup(server.Close)
	token, err := svc.CreateToken(context.Background(), service.Caller{Actor: "admin", Admin: true}, "demo", "agent")
	if err != nil {
		t.Fatal(err)
	}
	f := &harnessFixture{fixture: &fixture{svc: svc, url: server.URL, token: token}, clock: runStart}
	f.hook = hook.New(hook.Config{URL: server.URL, Token: token, Project: "demo", SpoolDir: t.TempDir(),
		Deadline: time.Minute, Now: func() time.Time { return f.clock }}, io.Discard)
	return f
}

// runHook runs the Claude Code hook on one event's payload at a time.
func (f *harnessFixture) runHook(t *testing.T, at time.Time, payload string) {
	t.Helper()
	f.clock = at
	f.hook.Claude(context.Background(), strings.NewReader(payload), io.Discard)
	if report, err := f.hook.Flush(context.Background()); err != nil {
		t.Fatalf("hook delivery: %v (%+v)", err, report)
	}
}

// postLogs sends a logs export and returns the status and the answer.
func (f *harnessFixture) postLogs(t *testing.T, contentType, encoding string, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.url+"/v1/logs", bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+f.token)
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	return res.StatusCode, strings.TrimSpace(string(answer))
}

// sessions lists the caller's sessions with their entries described.
func (f *harnessFixture) sessions(t *testing.T) (list []logbook.Session, entries map[string][]string) {
	t.Helper()
	ctx := context.Background()
	c := service.Caller{Actor: "agent", Project: "demo"}
	page, err := f.svc.ListSessions(ctx, c, service.ListParams{Filter: logbook.SessionFilter{Subagents: true}})
	if err != nil {
		t.Fatal(err)
	}
	entries = make(map[string][]string)
	for _, s := range page.Sessions {
		view, err := f.svc.GetSession(ctx, c, s.ID, service.GetParams{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range view.Entries {
			line := string(e.Kind) + " " + e.Tool + " " + e.ToolCallID + " " + e.Text
			if e.Usage != nil {
				line += fmt.Sprintf(" usage=%d/%d", e.Usage.InputTokens, e.Usage.OutputTokens)
				if e.Usage.CacheReadTokens+e.Usage.CacheWriteTokens > 0 || e.Usage.CostMicros > 0 {
					line += fmt.Sprintf(" cache=%d/%d cost=%d", e.Usage.CacheReadTokens, e.Usage.CacheWriteTokens, e.Usage.CostMicros)
				}
			}
			entries[s.HarnessSessionID] = append(entries[s.HarnessSessionID], strings.Join(strings.Fields(line), " "))
		}
		sort.Strings(entries[s.HarnessSessionID])
	}
	return page.Sessions, entries
}

func engines() map[string]func(testing.TB) store.Store {
	return map[string]func(testing.TB) store.Store{
		"sqlite":   func(t testing.TB) store.Store { return testdb.SQLite(t) },
		"postgres": func(t testing.TB) store.Store { return testdb.Postgres(t) },
	}
}

// A Claude Code session reported by logbook's hook and by Claude Code's
// own OTLP events is one session; a tool call both report (tool_use_id) and
// a prompt both report (its text, OTEL_LOG_USER_PROMPTS=1) are one entry
// each; the events add what the hook does not see: model calls with their
// usage, API errors, denied tools, tool calls the hook missed. Retried
// exports, in either encoding, add nothing, and events that arrive after
// the session ended leave it ended as it was.
func TestClaudeCodeEventsJoinTheHooksSession(t *testing.T) {
	for name, engine := range engines() {
		t.Run(name, func(t *testing.T) {
			f := newHarnessFixture(t, engine)
			const sid = "0f6e5a1c-7a3b-4b8e-9d42-5e1f0c2a9b77"
			at := func(sec int) time.Time { return runStart.Add(time.Duration(sec) * time.Second) }
			cwd := t.TempDir()

			f.runHook(t, at(0), `{"session_id":"`+sid+`","cwd":"`+cwd+`","hook_event_name":"UserPromptSubmit","prompt":"Why is TestLogin flaky?"}`)
			f.runHook(t, at(3), `{"session_id":"`+sid+`","cwd":"`+cwd+`","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_01",`+
				`"tool_input":{"command":"go test ./auth"},"tool_response":{"stdout":"FAIL TestLogin","stderr":"","interrupted":false}}`)

			events := []testEvent{
				claudeEvent(sid, "user_prompt", 1, at(0), map[string]any{"prompt_length": "23", "prompt": "Why is TestLogin flaky?"}),
				claudeEvent(sid, "api_request", 2, at(2), map[string]any{"model": "claude-sonnet-4-5-20250929", "cost_usd": "0.0123",
					"duration_ms": "2100", "input_tokens": "1200", "output_tokens": "80", "cache_read_tokens": "3000", "cache_creation_tokens": "0"}),
				claudeEvent(sid, "tool_decision", 3, at(2), map[string]any{"tool_name": "Bash", "decision": "accept", "source": "config", "tool_use_id": "toolu_01"}),
				claudeEvent(sid, "tool_result", 4, at(3), map[string]any{"tool_name": "Bash", "tool_use_id": "toolu_01", "success": "true",
					"duration_ms": "812", "tool_result_size_bytes": "15", "tool_parameters": `{"bash_command":"go","full_command":"go test ./auth"}`}),
				claudeEvent(sid, "tool_result", 5, at(4), map[string]any{"tool_name": "Read", "tool_use_id": "toolu_02", "success": "false",
					"duration_ms": "3", "error": "File does not exist."}),
				claudeEvent(sid, "tool_decision", 6, at(5), map[string]any{"tool_name": "Bash", "decision": "reject", "source": "user_reject", "tool_use_id": "toolu_03"}),
				claudeEvent(sid, "api_error", 7, at(6), map[string]any{"model": "claude-sonnet-4-5-20250929", "error": "Overloaded",
					"status_code": "529", "duration_ms": "400", "attempt": "1"}),
			}
			if status, answer := f.postLogs(t, "application/json", "", exportLogsJSON(t, events, claudeResource)); status != http.StatusOK || answer != "{}" {
				t.Fatalf("export: %d %s", status, answer)
			}
			want := []string{
				"note API error 529: Overloaded",
				"note Bash reject (user_reject)",
				"note model call: claude-sonnet-4-5-20250929 usage=4200/80 cache=3000/0 cost=12300",
				"prompt Why is TestLogin flaky?",
				"tool_call Bash toolu_01",
				"tool_call Read toolu_02",
				"tool_result Bash toolu_01 FAIL TestLogin",
				"tool_result Read toolu_02 File does not exist.",
			}
			check := func(when string) logbook.Session {
				t.Helper()
				list, entries := f.sessions(t)
				if len(list) != 1 {
					t.Fatalf("%s: %d sessions, want the hook's one: %+v", when, len(list), list)
				}
				s := list[0]
				if got := strings.Join(entries[sid], "\n"); got != strings.Join(want, "\n") {
					t.Errorf("%s: entries\n%s\nwant\n%s", when, got, strings.Join(want, "\n"))
				}
				if s.Harness != "claude-code" || s.HarnessSessionID != sid || s.Model != "claude-sonnet-4-5-20250929" || s.InputTokens != 4200 || s.OutputTokens != 80 ||
					s.CostMicros != 12_300 { // Claude Code's cost_usd, not the price table's

					t.Errorf("%s: session %+v", when, s)
				}
				return s
			}
			check("after the export")

			// A retry in protobuf, gzipped, adds nothing.
			if status, answer := f.postLogs(t, "application/x-protobuf", "gzip", gzipped(t, exportLogsProtobuf(t, events, claudeResource))); status != http.StatusOK || answer != "" {
				t.Fatalf("retry: %d %q", status, answer)
			}
			check("after a retry")

			// The session ends by its hook; a model call reported after
			// that leaves it ended, as the hook ended it.
			f.runHook(t, at(10), `{"session_id":"`+sid+`","cwd":"`+cwd+`","hook_event_name":"SessionEnd","reason":"exit"}`)
			late := []testEvent{claudeEvent(sid, "api_request", 8, at(9), map[string]any{"model": "claude-sonnet-4-5-20250929",
				"cost_usd": "0.001", "input_tokens": "10", "output_tokens": "5"})}
			if status, answer := f.postLogs(t, "application/json", "", exportLogsJSON(t, late, claudeResource)); status != http.StatusOK || answer != "{}" {
				t.Fatalf("late export: %d %s", status, answer)
			}
			if s := check("after a late event"); s.State != logbook.StateEnded || s.Outcome != logbook.OutcomeSuccess {
				t.Errorf("the late event changed the ended session: %s %s", s.State, s.Outcome)
			}
		})
	}
}

// Events that arrive before the hook start the session; the hook's
// records then join it, adding no second tool call.
func TestEventsBeforeTheHook(t *testing.T) {
	f := newHarnessFixture(t, func(t testing.TB) store.Store { return testdb.SQLite(t) })
	const sid = "9d0c3b2a-1e4f-4a5b-8c7d-6e5f4a3b2c1d"
	events := []testEvent{claudeEvent(sid, "tool_result", 1, runStart, map[string]any{"tool_name": "Bash", "tool_use_id": "toolu_09",
		"success": "true", "duration_ms": "20"})}
	if status, answer := f.postLogs(t, "application/json", "", exportLogsJSON(t, events, claudeResource)); status != http.StatusOK || answer != "{}" {
		t.Fatalf("export: %d %s", status, answer)
	}
	f.runHook(t, runStart.Add(time.Second), `{"session_id":"`+sid+`","cwd":"`+t.TempDir()+`","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_09",`+
		`"tool_input":{"command":"ls"},"tool_response":{"stdout":"a","stderr":"","interrupted":false}}`)
	list, entries := f.sessions(t)
	want := "tool_call Bash toolu_09\ntool_result Bash toolu_09"
	if len(list) != 1 || strings.Join(entries[sid], "\n") != want {
		t.Errorf("sessions %+v\nentries %q, want one session with\n%s", list, entries, want)
	}
}

// Codex's events, shaped as its [otel] documentation describes them:
// event.name carries the full name, every event conversation.id,
// event.timestamp, app.version, auth_mode, model, slug and terminal.type.
// They join the session Codex's hooks recorded (its session_id is the
// conversation id, its tool_use_id the call_id).
func TestCodexEvents(t *testing.T) {
	f := newHarnessFixture(t, func(t testing.TB) store.Store { return testdb.SQLite(t) })
	const conv = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	f.clock = runStart.Add(8 * time.Second)
	f.hook.CodexHook(context.Background(), strings.NewReader(`{"session_id":"`+conv+`","cwd":"`+t.TempDir()+`","hook_event_name":"PostToolUse",`+
		`"tool_name":"shell","tool_use_id":"call_7Hq","tool_input":{"command":["go","test","./..."]},"tool_response":"ok  example.com/cli 0.4s"}`), io.Discard)
	if report, err := f.hook.Flush(context.Background()); err != nil {
		t.Fatalf("hook delivery: %v (%+v)", err, report)
	}
	event := func(name string, sec int, attrs map[string]any) testEvent {
		all := map[string]any{"event.name": name, "event.timestamp": runStart.Add(time.Duration(sec) * time.Second).Format(time.RFC3339Nano),
			"conversation.id": conv, "app.version": "0.46.0", "auth_mode": "ChatGPT", "model": "gpt-5-codex", "slug": "gpt-5-codex", "terminal.type": "xterm-256color"}
		for k, v := range attrs {
			all[k] = v
		}
		return testEvent{attrs: all}
	}
	events := []testEvent{
		event("codex.conversation_starts", 0, map[string]any{"provider_name": "openai", "reasoning_effort": "medium", "approval_policy": "on-request", "sandbox_policy": "workspace-write"}),
		event("codex.user_prompt", 1, map[string]any{"prompt_length": "17", "prompt": "add a --json flag"}),
		event("codex.api_request", 2, map[string]any{"attempt": "1", "duration_ms": "950", "http.response.status_code": "200"}),
		event("codex.sse_event", 5, map[string]any{"event.kind": "response.created", "duration_ms": "10"}),
		event("codex.sse_event", 6, map[string]any{"event.kind": "response.completed", "duration_ms": "3100", "input_token_count": "5400",
			"output_token_count": "320", "cached_token_count": "4096", "reasoning_token_count": "128", "tool_token_count": "0"}),
		event("codex.tool_decision", 7, map[string]any{"tool_name": "shell", "call_id": "call_7Hq", "decision": "approved", "source": "config"}),
		event("codex.tool_result", 8, map[string]any{"tool_name": "shell", "call_id": "call_7Hq", "arguments": `{"command":["go","test","./..."]}`,
			"duration_ms": "2300", "success": "true", "output": "ok  example.com/cli 0.4s"}),
		event("codex.api_request", 9, map[string]any{"attempt": "2", "duration_ms": "30", "http.response.status_code": "429", "error.message": "rate limited"}),
	}
	resource := map[string]any{"service.name": "codex_exec", "service.version": "0.46.0", "env": "dev"}
	for i := range 2 { // the second time is a retry
		if status, answer := f.postLogs(t, "application/x-protobuf", "", exportLogsProtobuf(t, events, resource)); status != http.StatusOK || answer != "" {
			t.Fatalf("export %d: %d %q", i+1, status, answer)
		}
	}
	list, entries := f.sessions(t)
	want := []string{
		"note API error 429: rate limited",
		// Priced by the table: 1,304 fresh input tokens × $1.25/M + 4,096
		// cached × $0.125/M + 320 output × $10/M = 1,630 + 512 + 3,200 micro-dollars.
		"note model call: gpt-5-codex usage=5400/320 cache=4096/0 cost=5342",
		"prompt add a --json flag",
		"tool_call shell call_7Hq",
		"tool_result shell call_7Hq ok example.com/cli 0.4s",
	}
	if len(list) != 1 || list[0].Harness != "codex" || list[0].HarnessSessionID != conv || list[0].Model != "gpt-5-codex" || list[0].InputTokens != 5400 {
		t.Fatalf("sessions: %+v", list)
	}
	if got := strings.Join(entries[conv], "\n"); got != strings.Join(want, "\n") {
		t.Errorf("entries\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}

// Records of other programs are accepted and ignored; events for a project
// the token may not write are reported as partial success.
func TestLogsOtherRecordsAndPartialSuccess(t *testing.T) {
	f := newHarnessFixture(t, func(t testing.TB) store.Store { return testdb.SQLite(t) })
	other := []testEvent{{body: "GET / 200", attrs: map[string]any{"http.request.method": "GET"}}}
	if status, answer := f.postLogs(t, "application/json", "", exportLogsJSON(t, other, map[string]any{"service.name": "web"})); status != http.StatusOK || answer != "{}" {
		t.Fatalf("other records: %d %s", status, answer)
	}
	if list, _ := f.sessions(t); len(list) != 0 {
		t.Errorf("sessions from other records: %+v", list)
	}
	elsewhere := map[string]any{"service.name": "claude-code", "logbook.project": "someone-else"}
	events := []testEvent{claudeEvent("s-1", "api_request", 1, runStart, map[string]any{"model": "m", "input_tokens": "1"}),
		claudeEvent("s-1", "api_request", 2, runStart, map[string]any{"model": "m", "input_tokens": "2"})}
	status, answer := f.postLogs(t, "application/json", "", exportLogsJSON(t, events, elsewhere))
	if status != http.StatusOK || !strings.Contains(answer, `"rejectedLogRecords":"2"`) || !strings.Contains(answer, "someone-else") {
		t.Errorf("answer: %d %s, want 2 records rejected naming the project", status, answer)
	}
	for _, tc := range []struct {
		name, contentType, token string
		body                     []byte
		want                     int
	}{
		{"no token", "application/json", "", []byte(`{}`), http.StatusUnauthorized},
		{"not JSON", "application/json", f.token, []byte(`{"resourceLogs":`), http.StatusBadRequest},
		{"not protobuf", "application/x-protobuf", f.token, []byte{0xff, 0xff, 0xff}, http.StatusBadRequest},
	} {
		req, _ := http.NewRequest(http.MethodPost, f.url+"/v1/logs", bytes.NewReader(tc.body))
		req.Header.Set("Content-Type", tc.contentType)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, res.StatusCode, tc.want)
		}
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Claude Code's metrics, shaped as its monitoring documentation describes
// them: counters whose data points carry session.id and the standard
// attributes, token.usage and cost.usage by model (and type). They start
// the session the hook and the events then write to; their values are not
// recorded, so the events' usage is counted once.
func TestClaudeCodeMetrics(t *testing.T) {
	f := newHarnessFixture(t, func(t testing.TB) store.Store { return testdb.SQLite(t) })
	const sid = "3a9e1f70-2b4c-4d8e-a1f3-7c6b5d4e3f21"
	point := func(value float64, attrs map[string]any) map[string]any {
		all := map[string]any{"session.id": sid, "user.account_uuid": "acct-1", "organization.id": "org-1", "terminal.type": "vscode", "app.version": "2.1.118"}
		for k, v := range attrs {
			all[k] = v
		}
		return map[string]any{"attributes": jsonAttrs(all), "startTimeUnixNano": fmt.Sprint(nanos(0)), "timeUnixNano": fmt.Sprint(nanos(60)), "asDouble": value}
	}
	sum := func(name, unit string, points ...map[string]any) map[string]any {
		return map[string]any{"name": name, "unit": unit, "sum": map[string]any{"aggregationTemporality": 1, "isMonotonic": true, "dataPoints": points}}
	}
	body := marshal(t, map[string]any{"resourceMetrics": []any{map[string]any{
		"resource": map[string]any{"attributes": jsonAttrs(claudeResource)},
		"scopeMetrics": []any{map[string]any{"scope": map[string]any{"name": "com.anthropic.claude_code", "version": "2.1.118"}, "metrics": []any{
			sum("claude_code.session.count", "count", point(1, nil)),
			sum("claude_code.token.usage", "tokens", point(1200, map[string]any{"type": "input", "model": "claude-sonnet-4-5-20250929"}),
				point(80, map[string]any{"type": "output", "model": "claude-sonnet-4-5-20250929"})),
			sum("claude_code.cost.usage", "USD", point(0.0123, map[string]any{"model": "claude-sonnet-4-5-20250929"})),
			sum("claude_code.lines_of_code.count", "count", point(12, map[string]any{"type": "added"})),
		}}},
	}}})
	post := func(body []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, f.url+"/v1/metrics", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+f.token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || strings.TrimSpace(string(answer)) != "{}" {
			t.Fatalf("metrics export: %d %s", res.StatusCode, answer)
		}
	}
	post(body)
	post(body) // the next export interval: the same session
	events := []testEvent{claudeEvent(sid, "api_request", 1, runStart, map[string]any{"model": "claude-sonnet-4-5-20250929",
		"cost_usd": "0.0123", "input_tokens": "1200", "output_tokens": "80"})}
	if status, answer := f.postLogs(t, "application/json", "", exportLogsJSON(t, events, claudeResource)); status != http.StatusOK || answer != "{}" {
		t.Fatalf("logs export: %d %s", status, answer)
	}
	f.runHook(t, runStart.Add(time.Minute), `{"session_id":"`+sid+`","cwd":"`+t.TempDir()+`","hook_event_name":"SessionEnd","reason":"exit"}`)
	post(body) // a last export after the end leaves the session ended
	list, _ := f.sessions(t)
	if len(list) != 1 || list[0].Harness != "claude-code" || list[0].HarnessSessionID != sid || list[0].Model != "claude-sonnet-4-5-20250929" ||
		list[0].InputTokens != 1200 || list[0].OutputTokens != 80 || list[0].State != logbook.StateEnded {
		t.Errorf("sessions: %+v, want one ended claude-code session with the events' usage counted once", list)
	}

	// In protobuf, a session the metrics name first is started.
	pb, err := proto.Marshal(&metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{
		Resource: &resourcepb.Resource{Attributes: protoAttrs(claudeResource)},
		ScopeMetrics: []*metricspb.ScopeMetrics{{Metrics: []*metricspb.Metric{{Name: "claude_code.session.count", Unit: "count",
			Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{IsMonotonic: true, AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA,
				DataPoints: []*metricspb.NumberDataPoint{{Attributes: protoAttrs(map[string]any{"session.id": "second"}), TimeUnixNano: nanos(1),
					Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: 1}}}}}}}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, f.url+"/v1/metrics", bytes.NewReader(pb))
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Authorization", "Bearer "+f.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if list, _ := f.sessions(t); res.StatusCode != http.StatusOK || len(list) != 2 {
		t.Errorf("protobuf export: %d, sessions %+v; want the second session started", res.StatusCode, list)
	}
}
