package web

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// timelineItem is one row of a session's transcript as the page shows it:
// an entry, and for a tool call the result paired with it.
type timelineItem struct {
	logbook.Entry
	Result *logbook.Entry // the tool_result with the same tool_call_id
	Status string         // for a tool call: ok, error, or pending while no result came
	Took   time.Duration  // from the call to its result
}

// Command is the shell command of a tool call whose input names one (Bash
// and its kin), shown on its own line above the input.
func (it timelineItem) Command() string {
	var in struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(it.Payload, &in) == nil {
		return in.Command
	}
	return ""
}

// Input is the tool call's payload as indented JSON.
func (it timelineItem) Input() string { return prettyJSON(it.Payload) }

// ResultText is what the paired result said: its text, else its payload.
func (it timelineItem) ResultText() string {
	if it.Result == nil {
		return ""
	}
	return entryBody(*it.Result)
}

// Body is the text of a non-tool entry: its text, else its payload.
func (it timelineItem) Body() string { return entryBody(it.Entry) }

// Label is the kind of the entry in words.
func (it timelineItem) Label() string {
	switch it.Kind {
	case logbook.KindMessage:
		switch it.Role {
		case logbook.RoleAssistant:
			return "Assistant"
		case logbook.RoleUser:
			return "User"
		default:
			return "System"
		}
	case logbook.KindToolCall:
		return "Tool call"
	case logbook.KindToolResult:
		return "Tool result"
	case logbook.KindPrompt:
		return "Prompt"
	case logbook.KindSummary:
		return "Summary"
	case logbook.KindCompaction:
		return "Compaction"
	case logbook.KindSkill:
		return "Skill"
	default:
		if it.Author != nil {
			return "Note from " + it.Author.Actor
		}
		return "Note"
	}
}

// Class is the CSS class of the entry's kind (and role).
func (it timelineItem) Class() string {
	if it.Kind == logbook.KindMessage {
		return "entry-" + it.Role
	}
	return "entry-" + string(it.Kind)
}

// buildTimeline pairs each tool call with its result by tool_call_id, in
// seq order: a result shows under its call, not where it was recorded. A
// result whose call is not among entries (an earlier page) stays a row of
// its own; the page's script moves it under its call when the call is on
// the page.
func buildTimeline(entries []logbook.Entry) []timelineItem {
	results := map[string]*logbook.Entry{}
	decisions := map[string]*logbook.Entry{} // the gate's note on a call
	calls := map[string]bool{}
	for i := range entries {
		e := &entries[i]
		switch {
		case e.Kind == logbook.KindToolCall && e.ToolCallID != "":
			calls[e.ToolCallID] = true
		case e.Kind == logbook.KindToolResult && e.ToolCallID != "" && calls[e.ToolCallID] && results[e.ToolCallID] == nil:
			results[e.ToolCallID] = e
		case e.Kind == logbook.KindNote && e.ToolCallID != "" && decisions[e.ToolCallID] == nil:
			decisions[e.ToolCallID] = e
		}
	}
	items := make([]timelineItem, 0, len(entries))
	for _, e := range entries {
		if e.Kind == logbook.KindToolResult && results[e.ToolCallID] != nil && results[e.ToolCallID].Seq == e.Seq {
			continue // shown under its call
		}
		it := timelineItem{Entry: e}
		if e.Kind == logbook.KindToolCall {
			r, d := results[e.ToolCallID], decisions[e.ToolCallID]
			var resultPayload, notePayload []byte
			if e.ToolCallID != "" && r != nil {
				it.Result, it.Took, resultPayload = r, r.At.Sub(e.At), r.Payload
			} else {
				r = nil
			}
			if e.ToolCallID != "" && d != nil {
				notePayload = d.Payload
			}
			it.Status, _ = logbook.ToolCallStatus(r != nil, resultPayload, notePayload)
		}
		items = append(items, it)
	}
	return items
}

// resultStatus reads whether a tool result reports an error, as the tool
// call audit does: is_error, status "error", or an error field.
func resultStatus(result logbook.Entry) string {
	status, _ := logbook.ToolCallStatus(true, result.Payload, nil)
	return status
}

// entryBody is an entry's text, else its payload as indented JSON.
func entryBody(e logbook.Entry) string {
	if e.Text != "" {
		return e.Text
	}
	return prettyJSON(e.Payload)
}

// prettyJSON indents a JSON payload; a payload that is a plain string is
// shown as the string.
func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return string(raw)
	}
	return buf.String()
}
