package hook

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
)

func TestCodexNotify(t *testing.T) {
	srv := newTestServer(t)
	h := New(srv.config(t), os.Stderr)
	ctx := context.Background()
	turn1 := `{"type":"agent-turn-complete","thread-id":"th-1","turn-id":"turn-1","cwd":"/nowhere",
		"input-messages":["Rename the config flag","and update the docs"],"last-assistant-message":"Renamed it.","extra":{"x":1}}`
	turn2 := `{"type":"agent-turn-complete","thread-id":"th-1","turn-id":"turn-2","input-messages":["Thanks"],"last-assistant-message":"You're welcome."}`
	for _, arg := range []string{turn1, turn1, turn2, `{"type":"approval-requested","thread-id":"th-1"}`} {
		if err := h.Codex(ctx, arg); err != nil {
			t.Fatalf("Codex(%s): %v", arg, err)
		}
	}
	v := srv.session("th-1")
	if v.Session.Harness != HarnessCodex {
		t.Errorf("harness %q", v.Session.Harness)
	}
	var got []string
	for _, e := range v.Entries {
		got = append(got, string(e.Kind)+"/"+e.Role+":"+e.Text)
	}
	want := []string{"prompt/:Rename the config flag", "prompt/:and update the docs", "message/assistant:Renamed it.",
		"prompt/:Thanks", "message/assistant:You're welcome."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("entries\n%v\nwant\n%v", got, want)
	}
	if v.Session.Title != "Rename the config flag" {
		t.Errorf("title %q", v.Session.Title)
	}
	if n := len(entriesOf(v, logbook.KindPrompt)); n != 3 {
		t.Errorf("%d prompts", n)
	}
	if err := h.Codex(ctx, `not json`); err == nil {
		t.Error("a broken notification is not an error")
	}
	if err := h.Codex(ctx, `{"type":"agent-turn-complete"}`); err == nil || !strings.Contains(err.Error(), "thread-id") {
		t.Errorf("a turn without thread: %v", err)
	}
}

// TestCodexHookDecisions: Codex's hooks speak Claude Code's protocol but
// take only deny. Destructive is denied; what the policy asks about is
// denied too, saying a person must approve (an ask would be refused as
// unsupported and the command would run); deferred commands get no answer.
// The calls are recorded in a session of harness codex.
func TestCodexHookDecisions(t *testing.T) {
	srv := newTestServer(t)
	cfg := srv.config(t)
	cases := []struct{ command, decision, names string }{
		{"rm -rf /", "deny", "rm -rf /"},
		{"useradd bob", "deny", "Codex hooks cannot ask"},
		{"ls", "defer", ""},
	}
	for _, c := range cases {
		raw := payload(t, map[string]any{"session_id": "codex-thread-1", "turn_id": "turn-1", "hook_event_name": EventPreToolUse,
			"cwd": t.TempDir(), "model": "gpt-5-codex", "tool_name": "Bash", "tool_use_id": "call_" + strings.ReplaceAll(c.command, " ", "_"),
			"tool_input": map[string]any{"command": c.command}})
		var out, errOut bytes.Buffer
		New(cfg, &errOut).CodexHook(context.Background(), bytes.NewReader(raw), &out)
		decision, reason := decisionOf(t, out.String())
		if decision != c.decision || !strings.Contains(reason, c.names) {
			t.Errorf("%q → %s (%q), want %s naming %q", c.command, decision, reason, c.decision, c.names)
		}
	}
	var out bytes.Buffer
	New(cfg, io.Discard).CodexHook(context.Background(), bytes.NewReader(payload(t, map[string]any{"session_id": "codex-thread-1",
		"turn_id": "turn-1", "hook_event_name": EventUserPromptSubmit, "prompt": "clean up"})), &out)
	v := srv.session("codex-thread-1")
	if v.Session.Harness != HarnessCodex {
		t.Errorf("session harness %q, want %q", v.Session.Harness, HarnessCodex)
	}
	if n := len(entriesOf(v, logbook.KindToolCall)); n != len(cases) {
		t.Errorf("%d tool calls recorded, want %d", n, len(cases))
	}
}
