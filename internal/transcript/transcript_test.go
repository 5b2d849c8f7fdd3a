package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/testshared"
)

// parseFunc is the signature shared by ParseClaude and ParseCodex.
type parseFunc func(r io.Reader, fileName string, emit func(Record) error) (Stats, error)

// result is everything one parse produced, checked for the invariants every
// parse must keep (see collect).
type result struct {
	stats    Stats
	records  []Record
	entries  []Entry
	sessions map[string]Session // the last Session record per id
}

// collect parses data and checks the invariants of any output: a Session
// record precedes the entries of its session, keys are non-empty and unique
// within a session, payloads are valid JSON, entry kinds are known, and the
// reasons add up.
func collect(t testing.TB, parse parseFunc, name string, data []byte) result {
	t.Helper()
	res := result{sessions: make(map[string]Session)}
	keys := make(map[string]bool)
	stats, err := parse(bytes.NewReader(data), name, func(r Record) error {
		if (r.Session == nil) == (r.Entry == nil) {
			t.Fatalf("record with both or neither of Session and Entry: %+v", r)
		}
		res.records = append(res.records, r)
		if r.Session != nil {
			res.sessions[r.Session.HarnessSessionID] = *r.Session
			return nil
		}
		e := *r.Entry
		if _, ok := res.sessions[e.HarnessSessionID]; !ok {
			t.Errorf("entry %q of session %q before any Session record", e.Key, e.HarnessSessionID)
		}
		if e.Key == "" || keys[e.HarnessSessionID+"\x00"+e.Key] {
			t.Errorf("session %q: empty or repeated key %q", e.HarnessSessionID, e.Key)
		}
		keys[e.HarnessSessionID+"\x00"+e.Key] = true
		if e.Payload != nil && !json.Valid(e.Payload) {
			t.Errorf("entry %q: invalid JSON payload %q", e.Key, e.Payload)
		}
		switch e.Kind {
		case KindPrompt, KindMessage, KindToolCall, KindToolResult, KindSummary, KindNote:
		default:
			t.Errorf("entry %q: unknown kind %q", e.Key, e.Kind)
		}
		res.entries = append(res.entries, e)
		return nil
	})
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	sum := 0
	for _, n := range stats.Reasons {
		sum += n
	}
	if sum != stats.Skipped+stats.Ignored || stats.Skipped+stats.Ignored > stats.Lines {
		t.Errorf("stats do not add up: %+v", stats)
	}
	res.stats = stats
	return res
}

// counts summarises a result the way the fixture tables state expectations.
type counts struct {
	Sessions, Subagents                 int // sessions without and with a parent
	Prompts, Notes, Messages, Summaries int
	ToolCalls, ToolResults, Errors      int
	InputTokens, OutputTokens           int64
	Skipped, Ignored                    int
}

func (r result) counts() counts {
	var c counts
	for _, s := range r.sessions {
		if s.ParentHarnessSessionID == "" {
			c.Sessions++
		} else {
			c.Subagents++
		}
	}
	for _, e := range r.entries {
		switch e.Kind {
		case KindPrompt:
			c.Prompts++
		case KindNote:
			c.Notes++
		case KindMessage:
			c.Messages++
		case KindSummary:
			c.Summaries++
		case KindToolCall:
			c.ToolCalls++
		case KindToolResult:
			c.ToolResults++
			if e.IsError {
				c.Errors++
			}
		}
		c.InputTokens += e.InputTokens
		c.OutputTokens += e.OutputTokens
	}
	c.Skipped, c.Ignored = r.stats.Skipped, r.stats.Ignored
	return c
}

func (r result) keys() []string {
	var keys []string
	for _, e := range r.entries {
		keys = append(keys, e.HarnessSessionID+" "+e.Key)
	}
	return keys
}

// byKey returns the entry with session id and key, failing the test if none.
func (r result) byKey(t *testing.T, session, key string) Entry {
	t.Helper()
	for _, e := range r.entries {
		if e.HarnessSessionID == session && e.Key == key {
			return e
		}
	}
	t.Fatalf("no entry %s %s", session, key)
	return Entry{}
}

// fixturesDir is shared/fixtures (see package testshared).
func fixturesDir(t *testing.T) string { return testshared.Dir(t, "fixtures") }

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The expected numbers below were counted independently of the parser, with
// jq over the fixture files, applying the rules documented on ParseClaude and
// ParseCodex. For Claude Code, with $M = the user/assistant lines whose
// message is an object with string or array content (string content read as
// one text block, non-object blocks dropped):
//
//	Sessions    [$M[] | select(.isSidechain|not) | .sessionId] | unique | length
//	Subagents   [$M[] | select(.isSidechain and .parentUuid==null)] | length   (agent-*.jsonl: 1)
//	Prompts     text blocks of user lines, not isMeta, not starting with
//	            <local-command-std…, <bash-std…, "Caveat: The messages below", "[Request interrupted"
//	Notes       the other text blocks of user lines
//	Messages    text and thinking blocks of assistant lines
//	ToolCalls   tool_use blocks; ToolResults: tool_result blocks; Errors: those with is_error true
//	Tokens      group_by(.message.id) over assistant lines with usage; per group the max of
//	            input_tokens+cache_creation_input_tokens+cache_read_input_tokens and of output_tokens; summed
//
// The README's own figures agree: 12 tool_use/12 tool_result in 1af7fc5e,
// 21 tool calls and 22 sidechain lines (two sidechains: two lines with
// isSidechain and parentUuid null) in 5c0375b4. The skipped lines of
// cclog_edge_cases.jsonl are 13, 15, 16 (not objects), 14 (no type), 11
// (message is a string), 10 (content misspelt "contenst") and 18 (content
// holds only a bare string).
//
// For Codex: jq -c 'select(.type=="response_item") | [.payload.type, .payload.role]'
// gives 1 user message, 1 reasoning, 1 assistant message, 2 function_call and
// 1 custom_tool_call, and their 3 outputs; event_msg lines (2) and the unknown
// "future_synthetic_record" (1) are ignored.
func TestFixtures(t *testing.T) {
	dir := fixturesDir(t)
	tests := []struct {
		file     string
		name     string // the upstream file name: fixtures carry a source prefix
		parse    parseFunc
		want     counts
		parentOf string // subagent's parent session, when there is one
	}{
		{
			file: "claude-code/cclog_edge_cases.jsonl", name: "edge_cases.jsonl", parse: ParseClaude,
			want: counts{Sessions: 2, Prompts: 4, Notes: 2, Messages: 2, Summaries: 1, ToolCalls: 3, ToolResults: 1, Errors: 1,
				InputTokens: 488, OutputTokens: 435, Skipped: 7},
		},
		{
			file: "claude-code/cclog_representative_messages.jsonl", name: "representative_messages.jsonl", parse: ParseClaude,
			want: counts{Sessions: 1, Prompts: 4, Messages: 3, Summaries: 1, ToolCalls: 2, ToolResults: 2,
				InputTokens: 218, OutputTokens: 445},
		},
		{
			file: "claude-code/ccviewer_1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl", name: "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl", parse: ParseClaude,
			want: counts{Sessions: 1, Prompts: 1, Notes: 1, Messages: 3, ToolCalls: 12, ToolResults: 12, Errors: 1,
				InputTokens: 116010, OutputTokens: 953},
		},
		{
			file: "claude-code/ccviewer_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", name: "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", parse: ParseClaude,
			want: counts{Sessions: 1, Subagents: 2, Prompts: 3, Notes: 1, Messages: 7, ToolCalls: 21, ToolResults: 21, Errors: 3,
				InputTokens: 372135, OutputTokens: 3629},
			parentOf: "5c0375b4-57a5-4f26-b12d-d022ee4e51b7",
		},
		{
			file: "claude-code/ccviewer_agent-test-hash-123.jsonl", name: "agent-test-hash-123.jsonl", parse: ParseClaude,
			want:     counts{Subagents: 1, Prompts: 1, Messages: 1, InputTokens: 100, OutputTokens: 10},
			parentOf: "5c0375b4-57a5-4f26-b12d-d022ee4e51b7",
		},
		{
			file: "codex/cclog_rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl",
			name: "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl", parse: ParseCodex,
			want: counts{Sessions: 1, Prompts: 1, Messages: 2, ToolCalls: 3, ToolResults: 3, Ignored: 3},
		},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			data := readFile(t, filepath.Join(dir, tt.file))
			res := collect(t, tt.parse, tt.name, data)
			if got := res.counts(); got != tt.want {
				t.Errorf("counts:\n got %+v\nwant %+v", got, tt.want)
			}
			if want := bytes.Count(bytes.TrimSpace(data), []byte("\n")) + 1; res.stats.Lines != want {
				t.Errorf("Lines = %d, want %d", res.stats.Lines, want)
			}
			for id, s := range res.sessions {
				if s.ParentHarnessSessionID != "" && s.ParentHarnessSessionID != tt.parentOf {
					t.Errorf("session %s: parent %q, want %q", id, s.ParentHarnessSessionID, tt.parentOf)
				}
				if s.StartedAt.IsZero() || s.LastAt.Before(s.StartedAt) {
					t.Errorf("session %s: bad time span %v – %v", id, s.StartedAt, s.LastAt)
				}
			}

			// Parsing again gives the same keys, in the same order.
			again := collect(t, tt.parse, tt.name, data)
			if got, want := strings.Join(again.keys(), "\n"), strings.Join(res.keys(), "\n"); got != want {
				t.Errorf("keys differ between two parses of the same file")
			}
			// A transcript is append-only: parsing a prefix of it gives keys
			// that the full parse also gives.
			full := make(map[string]bool)
			for _, k := range res.keys() {
				full[k] = true
			}
			half := data[:bytes.IndexByte(data[len(data)/2:], '\n')+len(data)/2+1]
			for _, k := range collect(t, tt.parse, tt.name, half).keys() {
				if !full[k] {
					t.Errorf("key %q from the first half of the file is not in the full parse", k)
				}
			}
		})
	}
}

func TestFixtureDetails(t *testing.T) {
	dir := fixturesDir(t)

	t.Run("edge cases", func(t *testing.T) {
		res := collect(t, ParseClaude, "edge_cases.jsonl", readFile(t, filepath.Join(dir, "claude-code/cclog_edge_cases.jsonl")))
		want := map[string]int{ReasonNotObject: 3, ReasonNoType: 1, ReasonBadMessage: 1, ReasonBadContent: 2}
		if fmt.Sprint(res.stats.Reasons) != fmt.Sprint(want) {
			t.Errorf("Reasons = %v, want %v", res.stats.Reasons, want)
		}
		s := res.sessions["edge_cases"]
		if !strings.HasPrefix(s.Title, "Tested various edge cases") || s.Model != "claude-3-sonnet-20240229" || s.Cwd != "/tmp" {
			t.Errorf("session edge_cases = %+v", s)
		}
		if got := res.sessions["todowrite_session"].Model; got != "claude-sonnet-4" {
			t.Errorf("todowrite_session model = %q", got)
		}
		failed := res.byKey(t, "edge_cases", "edge_005:0")
		if !failed.IsError || failed.Tool != "FailingTool" || failed.ToolCallID != "tool_edge_001" {
			t.Errorf("failed tool result = %+v", failed)
		}
	})

	t.Run("usage once per message id", func(t *testing.T) {
		res := collect(t, ParseClaude, "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
			readFile(t, filepath.Join(dir, "claude-code/ccviewer_1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl")))
		// msg_018mu4atNCkxSiLt7VVQquTL spans five lines (a1bdced2 … 4116c4de),
		// output_tokens 30, 30, 30, 30, 285: counted once, the largest, on
		// the first line's entry.
		first := res.byKey(t, "1af7fc5e-8455-4414-9ccd-011d40f70b2a", "a1bdced2-6cf5-4c3a-b700-d5e13eb64d9d:0")
		if first.InputTokens != 6+304+15550 || first.OutputTokens != 285 {
			t.Errorf("first entry usage = %d/%d, want %d/285", first.InputTokens, first.OutputTokens, 6+304+15550)
		}
		last := res.byKey(t, "1af7fc5e-8455-4414-9ccd-011d40f70b2a", "4116c4de-0415-4ea2-96cf-696615975fd8:0")
		if last.InputTokens != 0 || last.OutputTokens != 0 {
			t.Errorf("later entry of the same message carries usage %d/%d", last.InputTokens, last.OutputTokens)
		}
	})

	t.Run("sidechains", func(t *testing.T) {
		res := collect(t, ParseClaude, "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
			readFile(t, filepath.Join(dir, "claude-code/ccviewer_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")))
		perSession := make(map[string]int)
		for _, e := range res.entries {
			perSession[e.HarnessSessionID]++
		}
		const parent = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
		// Every line of this file holds one content block, each one entry.
		// jq -s '[.[] | select(.isSidechain) | …]' split at parentUuid null:
		// the first sidechain has 7 lines, the second 15; the main session 31.
		want := map[string]int{
			parent + "/sidechain-6340ddef-f656-4b72-a065-82390f637678": 7,
			parent + "/sidechain-83e2917c-8940-4df6-a5a5-f2514f0d08c5": 15,
			parent: 31,
		}
		if fmt.Sprint(perSession) != fmt.Sprint(want) {
			t.Errorf("entries per session = %v, want %v", perSession, want)
		}
		if s := res.sessions[parent]; s.Branch != "main" || s.Model != "claude-sonnet-4-20250514" {
			t.Errorf("parent session = %+v", s)
		}
	})

	t.Run("agent file", func(t *testing.T) {
		res := collect(t, ParseClaude, "agent-test-hash-123.jsonl", readFile(t, filepath.Join(dir, "claude-code/ccviewer_agent-test-hash-123.jsonl")))
		s, ok := res.sessions["5c0375b4-57a5-4f26-b12d-d022ee4e51b7/agent-test-hash-123"]
		if !ok || s.ParentHarnessSessionID != "5c0375b4-57a5-4f26-b12d-d022ee4e51b7" || s.Model != "claude-sonnet-4-20250514" {
			t.Errorf("sessions = %+v", res.sessions)
		}
	})

	t.Run("codex", func(t *testing.T) {
		data := readFile(t, filepath.Join(dir, "codex/cclog_rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl"))
		res := collect(t, ParseCodex, "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl", data)
		const id = "11111111-1111-4111-8111-111111111111"
		if s := res.sessions[id]; s.Cwd != "/workspace/synthetic-project" || s.Model != "synthetic-model" {
			t.Errorf("session = %+v", s)
		}
		patch := res.byKey(t, id, "output:call-custom-001")
		if patch.Tool != "apply_patch" || patch.Text != "Done!" {
			t.Errorf("custom tool output = %+v", patch)
		}
		call := res.byKey(t, id, "call:call-structured-001")
		if call.Tool != "exec_command" || string(call.Payload) != `{"cmd":"find . -maxdepth 1 -type f"}` {
			t.Errorf("function call = %+v", call)
		}
		for _, e := range res.entries {
			if strings.Contains(e.Text+string(e.Payload), "SYNTHETIC_ENCRYPTED_CONTENT") {
				t.Errorf("encrypted reasoning leaked into %s", e.Key)
			}
		}
		want := map[string]int{ReasonEventDupe: 2, ReasonUnknownType: 1}
		if fmt.Sprint(res.stats.Reasons) != fmt.Sprint(want) {
			t.Errorf("Reasons = %v, want %v", res.stats.Reasons, want)
		}
	})
}

func TestEmitErrorStopsParsing(t *testing.T) {
	stop := errors.New("stop here")
	for name, tc := range map[string]struct {
		parse parseFunc
		file  string
	}{
		"claude": {ParseClaude, "testdata/claude_usage.jsonl"},
		"codex":  {ParseCodex, "testdata/codex_usage.jsonl"},
	} {
		t.Run(name, func(t *testing.T) {
			calls := 0
			_, err := tc.parse(bytes.NewReader(readFile(t, tc.file)), tc.file, func(Record) error {
				calls++
				if calls == 3 {
					return stop
				}
				return nil
			})
			if !errors.Is(err, stop) || calls != 3 {
				t.Errorf("err = %v after %d calls, want %v after 3", err, calls, stop)
			}
		})
	}
}

// failingReader returns its data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReadErrorIsWrapped(t *testing.T) {
	broken := errors.New("disk on fire")
	for name, parse := range map[string]parseFunc{"claude": ParseClaude, "codex": ParseCodex} {
		t.Run(name, func(t *testing.T) {
			r := &failingReader{data: []byte("{\"type\":\"summary\",\"summary\":\"x\"}\n"), err: broken}
			stats, err := parse(r, "some/file.jsonl", func(Record) error { return nil })
			if !errors.Is(err, broken) || !strings.Contains(err.Error(), "some/file.jsonl") {
				t.Errorf("err = %v, want it to wrap %v and name the file", err, broken)
			}
			if stats.Lines != 1 {
				t.Errorf("Lines = %d, want 1 (read before the failure)", stats.Lines)
			}
		})
	}
}

func TestLineTooLong(t *testing.T) {
	data := readFile(t, "testdata/long_line.jsonl") // line 2 is about 3 KB
	emit := func(r Record) error { return nil }

	stats, err := parseClaude(bytes.NewReader(data), "long_line.jsonl", emit, 1024)
	if err != nil || stats.Lines != 3 || stats.Skipped != 1 || stats.Reasons[ReasonLineTooLong] != 1 {
		t.Errorf("max 1024: stats %+v, err %v; want line 2 of 3 skipped as too long", stats, err)
	}
	res := collect(t, ParseClaude, "long_line.jsonl", data)
	if c := res.counts(); c.Prompts != 2 || c.Messages != 1 || c.Skipped != 0 {
		t.Errorf("default max: counts %+v, want 2 prompts and 1 message", c)
	}
	stats, err = parseCodex(bytes.NewReader(data), "long_line.jsonl", emit, 1024)
	if err != nil || stats.Reasons[ReasonLineTooLong] != 1 {
		t.Errorf("codex, max 1024: stats %+v, err %v", stats, err)
	}
}

// TestLineOverMaxLineBytes feeds a line just over MaxLineBytes between two
// good lines: it is skipped, and the lines around it survive.
func TestLineOverMaxLineBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 32 MiB")
	}
	good := `{"type":"user","sessionId":"s","uuid":"%s","message":{"role":"user","content":"hi"}}` + "\n"
	r := io.MultiReader(
		strings.NewReader(fmt.Sprintf(good, "u1")),
		strings.NewReader(`{"type":"user","x":"`),
		io.LimitReader(repeatReader('a'), MaxLineBytes),
		strings.NewReader("\"}\n"),
		strings.NewReader(fmt.Sprintf(good, "u2")),
	)
	prompts := 0
	stats, err := ParseClaude(r, "s.jsonl", func(rec Record) error {
		if rec.Entry != nil && rec.Entry.Kind == KindPrompt {
			prompts++
		}
		return nil
	})
	if err != nil || stats.Lines != 3 || stats.Reasons[ReasonLineTooLong] != 1 || prompts != 2 {
		t.Errorf("stats %+v, err %v, prompts %d; want 3 lines, 1 too long, 2 prompts", stats, err, prompts)
	}
}

type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestBlankLinesAndCRLF(t *testing.T) {
	data := "\n\r\n" + `{"type":"user","sessionId":"s","uuid":"u1","message":{"role":"user","content":"hi"}}` + "\r\n   \n"
	res := collect(t, ParseClaude, "s.jsonl", []byte(data))
	if res.stats.Lines != 1 || res.stats.Skipped != 0 || len(res.entries) != 1 || res.entries[0].Text != "hi" {
		t.Errorf("stats %+v, entries %+v", res.stats, res.entries)
	}
}
