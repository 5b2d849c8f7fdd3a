package logbook_test

import (
	"errors"
	"math"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
)

// TestDefaultPricesAreDatedAndSourced: every built-in price says where it
// comes from, and the table when it was read.
func TestDefaultPricesAreDatedAndSourced(t *testing.T) {
	table := logbook.DefaultPrices()
	if table.Date == "" || len(table.Models) < 20 {
		t.Fatalf("built-in table: date %q, %d models", table.Date, len(table.Models))
	}
	for name, p := range table.Models {
		if p.Source == "" || p.Input <= 0 || p.Output <= 0 {
			t.Errorf("%s: %+v has no source or no rates", name, p)
		}
		if err := p.Validate(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestPriceLookup(t *testing.T) {
	table := logbook.DefaultPrices()
	tests := []struct {
		model, want string
	}{
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"claude-sonnet-4-20250514", "claude-sonnet-4"},
		{"claude-opus-4-6[1m]", "claude-opus-4-6"},
		{"us.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"},
		{"claude-opus-4-1@20250805", "claude-opus-4-1"},
		{"Claude-Opus-5", "claude-opus-5"},
		{"gpt-5-codex", "gpt-5-codex"},
		{"gpt-5.1-codex", "gpt-5.1-codex"},
		{"gpt-5.2-codex", "gpt-5.2-codex"},
		{"openai/gpt-5.4-mini", "gpt-5.4-mini"},
		{"gpt-5-2026-04-01", "gpt-5"},
		{"gpt-5.9", ""},          // not gpt-5's price: another model
		{"claude-sonnet-45", ""}, // a name only starting like a known one
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.model, func(t *testing.T) {
			_, got, ok := table.Lookup(tc.model)
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("Lookup(%q) = %q, %v; want %q", tc.model, got, ok, tc.want)
			}
		})
	}
}

func TestCost(t *testing.T) {
	sonnet := logbook.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	tests := []struct {
		name  string
		usage logbook.Usage
		price logbook.Price
		want  int64
	}{
		// 1,000 fresh input tokens at $3/M = $0.003; 500 output at $15/M = $0.0075.
		{"fresh input and output", logbook.Usage{InputTokens: 1000, OutputTokens: 500}, sonnet, 3000 + 7500},
		// 100,000 prompt tokens of which 90,000 read from the cache and
		// 5,000 written: 5,000×3 + 90,000×0.3 + 5,000×3.75 = 15,000 + 27,000 + 18,750 micro-dollars.
		{"cached input", logbook.Usage{InputTokens: 100_000, CacheReadTokens: 90_000, CacheWriteTokens: 5_000}, sonnet, 60_750},
		// 1 token at $0.25/M is a quarter of a micro-dollar: rounds to 0;
		// 3 tokens round 0.75 up to 1.
		{"rounds to the nearest", logbook.Usage{InputTokens: 1}, logbook.Price{Input: 0.25}, 0},
		{"rounds half up", logbook.Usage{InputTokens: 3}, logbook.Price{Input: 0.25}, 1},
		{"unpriced model", logbook.Usage{InputTokens: 1000}, logbook.Price{}, 0},
		// The largest call at the largest price: 10^12 tokens × $10,000/M.
		{"largest", logbook.Usage{InputTokens: logbook.MaxTokens, OutputTokens: logbook.MaxTokens},
			logbook.Price{Input: logbook.MaxPrice, Output: logbook.MaxPrice}, 2 * 10_000 * 1_000_000 * 1_000_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := logbook.Cost(tc.usage, tc.price); got != tc.want {
				t.Errorf("Cost = %d micro-dollars, want %d", got, tc.want)
			}
		})
	}
}

// TestSetCost: the harness's figure wins over the price table; else the
// call's model prices it, else the session's.
func TestSetCost(t *testing.T) {
	table := logbook.DefaultPrices().WithProjectPrices(map[string]logbook.Price{"in-house-model": {Input: 1, Output: 2}})
	reported := 0.0123
	tests := []struct {
		name         string
		usage        logbook.Usage
		sessionModel string
		want         int64
	}{
		{"reported cost wins", logbook.Usage{InputTokens: 1_000_000, CostUSD: &reported}, "claude-opus-4-1", 12_300},
		{"exported cost kept", logbook.Usage{InputTokens: 1_000_000, CostMicros: 77}, "claude-opus-4-1", 77},
		{"session's model", logbook.Usage{InputTokens: 1_000_000}, "claude-opus-4-1-20250805", 15_000_000},
		{"call's model", logbook.Usage{InputTokens: 1_000_000, Model: "claude-haiku-4-5"}, "claude-opus-4-1", 1_000_000},
		{"project's price", logbook.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, "in-house-model", 3_000_000},
		{"unknown model", logbook.Usage{InputTokens: 1_000_000}, "mystery", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.usage
			if err := (&logbook.Entry{Kind: logbook.KindNote, Usage: &u}).Normalize("e"); err != nil {
				t.Fatal(err)
			}
			u.SetCost(table, tc.sessionModel)
			if u.CostMicros != tc.want || u.CostUSD != nil {
				t.Errorf("cost = %d micro-dollars (cost_usd %v), want %d", u.CostMicros, u.CostUSD, tc.want)
			}
		})
	}
}

func TestUsageValidation(t *testing.T) {
	negative, huge := -1.0, 2e6
	tests := []struct {
		name  string
		usage logbook.Usage
		field string
	}{
		{"cache beyond input", logbook.Usage{InputTokens: 10, CacheReadTokens: 8, CacheWriteTokens: 5}, "e.usage.input_tokens"},
		{"negative cache", logbook.Usage{InputTokens: 10, CacheReadTokens: -1}, "e.usage.cache_read_tokens"},
		{"negative cost", logbook.Usage{CostUSD: &negative}, "e.usage.cost_usd"},
		{"cost over a million dollars", logbook.Usage{CostUSD: &huge}, "e.usage.cost_usd"},
		{"negative micros", logbook.Usage{CostMicros: -5}, "e.usage.cost_micros"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.usage
			err := (&logbook.Entry{Kind: logbook.KindNote, Usage: &u}).Normalize("e")
			var v *logbook.ValidationError
			if !errors.As(err, &v) || v.Field != tc.field {
				t.Errorf("Normalize = %v, want a validation error on %s", err, tc.field)
			}
		})
	}
	nan := math.NaN()
	if err := (logbook.Price{Input: nan}).Validate("p"); err == nil {
		t.Error("a NaN price was accepted")
	}
	if err := logbook.ValidateProjectPrices(map[string]logbook.Price{"m": {Output: logbook.MaxPrice + 1}}); err == nil {
		t.Error("a price over MaxPrice was accepted")
	}
}
