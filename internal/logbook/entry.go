package logbook

import (
	"encoding/json"
	"math"
	"time"
)

// Kind is what an entry of a transcript is.
type Kind string

// Entry kinds.
const (
	KindPrompt     Kind = "prompt"
	KindMessage    Kind = "message"
	KindToolCall   Kind = "tool_call"
	KindToolResult Kind = "tool_result"
	KindNote       Kind = "note"
	KindSkill      Kind = "skill"
	KindSummary    Kind = "summary"
	KindCompaction Kind = "compaction"
)

// Kinds lists every entry kind.
var Kinds = []Kind{
	KindPrompt, KindMessage, KindToolCall, KindToolResult,
	KindNote, KindSkill, KindSummary, KindCompaction,
}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool {
	for _, known := range Kinds {
		if k == known {
			return true
		}
	}
	return false
}

// Roles of a message entry.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system"
)

// Usage is the tokens one model call used, and what it cost.
type Usage struct {
	// InputTokens counts every prompt token the model read, those read
	// from or written to the prompt cache included.
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// CacheReadTokens and CacheWriteTokens are the part of InputTokens
	// read from the prompt cache and written to it, priced apart.
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	// Model is the model called, when it is not the session's: the call
	// is priced by it.
	Model string `json:"model,omitempty"`
	// CostUSD is what the call cost in US dollars as the harness reported
	// it (Claude Code's cost_usd): when given, it is recorded instead of
	// the tokens priced. logbook answers with CostMicros only.
	CostUSD *float64 `json:"cost_usd,omitempty"`
	// CostMicros is what the call cost in millionths of a US dollar, fixed
	// when it was recorded: the harness's figure (CostUSD, or CostMicros
	// sent as it was exported), else its tokens priced by the project's
	// price table (0, left out, for a model the table does not know).
	CostMicros int64 `json:"cost_micros,omitempty"`
}

// CostReported reports whether the harness said what the call cost.
func (u *Usage) CostReported() bool { return u.CostUSD != nil || u.CostMicros > 0 }

// Entry is one item of a session's transcript. Seq numbers a session's
// entries 1, 2, 3… with no gap; Key, when set, makes a repeated entry a
// no-op. A superseded entry (replaced by a compaction) stays readable.
type Entry struct {
	ID         int64           `json:"-"`
	SessionID  string          `json:"-"`
	Seq        int64           `json:"seq"`
	At         time.Time       `json:"at"`
	Kind       Kind            `json:"kind"`
	Role       string          `json:"role,omitempty"`
	Text       string          `json:"text,omitempty" redact:"text"`
	Tool       string          `json:"tool,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Payload    json.RawMessage `json:"payload,omitempty"`
	Commit     string          `json:"commit,omitempty"`
	Key        string          `json:"key,omitempty"`
	Usage      *Usage          `json:"usage,omitempty"`
	Superseded bool            `json:"superseded,omitempty"`
	// Author is who wrote a note sent to the session from outside it
	// (POST /v1/notes). Every other entry is written by the session's
	// owner and has none.
	Author *Author `json:"author,omitempty"`
}

// Author is the actor, and the token it used, that wrote an entry into a
// session from outside it. The token's id (never its value) lets the
// admin revoke it: logbook token revoke TOKEN_ID.
type Author struct {
	Actor   string `json:"actor"`
	TokenID string `json:"token_id,omitempty"`
}

// Normalize clips an entry's text fields to their limits and checks what
// cannot be clipped: the kind, and the role of a message. field names the
// entry in errors, e.g. "entries[3]". (Secrets are redacted where the entry
// is stored.)
func (e *Entry) Normalize(field string) error {
	if !e.Kind.Valid() {
		return Invalid(field+".kind", "%q is not an entry kind; use one of %s", e.Kind, kindList())
	}
	e.Role = Clip(e.Role, MaxModel)
	switch e.Role {
	case "", RoleUser, RoleAssistant, RoleSystem:
	default:
		return Invalid(field+".role", "%q is not a role; use user, assistant or system", e.Role)
	}
	if e.Kind == KindMessage && e.Role == "" {
		return Invalid(field+".role", "a message needs a role: user, assistant or system")
	}
	e.Text = Clip(e.Text, MaxEntryText)
	if e.Kind == KindSkill {
		e.Text = Clip(e.Text, MaxModel) // a skill entry holds the skill's name only
	}
	e.Tool = Clip(e.Tool, MaxID)
	e.ToolCallID = Clip(e.ToolCallID, MaxID)
	e.Commit = Clip(e.Commit, MaxCommit)
	e.Key = Clip(e.Key, MaxID)
	if len(e.Payload) > MaxPayload {
		clipped, _ := json.Marshal(Clip(string(e.Payload), MaxEntryText))
		e.Payload = clipped
	}
	if string(e.Payload) == "null" {
		e.Payload = nil
	}
	if e.Usage != nil {
		return e.Usage.normalize(field + ".usage")
	}
	return nil
}

// normalize checks the usage's counts and reported cost, and clips its
// model's name.
func (u *Usage) normalize(field string) error {
	for _, n := range []struct {
		name  string
		count int64
	}{{"input_tokens", u.InputTokens}, {"output_tokens", u.OutputTokens},
		{"cache_read_tokens", u.CacheReadTokens}, {"cache_write_tokens", u.CacheWriteTokens}} {
		if n.count < 0 || n.count > MaxTokens {
			return Invalid(field+"."+n.name, "%d is not a token count of one model call; send 0 to %d", n.count, int64(MaxTokens))
		}
	}
	if u.CacheReadTokens+u.CacheWriteTokens > u.InputTokens {
		return Invalid(field+".input_tokens", "%d input tokens are fewer than the %d read from and written to the cache; count every prompt token in input_tokens, cached ones included",
			u.InputTokens, u.CacheReadTokens+u.CacheWriteTokens)
	}
	u.Model = Clip(u.Model, MaxModel)
	if u.CostUSD != nil {
		c := *u.CostUSD
		if math.IsNaN(c) || c < 0 || c*1e6 > MaxCostMicros {
			return Invalid(field+".cost_usd", "%v is not the cost of one model call; send US dollars, 0 to %d", c, MaxCostMicros/1_000_000)
		}
		u.CostMicros = int64(math.Round(c * 1e6))
	}
	if u.CostMicros < 0 || u.CostMicros > MaxCostMicros {
		return Invalid(field+".cost_micros", "%d is not the cost of one model call; send millionths of a US dollar, 0 to %d", u.CostMicros, int64(MaxCostMicros))
	}
	return nil
}

// AddTokens adds n tokens to a counter that saturates at math.MaxInt64
// instead of wrapping to a negative count.
func AddTokens(counter, n int64) int64 {
	if n > 0 && counter > math.MaxInt64-n {
		return math.MaxInt64
	}
	return counter + n
}

// IsMessage reports whether the entry is a turn of the conversation, which
// the session's message count counts: a prompt or a message.
func (e *Entry) IsMessage() bool { return e.Kind == KindPrompt || e.Kind == KindMessage }

// IsAssistantText reports whether the entry is text the assistant said.
func (e *Entry) IsAssistantText() bool {
	return e.Kind == KindMessage && e.Role == RoleAssistant && e.Text != ""
}

func kindList() string {
	s := ""
	for i, k := range Kinds {
		if i > 0 {
			s += ", "
		}
		s += string(k)
	}
	return s
}
