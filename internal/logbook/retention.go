package logbook

import (
	"encoding/json"
)

// Retention is how long a project keeps what its sessions recorded, in
// days after a session ended; zero keeps it for ever. Sessions still
// going keep everything. The sweeper enforces it (see the service's
// Sweep), a small batch per transaction.
type Retention struct {
	// SessionsDays: an ended session is deleted this many days after it
	// ended, with its subagents (once they all ended that long ago) and
	// everything of theirs, as `logbook prune` deletes it. Messages
	// between agents sent this many days ago are deleted too, read or not.
	SessionsDays int `json:"sessions_days"`
	// PayloadsDays: this many days after a session ended, the output of
	// its tool results (their text and payload) and every other payload
	// larger than LargePayload bytes are removed. Its summaries and
	// compactions, its result and the rest of its transcript are kept,
	// and a tool call's status (ok, error) with them.
	PayloadsDays int `json:"payloads_days"`
}

// ProjectRetention is a project's retention.
type ProjectRetention struct {
	Project   string
	Retention Retention
}

// Bounds of retention.
const (
	// MaxRetentionDays is a hundred years.
	MaxRetentionDays = 36500
	// LargePayload is the size in characters from which payload
	// retention removes the payload of an entry that is not a tool result
	// (a tool call's input holding a whole file, say).
	LargePayload = 4096
	// MaxTrimmedPayload bounds what payload retention leaves of a payload
	// (TrimEntry): an entry with a larger one has something left to trim.
	MaxTrimmedPayload = 64
)

// Validate checks the retention's days.
func (r Retention) Validate() error {
	for _, d := range []struct {
		field string
		days  int
	}{{"sessions_days", r.SessionsDays}, {"payloads_days", r.PayloadsDays}} {
		if d.days < 0 || d.days > MaxRetentionDays {
			return Invalid(d.field, "%d is not a number of days to keep; give 1 to %d, or 0 to keep for ever", d.days, MaxRetentionDays)
		}
	}
	return nil
}

// Trimmable reports whether payload retention changes the entry: a tool
// result with its output, or an entry of another kind (summaries and
// compactions are kept) with a payload larger than LargePayload. The
// store finds such entries by the same rule.
func Trimmable(e Entry) bool {
	switch e.Kind {
	case KindToolResult:
		return e.Text != "" || len([]rune(string(e.Payload))) > MaxTrimmedPayload
	case KindSummary, KindCompaction:
		return false
	}
	return len([]rune(string(e.Payload))) > LargePayload
}

// TrimEntry removes what payload retention removes from an entry (see
// Retention.PayloadsDays): a tool result's text and payload, or another
// entry's large payload. Its payload becomes {"retention":"removed"},
// with "is_error":true for a tool result that failed, so the call's
// status stays what it was (see ToolCallStatus).
func TrimEntry(e *Entry) {
	if !Trimmable(*e) {
		return
	}
	marker := map[string]any{"retention": "removed"}
	if e.Kind == KindToolResult {
		if status, _ := ToolCallStatus(true, e.Payload, nil); status == ToolCallError {
			marker["is_error"] = true
		}
		e.Text = ""
	}
	e.Payload, _ = json.Marshal(marker) // a map of plain values
}
