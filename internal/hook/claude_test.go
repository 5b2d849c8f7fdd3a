package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
)

// TestClaudeFixtures feeds every captured payload, then payloads for the
// events the captures lack, to the hook against a real server, and checks
// what was stored.
func TestClaudeFixtures(t *testing.T) {
	dir := fixturesDir(t)
	srv := newTestServer(t)
	cfg := srv.config(t)

	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s (%v)", dir, err)
	}
	// Feed them in a session's order: start, prompt, each tool's Pre then
	// Post, stop, end.
	rank := func(name string) int {
		for i, prefix := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"} {
			if strings.HasPrefix(name, prefix) {
				return i
			}
		}
		return 99
	}
	slices.SortStableFunc(files, func(a, b string) int {
		ba, bb := filepath.Base(a), filepath.Base(b)
		toolA, toolB := ba[strings.Index(ba, ".")+1:], bb[strings.Index(bb, ".")+1:]
		if ra, rb := rank(ba), rank(bb); (ra == 2 || ra == 3) && (rb == 2 || rb == 3) && toolA != toolB {
			return strings.Compare(toolA, toolB)
		} else if ra != rb {
			return ra - rb
		}
		return 0
	})
	tools := map[string]bool{}
	var sessionEnd []byte
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ParsePayload(raw)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		if p.Event == EventSessionEnd {
			sessionEnd = raw // ends the session: fed after our own payloads
			continue
		}
		if p.ToolName != "" && p.SessionID == "test-session-id" {
			tools[p.ToolName] = true
		}
		stdout, stderr := runClaude(t, cfg, raw)
		if stderr != "" {
			t.Errorf("%s: stderr %q", filepath.Base(f), stderr)
		}
		switch {
		case p.Event == EventPreToolUse && p.ToolName == "Bash":
			// pwd is read_only, which the default policy defers to
			// Claude Code's own permissions: no answer at all.
			if stdout != "" {
				t.Errorf("%s: answer %s, want none (defer)", filepath.Base(f), stdout)
			}
		case stdout != "":
			t.Errorf("%s printed %q on stdout; only a Bash PreToolUse answers", filepath.Base(f), stdout)
		}
	}

	// Events the captures lack, in Claude Code's documented shapes.
	common := func(event string, more map[string]any) []byte {
		fields := map[string]any{"session_id": "test-session-id", "cwd": "/test/project",
			"transcript_path": "/test/project/.claude/transcripts/test-session.json", "hook_event_name": event}
		for k, v := range more {
			fields[k] = v
		}
		return payload(t, fields)
	}
	own := [][]byte{
		common(EventPostToolUseFailure, map[string]any{"tool_name": "Bash", "tool_use_id": "toolu_fail",
			"tool_input": map[string]any{"command": "go test ./..."}, "error": "exit status 1: FAIL", "is_interrupt": false}),
		common(EventSubagentStart, map[string]any{"agent_id": "a1", "agent_type": "Explore"}),
		common(EventPreToolUse, map[string]any{"agent_id": "a1", "agent_type": "Explore", "tool_name": "Read",
			"tool_use_id": "toolu_sub", "tool_input": map[string]any{"file_path": "/test/project/README.md"}}),
		common(EventPostToolUse, map[string]any{"agent_id": "a1", "agent_type": "Explore", "tool_name": "Read",
			"tool_use_id": "toolu_sub", "tool_input": map[string]any{"file_path": "/test/project/README.md"},
			"tool_response": map[string]any{"type": "text"}}),
		common(EventSubagentStop, map[string]any{"agent_id": "a1", "agent_type": "Explore",
			"agent_transcript_path": "/x/agent-a1.jsonl", "stop_hook_active": false, "last_assistant_message": "Found it in README."}),
		common(EventPreCompact, map[string]any{"trigger": "manual", "custom_instructions": "keep the test plan"}),
		common(EventPostCompact, map[string]any{"trigger": "manual", "compact_summary": "We fixed the login test."}),
		common(EventNotification, map[string]any{"message": "Claude needs your permission to use Bash", "notification_type": "permission_prompt"}),
		common(EventStop, map[string]any{"stop_hook_active": false, "last_assistant_message": "2 + 2 = 4"}),
		common("TeleportStart", map[string]any{"unknown_field": map[string]any{"deep": true}}),
		common(EventUserPromptSubmit, map[string]any{"prompt": 42, "surprise": []int{1}}), // a field of the wrong type reads as empty
	}
	for _, raw := range own {
		if stdout, stderr := runClaude(t, cfg, raw); stdout != "" || stderr != "" {
			t.Errorf("payload %s: stdout %q, stderr %q", raw, stdout, stderr)
		}
	}
	// Feeding hooks again (the same call reported twice) adds nothing.
	before := len(srv.session("test-session-id").Entries)
	for _, name := range []string{"PreToolUse.Edit.json", "PostToolUse.Edit.json", "PostToolUse.Bash.json"} {
		raw, _ := os.ReadFile(filepath.Join(dir, name))
		runClaude(t, cfg, raw)
	}
	runClaude(t, cfg, own[0])
	if after := len(srv.session("test-session-id").Entries); after != before {
		t.Errorf("replaying hooks added %d entries; a replay must be a no-op", after-before)
	}
	if sessionEnd == nil {
		t.Fatal("no SessionEnd fixture")
	}
	runClaude(t, cfg, sessionEnd)

	v := srv.session("test-session-id")
	s := v.Session
	if s.Harness != HarnessClaude || s.Project != testProject || s.State != logbook.StateEnded || s.Outcome != logbook.OutcomeSuccess || s.EndReason != "other" {
		t.Errorf("session: harness %q project %q state %q outcome %q end reason %q", s.Harness, s.Project, s.State, s.Outcome, s.EndReason)
	}
	if prompts := entriesOf(v, logbook.KindPrompt); len(prompts) != 1 || prompts[0].Text != "What is 2+2?" {
		t.Errorf("prompts %+v, want the one prompt", prompts)
	}
	calls, results := map[string]int{}, map[string]int{}
	for _, e := range entriesOf(v, logbook.KindToolCall) {
		calls[e.Tool]++
	}
	for _, e := range entriesOf(v, logbook.KindToolResult) {
		results[e.Tool]++
		if e.Tool == "Bash" && e.ToolCallID != "toolu_fail" && e.Text != "/test/project" {
			t.Errorf("Bash result text %q, want its stdout", e.Text)
		}
		if e.ToolCallID == "toolu_fail" && e.Text != "exit status 1: FAIL" {
			t.Errorf("failed tool result text %q", e.Text)
		}
	}
	for tool := range tools {
		wantCalls := 1
		if tool == "Bash" {
			wantCalls = 2 // the fixture's pwd and our failing go test
		}
		if calls[tool] != wantCalls || results[tool] != wantCalls {
			t.Errorf("tool %s: %d calls and %d results, want %d of each (Pre and Post share one call)", tool, calls[tool], results[tool], wantCalls)
		}
	}
	notes := entriesOf(v, logbook.KindNote)
	var decision Decision
	for _, n := range notes {
		if n.Tool == "Bash" {
			if err := json.Unmarshal(n.Payload, &decision); err != nil {
				t.Errorf("decision note payload %s: %v", n.Payload, err)
			}
		}
	}
	if decision.Decision != "defer" || decision.Command != "pwd" || decision.Class != "read_only" {
		t.Errorf("the Bash decision is not recorded: %+v (notes %+v)", decision, notes)
	}
	if msgs := entriesOf(v, logbook.KindMessage); len(msgs) != 1 || msgs[0].Role != "assistant" || msgs[0].Text != "2 + 2 = 4" {
		t.Errorf("assistant messages %+v, want Stop's last_assistant_message", msgs)
	}
	if sums := entriesOf(v, logbook.KindSummary); len(sums) != 1 || sums[0].Text != "We fixed the login test." {
		t.Errorf("summaries %+v, want PostCompact's compact_summary", sums)
	}
	if comp := entriesOf(v, logbook.KindCompaction); len(comp) != 1 || comp[0].Text != "keep the test plan" {
		t.Errorf("compaction entries %+v, want PreCompact's", comp)
	}
	if !slices.ContainsFunc(notes, func(e logbook.Entry) bool { return e.Text == "Claude needs your permission to use Bash" }) {
		t.Errorf("the notification is not a note: %+v", notes)
	}
	for i := 1; i < len(v.Entries); i++ {
		if v.Entries[i].At.Before(v.Entries[i-1].At) {
			t.Errorf("entry %d is dated before entry %d: entries are stored out of order", i+1, i)
		}
	}

	// The subagent: its own session under the main one, ended by SubagentStop.
	sub := srv.session("test-session-id/agent-a1")
	if sub.Session.ParentID != s.ID || sub.Session.AgentType != "Explore" || sub.Session.State != logbook.StateEnded {
		t.Errorf("subagent: parent %q (want %q), agent type %q, state %q", sub.Session.ParentID, s.ID, sub.Session.AgentType, sub.Session.State)
	}
	if c := entriesOf(sub, logbook.KindToolCall); len(c) != 1 || c[0].ToolCallID != "toolu_sub" {
		t.Errorf("subagent tool calls %+v", c)
	}
	if m := entriesOf(sub, logbook.KindMessage); len(m) != 1 || m[0].Text != "Found it in README." {
		t.Errorf("subagent messages %+v", m)
	}
	if len(v.Subagents) != 1 || v.Subagents[0].ID != sub.Session.ID {
		t.Errorf("the main session lists subagents %+v", v.Subagents)
	}

	// The other captured session (BashOutput, KillShell).
	other := srv.session("b6e655f9-604a-4c74-b08d-c6231a11a4ed")
	if n := len(entriesOf(other, logbook.KindToolCall)); n != 2 {
		t.Errorf("the second session has %d tool calls, want 2", n)
	}

	// Touches: the files of Edit, Write and NotebookEdit, nothing else.
	var touched []string
	for _, tc := range v.Touched {
		if tc.Kind != "file" {
			t.Errorf("touch kind %q", tc.Kind)
		}
		touched = append(touched, tc.Value)
	}
	slices.Sort(touched)
	want := []string{"/tmp/test-edit-target.json", "/tmp/test-notebook-edit.ipynb", "/tmp/test-write-output.txt"}
	if !slices.Equal(touched, want) {
		t.Errorf("stored touches %v, want %v", touched, want)
	}
}

// TestStopFailureEndsFailedWithBlocker: a session whose last turn failed on
// a rate limit ends failed, blocked by rate_limited; one whose failed turn
// was followed by a good one ends a success.
func TestStopFailureEndsFailedWithBlocker(t *testing.T) {
	srv := newTestServer(t)
	cfg := srv.config(t)
	ev := func(sid, event string, more map[string]any) []byte {
		fields := map[string]any{"session_id": sid, "hook_event_name": event, "cwd": t.TempDir()}
		for k, v := range more {
			fields[k] = v
		}
		return payload(t, fields)
	}
	failure := map[string]any{"error_type": "rate_limit", "error": "429", "error_message": "Rate limit exceeded"}
	for _, raw := range [][]byte{
		ev("s-failed", EventUserPromptSubmit, map[string]any{"prompt": "do it"}),
		ev("s-failed", EventStopFailure, failure),
		ev("s-failed", EventSessionEnd, map[string]any{"reason": "prompt_input_exit"}),
		ev("s-recovered", EventUserPromptSubmit, map[string]any{"prompt": "do it"}),
		ev("s-recovered", EventStopFailure, failure),
		ev("s-recovered", EventUserPromptSubmit, map[string]any{"prompt": "try again"}),
		ev("s-recovered", EventStop, map[string]any{"last_assistant_message": "Done."}),
		ev("s-recovered", EventSessionEnd, map[string]any{"reason": "other"}),
	} {
		if _, stderr := runClaude(t, cfg, raw); stderr != "" {
			t.Errorf("stderr %q", stderr)
		}
	}
	failed := srv.session("s-failed")
	if s := failed.Session; s.Outcome != logbook.OutcomeFailed || s.Blocker != logbook.BlockerRateLimited || !strings.Contains(s.Result, "Rate limit exceeded") {
		t.Errorf("failed session: outcome %q blocker %q result %q", s.Outcome, s.Blocker, s.Result)
	}
	if notes := entriesOf(failed, logbook.KindNote); len(notes) != 1 || !strings.Contains(notes[0].Text, "rate_limit") {
		t.Errorf("the failure is not noted: %+v", notes)
	}
	if s := srv.session("s-recovered").Session; s.Outcome != logbook.OutcomeSuccess || s.Blocker != "" {
		t.Errorf("recovered session: outcome %q blocker %q", s.Outcome, s.Blocker)
	}
	for errorType, want := range map[string]logbook.Blocker{
		"rate_limit": logbook.BlockerRateLimited, "context_length": logbook.BlockerContextExhausted,
		"authentication_failed": logbook.BlockerUnknown, "": logbook.BlockerUnknown,
	} {
		if got := blockerFor(errorType, ""); got != want {
			t.Errorf("blockerFor(%q) = %q, want %q", errorType, got, want)
		}
	}
}

// TestSamePromptTwice: the same prompt sent at two points of a
// conversation is two entries; the same hook fired twice is one.
func TestSamePromptTwice(t *testing.T) {
	srv := newTestServer(t)
	cfg := srv.config(t)
	transcript := filepath.Join(t.TempDir(), "t.jsonl")
	write := func(lines ...string) {
		if err := os.WriteFile(transcript, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	prompt := payload(t, map[string]any{"session_id": "s1", "hook_event_name": EventUserPromptSubmit,
		"transcript_path": transcript, "prompt": "continue"})
	write(`{"uuid":"u1","timestamp":"2026-01-01T10:00:00Z"}`)
	runClaude(t, cfg, prompt)
	runClaude(t, cfg, prompt) // fired twice at the same point
	write(`{"uuid":"u1","timestamp":"2026-01-01T10:00:00Z"}`, `{"uuid":"u2","timestamp":"2026-01-01T10:05:00Z"}`)
	runClaude(t, cfg, prompt) // sent again later
	if n := len(entriesOf(srv.session("s1"), logbook.KindPrompt)); n != 2 {
		t.Errorf("%d prompt entries, want 2", n)
	}
}
