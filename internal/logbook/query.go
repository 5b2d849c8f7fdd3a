package logbook

import (
	"encoding/json"
	"slices"
	"time"
)

// SessionFilter selects sessions in a list. Zero fields select everything;
// set fields combine with AND.
type SessionFilter struct {
	State        State   // active, idle or ended
	Outcome      Outcome // success, partial, failed
	Blocker      Blocker
	Harness      string
	Actor        string
	Agent        string
	Issue        string // attached or named
	Pull         string // attached, named, or on the branch of a session attached to it
	Subject      string
	Path         string // a touched file; a prefix when it ends in "/"
	ParentID     string // children of this session
	Subagents    bool   // include subagents (by default only the top of each tree is listed)
	Since, Until time.Time
	MinDuration  time.Duration
	MinToolCalls int64
	// Query is a search (see ParseSearch) that the session's own title,
	// goal or result must match, through the search index.
	Query string `redact:"text"`
}

// Bounds of a search, a list's q and GET /v1/search's alike: far above
// what a person types, and they keep the index's query small. A search
// over a bound is refused (a *ValidationError naming q), never cut short:
// a shorter search would find what the caller did not ask for.
const (
	MaxQueryLen   = 200 // characters in the search
	MaxQueryWords = 32  // words (and phrases) in the search
)

// Normalize cleans the filter's names (harness, actor, agent) as Name
// does, so they match what was stored, and reads its search (Query; see
// ParseSearch), which may not be over its bounds (MaxQueryLen,
// MaxQueryWords) or hold no word at all.
func (f *SessionFilter) Normalize() error {
	for _, name := range []struct {
		field string
		value *string
		max   int
	}{{"harness", &f.Harness, MaxModel}, {"actor", &f.Actor, MaxID}, {"agent", &f.Agent, MaxID}} {
		clean, err := Name(name.field, *name.value, name.max)
		if err != nil {
			return err
		}
		*name.value = clean
	}
	if f.Query != "" {
		if _, err := ParseSearch(f.Query); err != nil {
			return err
		}
	}
	return nil
}

// SessionSort is the order of a session list, newest or longest first.
type SessionSort string

// Sort orders.
const (
	SortLastSeen SessionSort = "last_seen"
	SortStarted  SessionSort = "started"
	SortDuration SessionSort = "duration"
)

// Valid reports whether s is a known sort.
func (s SessionSort) Valid() bool {
	return s == SortLastSeen || s == SortStarted || s == SortDuration
}

// StatsBy is what session statistics are grouped by.
type StatsBy string

// Groupings. A day is a calendar day in the time zone the request names,
// UTC unless it names one.
const (
	ByOutcome StatsBy = "outcome"
	ByBlocker StatsBy = "blocker"
	ByHarness StatsBy = "harness"
	ByAgent   StatsBy = "agent"
	ByActor   StatsBy = "actor"
	ByModel   StatsBy = "model"
	ByDay     StatsBy = "day"
)

// StatsGroupings lists every grouping, for messages and documentation.
var StatsGroupings = []StatsBy{ByOutcome, ByBlocker, ByHarness, ByAgent, ByActor, ByModel, ByDay}

// Valid reports whether b is a known grouping.
func (b StatsBy) Valid() bool {
	return slices.Contains(StatsGroupings, b)
}

// ParseZone reads the time zone a request names for its days: an IANA
// name (Europe/Berlin) or UTC; "" is UTC. field names the parameter in
// the error.
func ParseZone(field, name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	zone, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, Invalid(field, "%q is not a time zone; name one as the IANA database does (Europe/Berlin, America/New_York) or write UTC", name)
	}
	return zone, nil
}

// StatsRow is one group of session statistics: the sessions started in
// the window that fall in the group, and their sums. A session's duration
// is closed_at − started_at once it ended, now − started_at while it runs,
// in whole seconds (never below zero).
type StatsRow struct {
	Key             string `json:"key"`
	Then            string `json:"then,omitempty"` // the second grouping's value, when there is one
	Sessions        int64  `json:"sessions"`
	DurationSeconds int64  `json:"duration_seconds"`
	InputTokens     int64  `json:"input_tokens"`
	OutputTokens    int64  `json:"output_tokens"`
	ToolCalls       int64  `json:"tool_calls"`
	// CostMicros is what the sessions' model calls cost, in millionths of
	// a US dollar.
	CostMicros int64 `json:"cost_micros"`
}

// ToolCall is a tool call paired with its result, flat for audit scripts.
type ToolCall struct {
	EntryID    int64           `json:"-"`
	SessionID  string          `json:"session_id"`
	Seq        int64           `json:"seq"`
	At         time.Time       `json:"at"`
	Tool       string          `json:"tool"`
	ToolCallID string          `json:"tool_call_id"`
	Input      json.RawMessage `json:"input"`
	Result     string          `json:"result"`
	Status     string          `json:"status"` // see the ToolCall* statuses
	// Reason says why the gate denied or asked about the call.
	Reason     string `json:"reason,omitempty"`
	DurationMS *int64 `json:"duration_ms"`

	// ResultPayload is the result entry's payload, read to decide Status.
	ResultPayload json.RawMessage `json:"-"`
	ResultAt      *time.Time      `json:"-"`
	// NoteText and NotePayload are the first note tied to the call: the
	// gate's decision on it, when the hook recorded one.
	NoteText    string          `json:"-"`
	NotePayload json.RawMessage `json:"-"`
}

// The statuses of a tool call. A call with a result is ok or error, even
// one the gate asked about (the person said yes); without a result it is
// denied or asked when the gate said so, else pending.
const (
	ToolCallOK      = "ok"
	ToolCallError   = "error"
	ToolCallDenied  = "denied"
	ToolCallAsked   = "asked"
	ToolCallPending = "pending"
)

// GateDecision is what a hook records, as the payload of a note tied to a
// tool call, when the command gate decided on the call before it ran.
type GateDecision struct {
	Decision string `json:"decision"` // allow, defer, ask or deny
	Reason   string `json:"reason"`
}

// ToolCallStatus returns the status of a call: from its result when one
// came (resultPayload is nil when none did), else from the gate's decision
// (notePayload, nil when none was recorded); and the reason a denied or
// asked call carries.
func ToolCallStatus(hasResult bool, resultPayload, notePayload json.RawMessage) (status, reason string) {
	if hasResult {
		var flags struct {
			IsError bool   `json:"is_error"`
			Status  string `json:"status"`
			Error   any    `json:"error"`
		}
		if json.Unmarshal(resultPayload, &flags) == nil && (flags.IsError || flags.Status == "error" || flags.Error != nil) {
			return ToolCallError, ""
		}
		return ToolCallOK, ""
	}
	var d GateDecision
	if len(notePayload) > 0 && json.Unmarshal(notePayload, &d) == nil {
		switch d.Decision {
		case "deny":
			return ToolCallDenied, d.Reason
		case "ask":
			return ToolCallAsked, d.Reason
		}
	}
	return ToolCallPending, ""
}
