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

// Usage is the tokens one model call used.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

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
		for _, n := range []struct {
			name  string
			count int64
		}{{"input_tokens", e.Usage.InputTokens}, {"output_tokens", e.Usage.OutputTokens}} {
			if n.count < 0 || n.count > MaxTokens {
				return Invalid(field+".usage."+n.name, "%d is not a token count of one model call; send 0 to %d", n.count, int64(MaxTokens))
			}
		}
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
