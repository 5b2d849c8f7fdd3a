package logbook

import (
	"strings"
	"time"
)

// Status is what is stored about a session's life: active or ended.
// The state a reader sees (State) adds idle, derived when read.
type Status string

// Stored statuses.
// DefaultSessionTimeout is how long an active session goes unseen before
// the sweeper ends it as timed_out, unless the server is told otherwise.
const DefaultSessionTimeout = 2 * time.Hour

const (
	StatusActive Status = "active"
	StatusEnded  Status = "ended"
)

// State is a session's state as a reader sees it.
type State string

// States. StateIdle is never stored: it is an active session not seen for
// the idle window.
const (
	StateActive State = "active"
	StateIdle   State = "idle"
	StateEnded  State = "ended"
)

// Valid reports whether s is a known state.
func (s State) Valid() bool {
	return s == StateActive || s == StateIdle || s == StateEnded
}

// Outcome is how a session ended, as its harness says.
type Outcome string

// Outcomes.
const (
	OutcomeSuccess Outcome = "success"
	OutcomePartial Outcome = "partial"
	OutcomeFailed  Outcome = "failed"
)

// Valid reports whether o is one of the outcomes a caller may give.
func (o Outcome) Valid() bool {
	return o == OutcomeSuccess || o == OutcomePartial || o == OutcomeFailed
}

// End reasons written by logbook itself. A caller's own reason is stored
// as given.
const (
	EndReasonEnded       = "ended"
	EndReasonTimedOut    = "timed_out"
	EndReasonParentEnded = "parent ended"
	EndReasonRotatedPfx  = "rotated: "
)

// Session is one run of a harness, or one agent's thread.
//
// Fields tagged with json "-" are stored but not shown as such: GivenTitle
// is what the caller said, Title the derived one; Status is stored, State is
// what a reader sees.
type Session struct {
	ID               string     `json:"id"`
	Project          string     `json:"project"`
	Actor            string     `json:"actor"`
	Harness          string     `json:"harness"`
	HarnessSessionID string     `json:"harness_session_id"`
	ParentID         string     `json:"parent_id"`
	Agent            string     `json:"agent"`
	Title            string     `json:"title" redact:"text"`
	GivenTitle       string     `json:"-" redact:"text"`
	Goal             string     `json:"goal" redact:"text"`
	Task             string     `json:"task" redact:"text"`
	Prompt           string     `json:"prompt" redact:"text"`
	Model            string     `json:"model"`
	AgentType        string     `json:"agent_type"`
	Issue            Ref        `json:"issue"`
	Pull             Ref        `json:"pull"`
	Branch           string     `json:"branch"`
	HeadCommit       string     `json:"head_commit"`
	Subject          string     `json:"subject"`
	Status           Status     `json:"-"`
	State            State      `json:"state"`
	Outcome          Outcome    `json:"outcome"`
	Blocker          Blocker    `json:"blocker"`
	EndReason        string     `json:"end_reason" redact:"text"`
	Result           string     `json:"result" redact:"text"`
	StartedAt        time.Time  `json:"started_at"`
	LastSeenAt       time.Time  `json:"last_seen_at"`
	ClosedAt         *time.Time `json:"closed_at"`
	EntryCount       int64      `json:"entry_count"`
	MessageCount     int64      `json:"message_count"`
	ToolCallCount    int64      `json:"tool_call_count"`
	InputTokens      int64      `json:"input_tokens"`
	OutputTokens     int64      `json:"output_tokens"`
	// CostMicros is what the session's model calls cost, in millionths
	// of a US dollar (see Usage.CostMicros); its subagents' are their own.
	CostMicros      int64  `json:"cost_micros"`
	RootID          string `json:"root_id"`
	SubagentCount   int64  `json:"subagent_count"`
	DurationSeconds int64  `json:"duration_seconds"`

	// FirstAssistant is the start of the first assistant message, kept for
	// the title; LastAssistant the last one, kept to derive a blocker.
	FirstAssistant string `json:"-" redact:"text"`
	LastAssistant  string `json:"-" redact:"text"`
	// ProgressedAt is when the session last emitted session.progressed.
	ProgressedAt time.Time `json:"-"`
	// Unannounced counts the entries appended since the session last
	// emitted session.appended, at AnnouncedAt (see AppendedEvery).
	Unannounced int64     `json:"-"`
	AnnouncedAt time.Time `json:"-"`
}

// Root is the id of the top of the session's subagent tree.
func (s *Session) Root() string {
	if s.RootID != "" {
		return s.RootID
	}
	return s.ID
}

// DurationAt is how long the session ran: until closed_at when ended,
// until now while open.
func (s *Session) DurationAt(now time.Time) time.Duration {
	end := now
	if s.Status == StatusEnded && s.ClosedAt != nil {
		end = *s.ClosedAt
	}
	if end.Before(s.StartedAt) {
		return 0
	}
	return end.Sub(s.StartedAt)
}

// EndedOnPurpose reports whether the session was ended by a caller (or its
// parent's end, or a rotation) rather than by the timeout sweeper. Such a
// session takes no more writes; a timed-out one is revived by a heartbeat.
func (s *Session) EndedOnPurpose() bool {
	return s.Status == StatusEnded && s.EndReason != EndReasonTimedOut
}

// StateAt derives the state a reader sees at now: an active session not
// seen for the idle window reads idle.
func (s *Session) StateAt(now time.Time, idle time.Duration) State {
	switch {
	case s.Status == StatusEnded:
		return StateEnded
	case idle > 0 && now.Sub(s.LastSeenAt) >= idle:
		return StateIdle
	default:
		return StateActive
	}
}

// DeriveTitle sets Title by the rule every interface shares: the goal when
// set, else the given title, else the first prompt, else the first
// assistant text, clipped to MaxTitle characters.
func (s *Session) DeriveTitle() {
	for _, t := range []string{s.Goal, s.GivenTitle, s.Prompt, s.FirstAssistant} {
		if t = Clip(firstLine(t), MaxTitle); t != "" {
			s.Title = t
			return
		}
	}
	s.Title = ""
}

// firstLine returns the first non-blank line of text, so a title made from
// a long prompt reads as a line.
func firstLine(text string) string {
	text = strings.TrimSpace(text)
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		return text[:i]
	}
	return text
}
