package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/testdb"
)

// spent is an assistant message whose model call cost usd, as the harness
// reported it (cost_usd).
func spent(usd float64) logbook.Entry {
	return logbook.Entry{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "a step done",
		Usage: &logbook.Usage{InputTokens: 100, OutputTokens: 10, CostUSD: &usd}}
}

// raisedSubjects lists the project's alerts as "rule name: subject",
// sorted.
func raisedSubjects(t *testing.T, b *bundle) []string {
	t.Helper()
	rules, err := b.svc.AlertRules(b.ctx, b.alice, "")
	must(t, err)
	names := map[string]string{}
	for _, r := range rules {
		names[r.ID] = r.Name
	}
	alerts, err := b.svc.Alerts(b.ctx, b.alice, service.AlertsParams{Limit: 200})
	must(t, err)
	var out []string
	for _, a := range alerts {
		out = append(out, names[a.RuleID]+": "+a.Subject)
	}
	slices.Sort(out)
	return out
}

func TestCostBudgets(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Run("Rules", func(t *testing.T) { t.Parallel(); testBudgetRules(t, setup(t, e)) })
		t.Run("RaisedOncePerSubject", func(t *testing.T) { t.Parallel(); testBudgetsRaised(t, setup(t, e)) })
		t.Run("SweptWhenNoWriteRaised", func(t *testing.T) { t.Parallel(); testBudgetSwept(t, setup(t, e)) })
	})
}

func testBudgetRules(t *testing.T, b *bundle) {
	hook := "https://hooks.example.com/logbook"
	for _, tc := range []struct {
		name  string
		rule  service.AlertRuleBody
		field string
	}{
		{"no budget", service.AlertRuleBody{Kind: logbook.AlertCostOverBudget, Scope: logbook.ScopeSession, WebhookURL: hook}, "budget_usd"},
		{"a negative budget", service.AlertRuleBody{Kind: logbook.AlertCostOverBudget, BudgetUSD: -5, Scope: logbook.ScopeSession, WebhookURL: hook}, "budget_usd"},
		{"under a micro-dollar", service.AlertRuleBody{Kind: logbook.AlertCostOverBudget, BudgetUSD: 0.0000004, Scope: logbook.ScopeSession, WebhookURL: hook}, "budget_usd"},
		{"over the most", service.AlertRuleBody{Kind: logbook.AlertCostOverBudget, BudgetUSD: 2e6, Scope: logbook.ScopeSession, WebhookURL: hook}, "budget_usd"},
		{"no scope", service.AlertRuleBody{Kind: logbook.AlertCostOverBudget, BudgetUSD: 5, WebhookURL: hook}, "scope"},
		{"an unknown scope", service.AlertRuleBody{Kind: logbook.AlertCostOverBudget, BudgetUSD: 5, Scope: "week", WebhookURL: hook}, "scope"},
		{"a threshold", service.AlertRuleBody{Kind: logbook.AlertCostOverBudget, BudgetUSD: 5, Scope: logbook.ScopeSession, Threshold: 3, WebhookURL: hook}, "threshold"},
		{"a budget on another kind", service.AlertRuleBody{Kind: logbook.AlertSessionFailed, BudgetUSD: 5, WebhookURL: hook}, "budget_usd"},
		{"a scope on another kind", service.AlertRuleBody{Kind: logbook.AlertToolLoop, Scope: logbook.ScopeSession, WebhookURL: hook}, "scope"},
	} {
		var v *logbook.ValidationError
		if _, err := b.svc.AddAlertRule(b.ctx, admin, "p", tc.rule); !errors.As(err, &v) || v.Field != tc.field {
			t.Errorf("%s: %v, want a validation error naming %s", tc.name, err, tc.field)
		}
	}
	added, err := b.svc.AddAlertRule(b.ctx, admin, "p", service.AlertRuleBody{Kind: logbook.AlertCostOverBudget, BudgetUSD: 12.3456789,
		Scope: logbook.ScopeAgentDay, WebhookURL: hook})
	must(t, err)
	if added.BudgetMicros != 12_345_679 || added.BudgetUSD != 12.345679 || added.Scope != logbook.ScopeAgentDay || added.Name != "cost_over_budget" {
		t.Errorf("the rule added: %+v", added)
	}
	rules, err := b.svc.AlertRules(b.ctx, b.alice, "")
	must(t, err)
	if len(rules) != 1 || rules[0].BudgetMicros != 12_345_679 || rules[0].BudgetUSD != 12.345679 || rules[0].Scope != logbook.ScopeAgentDay {
		t.Errorf("the rule read back: %+v", rules)
	}
	equal(t, "the budget said", rules[0].Budget(), "$12.345679 an agent a day")
}

// testBudgetsRaised: a budget crossed by one write raises one alert; the
// writes after it do not raise it again; another session, agent or day
// raises its own; writes under every budget raise none; cost the harness
// reported and cost priced from tokens both count.
func testBudgetsRaised(t *testing.T, b *bundle) {
	rc := newReceiver(t)
	addRule(t, b, rc, service.AlertRuleBody{Name: "session", Kind: logbook.AlertCostOverBudget, BudgetUSD: 1, Scope: logbook.ScopeSession})
	addRule(t, b, rc, service.AlertRuleBody{Name: "agent", Kind: logbook.AlertCostOverBudget, BudgetUSD: 2, Scope: logbook.ScopeAgentDay, Format: logbook.AlertSlack})
	addRule(t, b, rc, service.AlertRuleBody{Name: "day", Kind: logbook.AlertCostOverBudget, BudgetUSD: 3, Scope: logbook.ScopeProjectDay})
	// A model of the project's own, at a dollar a million input tokens.
	_, err := b.svc.SetPrices(b.ctx, admin, "p", map[string]logbook.Price{"house-model": {Input: 1}})
	must(t, err)

	start := func(c service.Caller, key, agent string) logbook.Session {
		t.Helper()
		return b.start(t, c, service.StartParams{Harness: "claude-code", HarnessSessionID: key,
			Fields: logbook.SessionFields{Agent: str(agent), Goal: str("work of " + key)}})
	}
	var want []string
	record := func(c service.Caller, s logbook.Session, raises []string, entries ...logbook.Entry) {
		t.Helper()
		_, err := b.svc.AppendEntries(b.ctx, c, s.ID, service.Batch{Entries: entries})
		must(t, err)
		want = append(want, raises...)
		slices.Sort(want)
		if got := raisedSubjects(t, b); !slices.Equal(got, want) {
			t.Fatalf("alerts raised after recording %d entries in %s:\n got %q\nwant %q", len(entries), s.ID, got, want)
		}
	}

	s1 := start(b.alice, "s1", "ceo")
	record(b.alice, s1, nil, spent(0.40))                                                 // $0.40: under every budget
	record(b.alice, s1, nil, bashCall("c1", "ls"), logbook.Entry{Kind: logbook.KindNote}) // no cost: nothing to check
	record(b.alice, s1, []string{"session: " + s1.ID}, spent(0.35), spent(0.35))          // $1.10 crosses the session's $1
	record(b.alice, s1, nil, spent(0.10))                                                 // $1.20: over, raised already

	s2 := start(b.bob, "s2", "ceo")
	// The ceo's day: $1.20 + $1.00 crosses $2; s2 its own $1.
	record(b.bob, s2, []string{"agent: agent:ceo@2026-11-30", "session: " + s2.ID}, spent(1.00))

	// Priced from its tokens at the project's price: $0.90 takes the day
	// to $3.10, over its $3.
	s3 := start(b.alice, "s3", "engineer-1")
	record(b.alice, s3, []string{"day: day:2026-11-30"},
		logbook.Entry{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "priced", Usage: &logbook.Usage{InputTokens: 900_000, Model: "house-model"}})
	record(b.alice, s3, []string{"agent: agent:engineer-1@2026-11-30", "session: " + s3.ID}, spent(1.20)) // engineer-1 $2.10, s3 $2.10

	// A session of no agent counts to the day, not to an agent.
	s4 := start(b.bob, "s4", "")
	record(b.bob, s4, []string{"session: " + s4.ID}, spent(2.50))

	// The next UTC day is a new day for the agents and the project; s1,
	// started the day before, still adds to that day (raised already).
	b.clock.Add(24 * time.Hour)
	record(b.alice, s1, nil, spent(5))
	s5 := start(b.alice, "s5", "ceo")
	record(b.alice, s5, nil, spent(0.5))
	record(b.alice, s5, []string{"agent: agent:ceo@2026-12-01", "day: day:2026-12-01", "session: " + s5.ID}, spent(3.0))

	alerts, err := b.svc.Alerts(b.ctx, b.alice, service.AlertsParams{})
	must(t, err)
	for _, a := range alerts {
		if a.Kind != logbook.AlertCostOverBudget {
			t.Errorf("an alert of kind %s", a.Kind)
		}
		var details struct {
			Scope        logbook.AlertScope `json:"scope"`
			BudgetUSD    float64            `json:"budget_usd"`
			CostMicros   int64              `json:"cost_micros"`
			BudgetMicros int64              `json:"budget_micros"`
		}
		must(t, json.Unmarshal(a.Details, &details))
		if details.CostMicros < details.BudgetMicros || details.BudgetMicros != int64(details.BudgetUSD*1e6) {
			t.Errorf("alert %s: details %s", a.Subject, a.Details)
		}
		switch a.Subject {
		case "agent:ceo@2026-11-30":
			equal(t, "the ceo's day's summary", a.Summary, "agent ceo's sessions started on 2026-11-30 (UTC) cost $2.20, over the budget of $2.00")
			equal(t, "the ceo's day's session (none: it is the agent's)", a.SessionID, "")
		case "day:2026-11-30":
			equal(t, "the day's summary", a.Summary, "project p's sessions started on 2026-11-30 (UTC) cost $3.10, over the budget of $3.00")
		case s1.ID:
			if !strings.Contains(a.Summary, "cost $1.10, over the budget of $1.00") || !strings.Contains(a.Summary, "work of s1") || a.SessionID != s1.ID {
				t.Errorf("s1's alert: %+v", a)
			}
		}
	}

	// The sweeper finds every day over budget raised already.
	res, err := b.svc.Sweep(b.ctx, 0)
	must(t, err)
	equal(t, "alerts the sweeper raised", res.AlertsRaised, 0)

	delivery, err := b.svc.DeliverDue(b.ctx)
	must(t, err)
	equal(t, "alerts delivered", delivery.Delivered, len(want))
	for _, p := range rc.got() {
		if !p.signed {
			t.Errorf("alert %s: its signature does not verify", p.alertID)
		}
		if strings.Contains(string(p.body), `"text"`) {
			if !strings.Contains(string(p.body), "agent ceo's sessions started on") && !strings.Contains(string(p.body), "agent engineer-1's") {
				t.Errorf("the Slack body: %s", p.body)
			}
			continue
		}
		var body logbook.AlertBody
		if err := json.Unmarshal(p.body, &body); err != nil || body.Kind != logbook.AlertCostOverBudget || !strings.Contains(string(body.Details), `"budget_usd"`) {
			t.Errorf("a JSON body: %s (%v)", p.body, err)
		}
	}
}

// testBudgetSwept: a rule of the day added once the day is over its
// budget is raised by the sweeper, once.
func testBudgetSwept(t *testing.T, b *bundle) {
	rc := newReceiver(t)
	s := b.start(t, b.alice, service.StartParams{Harness: "claude-code", Fields: logbook.SessionFields{Agent: str("ceo")}})
	_, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: []logbook.Entry{spent(4)}})
	must(t, err)
	addRule(t, b, rc, service.AlertRuleBody{Name: "day", Kind: logbook.AlertCostOverBudget, BudgetUSD: 3, Scope: logbook.ScopeProjectDay})
	addRule(t, b, rc, service.AlertRuleBody{Name: "agent", Kind: logbook.AlertCostOverBudget, BudgetUSD: 3, Scope: logbook.ScopeAgentDay})
	addRule(t, b, rc, service.AlertRuleBody{Name: "big", Kind: logbook.AlertCostOverBudget, BudgetUSD: 5, Scope: logbook.ScopeProjectDay})
	res, err := b.svc.Sweep(b.ctx, 0)
	must(t, err)
	equal(t, "alerts the sweeper raised", res.AlertsRaised, 2)
	res, err = b.svc.Sweep(b.ctx, 0)
	must(t, err)
	equal(t, "alerts the sweeper raised again", res.AlertsRaised, 0)
	got := raisedSubjects(t, b)
	if want := []string{"agent: agent:ceo@2026-11-30", "day: day:2026-11-30"}; !slices.Equal(got, want) {
		t.Errorf("alerts raised: %q, want %q", got, want)
	}
}

// TestCostBudgetRaisedOnceByReplicas: two servers on one PostgreSQL,
// recording model calls side by side into sessions of one agent, raise
// each budget's alert once: the session's (both write to each session),
// the agent's day and the project's day. A write that crosses a day's
// budget raises it unless the replicas crossed it at once, neither
// seeing the other's write; the sweeper then raises it.
func TestCostBudgetRaisedOnceByReplicas(t *testing.T) {
	ctx := context.Background()
	url := testdb.PostgresURL(t)
	var services []*service.Service
	clk := &clock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	for range 2 {
		st, err := pgstore.Open(ctx, url)
		must(t, err)
		t.Cleanup(func() { st.Close() })
		svc := service.New(st, service.Options{NowFunc: clk.Now})
		// As logbook serve runs it: writes to sessions share transactions
		// (group commit).
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { svc.Run(runCtx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
		services = append(services, svc)
	}
	b := &bundle{svc: services[0], ctx: ctx, alice: service.Caller{Actor: "alice", Project: "p"}, clock: clk}
	before, want := spendSideBySide(t, b, services)
	res, err := services[1].Sweep(ctx, 0)
	must(t, err)
	got := raisedSubjects(t, b)
	equal(t, "alerts the sweeper raised", res.AlertsRaised, len(got)-len(before))
	if !slices.Equal(got, want) {
		t.Errorf("alerts raised:\n got %q\nwant %q", got, want)
	}
	t.Logf("the writes raised %d alerts, the sweeper %d", len(before), res.AlertsRaised)
}

// TestCostBudgetRaisedByGroupedWrites: on SQLite, writes recorded side by
// side share transactions (group commit); each sees what the earlier ones
// of its group spent, which reaches the rollups only at the commit, so
// the write that crosses a budget raises it, none left to the sweeper.
func TestCostBudgetRaisedByGroupedWrites(t *testing.T) {
	b := setup(t, testdb.Engines()[0])
	before, want := spendSideBySide(t, b, []*service.Service{b.svc})
	if !slices.Equal(before, want) {
		t.Errorf("alerts the writes raised:\n got %q\nwant %q", before, want)
	}
	res, err := b.svc.Sweep(b.ctx, 0)
	must(t, err)
	equal(t, "alerts the sweeper raised", res.AlertsRaised, 0)
}

// spendSideBySide adds budgets of a session, an agent's day and the
// project's day, then records model calls into six sessions of one agent,
// eight writes to each side by side, spread over services; it returns the
// alerts the writes raised and those that should be raised in all.
func spendSideBySide(t *testing.T, b *bundle, services []*service.Service) (raised, want []string) {
	t.Helper()
	rc := newReceiver(t)
	addRule(t, b, rc, service.AlertRuleBody{Name: "session", Kind: logbook.AlertCostOverBudget, BudgetUSD: 1, Scope: logbook.ScopeSession})
	addRule(t, b, rc, service.AlertRuleBody{Name: "agent", Kind: logbook.AlertCostOverBudget, BudgetUSD: 5, Scope: logbook.ScopeAgentDay})
	addRule(t, b, rc, service.AlertRuleBody{Name: "day", Kind: logbook.AlertCostOverBudget, BudgetUSD: 5, Scope: logbook.ScopeProjectDay})

	const sessions, writes = 6, 8 // each write $0.25: $2 a session, $12 in all
	var ids []string
	for i := range sessions {
		s := b.start(t, b.alice, service.StartParams{Harness: "claude-code", HarnessSessionID: fmt.Sprint("h", i), Fields: logbook.SessionFields{Agent: str("ceo")}})
		ids = append(ids, s.ID)
		want = append(want, "session: "+s.ID)
	}
	var wg sync.WaitGroup
	for i, id := range ids {
		for w := range writes {
			wg.Go(func() {
				svc := services[(i+w)%len(services)]
				for {
					_, err := svc.AppendEntries(b.ctx, b.alice, id, service.Batch{Entries: []logbook.Entry{spent(0.25)}})
					if errors.Is(err, logbook.ErrUnavailable) {
						continue // PostgreSQL gave way to another transaction: nothing was stored; sent again as a client does
					}
					if err != nil {
						t.Error(err)
					}
					return
				}
			})
		}
	}
	wg.Wait()
	total, err := services[len(services)-1].Cost(b.ctx, b.alice, service.CostParams{Project: "p", Since: b.clock.Now().Add(-time.Hour)})
	must(t, err)
	equal(t, "what the model calls cost", total, int64(sessions*writes*250_000))
	want = append(want, "agent: agent:ceo@2026-11-30", "day: day:2026-11-30")
	slices.Sort(want)
	return raisedSubjects(t, b), want
}

// BenchmarkCostBudgetCheck: what checking cost rules adds to recording a
// model call, one request at a time, with no cost rule and with a rule of
// each scope (each write then reads the day's and the agent's cost from
// the rollups):
//
//	go test ./internal/service -run '^$' -bench CostBudget -benchtime 2000x
func BenchmarkCostBudgetCheck(b *testing.B) {
	for _, e := range testdb.Engines() {
		for _, rules := range []bool{false, true} {
			name := e.Name + "/NoRule"
			if rules {
				name = e.Name + "/RuleOfEachScope"
			}
			b.Run(name, func(b *testing.B) {
				svc := service.New(e.Open(b), service.Options{})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				go svc.Run(ctx)
				alice := service.Caller{Actor: "alice", Project: "p"}
				if rules {
					for _, scope := range logbook.AlertScopes {
						if _, err := svc.AddAlertRule(ctx, admin, "p", service.AlertRuleBody{Kind: logbook.AlertCostOverBudget, BudgetUSD: 1e6,
							Scope: scope, WebhookURL: "https://hooks.example.com/x"}); err != nil {
							b.Fatal(err)
						}
					}
				}
				s, _, err := svc.StartSession(ctx, alice, service.StartParams{Fields: logbook.SessionFields{Agent: str("ceo")}})
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if _, err := svc.AppendEntries(ctx, alice, s.ID, service.Batch{Entries: []logbook.Entry{spent(0.01)}}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
