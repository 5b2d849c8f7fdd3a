package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Claude Code hook events the hook understands. Any other event is
// accepted and ignored.
const (
	EventSessionStart       = "SessionStart"
	EventUserPromptSubmit   = "UserPromptSubmit"
	EventPreToolUse         = "PreToolUse"
	EventPostToolUse        = "PostToolUse"
	EventPostToolUseFailure = "PostToolUseFailure"
	EventSubagentStart      = "SubagentStart"
	EventSubagentStop       = "SubagentStop"
	EventPreCompact         = "PreCompact"
	EventPostCompact        = "PostCompact"
	EventNotification       = "Notification"
	EventStop               = "Stop"
	EventStopFailure        = "StopFailure"
	EventSessionEnd         = "SessionEnd"
)

// ClaudeEvents lists the events `logbook hook install claude` registers.
var ClaudeEvents = []string{
	EventSessionStart, EventUserPromptSubmit, EventPreToolUse, EventPostToolUse,
	EventPostToolUseFailure, EventSubagentStart, EventSubagentStop, EventPreCompact,
	EventPostCompact, EventNotification, EventStop, EventStopFailure, EventSessionEnd,
}

// Payload is one Claude Code hook event: the fields common to every event
// and those of each event, flattened (a field an event does not have stays
// empty). ParsePayload fills it tolerantly: unknown fields are ignored, and
// a known field of an unexpected JSON type reads as empty rather than
// failing the whole payload.
type Payload struct {
	// Common to every event.
	SessionID      string
	TranscriptPath string
	Cwd            string
	PermissionMode string
	Event          string // hook_event_name
	// AgentID and AgentType are set when the event happens inside a
	// subagent, and on SubagentStart and SubagentStop.
	AgentID   string
	AgentType string

	// SessionStart: startup, resume, clear or compact; the model when given.
	Source string
	Model  string

	// UserPromptSubmit.
	Prompt string

	// PreToolUse, PostToolUse, PostToolUseFailure. ToolUseID is absent in
	// older Claude Code versions.
	ToolName     string
	ToolUseID    string
	ToolInput    json.RawMessage
	ToolResponse json.RawMessage

	// PostToolUseFailure's Error and IsInterrupt; StopFailure's Error,
	// ErrorType and ErrorMessage (Claude Code versions differ in which of
	// them they send).
	Error        string
	ErrorType    string
	ErrorMessage string
	IsInterrupt  bool

	// SubagentStop.
	AgentTranscriptPath string

	// Stop, SubagentStop, StopFailure.
	StopHookActive       bool
	LastAssistantMessage string

	// PreCompact: manual or auto, and what the user asked of a /compact.
	Trigger            string
	CustomInstructions string
	// PostCompact.
	CompactSummary string

	// Notification.
	Message          string
	NotificationType string

	// SessionEnd: clear, logout, prompt_input_exit, other...
	Reason string
}

// ParsePayload reads one hook payload. It fails only when data is not a
// JSON object or names no session.
func ParsePayload(data []byte) (Payload, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Payload{}, fmt.Errorf("the hook payload on stdin is not a JSON object (%v); Claude Code sends one per call", err)
	}
	f := fields(raw)
	p := Payload{
		SessionID:            f.str("session_id"),
		TranscriptPath:       f.str("transcript_path"),
		Cwd:                  f.str("cwd"),
		PermissionMode:       f.str("permission_mode"),
		Event:                f.str("hook_event_name"),
		AgentID:              f.str("agent_id"),
		AgentType:            f.str("agent_type"),
		Source:               f.str("source"),
		Model:                f.model("model"),
		Prompt:               f.str("prompt"),
		ToolName:             f.str("tool_name"),
		ToolUseID:            f.str("tool_use_id"),
		ToolInput:            f.value("tool_input"),
		ToolResponse:         f.value("tool_response"),
		Error:                f.text("error"),
		ErrorType:            f.str("error_type"),
		ErrorMessage:         f.text("error_message"),
		IsInterrupt:          f.boolean("is_interrupt"),
		AgentTranscriptPath:  f.str("agent_transcript_path"),
		StopHookActive:       f.boolean("stop_hook_active"),
		LastAssistantMessage: f.str("last_assistant_message"),
		Trigger:              f.str("trigger"),
		CustomInstructions:   f.str("custom_instructions"),
		CompactSummary:       f.str("compact_summary"),
		Message:              f.str("message"),
		NotificationType:     f.str("notification_type"),
		Reason:               f.str("reason"),
	}
	if p.SessionID == "" {
		return p, fmt.Errorf("the hook payload has no session_id (event %q); is this a Claude Code hook payload?", p.Event)
	}
	return p, nil
}

// fields reads values of a JSON object leniently.
type fields map[string]json.RawMessage

// str is the field when it is a JSON string, else "".
func (f fields) str(key string) string {
	var s string
	if json.Unmarshal(f[key], &s) != nil {
		return ""
	}
	return s
}

// text is the field as text: a string as is, any other value (an error
// object, a number) as compact JSON.
func (f fields) text(key string) string {
	v := f.value(key)
	if v == nil {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return ""
	}
	return buf.String()
}

// boolean is the field when it is a JSON boolean, else false.
func (f fields) boolean(key string) bool {
	var b bool
	_ = json.Unmarshal(f[key], &b)
	return b
}

// value is the field's raw JSON, or nil when absent or null.
func (f fields) value(key string) json.RawMessage {
	v := bytes.TrimSpace(f[key])
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	return v
}

// model reads a model given as a string or as an object with an id.
func (f fields) model(key string) string {
	if s := f.str(key); s != "" {
		return s
	}
	var obj struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
	}
	if json.Unmarshal(f[key], &obj) != nil {
		return ""
	}
	if obj.ID != "" {
		return obj.ID
	}
	return obj.DisplayName
}

// ToolInputString returns a string field of the tool input, such as Bash's
// command or Edit's file_path, or "".
func (p Payload) ToolInputString(key string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(p.ToolInput, &m) != nil {
		return ""
	}
	return fields(m).str(key)
}

// editTools are the tools whose input names a file they change.
var editTools = map[string]bool{"Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true}

// EditedPath returns the file an Edit, Write, MultiEdit or NotebookEdit
// call changes, or "" for any other tool.
func (p Payload) EditedPath() string {
	if !editTools[p.ToolName] {
		return ""
	}
	if path := p.ToolInputString("file_path"); path != "" {
		return path
	}
	return p.ToolInputString("notebook_path")
}

// responseText is the readable part of a tool response: a string response
// as is; else stdout and stderr, a text content list, a result or a
// message, whichever the response has. The whole response is kept as the
// entry's payload, so this is for reading, not for completeness.
func responseText(resp json.RawMessage) string {
	var s string
	if json.Unmarshal(resp, &s) == nil {
		return s
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(resp, &m) != nil {
		return ""
	}
	f := fields(m)
	if out, errOut := f.str("stdout"), f.str("stderr"); out != "" || errOut != "" {
		return strings.TrimRight(strings.Join(nonEmpty(out, errOut), "\n"), "\n")
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(f["content"], &parts) == nil {
		var texts []string
		for _, part := range parts {
			if part.Text != "" {
				texts = append(texts, part.Text)
			}
		}
		if len(texts) > 0 {
			return strings.Join(texts, "\n")
		}
	}
	for _, key := range []string{"result", "message", "error"} {
		if s := f.str(key); s != "" {
			return s
		}
	}
	return ""
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
