// Package transcript reads agent transcripts written by other harnesses —
// Claude Code session files and OpenAI Codex CLI rollout files — and turns
// each file into a stream of neutral records: Session records (what the file
// says about a session) and Entry records (one transcript item each).
//
// The package only reads and translates. It must not store anything, call the
// logbook API, redact secrets (that happens before storage, in package
// redact), or hold a whole transcript in memory: parsers read one line at a
// time, keep at most one line (up to MaxLineBytes) plus a few ids of
// bookkeeping per line or API message, and hand records to the caller's emit
// function as they go. Malformed input is skipped and counted in Stats; it is
// never an error and never a panic.
//
// # Choices common to both formats
//
//   - Reasoning ("thinking" blocks in Claude Code, "reasoning" items in Codex)
//     becomes a KindMessage entry with Role "assistant" and Payload
//     {"thinking":true}. Encrypted or redacted reasoning carries no text and
//     produces no entry.
//   - Usage is counted once per model response and attached to the first entry
//     of that response (see ParseClaude and ParseCodex for how a response is
//     recognised in each format).
//   - A tool_result entry carries the Tool name of the tool_call it answers
//     when that call appeared earlier in the same file.
//   - Keys are derived from ids in the file (line uuids, call ids) and, where
//     the format has none, from line numbers; both are stable when the same
//     file, or a longer version of it (transcripts are append-only), is
//     parsed again.
//   - A Session record is emitted when a session is first seen, again as soon
//     as its cwd, branch, model, title or commit changes, and once more at the
//     end of the file if only its timestamps moved since the last one. A
//     Session record always precedes the entries of its session.
//   - Lines of a type the parser does not use (Claude "file-history-snapshot",
//     Codex "event_msg" duplicates, future record types) are counted in
//     Stats.Ignored, not Stats.Skipped: they are well formed, just not needed.
package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
)

// Harness names used in Session.Harness.
const (
	HarnessClaudeCode = "claude-code"
	HarnessCodex      = "codex"
)

// Entry kinds used in Entry.Kind (a subset of the entry kinds in DESIGN.md).
const (
	KindPrompt     = "prompt"      // something the user asked
	KindMessage    = "message"     // text from the model (or reasoning, see package doc)
	KindToolCall   = "tool_call"   // the model called a tool
	KindToolResult = "tool_result" // what a tool returned
	KindSummary    = "summary"     // a summary of the conversation written by the harness
	KindNote       = "note"        // harness-injected text that is neither prompt nor model output
)

// MaxLineBytes is the longest transcript line the parsers read. Longer lines
// are skipped and counted in Stats with reason ReasonLineTooLong.
const MaxLineBytes = 32 << 20

// Reasons a line is skipped (malformed) or ignored (well formed but unused),
// used as keys of Stats.Reasons.
const (
	ReasonNotJSON     = "not json"           // skipped: not valid JSON
	ReasonNotObject   = "not an object"      // skipped: valid JSON but not an object
	ReasonBadShape    = "bad shape"          // skipped: an object whose fields have the wrong JSON types
	ReasonNoType      = "no type"            // skipped: an object without a "type"
	ReasonBadMessage  = "bad message"        // skipped: a message line whose message is not an object
	ReasonBadContent  = "bad content"        // skipped: message content missing, or holding no readable block
	ReasonLineTooLong = "line too long"      // skipped: longer than MaxLineBytes
	ReasonUnknownType = "unknown type"       // ignored: a record type the parser does not import
	ReasonDuplicate   = "duplicate"          // ignored: already seen in this file (same uuid, summary, usage total)
	ReasonEventDupe   = "event duplicate"    // ignored: a Codex event_msg repeating a response_item
	ReasonEmpty       = "empty"              // ignored: well formed, but no text or content to import
	ReasonTooManyHeld = "too many summaries" // ignored: summary lines waiting for a session beyond a bound
)

// Session is what a transcript says about one session: its metadata as known
// so far. Later Session records for the same HarnessSessionID supersede
// earlier ones.
type Session struct {
	// Harness is HarnessClaudeCode or HarnessCodex.
	Harness string
	// HarnessSessionID is the harness's own id for the session: the Claude
	// Code sessionId (for subagents see ParseClaude) or the Codex session_meta
	// id.
	HarnessSessionID string
	// ParentHarnessSessionID is set for subagent sessions: the
	// HarnessSessionID of the session that started the subagent.
	ParentHarnessSessionID string
	// Cwd is the working directory the harness ran in, the latest one seen.
	Cwd string
	// Branch is the git branch the harness reported, the latest non-empty one.
	Branch string
	// Commit is the git HEAD commit the harness recorded for the session
	// (Codex session_meta git.commit_hash); Claude Code records none.
	Commit string
	// Model is the model that answered, the latest one seen.
	Model string
	// Title is the latest Claude Code summary line for the session; empty
	// when the transcript has none (always for Codex).
	Title string
	// StartedAt is the earliest line timestamp seen for the session.
	StartedAt time.Time
	// LastAt is the latest line timestamp seen for the session.
	LastAt time.Time
}

// Entry is one transcript item of a session.
type Entry struct {
	// HarnessSessionID names the session the entry belongs to; a Session
	// record with this id has been emitted before the entry.
	HarnessSessionID string
	// Kind is one of the Kind* constants.
	Kind string
	// Role is "user", "assistant" or "system"; empty for tool results and
	// summaries.
	Role string
	// Text is the entry's text: the prompt, the message, the tool's output as
	// text, the summary. Empty for tool calls (their input is in Payload).
	Text string
	// Tool is the tool's name for tool_call entries, and for tool_result
	// entries whose call appeared earlier in the file.
	Tool string
	// ToolCallID pairs a tool_result with its tool_call.
	ToolCallID string
	// Payload is the tool input for tool_call, the structured output for
	// tool_result when the transcript has one, {"thinking":true} for
	// reasoning; nil otherwise. Always valid JSON when set.
	Payload json.RawMessage
	// IsError is true for a tool_result that reported an error.
	IsError bool
	// Key is an idempotency key, unique within the session and stable across
	// imports of the same file.
	Key string
	// At is the line's timestamp; zero when the line has none.
	At time.Time
	// Commit is a git commit the line names. Neither format names one per
	// line today, so it is always empty; kept so importers need not change
	// when one does.
	Commit string
	// InputTokens is the prompt tokens of the model response this entry
	// starts, counted once per response (zero on the response's other
	// entries). See ParseClaude and ParseCodex for what is included.
	InputTokens int64
	// OutputTokens is the output tokens of the model response this entry
	// starts, counted once per response like InputTokens.
	OutputTokens int64
	// CacheReadTokens and CacheWriteTokens are the part of InputTokens
	// read from and written to the prompt cache, priced apart.
	CacheReadTokens, CacheWriteTokens int64
	// Model is the model of the response whose usage this entry carries,
	// when the line names it (Claude Code's message.model).
	Model string
}

// Record is one item of a parser's output: exactly one of Session and Entry
// is set. The pointed-to values belong to the receiver; the parser does not
// touch them after emit returns.
type Record struct {
	// Session is set for a session's (updated) metadata.
	Session *Session
	// Entry is set for a transcript item.
	Entry *Entry
}

// Stats counts what a parser read.
type Stats struct {
	// Lines is the number of non-blank lines read.
	Lines int
	// Skipped is the number of malformed lines: not JSON, not an object, a
	// shape the parser cannot use, longer than MaxLineBytes.
	Skipped int
	// Ignored is the number of well-formed lines that produced nothing:
	// unknown or unused record types, duplicates, empty text.
	Ignored int
	// Reasons counts skipped and ignored lines by reason (the Reason*
	// constants); its values sum to Skipped + Ignored.
	Reasons map[string]int
}

func (s *Stats) skip(reason string) {
	s.Skipped++
	s.count(reason)
}

func (s *Stats) ignore(reason string) {
	s.Ignored++
	s.count(reason)
}

func (s *Stats) count(reason string) {
	if s.Reasons == nil {
		s.Reasons = make(map[string]int)
	}
	s.Reasons[reason]++
}

// lineReader yields the lines of r one at a time, reusing one buffer, so
// memory stays at the longest line read (at most max bytes).
type lineReader struct {
	br   *bufio.Reader
	buf  []byte
	max  int
	line int // 1-based number of the last line returned
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its line ending, and whether it was
// longer than max (then its content is not returned); lr.line is its
// number. At the end of input it returns io.EOF.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.br.ReadSlice('\n')
		if !tooLong {
			if len(lr.buf)+len(chunk) > lr.max+2 { // +2: room for "\r\n"
				tooLong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			lr.line++
			return lr.finish(tooLong)
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(lr.buf) == 0 && !tooLong {
				return nil, false, io.EOF
			}
			lr.line++
			return lr.finish(tooLong)
		default:
			return nil, false, err
		}
	}
}

// finish returns the buffered line without its line ending.
func (lr *lineReader) finish(tooLong bool) ([]byte, bool, error) {
	b := bytes.TrimSuffix(lr.buf, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if tooLong || len(b) > lr.max {
		return nil, true, nil
	}
	return b, false, nil
}

// readLines drives a parser: it reads r line by line, counts lines, skips
// over-long ones, and passes each other non-blank line to handle, which
// returns only errors from emit.
func readLines(r io.Reader, fileName string, max int, stats *Stats, handle func(line []byte, n int) error) error {
	lr := newLineReader(r, max)
	for {
		line, tooLong, err := lr.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("transcript: read %s after line %d: %w", fileName, lr.line, err)
		}
		if tooLong {
			stats.Lines++
			stats.skip(ReasonLineTooLong)
			continue
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		stats.Lines++
		if err := handle(line, lr.line); err != nil {
			return err
		}
	}
}

// decodeObject decodes line into v when line is a JSON object. On failure it
// returns the skip reason.
func decodeObject(line []byte, v any) (reason string, ok bool) {
	if line[0] != '{' {
		if json.Valid(line) {
			return ReasonNotObject, false
		}
		return ReasonNotJSON, false
	}
	if err := json.Unmarshal(line, v); err != nil {
		var syntaxErr *json.SyntaxError
		if errors.As(err, &syntaxErr) {
			return ReasonNotJSON, false
		}
		return ReasonBadShape, false
	}
	return "", true
}

// parseTime reads an RFC 3339 timestamp; anything else is the zero time.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// baseName is the file name without directory and ".jsonl" extension.
func baseName(fileName string) string {
	return strings.TrimSuffix(filepath.Base(fileName), ".jsonl")
}

// thinkingPayload marks a KindMessage entry as reasoning.
var thinkingPayload = json.RawMessage(`{"thinking":true}`)

// jsonString encodes s as a JSON string value.
func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s) // marshalling a string cannot fail
	return b
}

// isJSONValue reports whether raw holds a JSON value other than null.
func isJSONValue(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// sessions tracks the sessions of one file and emits Session records when
// they are first seen or change.
type sessions struct {
	harness string
	emit    func(Record) error
	byID    map[string]*sessionState
	order   []*sessionState // first-seen order, for deterministic output
}

type sessionState struct {
	cur  Session
	sent Session // the last Session emitted
	seen bool    // a Session record has been emitted
}

func newSessions(harness string, emit func(Record) error) *sessions {
	return &sessions{harness: harness, emit: emit, byID: make(map[string]*sessionState)}
}

// get returns the state of session id, creating it (with parent) if new.
// It emits nothing; call sync after updating metadata.
func (ss *sessions) get(id, parent string) *sessionState {
	if st, ok := ss.byID[id]; ok {
		return st
	}
	st := &sessionState{cur: Session{Harness: ss.harness, HarnessSessionID: id, ParentHarnessSessionID: parent}}
	ss.byID[id] = st
	ss.order = append(ss.order, st)
	return st
}

// touch widens the session's time span to include t.
func (st *sessionState) touch(t time.Time) {
	if t.IsZero() {
		return
	}
	if st.cur.StartedAt.IsZero() || t.Before(st.cur.StartedAt) {
		st.cur.StartedAt = t
	}
	if t.After(st.cur.LastAt) {
		st.cur.LastAt = t
	}
}

// setNonEmpty is for metadata: it sets *field to v unless v is empty, so a
// line without a value does not erase one learned earlier.
func setNonEmpty(field *string, v string) {
	if v != "" {
		*field = v
	}
}

// sync emits a Session record if the session was never announced or its
// metadata other than timestamps changed since the last record.
func (ss *sessions) sync(st *sessionState) error {
	a, b := st.cur, st.sent
	if st.seen && a.Cwd == b.Cwd && a.Branch == b.Branch && a.Commit == b.Commit &&
		a.Model == b.Model && a.Title == b.Title && a.ParentHarnessSessionID == b.ParentHarnessSessionID {
		return nil
	}
	return ss.send(st)
}

// finish emits a last Session record for every session whose timestamps
// moved since its last record.
func (ss *sessions) finish() error {
	for _, st := range ss.order {
		if !st.seen || !st.cur.StartedAt.Equal(st.sent.StartedAt) || !st.cur.LastAt.Equal(st.sent.LastAt) {
			if err := ss.send(st); err != nil {
				return err
			}
		}
	}
	return nil
}

func (ss *sessions) send(st *sessionState) error {
	s := st.cur
	st.sent, st.seen = s, true
	if err := ss.emit(Record{Session: &s}); err != nil {
		return fmt.Errorf("transcript: emit session %s: %w", s.HarnessSessionID, err)
	}
	return nil
}

// emitEntry hands e to emit, wrapping emit's error.
func emitEntry(emit func(Record) error, e Entry) error {
	if err := emit(Record{Entry: &e}); err != nil {
		return fmt.Errorf("transcript: emit entry %s of session %s: %w", e.Key, e.HarnessSessionID, err)
	}
	return nil
}
