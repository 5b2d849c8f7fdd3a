package otlp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/logbookhq/logbook/internal/logbook"
)

// GenAI semantic convention attributes and operations read here.
const (
	attrOperation      = "gen_ai.operation.name"
	attrConversationID = "gen_ai.conversation.id"
	attrProviderName   = "gen_ai.provider.name"
	attrSystem         = "gen_ai.system" // the provider's name before semconv 1.37
	attrAgentName      = "gen_ai.agent.name"
	attrRequestModel   = "gen_ai.request.model"
	attrResponseModel  = "gen_ai.response.model"
	attrInputMessages  = "gen_ai.input.messages"
	attrOutputMessages = "gen_ai.output.messages"
	attrInputTokens    = "gen_ai.usage.input_tokens"
	attrOutputTokens   = "gen_ai.usage.output_tokens"
	attrPromptTokens   = "gen_ai.usage.prompt_tokens"     // before input_tokens
	attrCompletionToks = "gen_ai.usage.completion_tokens" // before output_tokens
	attrToolName       = "gen_ai.tool.name"
	attrToolCallID     = "gen_ai.tool.call.id"
	attrToolArguments  = "gen_ai.tool.call.arguments"
	attrToolResult     = "gen_ai.tool.call.result"

	opInvokeAgent = "invoke_agent"
	opExecuteTool = "execute_tool"

	// resourceProject names the project a resource's sessions go to; the
	// token's project when absent.
	resourceProject = "logbook.project"
	// DefaultHarness is the harness of sessions whose resource has no
	// service.name.
	DefaultHarness = "otel"
)

// isGenAI reports whether a span carries GenAI attributes.
func isGenAI(s *span) bool {
	for key := range s.Attrs {
		if strings.HasPrefix(key, "gen_ai.") {
			return true
		}
	}
	return false
}

// operation is the span's gen_ai.operation.name, else the first word of
// its name (the conventions name spans "{operation} {target}").
func operation(s *span) string {
	if op := s.str(attrOperation); op != "" {
		return op
	}
	op, _, _ := strings.Cut(s.Name, " ")
	return op
}

// isInference reports whether a span is a model call: chat,
// text_completion, generate_content, or any operation that is not an
// agent or a tool and says what the model read or wrote.
func isInference(s *span, op string) bool {
	switch op {
	case "chat", "text_completion", "generate_content":
		return true
	case opInvokeAgent, opExecuteTool, "embeddings", "create_agent":
		return false
	}
	_, in := s.Attrs[attrInputMessages]
	_, out := s.Attrs[attrOutputMessages]
	return in || out
}

// planned is a session an export writes to, with its entries.
type planned struct {
	hid, parentHID string
	depth          int // 0 for a top-level session
	project        string
	harness        string
	model          string
	agentName      string
	provider       string
	agentSpan      *span // its invoke_agent span, when the export holds it
	conversation   bool  // keyed by gen_ai.conversation.id (may go on across traces)
	entries        []logbook.Entry
	spans          int // GenAI spans that map to it, for rejection counts
}

// plan groups an export's GenAI spans into sessions.
//
// A span belongs to the session of the nearest invoke_agent span above it
// in the same export. The top session of a chain is named by
// gen_ai.conversation.id (on the span or above it), else by the trace
// ("trace:<trace id>"); an invoke_agent span under another one starts a
// subagent named "<parent>/agent:<span id>". Exporters send a span when it
// ends, so children may come in an earlier export than the agent span above
// them: they then go to the top session, never to a wrong one.
type plan struct {
	byID     map[string]*span // trace id + span id → span
	sessions map[string]*planned
	hidOf    map[*span]string // memo: session of an invoke_agent span
	genAI    int              // GenAI spans seen
}

func newPlan(spans []*span) *plan {
	p := &plan{byID: make(map[string]*span, len(spans)), sessions: make(map[string]*planned), hidOf: make(map[*span]string)}
	for _, s := range spans {
		p.byID[s.TraceID+s.SpanID] = s
	}
	for _, s := range spans {
		if isGenAI(s) {
			p.genAI++
			p.add(s)
		}
	}
	return p
}

// parentOf is the span's parent when the export holds it.
func (p *plan) parentOf(s *span) *span {
	if s.ParentID == "" {
		return nil
	}
	return p.byID[s.TraceID+s.ParentID]
}

// agentAbove is the nearest invoke_agent span above s in the export.
func (p *plan) agentAbove(s *span) *span {
	for up, hops := p.parentOf(s), 0; up != nil && hops < 256; up, hops = p.parentOf(up), hops+1 {
		if isGenAI(up) && operation(up) == opInvokeAgent {
			return up
		}
	}
	return nil
}

// topName names the top session of s's chain: its conversation, else its
// trace.
func (p *plan) topName(s *span) (hid string, conversation bool) {
	for up, hops := s, 0; up != nil && hops < 256; up, hops = p.parentOf(up), hops+1 {
		if id := up.str(attrConversationID); id != "" {
			return id, true
		}
	}
	return "trace:" + s.TraceID, false
}

// sessionOf returns the session s writes to, creating it on first use.
// For an invoke_agent span that is its own session.
func (p *plan) sessionOf(s *span) *planned {
	if operation(s) != opInvokeAgent {
		if agent := p.agentAbove(s); agent != nil {
			return p.sessionOf(agent)
		}
		hid, conv := p.topName(s)
		return p.session(hid, "", 0, conv, s)
	}
	if hid, ok := p.hidOf[s]; ok {
		return p.sessions[hid]
	}
	var sess *planned
	if above := p.agentAbove(s); above != nil {
		parent := p.sessionOf(above)
		sess = p.session(parent.hid+"/agent:"+s.SpanID, parent.hid, parent.depth+1, false, s)
		sess.project = parent.project
	} else {
		hid, conv := p.topName(s)
		sess = p.session(hid, "", 0, conv, s)
	}
	sess.agentSpan = s
	p.hidOf[s] = sess.hid
	return sess
}

func (p *plan) session(hid, parentHID string, depth int, conversation bool, s *span) *planned {
	if sess, ok := p.sessions[hid]; ok {
		return sess
	}
	harness, _ := s.Resource["service.name"].(string)
	if harness == "" {
		harness = DefaultHarness
	}
	project, _ := s.Resource[resourceProject].(string)
	sess := &planned{hid: hid, parentHID: parentHID, depth: depth, conversation: conversation, project: project, harness: harness}
	p.sessions[hid] = sess
	return sess
}

// add maps one GenAI span onto its session's fields and entries.
func (p *plan) add(s *span) {
	sess := p.sessionOf(s)
	sess.spans++
	op := operation(s)
	if model := firstNonEmpty(s.str(attrResponseModel), s.str(attrRequestModel)); model != "" {
		sess.model = model
	}
	if provider := firstNonEmpty(s.str(attrProviderName), s.str(attrSystem)); provider != "" {
		sess.provider = provider
	}
	k := keyer{span: s}
	switch {
	case op == opInvokeAgent:
		if name := s.str(attrAgentName); name != "" {
			sess.agentName = name
		}
		in, out := messageEntries(s, k)
		sess.entries = append(append(sess.entries, in...), out...)
	case op == opExecuteTool:
		sess.entries = append(sess.entries, toolEntries(s, k)...)
	case isInference(s, op):
		in, out := messageEntries(s, k)
		if usage := usageOf(s); usage != nil {
			// On the call's first output, as the transcript importers do.
			if len(out) == 0 {
				out = append(out, logbook.Entry{Kind: logbook.KindNote, Role: logbook.RoleSystem, Text: s.Name, At: s.End, Key: k.own("usage")})
			}
			out[0].Usage = usage
		}
		sess.entries = append(append(sess.entries, in...), out...)
	}
}

// usageOf reads gen_ai.usage.* (and the names before semconv 1.27).
// Usage on invoke_agent spans is not read: it sums the model calls under
// it, which count on their own.
func usageOf(s *span) *logbook.Usage {
	in := max(s.num(attrInputTokens), s.num(attrPromptTokens))
	out := max(s.num(attrOutputTokens), s.num(attrCompletionToks))
	if in <= 0 && out <= 0 {
		return nil
	}
	return &logbook.Usage{InputTokens: max(in, 0), OutputTokens: max(out, 0)}
}

// keyer makes entry keys from a span's ids and what the entry is, so a
// retried export is a no-op.
type keyer struct{ span *span }

// own is a key for something only this span says.
func (k keyer) own(what string) string { return k.span.TraceID + k.span.SpanID + ":" + what }

// call is the key of a tool call (or, with prefix "result", its result):
// by the call id when there is one, so the call a model asked for and the
// execute_tool span that ran it are one entry.
func (k keyer) call(prefix, callID, fallback string) string {
	if callID != "" {
		return prefix + ":" + callID
	}
	return k.own(fallback)
}

// content is a key by what an entry says, scoped to the trace: the same
// answer reported by a model call and by the agent above it is one entry.
func (k keyer) content(prefix string, parts ...string) string {
	h := sha256.Sum256([]byte(k.span.TraceID + "\x00" + strings.Join(parts, "\x00")))
	return prefix + ":" + hex.EncodeToString(h[:12])
}

// message is a GenAI message (gen_ai.input.messages and
// gen_ai.output.messages), also in the older {role, content} shape.
type message struct {
	Role    string          `json:"role"`
	Parts   []part          `json:"parts"`
	Content json.RawMessage `json:"content"`
}

type part struct {
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Response  json.RawMessage `json:"response"`
}

// messagesOf reads a messages attribute: a JSON string, or the same
// structure as attribute values.
func messagesOf(v any) []message {
	var raw []byte
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		raw = []byte(x)
	default:
		raw, _ = json.Marshal(x) // plain values from an attribute
	}
	var msgs []message
	if json.Unmarshal(raw, &msgs) != nil {
		return nil
	}
	for i := range msgs {
		if len(msgs[i].Parts) == 0 && len(msgs[i].Content) > 0 {
			msgs[i].Parts = []part{{Type: "text", Content: msgs[i].Content}}
		}
	}
	return msgs
}

// messageEntries maps a span's input and output messages: the user's
// messages are prompts (keyed by their place among the user messages, so
// the history every model call repeats is recorded once), tool responses
// are tool results; the output's text, reasoning and tool calls are the
// assistant's. Input system and assistant messages are not recorded: the
// first is instructions, the second an earlier output.
func messageEntries(s *span, k keyer) (in, out []logbook.Entry) {
	userN := 0
	for _, m := range messagesOf(s.Attrs[attrInputMessages]) {
		for i, pt := range m.Parts {
			switch {
			case m.Role == "user" && pt.Type == "text":
				text := textOf(pt.Content)
				in = append(in, logbook.Entry{Kind: logbook.KindPrompt, Role: logbook.RoleUser, Text: text, At: s.Start,
					Key: k.content(fmt.Sprintf("prompt:%d", userN), text)})
			case pt.Type == "tool_call_response":
				in = append(in, logbook.Entry{Kind: logbook.KindToolResult, ToolCallID: pt.ID, Text: textOf(pt.Response), At: s.Start,
					Key: k.call("result", pt.ID, fmt.Sprintf("in:%d:%d", userN, i))})
			}
		}
		if m.Role == "user" {
			userN++
		}
	}
	for mi, m := range messagesOf(s.Attrs[attrOutputMessages]) {
		for i, pt := range m.Parts {
			switch pt.Type {
			case "text", "reasoning":
				text := textOf(pt.Content)
				if text == "" {
					continue
				}
				e := logbook.Entry{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: text, At: s.End,
					Key: k.content("out", pt.Type, text)}
				if pt.Type == "reasoning" {
					e.Payload = json.RawMessage(`{"thinking":true}`)
				}
				out = append(out, e)
			case "tool_call":
				out = append(out, logbook.Entry{Kind: logbook.KindToolCall, Tool: pt.Name, ToolCallID: pt.ID, Payload: jsonValue(pt.Arguments), At: s.End,
					Key: k.call("call", pt.ID, fmt.Sprintf("out:%d:%d", mi, i))})
			}
		}
	}
	return in, out
}

// toolEntries maps an execute_tool span: the call when it started, the
// result when it ended (an error when the span's status is).
func toolEntries(s *span, k keyer) []logbook.Entry {
	callID := s.str(attrToolCallID)
	name := firstNonEmpty(s.str(attrToolName), strings.TrimPrefix(s.Name, opExecuteTool+" "))
	call := logbook.Entry{Kind: logbook.KindToolCall, Tool: name, ToolCallID: callID, At: s.Start, Key: k.call("call", callID, "call")}
	switch args := s.Attrs[attrToolArguments].(type) {
	case string:
		call.Payload = jsonValue(json.RawMessage(args))
		if call.Payload == nil && args != "" {
			call.Payload, _ = json.Marshal(args)
		}
	case nil:
	default:
		call.Payload, _ = json.Marshal(args)
	}
	result := logbook.Entry{Kind: logbook.KindToolResult, Tool: name, ToolCallID: callID, At: s.End, Key: k.call("result", callID, "result")}
	switch v := s.Attrs[attrToolResult].(type) {
	case string:
		result.Text = v
	case nil:
	default:
		raw, _ := json.Marshal(v)
		result.Text = string(raw)
	}
	if s.Failed {
		result.Payload, _ = json.Marshal(map[string]any{"is_error": true, "error": s.StatusMessage})
		if result.Text == "" {
			result.Text = s.StatusMessage
		}
	}
	return []logbook.Entry{call, result}
}

// textOf is a part's content as text: a JSON string as it is, anything
// else as JSON.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// jsonValue returns raw when it is JSON other than null, else nil; tool
// arguments often come as a JSON string holding JSON, which is unwrapped.
func jsonValue(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !json.Valid(raw) || string(raw) == "null" {
		return nil
	}
	var inner string
	if json.Unmarshal(raw, &inner) == nil && json.Valid([]byte(inner)) && strings.TrimSpace(inner) != "" {
		return json.RawMessage(inner)
	}
	return raw
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// ordered lists the plan's sessions parents first, then by name, so a
// subagent's parent is started before it.
func (p *plan) ordered() []*planned {
	list := make([]*planned, 0, len(p.sessions))
	for _, s := range p.sessions {
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].depth != list[j].depth {
			return list[i].depth < list[j].depth
		}
		return list[i].hid < list[j].hid
	})
	return list
}
