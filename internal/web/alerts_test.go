package web_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// TestAlertsPage: the alerts page shows the project's rules with their
// webhooks masked, and each alert with its delivery log: a failed attempt
// with its status and error, then the one that delivered it.
func TestAlertsPage(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	c := b.signIn(t, b.aliceToken)
	r := b.get(t, c, "/alerts", 200)
	expectHeaders(t, r)
	expectHas(t, r.body, `aria-current="page">Alerts<`, "No alert rules yet.", "No alerts raised.")

	answers := 0
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answers++
		if answers == 1 {
			http.Error(w, "<b>down</b> for maintenance", http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer hook.Close()
	rule, err := b.svc.AddAlertRule(b.ctx, b.admin, "demo", service.AlertRuleBody{Name: "<i>failures</i>", Kind: logbook.AlertSessionFailed,
		WebhookURL: hook.URL + "/services/SECRET-PATH", Format: logbook.AlertSlack})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.AddAlertRule(b.ctx, b.admin, "demo", service.AlertRuleBody{Kind: logbook.AlertCostOverBudget, BudgetUSD: 2.5,
		Scope: logbook.ScopeAgentDay, WebhookURL: hook.URL + "/budget"}); err != nil {
		t.Fatal(err)
	}
	s := b.start(t, "failed", service.StartParams{Harness: "codex", Fields: logbook.SessionFields{Goal: ptr("<script>alert(1)</script> migrate")}})
	b.end(t, s.ID, service.EndParams{Outcome: logbook.OutcomeFailed, Blocker: logbook.BlockerRateLimited})
	for range 2 {
		if _, err := b.svc.DeliverDue(b.ctx); err != nil {
			t.Fatal(err)
		}
		b.offset.Add(int64(logbook.FirstAlertRetry)) // past the retry's wait
	}

	r = b.get(t, c, "/alerts", 200)
	expectHas(t, r.body, "&lt;i&gt;failures&lt;/i&gt;", "session failed", "slack", "<code>"+hook.URL+"/…</code>",
		"cost over budget", "$2.50 an agent a day",
		`class="badge alert-status-delivered">delivered<`, "rule &lt;i&gt;failures&lt;/i&gt;", `href="/sessions/`+s.ID+`"`,
		"ended failed, blocked by rate_limited", "&lt;script&gt;alert(1)&lt;/script&gt; migrate",
		"attempt 1", "HTTP 502", "answered 502 Bad Gateway &lt;b&gt;down&lt;/b&gt; for maintenance", "attempt 2", "HTTP 200")
	expectLacks(t, r.body, "SECRET-PATH", "<script>alert(1)", rule.Secret)

	// The admin picks a project first.
	admin := b.signIn(t, adminToken)
	expectHas(t, b.get(t, admin, "/alerts", 200).body, "Choose a project")
	expectHas(t, b.get(t, admin, "/alerts?project=demo", 200).body, "ended failed")
}
