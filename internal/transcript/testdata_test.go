package transcript

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestClaudeTestdata covers what the fixtures lack: usage spread over several
// lines of one message.id, a summary before its session, agentId subagents,
// duplicate lines, system lines, compact summaries, interrupt markers and a
// model change. Line numbers below are those of testdata/claude_usage.jsonl.
func TestClaudeTestdata(t *testing.T) {
	res := collect(t, ParseClaude, "s1.jsonl", readFile(t, "testdata/claude_usage.jsonl"))

	want := counts{Sessions: 1, Subagents: 1, Prompts: 2, Notes: 3, Messages: 4, Summaries: 2,
		ToolCalls: 2, ToolResults: 2, Errors: 2,
		InputTokens: 1110 + 3 + 7, OutputTokens: 80 + 40 + 9, Ignored: 2}
	if got := res.counts(); got != want {
		t.Errorf("counts:\n got %+v\nwant %+v", got, want)
	}
	if fmt.Sprint(res.stats.Reasons) != fmt.Sprint(map[string]int{ReasonDuplicate: 1, ReasonUnknownType: 1}) {
		t.Errorf("Reasons = %v (want line 7 duplicate, line 8 unknown type)", res.stats.Reasons)
	}

	// Lines 3–5 are one API message (msg_A) with output_tokens 5, 50, 80:
	// counted once, the largest, on its first entry (the thinking block).
	thinking := res.byKey(t, "s1", "u2:0")
	if thinking.InputTokens != 10+100+1000 || thinking.OutputTokens != 80 {
		t.Errorf("msg_A usage on first entry = %d/%d, want 1110/80", thinking.InputTokens, thinking.OutputTokens)
	}
	if thinking.CacheReadTokens != 1000 || thinking.CacheWriteTokens != 100 || thinking.Model != "claude-sonnet-4-5" {
		t.Errorf("msg_A cache and model = %d/%d %q, want 1000 read, 100 written, claude-sonnet-4-5",
			thinking.CacheReadTokens, thinking.CacheWriteTokens, thinking.Model)
	}
	if thinking.Kind != KindMessage || thinking.Role != "assistant" || string(thinking.Payload) != `{"thinking":true}` {
		t.Errorf("thinking entry = %+v", thinking)
	}
	for _, key := range []string{"u3:0", "u4:0", "u6:1"} {
		if e := res.byKey(t, "s1", key); e.InputTokens != 0 || e.OutputTokens != 0 {
			t.Errorf("%s carries usage %d/%d; only a message's first entry may", key, e.InputTokens, e.OutputTokens)
		}
	}

	result := res.byKey(t, "s1", "u5:0")
	if result.Tool != "Bash" || !result.IsError || result.Text != "--- FAIL: TestLogin\nexit status 1" ||
		!json.Valid(result.Payload) || result.Payload[0] != '{' {
		t.Errorf("tool result = %+v", result)
	}
	if e := res.byKey(t, "s1", "u7:0"); e.Kind != KindNote || e.Role != "user" {
		t.Errorf("interrupt marker = %+v, want a user note", e)
	}
	if e := res.byKey(t, "s1", "u7:1"); e.Tool != "Edit" || !e.IsError {
		t.Errorf("refused edit = %+v", e)
	}
	if e := res.byKey(t, "s1", "y1:0"); e.Kind != KindNote || e.Role != "system" || e.Text != "PostToolUse hook ran" {
		t.Errorf("system line = %+v", e)
	}
	if e := res.byKey(t, "s1", "u8:0"); e.Kind != KindSummary {
		t.Errorf("compact summary = %+v", e)
	}
	if e := res.byKey(t, "s1", "u9:0"); e.Kind != KindNote {
		t.Errorf("isMeta line = %+v, want a note", e)
	}

	// Line 1 is a summary whose leaf is not in the file: it waits for the
	// file's first session and names it.
	if e := res.byKey(t, "s1", "summary:u-not-in-this-file"); e.Text != "Fix the flaky login test" {
		t.Errorf("summary = %+v", e)
	}
	s1 := res.sessions["s1"]
	if s1.Title != "Fix the flaky login test" || s1.Model != "claude-opus-4-1" || s1.Branch != "fix-login" || s1.Cwd != "/repo" {
		t.Errorf("final s1 = %+v", s1)
	}
	if got := s1.LastAt.Format("15:04:05"); got != "10:05:01" {
		t.Errorf("s1 LastAt = %s, want 10:05:01 (line 15)", got)
	}

	agent := res.sessions["s1/agent-ag7"]
	if agent.ParentHarnessSessionID != "s1" || agent.Model != "claude-haiku-4-5" {
		t.Errorf("subagent = %+v", agent)
	}
	if e := res.byKey(t, "s1/agent-ag7", "a2:0"); e.InputTokens != 7 || e.OutputTokens != 9 {
		t.Errorf("subagent usage = %d/%d", e.InputTokens, e.OutputTokens)
	}

	// The model change on line 12 produces a Session record before msg_C's
	// entries.
	models := []string{}
	for _, r := range res.records {
		if r.Session != nil && r.Session.HarnessSessionID == "s1" {
			models = append(models, r.Session.Model)
		}
		if r.Entry != nil && r.Entry.Key == "u6:0" && models[len(models)-1] != "claude-opus-4-1" {
			t.Errorf("msg_C entry emitted before the session record naming its model")
		}
	}
}

// TestCodexTestdata covers what the Codex fixture lacks: token_count events
// (repeated ones too), git metadata, injected user and developer messages,
// shell output with an exit code, and compaction.
func TestCodexTestdata(t *testing.T) {
	res := collect(t, ParseCodex, "rollout-2025-10-02T08-00-00-22222222-2222-4222-8222-222222222222.jsonl",
		readFile(t, "testdata/codex_usage.jsonl"))
	const id = "22222222-2222-4222-8222-222222222222"

	want := counts{Sessions: 1, Prompts: 1, Notes: 2, Messages: 2, Summaries: 1, ToolCalls: 2, ToolResults: 2, Errors: 1,
		InputTokens: 2500, OutputTokens: 120, Skipped: 1, Ignored: 4}
	if got := res.counts(); got != want {
		t.Errorf("counts:\n got %+v\nwant %+v", got, want)
	}
	wantReasons := map[string]int{ReasonNotJSON: 1, ReasonEventDupe: 2, ReasonDuplicate: 1, ReasonUnknownType: 1}
	if fmt.Sprint(res.stats.Reasons) != fmt.Sprint(wantReasons) {
		t.Errorf("Reasons = %v, want %v", res.stats.Reasons, wantReasons)
	}

	s := res.sessions[id]
	if s.Cwd != "/srv/app" || s.Branch != "main" || s.Commit != "0123456789abcdef0123456789abcdef01234567" || s.Model != "gpt-5-codex" {
		t.Errorf("session = %+v", s)
	}
	if e := res.byKey(t, id, "line:2:0"); e.Kind != KindNote || e.Role != "system" {
		t.Errorf("developer message = %+v", e)
	}
	if e := res.byKey(t, id, "line:3:0"); e.Kind != KindNote || e.Role != "user" {
		t.Errorf("environment context = %+v", e)
	}
	// The first token_count (line 9) covers the reasoning and the shell call;
	// line 10 repeats it; line 16 adds 1500/70 for the rest of the turn.
	if e := res.byKey(t, id, "line:7"); e.InputTokens != 1000 || e.CacheReadTokens != 800 || e.OutputTokens != 50 || e.Text != "**Running tests**" {
		t.Errorf("reasoning = %+v", e)
	}
	if e := res.byKey(t, id, "call:call_2"); e.InputTokens != 1500 || e.CacheReadTokens != 1000 || e.OutputTokens != 70 ||
		e.Tool != "apply_patch" || string(e.Payload) != `"*** Begin Patch\n*** Update File: add.go\n@@\n-return a - b\n+return a + b\n*** End Patch\n"` {
		t.Errorf("custom tool call = %+v (payload %s)", e, e.Payload)
	}
	shell := res.byKey(t, id, "output:call_1")
	if !shell.IsError || shell.Tool != "shell" || shell.Text != "--- FAIL: TestAdd\nFAIL\n" {
		t.Errorf("shell output = %+v", shell)
	}
	if e := res.byKey(t, id, "output:call_2"); e.IsError || e.Text != "Success. Updated the following files:\nM add.go\n" {
		t.Errorf("patch output = %+v", e)
	}
	if e := res.byKey(t, id, "line:17"); e.Kind != KindSummary || e.Text != "Earlier: fixed the sign bug in add.go." {
		t.Errorf("compaction = %+v", e)
	}
}

// TestCodexOldFormat reads a rollout from before the typed envelope: a first
// line with the session id, bare items, and record_type state lines.
func TestCodexOldFormat(t *testing.T) {
	data := `{"id":"33333333-3333-4333-8333-333333333333","timestamp":"2025-08-01T00:00:00Z","instructions":null}
{"record_type":"state"}
{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}
{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}
{"type":"function_call_output","call_id":"c1","output":"a.txt"}
`
	res := collect(t, ParseCodex, "rollout-x.jsonl", []byte(data))
	want := counts{Sessions: 1, Prompts: 1, ToolCalls: 1, ToolResults: 1, Ignored: 1}
	if got := res.counts(); got != want {
		t.Errorf("counts:\n got %+v\nwant %+v", got, want)
	}
	if _, ok := res.sessions["33333333-3333-4333-8333-333333333333"]; !ok {
		t.Errorf("sessions = %v", res.sessions)
	}
}
