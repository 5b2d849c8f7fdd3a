package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// TestAlertsThroughTools: a session's model call goes over a budget the
// admin set; list_alerts shows the alert pending, then delivered with its
// attempt, in process and over stdio alike, and only the project's.
func TestAlertsThroughTools(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	var posts atomic.Int64
	hook := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		rw.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)
	admin, err := w.svc.Authenticate(ctx, "admin-token")
	if err != nil {
		t.Fatal(err)
	}
	rule, err := w.svc.AddAlertRule(ctx, admin, "demo", service.AlertRuleBody{Name: "a dollar a session", Kind: logbook.AlertCostOverBudget,
		BudgetUSD: 1, Scope: logbook.ScopeSession, WebhookURL: hook.URL + "/hook"})
	if err != nil {
		t.Fatal(err)
	}

	alice, bob := w.inProcess(t, w.alice), w.overStdio(t, w.bob)
	var none ledger.AlertsAnswer
	ok(t, bob, "list_alerts", map[string]any{"project": "demo"}, &none)
	if len(none.Alerts) != 0 {
		t.Fatalf("alerts before any: %+v", none.Alerts)
	}
	// Over stdio the tools call the API, whose route names the project:
	// logbook mcp --project gives a default, else the agent names it.
	mustContain(t, "list_alerts over stdio without a project", fails(t, bob, "list_alerts", nil), "name the project", "--project")
	var s session
	ok(t, alice, "start_session", map[string]any{"harness": "claude-code", "harness_session_id": "a", "goal": "port the billing job"}, &s)
	call := func(cost float64) map[string]any {
		return map[string]any{"kind": "message", "role": "assistant", "text": "done a part",
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 5, "cost_usd": cost}}
	}
	ok(t, alice, "record", map[string]any{"session_id": s.ID, "entries": []any{call(0.75)}}, nil)
	ok(t, alice, "record", map[string]any{"session_id": s.ID, "entries": []any{call(0.5), call(0.25)}}, nil)

	var got ledger.AlertsAnswer
	ok(t, bob, "list_alerts", map[string]any{"project": "demo", "limit": 10}, &got)
	if len(got.Alerts) != 1 {
		t.Fatalf("alerts after going over the budget: %+v", got.Alerts)
	}
	a := got.Alerts[0]
	if a.Kind != logbook.AlertCostOverBudget || a.RuleID != rule.ID || a.Subject != s.ID || a.SessionID != s.ID ||
		a.Status != logbook.AlertPending || len(a.Log) != 0 {
		t.Errorf("the alert before delivery: %+v", a)
	}
	mustContain(t, "the alert's summary", a.Summary, "port the billing job", "cost $1.50, over the budget of $1.00")

	if _, err := w.svc.DeliverDue(ctx); err != nil {
		t.Fatal(err)
	}
	ok(t, alice, "list_alerts", map[string]any{"rule_id": rule.ID}, &got)
	if len(got.Alerts) != 1 || got.Alerts[0].Status != logbook.AlertDelivered || len(got.Alerts[0].Log) != 1 ||
		got.Alerts[0].Log[0].StatusCode != http.StatusNoContent || posts.Load() != 1 {
		t.Errorf("the alert after delivery: %+v (%d posts)", got.Alerts, posts.Load())
	}

	mustContain(t, "another project's alerts", fails(t, alice, "list_alerts", map[string]any{"project": "elsewhere"}), "project")
	mustContain(t, "an unknown rule's alerts", fails(t, bob, "list_alerts", map[string]any{"project": "demo", "rule_id": "nope"}), "no alert rule")
	mustContain(t, "a limit too high", fails(t, alice, "list_alerts", map[string]any{"limit": 500}), "limit")
}
