package web

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

func TestBuildTimeline(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	entries := []logbook.Entry{
		{Seq: 1, Kind: logbook.KindPrompt, Text: "go", At: at},
		{Seq: 2, Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "a", Payload: json.RawMessage(`{"command":"ls"}`), At: at},
		{Seq: 3, Kind: logbook.KindToolCall, Tool: "Read", ToolCallID: "b", At: at},
		{Seq: 4, Kind: logbook.KindToolResult, ToolCallID: "b", Payload: json.RawMessage(`{"is_error":true}`), At: at.Add(1500 * time.Millisecond)},
		{Seq: 5, Kind: logbook.KindToolResult, ToolCallID: "a", Text: "README.md", At: at.Add(2 * time.Second)},
		{Seq: 6, Kind: logbook.KindToolResult, ToolCallID: "earlier", Text: "a result of a call on another page", At: at},
		{Seq: 7, Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "c", At: at},
	}
	items := buildTimeline(entries)
	var seqs []int64
	for _, it := range items {
		seqs = append(seqs, it.Seq)
	}
	if got := seqs; len(got) != 5 || got[0] != 1 || got[1] != 2 || got[2] != 3 || got[3] != 6 || got[4] != 7 {
		t.Fatalf("timeline rows %v, want [1 2 3 6 7]: results shown under their calls", got)
	}
	if it := items[1]; it.Result == nil || it.Result.Seq != 5 || it.Status != "ok" || it.Took != 2*time.Second || it.Command() != "ls" || it.ResultText() != "README.md" {
		t.Errorf("call a: result %v, status %s, took %s, command %q", it.Result, it.Status, it.Took, it.Command())
	}
	if it := items[2]; it.Result == nil || it.Status != "error" || it.Took != 1500*time.Millisecond {
		t.Errorf("call b: status %s, took %s", it.Status, it.Took)
	}
	if it := items[3]; it.Result != nil || it.Label() != "Tool result" {
		t.Errorf("an unpaired result: %+v", it)
	}
	for _, tc := range []struct {
		e    logbook.Entry
		want string
	}{
		{logbook.Entry{Kind: logbook.KindNote, Text: "hook notice"}, "Note"},
		{logbook.Entry{Kind: logbook.KindNote, Text: "CI is red", Author: &logbook.Author{Actor: "bob", TokenID: "t1"}}, "Note from bob"},
	} {
		if got := (timelineItem{Entry: tc.e}).Label(); got != tc.want {
			t.Errorf("label of %q: %q, want %q (a note says who sent it)", tc.e.Text, got, tc.want)
		}
	}
	if it := items[4]; it.Result != nil || it.Status != "pending" {
		t.Errorf("a call without a result: status %q", it.Status)
	}

	// A call the gate denied shows as denied, not pending forever.
	gated := buildTimeline([]logbook.Entry{
		{Seq: 1, Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "d", At: at},
		{Seq: 2, Kind: logbook.KindNote, Tool: "Bash", ToolCallID: "d", Payload: json.RawMessage(`{"decision":"deny","reason":"no"}`), At: at},
		{Seq: 3, Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "q", At: at},
		{Seq: 4, Kind: logbook.KindNote, Tool: "Bash", ToolCallID: "q", Payload: json.RawMessage(`{"decision":"ask","reason":"?"}`), At: at},
	})
	if len(gated) != 4 || gated[0].Status != "denied" || gated[2].Status != "asked" {
		t.Errorf("gated calls: %+v", gated)
	}
}

func TestFold(t *testing.T) {
	t.Parallel()
	short := fold("one line")
	if short.Long || short.Preview != "one line" {
		t.Errorf("a short text is folded: %+v", short)
	}
	many := fold(strings.Repeat("line\n", 20) + "end")
	if !many.Long || many.Lines != 21 || strings.Count(many.Preview, "\n") != 5 || !strings.HasSuffix(many.Preview, "…") || many.Full != strings.Repeat("line\n", 20)+"end" {
		t.Errorf("many lines: %+v", many)
	}
	wide := fold(strings.Repeat("é", 2000))
	if !wide.Long || wide.Chars != 2000 || !strings.HasPrefix(wide.Preview, strings.Repeat("é", 400)) || strings.Contains(wide.Preview, strings.Repeat("é", 401)) {
		t.Errorf("a long line: long %v, %d characters, preview of %d bytes", wide.Long, wide.Chars, len(wide.Preview))
	}
}

func TestFormats(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct{ name, got, want string }{
		{"seconds", formatSeconds(45), "45s"},
		{"minutes", formatSeconds(12*60 + 3), "12m 03s"},
		{"hours", formatSeconds(3*3600 + 5*60), "3h 05m"},
		{"days", formatSeconds(2*86400 + 4*3600), "2d 4h"},
		{"count", formatCount(950), "950"},
		{"thousands", formatCount(12_340), "12.3k"},
		{"round thousands", formatCount(2_000), "2k"},
		{"millions", formatCount(4_500_000), "4.5M"},
		{"no cost", logbook.FormatUSD(0), "$0"},
		{"under a cent", logbook.FormatUSD(4_999), "<$0.01"},
		{"cents", logbook.FormatUSD(425_000), "$0.42"},
		{"dollars", logbook.FormatUSD(12_500_000), "$12.50"},
		{"thousands of dollars", logbook.FormatUSD(1_234_567_890_123), "$1,234,568"},
		{"just now", formatAgo(now, now.Add(-20*time.Second)), "just now"},
		{"minutes ago", formatAgo(now, now.Add(-5*time.Minute)), "5 min ago"},
		{"a day ago", formatAgo(now, now.Add(-30*time.Hour)), "1 day ago"},
		{"long ago", formatAgo(now, now.AddDate(0, -2, 0)), "2026-01-10"},
		{"until", formatUntil(now, now.Add(25*time.Minute)), "in 26 min"},
		{"took ms", formatTook(850 * time.Millisecond), "850 ms"},
		{"took s", formatTook(4200 * time.Millisecond), "4.2 s"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestLocalPath(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]string{
		"/sessions?state=active": "/sessions?state=active",
		"":                       "/",
		"//evil.example":         "/",
		`/\evil.example`:         "/",
		"https://evil.example/":  "/",
		"javascript:alert(1)":    "/",
		"sessions":               "/",
	} {
		if got := localPath(next); got != want {
			t.Errorf("localPath(%q) = %q, want %q", next, got, want)
		}
	}
}

func TestOutcomeChart(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)
	c := outcomeChart([]dayOutcomes{
		{Day: day, Counts: map[logbook.Outcome]int64{logbook.OutcomeSuccess: 3, logbook.OutcomeFailed: 1}},
		{Day: day.AddDate(0, 0, 1), Counts: map[logbook.Outcome]int64{}},
	})
	if c.Total != 4 || len(c.Bars) != 2 || c.Ticks[2].Label != "5" {
		t.Fatalf("chart: total %d, %d bars, top tick %q", c.Total, len(c.Bars), c.Ticks[2].Label)
	}
	bar := c.Bars[0]
	if len(bar.Segments) != 2 || bar.Segments[0].Class != "fill-success" || bar.Segments[1].Class != "fill-failed" {
		t.Fatalf("segments %+v", bar.Segments)
	}
	success, failed := bar.Segments[0], bar.Segments[1]
	plot := c.PlotBottom - c.PlotTop
	if success.H != plot*3/5 || failed.H != plot/5 || success.Y+success.H != c.PlotBottom || failed.Y+failed.H != success.Y {
		t.Errorf("segments are not stacked to scale: %+v", bar.Segments)
	}
	if bar.Title != "Mon Mar 9: 3 success, 1 failed" || c.Bars[1].Title != "Tue Mar 10: no sessions" {
		t.Errorf("titles %q, %q", bar.Title, c.Bars[1].Title)
	}
	if c.Bars[1].Label == "" || bar.Label != "" {
		t.Errorf("the last day is labelled, every other one before it: %q, %q", bar.Label, c.Bars[1].Label)
	}
}

func TestBlockerChart(t *testing.T) {
	t.Parallel()
	c := blockerChart([]logbook.StatsRow{{Key: "", Sessions: 9}, {Key: "tool_error", Sessions: 2}, {Key: "rate_limited", Sessions: 4}},
		func(b string) string { return "/sessions?blocker=" + b })
	if len(c.Rows) != 2 || c.Rows[0].Label != "rate limited" || c.Rows[1].Label != "tool error" {
		t.Fatalf("rows %+v: want the blockers, most first, without sessions that have none", c.Rows)
	}
	if c.Rows[1].W*2 != c.Rows[0].W || c.Rows[0].Sessions != "/sessions?blocker=rate_limited" {
		t.Errorf("bars %d and %d, link %q", c.Rows[0].W, c.Rows[1].W, c.Rows[0].Sessions)
	}
}
