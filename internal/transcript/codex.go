package transcript

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// ParseCodex reads one OpenAI Codex CLI rollout file
// (rollout-<timestamp>-<uuid>.jsonl; fileName is used only for its base
// name) and calls emit for every record, in file order. It returns what it
// counted; the error is non-nil only when reading r or emit failed, and then
// wraps that error.
//
// A rollout holds one session. Its HarnessSessionID is the id of the first
// session_meta line (the uuid at the end of the file name until one is seen);
// session_meta also gives cwd, git branch and commit, turn_context gives model
// and cwd. Later session_meta lines (forked or resumed histories) only fill in
// metadata; they do not start another session.
//
// How response_item lines become entries:
//
//   - "message" with role "user": each text item is a KindPrompt entry,
//     except text Codex itself injects as a user message, which is a KindNote
//     with Role "user": text starting with <environment_context>,
//     <user_instructions>, <INSTRUCTIONS>, <user_shell_command>,
//     <turn_aborted> or "# AGENTS.md instructions". Role "developer" or
//     "system" gives KindNote entries with Role "system"; role "assistant"
//     gives KindMessage entries.
//   - "reasoning": one KindMessage entry with Role "assistant", Payload
//     {"thinking":true} and the summary (and any plain reasoning text) as
//     Text; encrypted_content is never read.
//   - "function_call", "custom_tool_call", "local_shell_call" and
//     "web_search_call": KindToolCall entries (Payload = the parsed
//     arguments, the custom tool's input as a JSON string, or the action).
//   - "function_call_output" and "custom_tool_call_output": KindToolResult
//     entries paired by call_id. Output that is structured (a JSON object or
//     array, also inside a string) is kept as Payload; IsError is set when
//     the output says success false or a non-zero metadata.exit_code.
//   - "compacted" lines give a KindSummary entry with the compaction message.
//
// event_msg lines duplicate response items (user_message, agent_message,
// agent_reasoning, exec_command_end with the shell output, …): the parser
// keeps the response_item and ignores the event (ReasonEventDupe), so each
// prompt, message and shell output is counted once. Other record and event
// types are ignored with ReasonUnknownType.
//
// Usage comes from event_msg token_count events: the increase of
// info.total_token_usage since the previous event (last_token_usage when
// there is no total or it went down), so repeated events count nothing.
// InputTokens is input_tokens (which includes cached_input_tokens, also
// given as CacheReadTokens); OutputTokens is output_tokens (which includes
// reasoning_output_tokens).
// Entries since the previous token_count or prompt are held back until the
// event arrives, and its usage goes on the first assistant entry (message,
// reasoning or tool call) among them; if there is none, it goes on the next
// assistant entry.
//
// Keys are "call:<call_id>" for tool calls, "output:<call_id>" for their
// results, and "line:<n>" or "line:<n>:<content index>" otherwise (also when
// a call_id is missing or repeats).
func ParseCodex(r io.Reader, fileName string, emit func(Record) error) (Stats, error) {
	return parseCodex(r, fileName, emit, MaxLineBytes)
}

func parseCodex(r io.Reader, fileName string, emit func(Record) error, maxLine int) (Stats, error) {
	p := &codexParser{
		fileID:    codexFileID(fileName),
		emit:      emit,
		ss:        newSessions(HarnessCodex, emit),
		keys:      make(map[string]bool),
		toolNames: make(map[string]string),
	}
	err := readLines(r, fileName, maxLine, &p.stats, p.line)
	if err == nil {
		err = p.finish()
	}
	return p.stats, err
}

// codexLine is a rollout line: a typed envelope around a payload. Old
// rollouts (2025 before the envelope) wrote items bare, with "record_type"
// state lines and a first line holding the session id.
type codexLine struct {
	Timestamp  string          `json:"timestamp"`
	Type       string          `json:"type"`
	Payload    json.RawMessage `json:"payload"`
	ID         string          `json:"id"`
	RecordType string          `json:"record_type"`
}

type codexMeta struct {
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Cwd       string `json:"cwd"`
	Model     string `json:"model"` // turn_context
	Git       *struct {
		CommitHash string `json:"commit_hash"`
		Branch     string `json:"branch"`
	} `json:"git"`
}

type codexItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Summary   json.RawMessage `json:"summary"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	CallID    string          `json:"call_id"`
	ID        string          `json:"id"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
	Message   string          `json:"message"` // compacted
}

type codexEvent struct {
	Type string `json:"type"`
	Info *struct {
		Total *codexUsage `json:"total_token_usage"`
		Last  *codexUsage `json:"last_token_usage"`
	} `json:"info"`
}

type codexUsage struct {
	InputTokens       int64 `json:"input_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
}

// codexItemTypes are the response item types that old rollouts wrote bare.
var codexItemTypes = map[string]bool{
	"message": true, "reasoning": true, "function_call": true, "function_call_output": true,
	"custom_tool_call": true, "custom_tool_call_output": true, "local_shell_call": true, "web_search_call": true,
}

// codexEventDupes are event_msg types that repeat a response_item.
var codexEventDupes = map[string]bool{
	"user_message": true, "agent_message": true, "agent_reasoning": true, "agent_reasoning_raw_content": true,
	"exec_command_begin": true, "exec_command_end": true, "exec_command_output_delta": true,
	"patch_apply_begin": true, "patch_apply_end": true, "mcp_tool_call_begin": true, "mcp_tool_call_end": true,
	"web_search_begin": true, "web_search_end": true,
}

// maxHeldEntries bounds the entries held back waiting for a token_count.
const maxHeldEntries = 256

type codexParser struct {
	fileID string
	emit   func(Record) error
	stats  Stats
	ss     *sessions
	st     *sessionState // the file's session, once named

	keys      map[string]bool   // call-based keys already used
	toolNames map[string]string // call_id → tool name, until answered
	held      []Entry           // entries waiting for their usage
	carry     codexUsage        // usage that found no entry to go on yet
	total     *codexUsage       // the last total_token_usage seen
}

func (p *codexParser) line(line []byte, n int) error {
	var l codexLine
	if reason, ok := decodeObject(line, &l); !ok {
		p.stats.skip(reason)
		return nil
	}
	switch {
	case l.Type == "" && l.RecordType != "":
		p.stats.ignore(ReasonUnknownType)
		return nil
	case l.Type == "" && l.ID != "": // old rollouts: the first line names the session
		l.Type, l.Payload = "session_meta", line
	case codexItemTypes[l.Type] && len(l.Payload) == 0: // old rollouts: bare items
		l.Payload, l.Type = line, "response_item"
	}
	switch l.Type {
	case "session_meta", "turn_context":
		return p.meta(&l)
	case "response_item":
		return p.responseItem(&l, n)
	case "event_msg":
		return p.event(&l)
	case "compacted":
		return p.compacted(&l, n)
	case "":
		p.stats.skip(ReasonNoType)
		return nil
	default:
		p.stats.ignore(ReasonUnknownType)
		return nil
	}
}

// session returns the file's session, naming it after the file if no
// session_meta came first.
func (p *codexParser) session(id string) *sessionState {
	if p.st == nil {
		if id == "" {
			id = p.fileID
		}
		p.st = p.ss.get(id, "")
	}
	return p.st
}

// meta handles session_meta and turn_context lines.
func (p *codexParser) meta(l *codexLine) error {
	var m codexMeta
	if !decodePayload(l.Payload, &m) {
		p.stats.skip(ReasonBadShape)
		return nil
	}
	st := p.session(m.ID)
	setNonEmpty(&st.cur.Cwd, m.Cwd)
	setNonEmpty(&st.cur.Model, m.Model)
	if m.Git != nil {
		setNonEmpty(&st.cur.Branch, m.Git.Branch)
		setNonEmpty(&st.cur.Commit, m.Git.CommitHash)
	}
	st.touch(parseTime(m.Timestamp))
	st.touch(parseTime(l.Timestamp))
	return p.ss.sync(st)
}

func (p *codexParser) responseItem(l *codexLine, n int) error {
	var it codexItem
	if !decodePayload(l.Payload, &it) {
		p.stats.skip(ReasonBadShape)
		return nil
	}
	st := p.session("")
	st.touch(parseTime(l.Timestamp))
	if err := p.ss.sync(st); err != nil {
		return err
	}
	base := Entry{HarnessSessionID: st.cur.HarnessSessionID, At: parseTime(l.Timestamp), Key: "line:" + strconv.Itoa(n)}

	var entries []Entry
	switch it.Type {
	case "message":
		entries = p.message(base, it)
	case "reasoning":
		text := strings.Join(append(codexTexts(it.Summary), codexTexts(it.Content)...), "\n\n")
		if strings.TrimSpace(text) != "" {
			e := base
			e.Kind, e.Role, e.Text, e.Payload = KindMessage, "assistant", text, thinkingPayload
			entries = append(entries, e)
		}
	case "function_call", "custom_tool_call", "local_shell_call", "web_search_call":
		entries = append(entries, p.toolCall(base, it))
	case "function_call_output", "custom_tool_call_output":
		entries = append(entries, p.toolResult(base, it))
	default:
		p.stats.ignore(ReasonUnknownType)
		return nil
	}
	if len(entries) == 0 {
		p.stats.ignore(ReasonEmpty)
		return nil
	}
	if entries[0].Kind == KindPrompt { // a new turn: what came before is complete
		if err := p.flush(); err != nil {
			return err
		}
	}
	for _, e := range entries {
		if err := p.add(e); err != nil {
			return err
		}
	}
	return nil
}

// message turns a message item into one entry per text content item.
func (p *codexParser) message(base Entry, it codexItem) []Entry {
	var entries []Entry
	for i, text := range codexTexts(it.Content) {
		if strings.TrimSpace(text) == "" {
			continue
		}
		e := base
		e.Key = base.Key + ":" + strconv.Itoa(i)
		e.Text = text
		switch it.Role {
		case "user":
			e.Kind, e.Role = KindPrompt, "user"
			if isCodexInjected(text) {
				e.Kind = KindNote
			}
		case "assistant":
			e.Kind, e.Role = KindMessage, "assistant"
		default: // developer, system
			e.Kind, e.Role = KindNote, "system"
		}
		entries = append(entries, e)
	}
	return entries
}

func (p *codexParser) toolCall(base Entry, it codexItem) Entry {
	e := base
	e.Kind, e.Role, e.Tool, e.ToolCallID = KindToolCall, "assistant", it.Name, it.CallID
	switch it.Type {
	case "function_call":
		e.Payload = codexJSON(it.Arguments)
	case "custom_tool_call":
		e.Payload = codexJSON(it.Input)
		if s, ok := codexString(it.Input); ok {
			e.Payload = jsonString(s) // freeform input (a patch) stays a string even if it parses as JSON
		}
	case "local_shell_call", "web_search_call":
		if e.Tool == "" {
			e.Tool = strings.TrimSuffix(it.Type, "_call")
		}
		if e.ToolCallID == "" {
			e.ToolCallID = it.ID
		}
		if isJSONValue(it.Action) {
			e.Payload = it.Action
		}
	}
	if e.ToolCallID != "" {
		p.toolNames[e.ToolCallID] = e.Tool
	}
	e.Key = p.callKey("call:", e.ToolCallID, base.Key)
	return e
}

func (p *codexParser) toolResult(base Entry, it codexItem) Entry {
	e := base
	e.Kind, e.ToolCallID = KindToolResult, it.CallID
	if name, ok := p.toolNames[it.CallID]; ok {
		e.Tool = name
		delete(p.toolNames, it.CallID)
	}
	e.Text, e.Payload, e.IsError = codexOutput(it.Output)
	e.Key = p.callKey("output:", it.CallID, base.Key)
	return e
}

// callKey is prefix+callID, or fallback when the call id is empty or taken.
func (p *codexParser) callKey(prefix, callID, fallback string) string {
	if callID == "" || p.keys[prefix+callID] {
		return fallback
	}
	p.keys[prefix+callID] = true
	return prefix + callID
}

func (p *codexParser) event(l *codexLine) error {
	var ev codexEvent
	if !decodePayload(l.Payload, &ev) {
		p.stats.skip(ReasonBadShape)
		return nil
	}
	switch {
	case ev.Type == "token_count":
	case codexEventDupes[ev.Type]:
		p.stats.ignore(ReasonEventDupe)
		return nil
	default:
		p.stats.ignore(ReasonUnknownType)
		return nil
	}
	var u codexUsage
	if ev.Info != nil {
		u = p.usageDelta(ev.Info.Total, ev.Info.Last)
	}
	if u == (codexUsage{}) {
		p.stats.ignore(ReasonDuplicate)
		return nil
	}
	st := p.session("")
	st.touch(parseTime(l.Timestamp))
	if err := p.ss.sync(st); err != nil {
		return err
	}
	p.carry.InputTokens += u.InputTokens
	p.carry.CachedInputTokens += u.CachedInputTokens
	p.carry.OutputTokens += u.OutputTokens
	for i := range p.held {
		if p.attach(&p.held[i]) {
			break
		}
	}
	return p.flush()
}

// usageDelta is what one token_count event adds.
func (p *codexParser) usageDelta(total, last *codexUsage) codexUsage {
	if total == nil {
		if last == nil {
			return codexUsage{}
		}
		return *last
	}
	prev := p.total
	p.total = total
	if prev == nil {
		return *total
	}
	d := codexUsage{InputTokens: total.InputTokens - prev.InputTokens, CachedInputTokens: total.CachedInputTokens - prev.CachedInputTokens,
		OutputTokens: total.OutputTokens - prev.OutputTokens}
	if d.InputTokens < 0 || d.OutputTokens < 0 || d.CachedInputTokens < 0 {
		if last != nil {
			return *last
		}
		return codexUsage{}
	}
	return d
}

func (p *codexParser) compacted(l *codexLine, n int) error {
	var it codexItem
	if !decodePayload(l.Payload, &it) {
		p.stats.skip(ReasonBadShape)
		return nil
	}
	if strings.TrimSpace(it.Message) == "" {
		p.stats.ignore(ReasonEmpty)
		return nil
	}
	if err := p.flush(); err != nil {
		return err
	}
	st := p.session("")
	st.touch(parseTime(l.Timestamp))
	if err := p.ss.sync(st); err != nil {
		return err
	}
	return p.add(Entry{
		HarnessSessionID: st.cur.HarnessSessionID, Kind: KindSummary, Text: it.Message,
		Key: "line:" + strconv.Itoa(n), At: parseTime(l.Timestamp),
	})
}

// attach puts carried usage on e if e is an assistant entry.
func (p *codexParser) attach(e *Entry) bool {
	if e.Role != "assistant" || p.carry == (codexUsage{}) {
		return false
	}
	e.InputTokens += p.carry.InputTokens
	e.CacheReadTokens += min(p.carry.CachedInputTokens, p.carry.InputTokens)
	e.OutputTokens += p.carry.OutputTokens
	p.carry = codexUsage{}
	return true
}

// add holds e back until the usage of its response is known.
func (p *codexParser) add(e Entry) error {
	p.attach(&e)
	p.held = append(p.held, e)
	if len(p.held) >= maxHeldEntries {
		return p.flush()
	}
	return nil
}

func (p *codexParser) flush() error {
	held := p.held
	p.held = held[:0]
	for _, e := range held {
		if err := emitEntry(p.emit, e); err != nil {
			return err
		}
	}
	return nil
}

func (p *codexParser) finish() error {
	if err := p.flush(); err != nil {
		return err
	}
	return p.ss.finish()
}

// decodePayload decodes a JSON object payload into v.
func decodePayload(raw json.RawMessage, v any) bool {
	return len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, v) == nil
}

// codexTexts returns the text of each content item ("input_text",
// "output_text", "summary_text", "reasoning_text", "text"); other items
// (images) give "". A plain string is one text.
func codexTexts(raw json.RawMessage) []string {
	if s, ok := codexString(raw); ok {
		return []string{s}
	}
	var items []json.RawMessage
	if !isJSONValue(raw) || raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil
	}
	texts := make([]string, len(items))
	for i, item := range items { // an item of the wrong shape gives "", the others survive
		var one struct {
			Text string `json:"text"`
		}
		if len(item) > 0 && item[0] == '{' && json.Unmarshal(item, &one) == nil {
			texts[i] = one.Text
		}
	}
	return texts
}

// codexString decodes raw when it is a JSON string.
func codexString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// codexJSON returns function arguments as JSON: a string holding JSON is
// unwrapped, any other string stays a JSON string, other values are kept.
func codexJSON(raw json.RawMessage) json.RawMessage {
	if s, ok := codexString(raw); ok {
		if strings.TrimSpace(s) != "" && json.Valid([]byte(s)) {
			return json.RawMessage(s)
		}
		return jsonString(s)
	}
	if isJSONValue(raw) {
		return raw
	}
	return nil
}

// codexOutput reads a tool output: a string (possibly holding a JSON object
// such as {"output": "...", "metadata": {"exit_code": 1}}), a list of
// content items, or an object {"content": ..., "success": false}.
func codexOutput(raw json.RawMessage) (text string, payload json.RawMessage, isError bool) {
	if s, ok := codexString(raw); ok {
		text = s
		trimmed := strings.TrimSpace(s)
		if !strings.HasPrefix(trimmed, "{") && !strings.HasPrefix(trimmed, "[") || !json.Valid([]byte(trimmed)) {
			return text, nil, false
		}
		raw = json.RawMessage(trimmed)
	}
	if !isJSONValue(raw) {
		return text, nil, false
	}
	payload = raw
	if raw[0] == '[' {
		return strings.Join(codexTexts(raw), "\n"), payload, false
	}
	var obj struct {
		Output   *string         `json:"output"`
		Content  json.RawMessage `json:"content"`
		Success  *bool           `json:"success"`
		Metadata struct {
			ExitCode int64 `json:"exit_code"`
		} `json:"metadata"`
	}
	if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return text, payload, false
	}
	switch {
	case obj.Output != nil:
		text = *obj.Output
	case isJSONValue(obj.Content):
		text = strings.Join(codexTexts(obj.Content), "\n")
	}
	isError = (obj.Success != nil && !*obj.Success) || obj.Metadata.ExitCode != 0
	return text, payload, isError
}

// codexInjected are prefixes of user-role text that Codex wrote, not the user.
var codexInjected = []string{
	"<environment_context>",
	"<user_instructions>",
	"<INSTRUCTIONS>",
	"<user_shell_command>",
	"<turn_aborted>",
	"# AGENTS.md instructions",
}

func isCodexInjected(text string) bool {
	t := strings.TrimSpace(text)
	for _, prefix := range codexInjected {
		if strings.HasPrefix(t, prefix) {
			return true
		}
	}
	return false
}

// codexFileID is the session uuid at the end of a rollout file name, or the
// base name when it does not end in one.
func codexFileID(fileName string) string {
	name := baseName(fileName)
	if len(name) >= 36 {
		id := name[len(name)-36:]
		if id[8] == '-' && id[13] == '-' && id[18] == '-' && id[23] == '-' {
			return id
		}
	}
	return name
}
