package logbook

import (
	"strconv"
	"strings"
	"time"
)

// ParseDuration reads a duration as people write one on a command line or
// in a URL: Go's (90m, 36h) or days (7d, 0.5d). Negative durations are
// refused. The API, the MCP tools, the web UI and the CLI all read
// windows and ages with it, so they accept the same words.
func ParseDuration(v string) (time.Duration, bool) {
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || n < 0 {
			return 0, false
		}
		return time.Duration(n * 24 * float64(time.Hour)), true
	}
	d, err := time.ParseDuration(v)
	return d, err == nil && d >= 0
}

// ParseTime reads a point in time as people write one: RFC 3339
// (2026-11-30T12:00:00Z), a date (2026-11-30, midnight UTC), or a duration
// back from now (36h, 7d; see ParseDuration).
func ParseTime(v string, now time.Time) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	if d, ok := ParseDuration(v); ok {
		return now.Add(-d), true
	}
	return time.Time{}, false
}

// TimeHint says how to write a time, for error messages.
const TimeHint = "write RFC 3339 (2026-11-30T12:00:00Z), a date (2026-11-30) or a duration back from now (90m, 36h, 7d)"
