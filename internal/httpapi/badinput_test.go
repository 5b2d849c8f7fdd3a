package httpapi_test

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestListSearchBounds sends the searches an adversarial probe sent (500
// words, one word of 50,000 characters, which SQLite refused as "Expression
// tree is too large" and "LIKE or GLOB pattern too complex") and others a
// database may choke on: each is a 400 naming the bound, or a page, never
// a 500, on both engines. A search at the bounds still finds its session.
func TestListSearchBounds(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		c := newServer(t, e)
		alice := c.token("demo", "alice")

		// A title of as many words as a search may hold, the last of them
		// long enough to bring the search to its length bound.
		words := make([]string, logbook.MaxQueryWords)
		for i := range words {
			words[i] = "w" + strconv.Itoa(i)
		}
		short := strings.Join(words[:len(words)-1], " ") + " "
		words[len(words)-1] = strings.Repeat("é", logbook.MaxQueryLen-len([]rune(short)))
		atBounds := strings.Join(words, " ")
		c.do("POST", "/v1/sessions", alice, map[string]any{"project": "demo", "goal": "100% of a_b \\ " + atBounds}).expect(t, 201)
		c.do("POST", "/v1/sessions", alice, map[string]any{"project": "demo", "title": "another session"}).expect(t, 201)

		list := func(q string) response {
			t.Helper()
			return c.do("GET", "/v1/sessions?project=demo&q="+url.QueryEscape(q), alice, nil)
		}
		found := func(q string) int {
			t.Helper()
			r := list(q).expect(t, 200)
			return len(r.body["sessions"].([]any))
		}
		if n := found(atBounds); n != 1 {
			t.Errorf("a search at the bounds (%d words, %d characters) found %d sessions, want 1", logbook.MaxQueryWords, logbook.MaxQueryLen, n)
		}
		// Words are searched for, punctuation separates them: LIKE's
		// wildcards mean nothing, and a search of punctuation alone says
		// what to do.
		for q, want := range map[string]int{"100%": 1, "a_b": 1, "100% of": 1, "x_y": 0, "a%b": 1} {
			if n := found(q); n != want {
				t.Errorf("q=%q found %d sessions, want %d", q, n, want)
			}
		}
		for _, q := range []string{`\`, "%", "_", "%%%"} {
			list(q).problem(t, 400, "q")
		}

		for _, tc := range []struct {
			name, q, bound string
		}{
			{"500Words", strings.Repeat("word ", 500), strconv.Itoa(logbook.MaxQueryWords) + " words"},
			{"OneMoreWord", atBounds[:len(atBounds)-len(words[len(words)-1])] + "x y", strconv.Itoa(logbook.MaxQueryWords) + " words"},
			{"50000Characters", strings.Repeat("x", 50000), strconv.Itoa(logbook.MaxQueryLen) + " characters"},
			{"OneMoreCharacter", atBounds + "é", strconv.Itoa(logbook.MaxQueryLen) + " characters"},
		} {
			r := list(tc.q)
			r.problem(t, 400, "q")
			if !strings.Contains(r.raw, tc.bound) {
				t.Errorf("%s: the problem does not name the bound %q: %s", tc.name, tc.bound, r.raw)
			}
		}

		// Bytes a database may refuse in text are a 400 or an empty page.
		for _, q := range []string{"a\x00b", "\xff\xfe", "\xc0\xae", "\x01\x7f", strings.Repeat("%", logbook.MaxQueryLen), strings.Repeat(`\`, logbook.MaxQueryLen)} {
			if r := list(q); r.status != 200 && r.status != 400 {
				t.Errorf("q=%q: status %d, want 200 or 400; %s", q, r.status, r.raw)
			}
		}
	})
}

// TestAbsurdTokenCounts: two entries of 2^63-1 input tokens wrapped a
// session's counter to -2 and the stats sums with it; such a count is now
// a 400 naming the field and the bound, and stores nothing.
func TestAbsurdTokenCounts(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		c := newServer(t, e)
		alice := c.token("demo", "alice")
		id := c.do("POST", "/v1/sessions", alice, `{"project":"demo","harness":"h"}`).expect(t, 201).body["id"].(string)
		batch := func(tokens string) string {
			entry := `{"kind":"message","role":"assistant","text":"hi","usage":{"input_tokens":` + tokens + `,"output_tokens":1}}`
			return `{"entries":[` + entry + `,` + entry + `]}`
		}

		r := c.do("POST", "/v1/sessions/"+id+"/entries", alice, batch("9223372036854775807"))
		r.problem(t, 400, "entries[0].usage.input_tokens")
		if !strings.Contains(r.raw, strconv.FormatInt(logbook.MaxTokens, 10)) {
			t.Errorf("the problem does not name the bound: %s", r.raw)
		}
		c.do("POST", "/v1/sessions/"+id+"/entries", alice, batch("9223372036854775808")).problem(t, 400, "entries.usage.input_tokens")

		c.do("POST", "/v1/sessions/"+id+"/entries", alice, batch(strconv.FormatInt(logbook.MaxTokens, 10))).expect(t, 200)
		sess := c.do("GET", "/v1/sessions/"+id, alice, nil).expect(t, 200).body["session"].(map[string]any)
		if sess["entry_count"] != float64(2) || sess["input_tokens"] != float64(2*logbook.MaxTokens) {
			t.Errorf("entry_count %v, input_tokens %v; want 2 and %d", sess["entry_count"], sess["input_tokens"], int64(2*logbook.MaxTokens))
		}
		stats := c.do("GET", "/v1/stats?project=demo&by=harness", alice, nil).expect(t, 200)
		rows, _ := stats.body["groups"].([]any)
		if len(rows) != 1 || rows[0].(map[string]any)["input_tokens"] != float64(2*logbook.MaxTokens) {
			t.Errorf("stats: %s, want one row of %d input tokens", stats.raw, int64(2*logbook.MaxTokens))
		}
	})
}

// TestNames: names (project, actor, agent, harness, harness session id,
// task id) follow one rule on every route, on both engines: surrounding
// white space is trimmed and the trimmed name is what is answered; a
// control character or NUL is a 400 naming the field, so that "a\u0000"
// can no longer stand for "a".
func TestNames(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		c := newServer(t, e)

		// The token's project and actor are answered as stored.
		r := c.do("POST", "/v1/tokens", adminToken, map[string]string{"project": "  demo ", "actor": "\talice\n"}).expect(t, 201)
		if r.body["project"] != "demo" || r.body["actor"] != "alice" {
			t.Errorf("the token is for %q/%q, want demo/alice", r.body["project"], r.body["actor"])
		}
		alice := r.body["token"].(string)
		for _, bad := range []struct{ project, actor, field string }{
			{"demo\u0000", "bob", "project"}, {"de\nmo", "bob", "project"},
			{"demo", "bob\u0000", "actor"}, {"demo", "b\u007fob", "actor"},
		} {
			c.do("POST", "/v1/tokens", adminToken, map[string]string{"project": bad.project, "actor": bad.actor}).problem(t, 400, bad.field)
		}

		// One harness session id, one session: "a" with spaces around is
		// "a"; "a" with a NUL is refused, not taken for "a".
		start := func(harness, hid string) response {
			t.Helper()
			return c.do("POST", "/v1/sessions", alice, map[string]string{"project": "demo", "harness": harness, "harness_session_id": hid})
		}
		id := start("claude-code", "a").expect(t, 201).body["id"]
		if again := start(" claude-code ", " a ").expect(t, 200); again.body["id"] != id || again.body["harness_session_id"] != "a" {
			t.Errorf("a trimmed restart: %s, want session %v with harness_session_id \"a\"", again.raw, id)
		}
		start("claude-code", "a\u0000").problem(t, 400, "harness_session_id")
		start("claude-code", "\u0000a").problem(t, 400, "harness_session_id")
		start("claude-code\u0000", "a").problem(t, 400, "harness")
		c.do("POST", "/v1/sessions", alice, map[string]string{"project": "demo\u0000"}).problem(t, 400, "project")
		c.do("GET", "/v1/sessions?project=demo%00", alice, nil).problem(t, 400, "project")
		c.do("GET", "/v1/sessions?project=demo&actor=alice%00", alice, nil).problem(t, 400, "actor")

		// Agents and task ids.
		c.do("POST", "/v1/agents/eng%00/session?project=demo", alice, nil).problem(t, 400, "agent")
		c.do("PATCH", "/v1/sessions/"+id.(string), alice, map[string]string{"agent": "eng\n1"}).problem(t, 400, "agent")
		c.do("POST", "/v1/agents/eng-1/tasks?project=demo", alice, map[string]string{"task_id": "T-1\u0000", "text": "do it"}).problem(t, 400, "task_id")
		c.do("PATCH", "/v1/sessions/"+id.(string), alice, map[string]string{"agent": " eng-1 "}).expect(t, 200)

		// What was refused stored nothing: one session, under its trimmed names.
		list := c.do("GET", "/v1/sessions?project=+demo+&actor=+alice+&agent=eng-1", alice, nil).expect(t, 200)
		sessions := list.body["sessions"].([]any)
		if len(sessions) != 1 {
			t.Fatalf("%d sessions listed, want 1: %s", len(sessions), list.raw)
		}
		s := sessions[0].(map[string]any)
		if s["project"] != "demo" || s["actor"] != "alice" || s["harness"] != "claude-code" || s["agent"] != "eng-1" {
			t.Errorf("stored as %v/%v/%v/%v, want demo/alice/claude-code/eng-1", s["project"], s["actor"], s["harness"], s["agent"])
		}
	})
}

// TestRequestBounds: a list carries at most 30 query parameters, and a
// request with a token the server does not know is refused before any work
// but the token's lookup: its body is not even read, so a body that is not
// JSON, or a start that would make a session, changes nothing.
func TestRequestBounds(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		c := newServer(t, e)
		alice := c.token("demo", "alice")
		q := url.Values{}
		for i := range ledger.MaxListParameters + 1 {
			q.Set("x"+strconv.Itoa(i), "1")
		}
		r := c.do("GET", "/v1/sessions?"+q.Encode(), alice, nil)
		r.problem(t, 400, "")
		if !strings.Contains(r.raw, "at most 30 query parameters") {
			t.Errorf("31 parameters: %s; want the bound named", r.raw)
		}

		unknown := "lbk_" + strings.Repeat("A", 43)
		c.do("POST", "/v1/sessions", unknown, "{not json").problem(t, 401, "")
		c.do("POST", "/v1/sessions", unknown, map[string]any{"project": "demo", "harness": "probe"}).problem(t, 401, "")
		page := c.do("GET", "/v1/sessions?project=demo", alice, nil).expect(t, 200)
		if n := len(page.body["sessions"].([]any)); n != 0 {
			t.Errorf("after requests with an unknown token, %d sessions were stored", n)
		}
	})
}

// TestSearchAndRetentionBadInput: a search or a retention that cannot be
// read is a 400 saying what to fix, on both engines; a retention set
// reads back as it was sent.
func TestSearchAndRetentionBadInput(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		c := newServer(t, e)
		alice := c.token("demo", "alice")
		for _, tc := range []struct{ query, field string }{
			{"q=", "q"}, {"q=%25%25", "q"}, {"q=a&kind=memo", "kind"}, {"q=a&outcome=great", "outcome"},
			{"q=a&since=yesterday", "since"}, {"q=a&limit=101", "limit"}, {"q=a&cursor=nope", "cursor"},
			{"q=a&kind=session&tool=Bash", "tool"}, {"q=a&actor=a%00b", "actor"},
		} {
			c.do("GET", "/v1/search?project=demo&"+tc.query, alice, nil).problem(t, 400, tc.field)
		}
		r := c.do("GET", "/v1/search?project=demo&q=nothing+here", alice, nil).expect(t, 200)
		if results, ok := r.body["results"].([]any); !ok || len(results) != 0 {
			t.Errorf("a search that finds nothing: %s", r.raw)
		}

		for _, tc := range []struct{ body, field, says string }{
			{`{"sessions_days":-1}`, "sessions_days", "0 to keep for ever"},
			{`{"payloads_days":40000}`, "payloads_days", "36500"},
			{`{"session_days":30}`, "", "session_days"},
			{`{"sessions_days":"30d"}`, "", "sessions_days"},
			{`[]`, "", "sessions_days"},
		} {
			r := c.do("PUT", "/v1/projects/demo/retention", adminToken, tc.body)
			r.problem(t, 400, tc.field)
			if !strings.Contains(r.raw, tc.says) {
				t.Errorf("PUT retention %s: the problem does not say %q: %s", tc.body, tc.says, r.raw)
			}
		}
		c.do("PUT", "/v1/projects/demo/retention", adminToken, `{"sessions_days":90,"payloads_days":30}`).expect(t, 200)
		r = c.do("GET", "/v1/projects/demo/retention", alice, nil).expect(t, 200)
		if r.body["project"] != "demo" || r.body["sessions_days"] != float64(90) || r.body["payloads_days"] != float64(30) {
			t.Errorf("retention read back: %s", r.raw)
		}
	})
}

// TestGateOverHTTP: POST /v1/gate answers as the service decides, and bad
// input gets a problem saying what to fix; so does a claims policy that
// cannot work.
func TestGateOverHTTP(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		c := newServer(t, e)
		alice := c.token("demo", "alice")
		holder := c.do("POST", "/v1/sessions", alice, `{"project":"demo","harness":"h","harness_session_id":"a","goal":"Rework login"}`).expect(t, 201)
		writer := c.do("POST", "/v1/sessions", alice, `{"project":"demo","harness":"h","harness_session_id":"b"}`).expect(t, 201)
		c.do("POST", "/v1/claims", alice, `{"session_id":"`+holder.body["id"].(string)+`","subject":"src/auth/"}`).expect(t, 201)

		r := c.do("POST", "/v1/gate", alice, `{"session_id":"`+writer.body["id"].(string)+`","tool_name":"Bash","tool_input":{"command":"sed -i s/a/b/ src/auth/login.go"}}`).expect(t, 200)
		if r.body["decision"] != "deny" || !strings.Contains(r.body["reason"].(string), "Rework login") {
			t.Errorf("a write under another session's claim: %s", r.raw)
		}
		many := make([]string, 201)
		for i := range many {
			many[i] = fmt.Sprintf(`"f%d.go"`, i)
		}
		for _, tc := range []struct{ body, field, says string }{
			{`{"project":"demo","paths":[` + strings.Join(many, ",") + `]}`, "paths", "the limit is 200"},
			{`{"project":"demo","paths":"a.go"}`, "", "paths"},
		} {
			r := c.do("POST", "/v1/gate", alice, tc.body)
			r.problem(t, 400, tc.field)
			if !strings.Contains(r.raw, tc.says) {
				t.Errorf("POST /v1/gate %.60s: the problem does not say %q: %s", tc.body, tc.says, r.raw)
			}
		}
		c.do("POST", "/v1/gate", alice, `{"session_id":"nope","paths":["a.go"]}`).problem(t, 404, "")
		r = c.do("PUT", "/v1/projects/demo/policy", adminToken, `{"claims":{"guard":"allow"}}`)
		r.problem(t, 400, "policy")
		if !strings.Contains(r.raw, "deny, ask or defer") {
			t.Errorf("a claims guard that cannot work: %s", r.raw)
		}
	})
}

// TestAlertRuleBadInput: an alert rule that cannot be taken is a 400
// saying what to fix, on both engines; the webhook's path is in no answer.
func TestAlertRuleBadInput(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		c := newServer(t, e)
		for _, tc := range []struct{ body, field, says string }{
			{`{"kind":"session_failed","webhook_url":"ftp://hooks.example.com/SECRET-PATH"}`, "webhook_url", "http or https"},
			{`{"kind":"session_failed"}`, "webhook_url", "give the webhook's URL"},
			{`{"kind":"bored","webhook_url":"https://hooks.example.com/x"}`, "kind", "session_failed"},
			{`{"kind":"tool_loop","threshold":1000,"webhook_url":"https://hooks.example.com/x"}`, "threshold", "2 to 100"},
			{`{"kind":"tool_loop","format":"xml","webhook_url":"https://hooks.example.com/x"}`, "format", "slack"},
			{`{"kind":"tool_loop","treshold":3,"webhook_url":"https://hooks.example.com/x"}`, "", "treshold"},
			{`{"kind":"tool_loop","threshold":"3","webhook_url":"https://hooks.example.com/x"}`, "", "threshold"},
		} {
			r := c.do("POST", "/v1/projects/demo/alert_rules", adminToken, tc.body)
			r.problem(t, 400, tc.field)
			if !strings.Contains(r.raw, tc.says) || strings.Contains(r.raw, "SECRET-PATH") {
				t.Errorf("POST alert_rules %s: the problem does not say %q, or shows the URL's path: %s", tc.body, tc.says, r.raw)
			}
		}
		alice := c.token("demo", "alice")
		c.do("GET", "/v1/projects/demo/alerts?limit=0x", alice, nil).problem(t, 400, "limit")
		c.do("GET", "/v1/projects/demo/alerts?limit=201", alice, nil).problem(t, 400, "limit")
		c.do("GET", "/v1/projects/demo/alerts?rule=nope", alice, nil).expect(t, 404)
		c.do("DELETE", "/v1/projects/demo/alert_rules/nope", adminToken, nil).expect(t, 404)
		r := c.do("POST", "/v1/projects/demo/alert_rules", adminToken, `{"kind":"idle_with_claims","webhook_url":"https://hooks.example.com/SECRET-PATH"}`).expect(t, 201)
		if r.body["threshold"] != float64(30) || r.body["webhook_url"] != "https://hooks.example.com/…" || !strings.HasPrefix(r.body["secret"].(string), "whsec_") {
			t.Errorf("the rule added: %s", r.raw)
		}
	})
}

// TestPricesBadInput: prices that cannot be read are a 400 saying what to
// fix, and nothing changes; prices set read back, beside the built-in
// table's, and cost the calls recorded afterwards.
func TestPricesBadInput(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		c := newServer(t, e)
		alice := c.token("demo", "alice")
		for _, tc := range []struct{ body, field, says string }{
			{`{"models":{"m":{"input":-1}}}`, "models.m.input", "US dollars per million tokens"},
			{`{"models":{"m":{"output":20000}}}`, "models.m.output", "10000"},
			{`{"models":{"":{"input":1}}}`, "models", "model name"},
			{`{"model":{"m":{"input":1}}}`, "", "model"},
			{`{"models":{"m":{"input":"3$"}}}`, "", "input"},
			{`{}`, "", "models is missing"},
		} {
			r := c.do("PUT", "/v1/projects/demo/prices", adminToken, tc.body)
			r.problem(t, 400, tc.field)
			if !strings.Contains(r.raw, tc.says) {
				t.Errorf("PUT prices %s: the problem does not say %q: %s", tc.body, tc.says, r.raw)
			}
		}
		r := c.do("GET", "/v1/projects/demo/prices", alice, nil).expect(t, 200)
		if own, _ := r.body["own"].(map[string]any); len(own) != 0 || r.body["date"] == "" {
			t.Errorf("prices after bad requests: %s", r.raw)
		}
		c.do("PUT", "/v1/projects/demo/prices", adminToken, `{"models":{"in-house-7b":{"input":0.5,"output":1,"cache_read":0,"cache_write":0}}}`).expect(t, 200)
		r = c.do("GET", "/v1/projects/demo/prices", alice, nil).expect(t, 200)
		models, _ := r.body["models"].(map[string]any)
		own, _ := models["in-house-7b"].(map[string]any)
		sonnet, _ := models["claude-sonnet-4-5"].(map[string]any)
		if own["input"] != 0.5 || own["source"] != "project" || sonnet["input"] != float64(3) {
			t.Errorf("prices read back: %s", r.raw)
		}
		s := c.do("POST", "/v1/sessions", alice, `{"project":"demo","harness":"h","model":"in-house-7b"}`).expect(t, 201)
		id, _ := s.body["id"].(string)
		c.do("POST", "/v1/sessions/"+id+"/entries", alice, `{"entries":[{"kind":"note","text":"call","usage":{"input_tokens":2000000,"output_tokens":1000000}}]}`).expect(t, 200)
		got := c.do("GET", "/v1/sessions/"+id, alice, nil).expect(t, 200)
		if sess, _ := got.body["session"].(map[string]any); sess["cost_micros"] != float64(2_000_000) {
			t.Errorf("a session priced by the project's own price: %s", got.raw)
		}
	})
}
