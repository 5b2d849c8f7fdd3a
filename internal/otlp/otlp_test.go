package otlp_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/otlp"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// testSpan describes a span once, to be written as OTLP/JSON or protobuf.
type testSpan struct {
	id, parent string // span ids, 16 hex digits
	name       string
	start, end int    // seconds after the run began
	failed     string // the status message of a span that failed
	attrs      map[string]any
}

const traceID = "5b8efff798038103d269b633813fc60c"

var runStart = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// agentRun is an agent run with a tool call and a subagent, as GenAI
// instrumentation reports it: planner (invoke_agent) asks the model (chat),
// which calls run_tests (execute_tool, failing); planner then hands off to
// fixer (a nested invoke_agent), whose model call answers. An HTTP span
// without GenAI attributes sits in between. The provider is named both
// ways: gen_ai.provider.name (semconv 1.37+) and gen_ai.system (before).
func agentRun() []testSpan {
	return []testSpan{
		{id: "a000000000000001", name: "invoke_agent planner", start: 0, end: 60, attrs: map[string]any{
			"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner", "gen_ai.provider.name": "anthropic",
			"gen_ai.input.messages": `[{"role":"user","parts":[{"type":"text","content":"Find why TestLogin is flaky"}]}]`,
		}},
		{id: "a000000000000002", parent: "a000000000000001", name: "chat claude-sonnet-4", start: 1, end: 5, attrs: map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4",
			"gen_ai.usage.input_tokens": int64(1200), "gen_ai.usage.output_tokens": int64(80),
			"gen_ai.input.messages": `[{"role":"system","parts":[{"type":"text","content":"You plan."}]},` +
				`{"role":"user","parts":[{"type":"text","content":"Find why TestLogin is flaky"}]}]`,
			"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"reasoning","content":"Run the tests first."},` +
				`{"type":"tool_call","id":"call_1","name":"run_tests","arguments":{"pkg":"./auth"}}]}]`,
		}},
		{id: "a000000000000003", parent: "a000000000000001", name: "execute_tool run_tests", start: 6, end: 9, failed: "exit status 1", attrs: map[string]any{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "run_tests", "gen_ai.tool.call.id": "call_1",
			"gen_ai.tool.call.arguments": `{"pkg":"./auth"}`, "gen_ai.tool.call.result": "FAIL TestLogin (race)",
		}},
		{id: "a000000000000004", parent: "a000000000000003", name: "GET /api/tests", start: 7, end: 8, attrs: map[string]any{
			"http.request.method": "GET", "url.path": "/api/tests",
		}},
		{id: "a000000000000005", parent: "a000000000000001", name: "invoke_agent fixer", start: 10, end: 50, attrs: map[string]any{
			"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "fixer", "gen_ai.system": "anthropic",
		}},
		{id: "a000000000000006", parent: "a000000000000005", name: "chat claude-haiku", start: 11, end: 40, attrs: map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.system": "anthropic", "gen_ai.request.model": "claude-haiku",
			"gen_ai.usage.input_tokens": int64(300), "gen_ai.usage.output_tokens": int64(40),
			"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"Fix TestLogin: it shares a clock"}]}]`,
			"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"Fixed: each test gets its own clock."}]}]`,
		}},
	}
}

func nanos(sec int) uint64 { return uint64(runStart.Add(time.Duration(sec) * time.Second).UnixNano()) }

// exportJSON writes spans as an OTLP/JSON ExportTraceServiceRequest, ids
// in hex, or in base64 as protobuf's JSON mapping would.
func exportJSON(t *testing.T, spans []testSpan, resource map[string]any, base64IDs bool) []byte {
	t.Helper()
	id := func(h string) string {
		if h == "" || !base64IDs {
			return h
		}
		b, _ := hex.DecodeString(h)
		return base64.StdEncoding.EncodeToString(b)
	}
	var out []map[string]any
	for _, s := range spans {
		js := map[string]any{
			"traceId": id(traceID), "spanId": id(s.id), "name": s.name, "kind": 1,
			"startTimeUnixNano": fmt.Sprint(nanos(s.start)), "endTimeUnixNano": nanos(s.end),
			"attributes": jsonAttrs(s.attrs),
		}
		if s.parent != "" {
			js["parentSpanId"] = id(s.parent)
		}
		if s.failed != "" {
			js["status"] = map[string]any{"code": 2, "message": s.failed}
		}
		out = append(out, js)
	}
	body, err := json.Marshal(map[string]any{"resourceSpans": []any{map[string]any{
		"resource":   map[string]any{"attributes": jsonAttrs(resource)},
		"scopeSpans": []any{map[string]any{"scope": map[string]any{"name": "test"}, "spans": out}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func jsonAttrs(attrs map[string]any) []any {
	var out []any
	for k, v := range attrs {
		var value map[string]any
		switch x := v.(type) {
		case string:
			value = map[string]any{"stringValue": x}
		case int64:
			value = map[string]any{"intValue": fmt.Sprint(x)} // 64-bit integers travel as strings
		}
		out = append(out, map[string]any{"key": k, "value": value})
	}
	return out
}

// exportProtobuf writes spans as a protobuf ExportTraceServiceRequest.
func exportProtobuf(t *testing.T, spans []testSpan, resource map[string]any) []byte {
	t.Helper()
	unhex := func(h string) []byte { b, _ := hex.DecodeString(h); return b }
	var out []*tracepb.Span
	for _, s := range spans {
		ps := &tracepb.Span{
			TraceId: unhex(traceID), SpanId: unhex(s.id), ParentSpanId: unhex(s.parent), Name: s.name,
			Kind: tracepb.Span_SPAN_KIND_INTERNAL, StartTimeUnixNano: nanos(s.start), EndTimeUnixNano: nanos(s.end),
			Attributes: protoAttrs(s.attrs),
		}
		if s.failed != "" {
			ps.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: s.failed}
		}
		out = append(out, ps)
	}
	body, err := proto.Marshal(&tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource:   &resourcepb.Resource{Attributes: protoAttrs(resource)},
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: out}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func protoAttrs(attrs map[string]any) []*commonpb.KeyValue {
	var out []*commonpb.KeyValue
	for k, v := range attrs {
		kv := &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{}}
		switch x := v.(type) {
		case string:
			kv.Value.Value = &commonpb.AnyValue_StringValue{StringValue: x}
		case int64:
			kv.Value.Value = &commonpb.AnyValue_IntValue{IntValue: x}
		}
		out = append(out, kv)
	}
	return out
}

func gzipped(t *testing.T, body []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fixture is a server with the OTLP handler, and a token for project demo.
type fixture struct {
	svc   *service.Service
	url   string
	token string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	svc := service.New(testdb.SQLite(t), service.Options{})
	mux := http.NewServeMux()
	mux.Handle("POST /v1/traces", otlp.Handler(svc, slog.New(slog.NewTextHandler(io.Discard, nil))))
	server := httptest.NewServer(mux)
	t.Cleanup(server.Close)
	token, err := svc.CreateToken(context.Background(), service.Caller{Actor: "admin", Admin: true}, "demo", "agent")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{svc: svc, url: server.URL, token: token}
}

// post sends an export and returns the status, the content type and the body.
func (f *fixture) post(t *testing.T, contentType, encoding string, body []byte) (int, string, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.url+"/v1/traces", bytes.NewReader(body))
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
	return res.StatusCode, res.Header.Get("Content-Type"), answer
}

// recorded is what the store holds of the run, in a form to compare.
type recorded struct {
	top, sub     logbook.Session
	topEntries   []string
	subEntries   []string
	toolStatuses []string
}

func (f *fixture) recorded(t *testing.T) recorded {
	t.Helper()
	ctx := context.Background()
	c := service.Caller{Actor: "agent", Project: "demo"}
	page, err := f.svc.ListSessions(ctx, c, service.ListParams{Filter: logbook.SessionFilter{Subagents: true}})
	if err != nil {
		t.Fatal(err)
	}
	var r recorded
	for _, s := range page.Sessions {
		if s.ParentID == "" {
			r.top = s
		} else {
			r.sub = s
		}
	}
	if len(page.Sessions) != 2 || r.top.ID == "" || r.sub.ParentID != r.top.ID {
		t.Fatalf("want a session and a subagent under it, got %+v", page.Sessions)
	}
	describe := func(id string) []string {
		view, err := f.svc.GetSession(ctx, c, id, service.GetParams{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range view.Entries {
			line := string(e.Kind) + " " + e.Role + " " + e.Tool + " " + e.ToolCallID + " " + e.Text + " " + string(e.Payload)
			if e.Usage != nil {
				line += fmt.Sprintf(" usage=%d/%d", e.Usage.InputTokens, e.Usage.OutputTokens)
			}
			out = append(out, strings.Join(strings.Fields(line), " ")+" @"+e.At.Sub(runStart).String())
		}
		return out
	}
	r.topEntries, r.subEntries = describe(r.top.ID), describe(r.sub.ID)
	calls, err := f.svc.ToolCalls(ctx, c, service.ToolCallParams{Project: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range calls.ToolCalls {
		r.toolStatuses = append(r.toolStatuses, tc.Tool+" "+tc.Status)
	}
	return r
}

// check compares what the run left in the store with what it should.
func (r recorded) check(t *testing.T) {
	t.Helper()
	wantTop := []string{
		`prompt user Find why TestLogin is flaky @0s`, // the agent was asked first; the chat repeats it
		`message assistant Run the tests first. {"thinking":true} usage=1200/80 @5s`,
		`tool_call run_tests call_1 {"pkg":"./auth"} @5s`,
		`tool_result run_tests call_1 FAIL TestLogin (race) {"error":"exit status 1","is_error":true} @9s`,
	}
	wantSub := []string{
		`prompt user Fix TestLogin: it shares a clock @11s`,
		`message assistant Fixed: each test gets its own clock. usage=300/40 @40s`,
	}
	if strings.Join(r.topEntries, "\n") != strings.Join(wantTop, "\n") {
		t.Errorf("session entries:\n%s\nwant\n%s", strings.Join(r.topEntries, "\n"), strings.Join(wantTop, "\n"))
	}
	if strings.Join(r.subEntries, "\n") != strings.Join(wantSub, "\n") {
		t.Errorf("subagent entries:\n%s\nwant\n%s", strings.Join(r.subEntries, "\n"), strings.Join(wantSub, "\n"))
	}
	if r.top.HarnessSessionID != "trace:"+traceID || r.top.Harness != "checkout-agent" || r.top.AgentType != "planner" ||
		r.top.Model != "anthropic/claude-sonnet-4" || r.top.InputTokens != 1200 || r.top.Outcome != logbook.OutcomeSuccess {
		t.Errorf("session: %+v", r.top)
	}
	if r.sub.HarnessSessionID != "trace:"+traceID+"/agent:a000000000000005" || r.sub.AgentType != "fixer" ||
		r.sub.Model != "anthropic/claude-haiku" || r.sub.OutputTokens != 40 || r.sub.Outcome != logbook.OutcomeSuccess {
		t.Errorf("subagent: %+v", r.sub)
	}
	// The sessions keep the spans' times: they start and end with their
	// invoke_agent spans (0-60 s and 10-50 s), not when they were exported.
	for _, s := range []struct {
		name       string
		sess       logbook.Session
		start, end int
	}{{"session", r.top, 0, 60}, {"subagent", r.sub, 10, 50}} {
		start, end := runStart.Add(time.Duration(s.start)*time.Second), runStart.Add(time.Duration(s.end)*time.Second)
		if !s.sess.StartedAt.Equal(start) || s.sess.ClosedAt == nil || !s.sess.ClosedAt.Equal(end) {
			t.Errorf("%s: started %v, closed %v; want its span's %v to %v", s.name, s.sess.StartedAt, s.sess.ClosedAt, start, end)
		}
	}
	if strings.Join(r.toolStatuses, ",") != "run_tests error" {
		t.Errorf("tool calls: %v, want run_tests with status error", r.toolStatuses)
	}
}

var resource = map[string]any{"service.name": "checkout-agent"}

func TestJSONExport(t *testing.T) {
	f := newFixture(t)
	body := exportJSON(t, agentRun(), resource, false)
	status, contentType, answer := f.post(t, "application/json", "", body)
	if status != http.StatusOK || contentType != "application/json" || strings.TrimSpace(string(answer)) != "{}" {
		t.Fatalf("export: %d %s %s", status, contentType, answer)
	}
	first := f.recorded(t)
	first.check(t)

	// The same export again (a retry), and the same spans with base64 ids:
	// nothing new.
	for _, again := range [][]byte{body, exportJSON(t, agentRun(), resource, true)} {
		if status, _, answer := f.post(t, "application/json", "gzip", gzipped(t, again)); status != http.StatusOK || strings.TrimSpace(string(answer)) != "{}" {
			t.Fatalf("retry: %d %s", status, answer)
		}
		if got := f.recorded(t); fmt.Sprint(got.topEntries, got.subEntries) != fmt.Sprint(first.topEntries, first.subEntries) ||
			got.top.EntryCount != first.top.EntryCount || got.sub.EntryCount != first.sub.EntryCount {
			t.Errorf("a retry changed the sessions:\n%v\n%v", got.topEntries, got.subEntries)
		}
	}
}

func TestProtobufExport(t *testing.T) {
	f := newFixture(t)
	body := exportProtobuf(t, agentRun(), resource)
	for i := range 2 { // the second time is a retry
		status, contentType, answer := f.post(t, "application/x-protobuf", "gzip", gzipped(t, body))
		if status != http.StatusOK || contentType != "application/x-protobuf" || len(answer) != 0 {
			t.Fatalf("export %d: %d %s %x", i+1, status, contentType, answer)
		}
		f.recorded(t).check(t)
	}
}

// Spans without GenAI attributes are accepted and change nothing.
func TestNonGenAISpansAreIgnored(t *testing.T) {
	f := newFixture(t)
	spans := []testSpan{{id: "b000000000000001", name: "GET /", end: 1, attrs: map[string]any{"http.request.method": "GET"}}}
	status, _, answer := f.post(t, "application/json", "", exportJSON(t, spans, resource, false))
	if status != http.StatusOK || strings.TrimSpace(string(answer)) != "{}" {
		t.Fatalf("export: %d %s", status, answer)
	}
	page, err := f.svc.ListSessions(context.Background(), service.Caller{Actor: "agent", Project: "demo"}, service.ListParams{})
	if err != nil || len(page.Sessions) != 0 {
		t.Errorf("sessions: %+v, %v; want none", page.Sessions, err)
	}
}

// GenAI spans for a project the token may not write are rejected, and the
// answer says so as OTLP partial success, in either encoding.
func TestPartialSuccess(t *testing.T) {
	f := newFixture(t)
	other := map[string]any{"service.name": "checkout-agent", "logbook.project": "someone-else"}
	status, _, answer := f.post(t, "application/json", "", exportJSON(t, agentRun(), other, false))
	var res struct {
		PartialSuccess struct {
			RejectedSpans string `json:"rejectedSpans"`
			ErrorMessage  string `json:"errorMessage"`
		} `json:"partialSuccess"`
	}
	if err := json.Unmarshal(answer, &res); status != http.StatusOK || err != nil ||
		res.PartialSuccess.RejectedSpans != "5" || !strings.Contains(res.PartialSuccess.ErrorMessage, "someone-else") {
		t.Errorf("JSON answer: %d %s (want 5 GenAI spans rejected, naming the project)", status, answer)
	}

	status, _, answer = f.post(t, "application/x-protobuf", "", exportProtobuf(t, agentRun(), other))
	rejected, message := readPartialSuccess(t, answer)
	if status != http.StatusOK || rejected != 5 || !strings.Contains(message, "someone-else") {
		t.Errorf("protobuf answer: %d, %d rejected, %q", status, rejected, message)
	}
}

// readPartialSuccess decodes an ExportTraceServiceResponse by hand.
func readPartialSuccess(t *testing.T, b []byte) (rejected int64, message string) {
	t.Helper()
	num, typ, n := protowire.ConsumeTag(b)
	if num != 1 || typ != protowire.BytesType || n < 0 {
		t.Fatalf("not an ExportTraceServiceResponse with partial_success: %x", b)
	}
	inner, _ := protowire.ConsumeBytes(b[n:])
	for len(inner) > 0 {
		num, typ, n := protowire.ConsumeTag(inner)
		inner = inner[n:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(inner)
			rejected, inner = int64(v), inner[m:]
		case num == 2 && typ == protowire.BytesType:
			v, m := protowire.ConsumeString(inner)
			message, inner = v, inner[m:]
		default:
			t.Fatalf("unexpected field %d in partial_success", num)
		}
	}
	return rejected, message
}

func TestBadRequests(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name, contentType, encoding string
		body                        []byte
		token                       string
		want                        int
	}{
		{"no token", "application/json", "", []byte(`{}`), "", http.StatusUnauthorized},
		{"not JSON", "application/json", "", []byte(`{"resourceSpans":`), f.token, http.StatusBadRequest},
		{"not protobuf", "application/x-protobuf", "", []byte{0xff, 0xff, 0xff}, f.token, http.StatusBadRequest},
		{"bad span id", "application/json", "", []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"` + traceID + `","spanId":"xyz"}]}]}]}`), f.token, http.StatusBadRequest},
		{"not gzip", "application/json", "gzip", []byte(`{}`), f.token, http.StatusBadRequest},
		{"other type", "text/plain", "", []byte(`{}`), f.token, http.StatusUnsupportedMediaType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, f.url+"/v1/traces", bytes.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.contentType)
			if tc.encoding != "" {
				req.Header.Set("Content-Encoding", tc.encoding)
			}
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Errorf("status %d, want %d", res.StatusCode, tc.want)
			}
		})
	}
}
