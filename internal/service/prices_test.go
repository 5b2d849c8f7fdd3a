package service_test

import (
	"errors"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

func TestCost(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Run("Recorded", func(t *testing.T) { t.Parallel(); testCostRecorded(t, setup(t, e)) })
		t.Run("ProjectPrices", func(t *testing.T) { t.Parallel(); testProjectPrices(t, setup(t, e)) })
	})
}

// testCostRecorded: each model call is costed when recorded, at the
// price of its model (else the session's), unless the harness said what
// it cost; the session, its agent and its day add them up.
func testCostRecorded(t *testing.T, b *bundle) {
	model, agent := "claude-sonnet-4-5-20250929", "eng"
	s := b.start(t, b.alice, service.StartParams{Harness: "claude-code", HarnessSessionID: "h1",
		Fields: logbook.SessionFields{Model: &model, Agent: &agent}})
	reported := 0.42
	res, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindPrompt, Text: "fix the build"},
		// Sonnet 4.5: 10,000 fresh input tokens × $3/M + 90,000 cache reads × $0.30/M
		// + 2,000 output × $15/M = 30,000 + 27,000 + 30,000 micro-dollars.
		{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "on it",
			Usage: &logbook.Usage{InputTokens: 100_000, CacheReadTokens: 90_000, OutputTokens: 2_000}},
		// Haiku 4.5, named by the call: 1,000,000 × $1/M.
		{Kind: logbook.KindNote, Text: "model call", Usage: &logbook.Usage{InputTokens: 1_000_000, Model: "claude-haiku-4-5"}},
		// The harness's figure wins over the table.
		{Kind: logbook.KindNote, Text: "model call", Usage: &logbook.Usage{InputTokens: 5_000_000, OutputTokens: 1, CostUSD: &reported}},
		// A model no table knows costs nothing (and says so: 0).
		{Kind: logbook.KindNote, Text: "model call", Usage: &logbook.Usage{InputTokens: 1000, Model: "home-made-7b"}},
	}})
	if err != nil || res.Recorded != 5 {
		t.Fatalf("append: %+v %v", res, err)
	}
	view, err := b.svc.GetSession(b.ctx, b.alice, s.ID, service.GetParams{})
	if err != nil {
		t.Fatal(err)
	}
	costs := []int64{}
	for _, e := range view.Entries {
		if e.Usage != nil {
			costs = append(costs, e.Usage.CostMicros)
			if e.Usage.CostUSD != nil {
				t.Errorf("entry %d answers cost_usd %v; cost_micros holds the cost", e.Seq, *e.Usage.CostUSD)
			}
		}
	}
	want := []int64{87_000, 1_000_000, 420_000, 0}
	if len(costs) != len(want) || costs[0] != want[0] || costs[1] != want[1] || costs[2] != want[2] || costs[3] != want[3] {
		t.Errorf("entries' costs = %v micro-dollars, want %v", costs, want)
	}
	total := int64(87_000 + 1_000_000 + 420_000)
	equalInt(t, "session cost", view.Session.CostMicros, total)

	// A subagent's calls are its own, counted for its agent's day but not
	// in its parent's cost.
	child := b.start(t, b.alice, service.StartParams{Harness: "claude-code", HarnessSessionID: "h2", ParentID: s.ID,
		Fields: logbook.SessionFields{Model: &model, Agent: &agent}})
	if _, err := b.svc.AppendEntries(b.ctx, b.alice, child.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindNote, Text: "model call", Usage: &logbook.Usage{OutputTokens: 1_000_000}}}}); err != nil {
		t.Fatal(err)
	}
	today := b.clock.Now().UTC().Truncate(24 * time.Hour)
	for _, c := range []struct {
		name string
		p    service.CostParams
		want int64
	}{
		{"session", service.CostParams{SessionID: s.ID}, total},
		{"subagent", service.CostParams{SessionID: child.ID}, 15_000_000},
		{"agent's day", service.CostParams{Agent: agent, Since: today}, total + 15_000_000},
		{"another agent's day", service.CostParams{Agent: "ceo", Since: today}, 0},
		{"project's day", service.CostParams{Since: today}, total + 15_000_000},
		{"project's day, top level", service.CostParams{Since: today, TopLevel: true}, total},
		{"tomorrow", service.CostParams{Since: today.Add(24 * time.Hour)}, 0},
	} {
		got, err := b.svc.Cost(b.ctx, b.alice, c.p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		equalInt(t, c.name+" cost", got, c.want)
	}
	if _, err := b.svc.Cost(b.ctx, service.Caller{Actor: "carol", Project: "q"}, service.CostParams{SessionID: s.ID}); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("another project's token reads a session's cost: %v, want ErrNotFound", err)
	}
	// Options.Costed (what /metrics counts) hears what a committed batch cost.
	var heard []int64
	counting := service.New(b.st, service.Options{NowFunc: b.clock.Now, Costed: func(micros int64) { heard = append(heard, micros) }})
	twoCents := 0.02
	if _, err := counting.AppendEntries(b.ctx, b.alice, child.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindNote, Text: "model call", Usage: &logbook.Usage{InputTokens: 1, CostUSD: &twoCents}},
		{Kind: logbook.KindNote, Text: "model call", Usage: &logbook.Usage{OutputTokens: 1000}}}}); err != nil {
		t.Fatal(err)
	}
	if len(heard) != 1 || heard[0] != 20_000+15_000 {
		t.Errorf("Options.Costed heard %v, want [35000]", heard)
	}
	rows, err := b.svc.Stats(b.ctx, b.alice, service.StatsParams{By: logbook.ByModel, Since: today})
	if err != nil || len(rows) != 1 || rows[0].Key != model || rows[0].CostMicros != total+15_000_000+35_000 {
		t.Errorf("stats by model: %+v %v", rows, err)
	}
}

// testProjectPrices: the admin sets a project's own prices; they cost the
// calls recorded afterwards, and what was recorded keeps its cost.
func testProjectPrices(t *testing.T, b *bundle) {
	admin := service.Caller{Actor: "admin", Admin: true}
	prices, err := b.svc.Prices(b.ctx, b.alice, "")
	if err != nil || prices.Date == "" || len(prices.Own) != 0 || prices.Models["claude-opus-4-5"].Input != 5 {
		t.Fatalf("built-in prices: %+v %v", prices, err)
	}
	own := map[string]logbook.Price{"claude-opus-4-5": {Input: 1, Output: 1, Source: "mine"}}
	if _, err := b.svc.SetPrices(b.ctx, b.alice, "p", own); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("a project's token sets its prices: %v, want ErrForbidden", err)
	}
	var v *logbook.ValidationError
	if _, err := b.svc.SetPrices(b.ctx, admin, "p", map[string]logbook.Price{"x": {Input: -1}}); !errors.As(err, &v) || v.Field != "models.x.input" {
		t.Errorf("a negative price: %v, want a validation error on models.x.input", err)
	}

	model := "claude-opus-4-5-20251101"
	s := b.start(t, b.alice, service.StartParams{Harness: "claude-code", HarnessSessionID: "h1", Fields: logbook.SessionFields{Model: &model}})
	call := []logbook.Entry{{Kind: logbook.KindNote, Text: "model call", Usage: &logbook.Usage{InputTokens: 1_000_000}}}
	if _, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: call}); err != nil {
		t.Fatal(err)
	}
	prices, err = b.svc.SetPrices(b.ctx, admin, "p", own)
	if err != nil || prices.Models["claude-opus-4-5"].Input != 1 || prices.Models["claude-opus-4-5"].Source != "project" || prices.Own["claude-opus-4-5"].Source != "" {
		t.Fatalf("set prices: %+v %v", prices, err)
	}
	call = []logbook.Entry{{Kind: logbook.KindNote, Text: "model call", Usage: &logbook.Usage{InputTokens: 1_000_000}}}
	if _, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: call}); err != nil {
		t.Fatal(err)
	}
	view, err := b.svc.GetSession(b.ctx, b.alice, s.ID, service.GetParams{})
	if err != nil {
		t.Fatal(err)
	}
	// $5 at the built-in price, then $1 at the project's; the first stays.
	equalInt(t, "first call", view.Entries[0].Usage.CostMicros, 5_000_000)
	equalInt(t, "second call", view.Entries[1].Usage.CostMicros, 1_000_000)
	equalInt(t, "session cost", view.Session.CostMicros, 6_000_000)
	if read, err := b.svc.Prices(b.ctx, b.bob, "p"); err != nil || read.Own["claude-opus-4-5"].Input != 1 {
		t.Errorf("prices read by another actor of the project: %+v %v", read.Own, err)
	}
}

func equalInt(t *testing.T, what string, got, want int64) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %d, want %d", what, got, want)
	}
}
