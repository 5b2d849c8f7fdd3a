package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/logbookhq/logbook/internal/testdb"
)

// TestCostBudgetOverAPI: a cost_over_budget rule is added with its
// budget and scope, refused with a problem naming the field when they
// cannot be taken, tested, and raised once when a session's model calls
// (their cost as the harness reported it) go over the budget.
func TestCostBudgetOverAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		c := newServer(t, e)
		var posts atomic.Int64
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { posts.Add(1) }))
		t.Cleanup(hook.Close)
		for _, tc := range []struct{ body, field, says string }{
			{`{"kind":"cost_over_budget","scope":"session","webhook_url":"https://hooks.example.com/x"}`, "budget_usd", "US dollars"},
			{`{"kind":"cost_over_budget","budget_usd":-2,"scope":"session","webhook_url":"https://hooks.example.com/x"}`, "budget_usd", "0.000001 to 1000000"},
			{`{"kind":"cost_over_budget","budget_usd":"25","scope":"session","webhook_url":"https://hooks.example.com/x"}`, "", "budget_usd"},
			{`{"kind":"cost_over_budget","budget_usd":25,"webhook_url":"https://hooks.example.com/x"}`, "scope", "agent_day"},
			{`{"kind":"cost_over_budget","budget_usd":25,"scope":"month","webhook_url":"https://hooks.example.com/x"}`, "scope", "project_day"},
			{`{"kind":"session_failed","budget_usd":25,"webhook_url":"https://hooks.example.com/x"}`, "budget_usd", "takes no budget"},
		} {
			r := c.do("POST", "/v1/projects/demo/alert_rules", adminToken, tc.body)
			r.problem(t, 400, tc.field)
			if !strings.Contains(r.raw, tc.says) {
				t.Errorf("POST alert_rules %s: the problem does not say %q: %s", tc.body, tc.says, r.raw)
			}
		}
		r := c.do("POST", "/v1/projects/demo/alert_rules", adminToken,
			map[string]any{"kind": "cost_over_budget", "budget_usd": 0.5, "scope": "session", "webhook_url": hook.URL + "/hook"}).expect(t, 201)
		if r.body["budget_usd"] != 0.5 || r.body["budget_micros"] != float64(500_000) || r.body["scope"] != "session" {
			t.Errorf("the rule added: %s", r.raw)
		}
		id := r.body["id"].(string)
		alice := c.token("demo", "alice")
		r = c.do("GET", "/v1/projects/demo/alert_rules", alice, nil).expect(t, 200)
		if !strings.Contains(r.raw, `"budget_usd":0.5,"budget_micros":500000,"scope":"session"`) {
			t.Errorf("the rules listed: %s", r.raw)
		}
		r = c.do("POST", "/v1/projects/demo/alert_rules/"+id+"/test", adminToken, nil).expect(t, 200)
		if r.body["status_code"] != float64(200) || posts.Load() != 1 {
			t.Errorf("the rule's test: %s (%d posts)", r.raw, posts.Load())
		}

		s := c.startSession(t, alice, map[string]string{"harness": "claude-code"})
		spend := `{"entries":[{"kind":"message","role":"assistant","text":"done","usage":{"input_tokens":10,"output_tokens":2,"cost_usd":0.3}}]}`
		for range 3 { // $0.30, $0.60 (over: raised), $0.90
			c.do("POST", "/v1/sessions/"+s+"/entries", alice, spend).expect(t, 200)
		}
		r = c.do("GET", "/v1/projects/demo/alerts", alice, nil).expect(t, 200)
		alerts, _ := r.body["alerts"].([]any)
		if len(alerts) != 1 {
			t.Fatalf("alerts: %s", r.raw)
		}
		a := alerts[0].(map[string]any)
		if a["kind"] != "cost_over_budget" || a["subject"] != s || !strings.Contains(a["summary"].(string), "cost $0.60, over the budget of $0.50") {
			t.Errorf("the alert: %v", a)
		}
	})
}
