package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

const adminToken = "test-admin-token"

// client talks to a real server on a real store.
type client struct {
	t   *testing.T
	url string
}

// response is what a request got back.
type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func newServer(t *testing.T, e testdb.Engine) *client {
	t.Helper()
	svc := service.New(e.Open(t), service.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if _, err := svc.EnsureAdminToken(context.Background(), adminToken); err != nil {
		t.Fatal(err)
	}
	run(t, svc)
	mux := http.NewServeMux()
	httpapi.New(mux, svc, slog.New(slog.NewTextHandler(io.Discard, nil)), httpapi.Options{})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &client{t: t, url: srv.URL}
}

// run runs the service's background work as logbook serve does, until
// the test ends.
func run(t *testing.T, svc *service.Service) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { svc.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func (c *client) do(method, path, token string, body any) response {
	c.t.Helper()
	var reader io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		reader = strings.NewReader(b)
	case []byte:
		reader = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		reader = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, c.url+path, reader)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := response{status: res.StatusCode, header: res.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &out.body)
	return out
}

// expect fails the test unless the response has the status.
func (r response) expect(t *testing.T, status int) response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.raw)
	}
	return r
}

// problem checks an RFC 9457 problem document with a status and, when
// given, the field at fault.
func (r response) problem(t *testing.T, status int, field string) {
	t.Helper()
	r.expect(t, status)
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("content type %q, want application/problem+json", ct)
	}
	if r.body["detail"] == "" || r.body["title"] == "" || r.body["status"] != float64(status) {
		t.Errorf("not a problem document: %s", r.raw)
	}
	if field != "" && r.body["field"] != field {
		t.Errorf("problem field %v, want %q (%s)", r.body["field"], field, r.raw)
	}
}

func (c *client) token(project, actor string) string {
	c.t.Helper()
	r := c.do("POST", "/v1/tokens", adminToken, map[string]string{"project": project, "actor": actor}).expect(c.t, 201)
	return r.body["token"].(string)
}

func TestAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		c := newServer(t, e)
		alice := c.token("demo", "alice")
		bob := c.token("demo", "bob")
		stranger := c.token("other", "alice")

		t.Run("Auth", func(t *testing.T) {
			c.do("GET", "/healthz", "", nil).expect(t, 200)
			r := c.do("GET", "/v1/sessions?project=demo", "", nil)
			r.problem(t, 401, "")
			if r.header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			c.do("GET", "/v1/sessions?project=demo", "wrong", nil).problem(t, 401, "")
			// RFC 6750: the scheme is required, in any case.
			for header, want := range map[string]int{"bearer " + alice: 200, "BEARER " + alice: 200, alice: 401, "Basic " + alice: 401} {
				req, _ := http.NewRequest("GET", c.url+"/v1/sessions?project=demo", nil)
				req.Header.Set("Authorization", header)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != want || strings.Contains(string(body), alice) {
					t.Errorf("Authorization %.10q…: %d %s, want %d without the token", header, res.StatusCode, body, want)
				}
			}
			c.do("POST", "/v1/tokens", alice, map[string]string{"project": "demo", "actor": "eve"}).problem(t, 403, "")
			c.do("POST", "/v1/tokens", adminToken, map[string]string{"project": "demo"}).problem(t, 400, "actor")
		})

		var id string
		t.Run("StartIsIdempotent", func(t *testing.T) {
			body := map[string]any{"project": "demo", "harness": "claude-code", "harness_session_id": "abc", "goal": "Fix #12", "issue": 12}
			first := c.do("POST", "/v1/sessions", alice, body).expect(t, 201)
			id = first.body["id"].(string)
			for _, field := range []string{"id", "project", "actor", "harness", "harness_session_id", "parent_id", "agent", "title", "goal", "task",
				"prompt", "model", "agent_type", "issue", "pull", "branch", "head_commit", "subject", "state", "outcome", "blocker",
				"end_reason", "result", "started_at", "last_seen_at", "closed_at", "entry_count", "message_count", "tool_call_count",
				"input_tokens", "output_tokens"} {
				if _, ok := first.body[field]; !ok {
					t.Errorf("a session's JSON lacks %q", field)
				}
			}
			if first.body["issue"] != float64(12) || first.body["title"] != "Fix #12" || first.body["actor"] != "alice" {
				t.Errorf("start answered %s (want issue 12 as a number, as it was sent)", first.raw)
			}
			again := c.do("POST", "/v1/sessions", alice, body).expect(t, 200)
			if again.body["id"] != id {
				t.Errorf("a repeated start made another session")
			}
		})

		t.Run("EntriesAndRead", func(t *testing.T) {
			batch := map[string]any{"entries": []map[string]any{
				{"kind": "prompt", "text": "please fix"},
				{"kind": "tool_call", "tool": "Bash", "tool_call_id": "t1", "payload": map[string]any{"command": "go test ./..."}, "key": "t1"},
				{"kind": "tool_result", "tool_call_id": "t1", "text": "FAIL", "key": "t1-result"},
				{"kind": "message", "role": "assistant", "text": "Tests fail", "usage": map[string]int{"input_tokens": 10, "output_tokens": 3}},
			}}
			r := c.do("POST", "/v1/sessions/"+id+"/entries", alice, batch).expect(t, 200)
			if r.body["recorded"] != float64(4) || r.body["duplicates"] != float64(0) {
				t.Errorf("first batch: %s", r.raw)
			}
			r = c.do("POST", "/v1/sessions/"+id+"/entries", alice, batch).expect(t, 200)
			if r.body["recorded"] != float64(2) || r.body["duplicates"] != float64(2) {
				t.Errorf("repeated batch (two keyed entries skipped, two keyless recorded): %s", r.raw)
			}
			v := c.do("GET", "/v1/sessions/"+id+"?after_seq=1", bob, nil).expect(t, 200)
			entries := v.body["entries"].([]any)
			if len(entries) != 5 || v.body["next_after_seq"] != float64(6) {
				t.Fatalf("after_seq=1: %d entries, next %v", len(entries), v.body["next_after_seq"])
			}
			first := entries[0].(map[string]any)
			if first["seq"] != float64(2) || first["at"] == nil || first["tool"] != "Bash" {
				t.Errorf("entry JSON: %v", first)
			}
			sess := v.body["session"].(map[string]any)
			if sess["entry_count"] != float64(6) || sess["tool_call_count"] != float64(1) || sess["input_tokens"] != float64(20) {
				t.Errorf("counters: %v", sess)
			}
			for _, key := range []string{"subagents", "plan"} {
				if _, ok := v.body[key]; !ok {
					t.Errorf("GET session lacks %q", key)
				}
			}
		})

		t.Run("BadInput", func(t *testing.T) {
			path := "/v1/sessions/" + id + "/entries"
			c.do("POST", path, alice, `{"entries": [`).problem(t, 400, "")
			c.do("POST", path, alice, `{"entries": "many"}`).problem(t, 400, "entries")
			c.do("POST", path, alice, `{"entries": [{"kind": "shout"}]}`).problem(t, 400, "entries[0].kind")
			c.do("POST", path, alice, `{"entries": [{"kind": "message", "role": "robot"}]}`).problem(t, 400, "entries[0].role")
			c.do("POST", path, alice, `[1, 2]`).problem(t, 400, "")
			c.do("POST", path, alice, ``).problem(t, 400, "")
			many := make([]map[string]string, 501)
			for i := range many {
				many[i] = map[string]string{"kind": "note"}
			}
			c.do("POST", path, alice, map[string]any{"entries": many}).problem(t, 400, "entries")
			huge := fmt.Sprintf(`{"entries": [{"kind": "note", "text": %q}]}`, strings.Repeat("x", 9<<20))
			c.do("POST", path, alice, huge).problem(t, 413, "")
			c.do("POST", "/v1/sessions/"+id+"/end", alice, map[string]string{"outcome": "great"}).problem(t, 400, "outcome")
			c.do("GET", "/v1/sessions/"+id+"?after_seq=-1", alice, nil).problem(t, 400, "after_seq")
			c.do("GET", "/v1/sessions?project=demo&limit=500", alice, nil).problem(t, 400, "limit")
			c.do("GET", "/v1/nothing-here", alice, nil).problem(t, 404, "")
			v := c.do("GET", "/v1/sessions/"+id, alice, nil).expect(t, 200)
			if v.body["session"].(map[string]any)["entry_count"] != float64(6) {
				t.Errorf("bad requests changed what is stored: %v", v.body["session"])
			}
		})

		t.Run("Ownership", func(t *testing.T) {
			c.do("PATCH", "/v1/sessions/"+id, bob, map[string]string{"goal": "mine now"}).problem(t, 403, "")
			c.do("GET", "/v1/sessions/"+id, stranger, nil).problem(t, 404, "")
			c.do("GET", "/v1/sessions/does-not-exist", alice, nil).problem(t, 404, "")
			c.do("POST", "/v1/sessions", stranger, map[string]string{"project": "demo"}).problem(t, 403, "")
		})

		t.Run("PatchPlanEnd", func(t *testing.T) {
			r := c.do("PATCH", "/v1/sessions/"+id, alice, map[string]any{"branch": "fix-12", "pull": 7}).expect(t, 200)
			if r.body["branch"] != "fix-12" || r.body["pull"] != float64(7) || r.body["goal"] != "Fix #12" {
				t.Errorf("patch: %s", r.raw)
			}
			c.do("PUT", "/v1/sessions/"+id+"/plan", alice, map[string]any{"steps": []map[string]string{{"text": "reproduce"}, {"text": "fix", "status": "running"}}}).expect(t, 200)
			p := c.do("PATCH", "/v1/sessions/"+id+"/plan/1", alice, map[string]string{"status": "done"}).expect(t, 200)
			if p.body["plan"].([]any)[0].(map[string]any)["status"] != "done" {
				t.Errorf("plan after patch: %s", p.raw)
			}
			c.do("PATCH", "/v1/sessions/"+id+"/plan/x", alice, map[string]string{"status": "done"}).problem(t, 400, "n")
			end := c.do("POST", "/v1/sessions/"+id+"/end", alice, map[string]string{"outcome": "failed"}).expect(t, 200)
			if end.body["blocker"] != "tool_error" && end.body["blocker"] != "unknown" {
				t.Errorf("derived blocker: %v", end.body["blocker"])
			}
			if end.body["state"] != "ended" || end.body["closed_at"] == nil {
				t.Errorf("end: %s", end.raw)
			}
			r = c.do("POST", "/v1/sessions/"+id+"/entries", alice, map[string]any{"entries": []map[string]string{{"kind": "note"}}})
			r.problem(t, 409, "")
			if r.body["detail"] != "This session has ended. Start a new one." {
				t.Errorf("409 detail: %v", r.body["detail"])
			}
		})

		t.Run("AgentsAndCompact", func(t *testing.T) {
			first := c.do("POST", "/v1/agents/ceo/session?project=demo", alice, nil).expect(t, 201)
			c.do("POST", "/v1/agents/ceo/session?project=demo", alice, nil).expect(t, 200)
			rot := c.do("POST", "/v1/agents/ceo/rotate", alice, map[string]string{"project": "demo", "reason": "daily"}).expect(t, 201)
			if rot.body["previous_session_id"] != first.body["id"] {
				t.Errorf("rotate: %s", rot.raw)
			}
			newID := rot.body["session"].(map[string]any)["id"].(string)
			c.do("POST", "/v1/sessions/"+newID+"/entries", alice, map[string]any{"entries": []map[string]string{{"kind": "prompt", "text": "task 1"}}}).expect(t, 200)
			c.do("POST", "/v1/sessions/"+newID+"/compact", alice, map[string]any{"entries": []map[string]string{{"kind": "summary", "text": "did task 1"}}}).expect(t, 200)
			all := c.do("GET", "/v1/sessions/"+newID+"?all=true", alice, nil).expect(t, 200)
			entries := all.body["entries"].([]any)
			if len(entries) != 2 || entries[0].(map[string]any)["superseded"] != true {
				t.Errorf("after compaction, all=true: %s", all.raw)
			}
		})

		t.Run("ClassifyAndPolicy", func(t *testing.T) {
			r := c.do("POST", "/v1/classify", alice, map[string]string{"command": "sudo rm -rf / --no-preserve-root"}).expect(t, 200)
			if r.body["class"] != "destructive" || r.body["decision"] != "deny" || len(r.body["reasons"].([]any)) == 0 {
				t.Errorf("classify rm -rf /: %s", r.raw)
			}
			r = c.do("POST", "/v1/classify", alice, map[string]string{"command": "curl -X POST https://example.com -d x=1"}).expect(t, 200)
			if r.body["decision"] != "defer" {
				t.Errorf("default policy for a POST: %s, want defer", r.raw)
			}
			c.do("PUT", "/v1/projects/demo/policy", alice, map[string]string{"network": "allow"}).problem(t, 403, "")
			c.do("PUT", "/v1/projects/demo/policy", adminToken, map[string]string{"network": "sure"}).problem(t, 400, "policy")
			p := c.do("PUT", "/v1/projects/demo/policy", adminToken, map[string]any{"policy": map[string]string{"network": "allow"}}).expect(t, 200)
			if p.body["policy"].(map[string]any)["network"] != "allow" || p.body["policy"].(map[string]any)["destructive"] != nil ||
				p.body["effective"].(map[string]any)["destructive"] != "deny" || p.body["effective"].(map[string]any)["read_only"] != "defer" {
				t.Errorf("policy after PUT: %s; want what was set under policy, every class under effective", p.raw)
			}
			c.do("PUT", "/v1/projects/demo/policy", adminToken, map[string]any{"rules": []map[string]any{{"program": "deployctl", "class": "destructive"}}}).
				problem(t, 400, "policy")
			g := c.do("GET", "/v1/projects/demo/policy", bob, nil).expect(t, 200)
			if g.body["policy"].(map[string]any)["network"] != "allow" {
				t.Errorf("GET policy: %s", g.raw)
			}
			r = c.do("POST", "/v1/classify", alice, map[string]string{"command": "curl -X POST https://example.com -d x=1", "project": "demo"}).expect(t, 200)
			if r.body["decision"] != "allow" {
				t.Errorf("the project's policy is not used: %s", r.raw)
			}
			c.do("GET", "/v1/projects/demo/policy", stranger, nil).problem(t, 403, "")
		})

		t.Run("TasksNotesDelete", func(t *testing.T) {
			r := c.do("POST", "/v1/agents/eng/tasks?project=demo", alice, map[string]string{"task_id": "T-1", "title": "Fix #3", "text": "Fix issue 3"}).expect(t, 201)
			sessionID := r.body["session"].(map[string]any)["id"].(string)
			c.do("POST", "/v1/agents/eng/tasks?project=demo", alice, map[string]string{"task_id": "T-1", "title": "Fix #3", "text": "Fix issue 3"}).expect(t, 200)
			c.do("PUT", "/v1/agents/eng/rotation_policy?project=demo", alice, map[string]any{"max_age": "7d", "max_input_tokens": 100000}).expect(t, 200)
			c.do("PUT", "/v1/agents/eng/rotation_policy?project=demo", alice, map[string]any{"max_age": "soon"}).problem(t, 400, "max_age")
			c.do("POST", "/v1/agents/eng/rotate?project=demo", alice, map[string]string{"reason": "test"}).expect(t, 201)
			task := c.do("GET", "/v1/tasks/T-1?project=demo", alice, nil).expect(t, 200)
			if len(task.body["sessions"].([]any)) != 2 {
				t.Errorf("task after a rotation: %s", task.raw)
			}
			agent := c.do("GET", "/v1/agents/eng?project=demo", alice, nil).expect(t, 200)
			if len(agent.body["rotations"].([]any)) != 1 {
				t.Errorf("agent: %s", agent.raw)
			}
			tasks := c.do("GET", "/v1/agents/eng/tasks?project=demo", alice, nil).expect(t, 200)
			if len(tasks.body["tasks"].([]any)) != 1 {
				t.Errorf("tasks: %s", tasks.raw)
			}
			c.do("GET", "/v1/tasks/none?project=demo", alice, nil).problem(t, 404, "")

			live := c.do("POST", "/v1/sessions", alice, map[string]any{"project": "demo", "issue": 44}).expect(t, 201)
			n := c.do("POST", "/v1/notes", bob, map[string]any{"project": "demo", "issue": "#44", "text": "CI is red", "key": "n1"}).expect(t, 200)
			if n.body["told"] != float64(1) {
				t.Errorf("note: %s", n.raw)
			}
			c.do("POST", "/v1/notes", adminToken, map[string]any{"project": "demo", "issue": "#44", "text": "from the admin"}).problem(t, 403, "")
			// The note says who sent it; the owner's own entries cannot
			// claim an author.
			noted := c.do("GET", "/v1/sessions/"+live.body["id"].(string), alice, nil).expect(t, 200)
			entries := noted.body["entries"].([]any)
			author, _ := entries[len(entries)-1].(map[string]any)["author"].(map[string]any)
			if len(entries) != 1 || author["actor"] != "bob" || author["token_id"] == "" || author["token_id"] == nil {
				t.Errorf("the session after bob's note and the admin's refused one: %s", noted.raw)
			}
			c.do("POST", "/v1/sessions/"+live.body["id"].(string)+"/entries", alice,
				`{"entries":[{"kind":"note","text":"from bob, honest","author":{"actor":"bob"}}]}`).problem(t, 400, "entries[0].author")
			c.do("POST", "/v1/notes", bob, map[string]any{"project": "demo", "text": "?"}).problem(t, 400, "issue")

			liveID := live.body["id"].(string)
			c.do("DELETE", "/v1/sessions/"+liveID, bob, nil).problem(t, 403, "")
			d := c.do("DELETE", "/v1/sessions/"+liveID, alice, nil).expect(t, 200)
			if d.body["deleted"].(map[string]any)["sessions"] != float64(1) {
				t.Errorf("delete: %s", d.raw)
			}
			c.do("GET", "/v1/sessions/"+liveID, alice, nil).problem(t, 404, "")
			c.do("DELETE", "/v1/sessions/"+sessionID, adminToken, nil).expect(t, 200)
		})

		t.Run("List", func(t *testing.T) {
			r := c.do("GET", "/v1/sessions?project=demo&limit=1", alice, nil).expect(t, 200)
			if len(r.body["sessions"].([]any)) != 1 || r.body["next_cursor"] == nil {
				t.Fatalf("first page: %s", r.raw)
			}
			next := c.do("GET", "/v1/sessions?project=demo&limit=200&cursor="+r.body["next_cursor"].(string), alice, nil).expect(t, 200)
			if _, more := next.body["next_cursor"]; more {
				t.Errorf("the last page has a next_cursor")
			}
			c.do("GET", "/v1/sessions?project=demo&cursor=!!", alice, nil).problem(t, 400, "cursor")
		})
	})
}

// TestIssueRefs: issue and pull come back as numbers when they are all
// digits, whether sent as 12 or "12" (logbook keeps the text, not the
// form); any other ref, "007" among them, comes back as the string sent.
func TestIssueRefs(t *testing.T) {
	c := newServer(t, testdb.Engines()[0]) // encoding, not storage
	alice := c.token("demo", "alice")
	for _, tc := range []struct {
		sent, want any
	}{
		{12, float64(12)}, {"12", float64(12)}, {"#12", "#12"},
		{"JIRA-7", "JIRA-7"}, {"007", "007"}, {"", ""},
	} {
		r := c.do("POST", "/v1/sessions", alice, map[string]any{"project": "demo", "issue": tc.sent, "pull": tc.sent}).expect(t, 201)
		if r.body["issue"] != tc.want || r.body["pull"] != tc.want {
			t.Errorf("issue and pull sent as %#v: answered %#v and %#v, want %#v", tc.sent, r.body["issue"], r.body["pull"], tc.want)
		}
		got := c.do("GET", "/v1/sessions/"+r.body["id"].(string), alice, nil).expect(t, 200).body["session"].(map[string]any)
		if got["issue"] != tc.want {
			t.Errorf("issue sent as %#v: read back %#v, want %#v", tc.sent, got["issue"], tc.want)
		}
	}
}
