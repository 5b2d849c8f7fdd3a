package web

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/logbookhq/logbook/internal/logbook"
)

// funcs are the helpers templates call. They format; they never mark text
// as safe HTML, so html/template escapes everything they return.
func (h *handler) funcs() template.FuncMap {
	return template.FuncMap{
		"asset":        h.assets.URL,
		"duration":     formatSeconds,
		"tokens":       formatCount,
		"count":        formatCount,
		"when":         formatWhen,
		"iso":          func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"ago":          func(t time.Time) string { return formatAgo(time.Now(), t) },
		"until":        func(t time.Time) string { return formatUntil(time.Now(), t) },
		"words":        func(s any) string { return strings.ReplaceAll(fmt.Sprint(s), "_", " ") },
		"short":        shortCommit,
		"fold":         fold,
		"clip":         logbook.Clip,
		"plural":       plural,
		"clock":        func(t time.Time) string { return t.UTC().Format("15:04:05") },
		"ran":          func(s logbook.Session) string { return formatSeconds(int64(s.DurationAt(time.Now()) / time.Second)) },
		"took":         formatTook,
		"resultStatus": resultStatus,
		"add":          func(a, b int64) int64 { return a + b },
		"nth":          func(i int) int { return i + 1 },
		"usd":          logbook.FormatUSD,
	}
}

// URL returns a link to path in the page's project, with extra query
// values given as key, value pairs (an empty value is left out).
func (p page) URL(path string, kv ...string) string {
	v := viewer{Caller: p.Caller, Project: p.Project}
	return v.projectURL(path, with(nil, kv...))
}

// formatSeconds writes a duration as a person reads it: 45s, 12m 03s,
// 3h 05m, 2d 4h.
func formatSeconds(seconds int64) string {
	d := time.Duration(seconds) * time.Second
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", seconds)
	case d < time.Hour:
		return fmt.Sprintf("%dm %02ds", seconds/60, seconds%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %02dm", seconds/3600, seconds%3600/60)
	default:
		return fmt.Sprintf("%dd %dh", seconds/86400, seconds%86400/3600)
	}
}

// formatTook writes how long a tool took: 850 ms, 4.2 s, 3m 10s.
func formatTook(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return trimZero(fmt.Sprintf("%.1f", d.Seconds())) + " s"
	default:
		return formatSeconds(int64(d / time.Second))
	}
}

// formatCount writes a count compactly: 950, 12.3k, 4.5M.
func formatCount(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e3)) + "k"
	default:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e6)) + "M"
	}
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// formatWhen writes a time in UTC to the minute.
func formatWhen(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// formatAgo says how long before now t was: "just now", "5 min ago",
// "3 h ago", "2 days ago", then the date.
func formatAgo(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	case d < 14*24*time.Hour:
		return plural(int64(d/(24*time.Hour)), "day", "days") + " ago"
	default:
		return t.UTC().Format("2006-01-02")
	}
}

// formatUntil says how long after now t is: "in 25 min".
func formatUntil(now, t time.Time) string {
	d := t.Sub(now)
	switch {
	case d <= 0:
		return "now"
	case d < time.Hour:
		return fmt.Sprintf("in %d min", int(d/time.Minute)+1)
	default:
		return fmt.Sprintf("in %d h", int(d/time.Hour))
	}
}

// plural writes n with the singular or plural noun.
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// shortCommit clips a commit hash to 8 characters.
func shortCommit(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

// Long text is folded: shown as a preview with the whole text behind a
// <details> a person opens.
const (
	foldChars = 700
	foldLines = 14
)

// folded is a text split for display: Long texts show Preview and keep
// Full behind a toggle.
type folded struct {
	Full    string
	Preview string
	Long    bool
	Lines   int64
	Chars   int64
}

// fold splits text for display.
func fold(text string) folded {
	f := folded{Full: text, Preview: text, Lines: int64(strings.Count(text, "\n")) + 1, Chars: int64(utf8.RuneCountInString(text))}
	if f.Chars <= foldChars && f.Lines <= foldLines {
		return f
	}
	f.Long = true
	lines := strings.SplitN(text, "\n", 7)
	preview := strings.Join(lines[:min(len(lines), 6)], "\n")
	if utf8.RuneCountInString(preview) > 400 {
		preview = string([]rune(preview)[:400])
	}
	f.Preview = strings.TrimRight(preview, " \n") + " …"
	return f
}
