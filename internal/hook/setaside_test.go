package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// TestSetAsideToldAtSessionStart: records the server refuses for a reason
// the user must fix (here the folder's project is not the token's) are
// told at the next session's start, to the user (systemMessage) and to the
// model (additionalContext), once; `logbook hook status` lists them with
// the reason and says the server does not take the folder's records.
func TestSetAsideToldAtSessionStart(t *testing.T) {
	srv := newTestServer(t)
	wrong := srv.config(t)
	wrong.Project = "elsewhere"
	_, stderr := runClaude(t, wrong, promptPayload(t, "s1", "lost unless told"))
	if !strings.Contains(stderr, "refused") {
		t.Fatalf("stderr %q should say the record was refused", stderr)
	}

	right := srv.config(t)
	right.SpoolDir = wrong.SpoolDir
	start := payload(t, map[string]any{"session_id": "s2", "hook_event_name": EventSessionStart, "source": "startup"})
	stdout, _ := runClaude(t, right, start)
	var out Output
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("SessionStart printed %q: %v", stdout, err)
	}
	want := `this token is for project "demo", not "elsewhere"`
	if !strings.Contains(out.SystemMessage, want) || !strings.Contains(out.SystemMessage, "logbook hook status") {
		t.Errorf("systemMessage %q should give the reason and the command", out.SystemMessage)
	}
	if out.HookSpecificOutput == nil || out.HookSpecificOutput.HookEventName != EventSessionStart ||
		!strings.Contains(out.HookSpecificOutput.AdditionalContext, want) {
		t.Errorf("hookSpecificOutput %+v should carry the reason as additionalContext", out.HookSpecificOutput)
	}
	if stdout, _ := runClaude(t, right, start); stdout != "" {
		t.Errorf("a second SessionStart told again: %q", stdout)
	}
	srv.session("s2") // the session itself was recorded

	st := New(wrong, &bytes.Buffer{}).Status(context.Background(), t.TempDir())
	if st.Project != "elsewhere" || st.ProjectFrom != "LOGBOOK_PROJECT" {
		t.Errorf("status project %q from %q", st.Project, st.ProjectFrom)
	}
	if st.ServerErr == nil || !strings.Contains(st.ServerErr.Error(), want) {
		t.Errorf("status server error %v, want the token's project named", st.ServerErr)
	}
	if len(st.SetAside.Rejected) != 1 || st.OK() {
		t.Errorf("status set aside %+v, ok %v", st.SetAside, st.OK())
	}
	var printed bytes.Buffer
	st.Print(&printed)
	for _, s := range []string{`project:   "elsewhere" (from LOGBOOK_PROJECT)`, "UserPromptSubmit", want, "rejected.jsonl"} {
		if !strings.Contains(printed.String(), s) {
			t.Errorf("status output lacks %q:\n%s", s, printed.String())
		}
	}

	st = New(right, &bytes.Buffer{}).Status(context.Background(), t.TempDir())
	if st.ServerErr != nil {
		t.Errorf("with the right project the server should take records: %v", st.ServerErr)
	}
}

// TestPreToolUseFlushedInBackground: the lean hook's PreToolUse denies a
// command and exits, and the record it spooled (no PostToolUse follows a
// denied call) reaches the server without any other hook call, delivered
// by the process it started.
func TestPreToolUseFlushedInBackground(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hook binaries")
	}
	binaries := hookBinaries(t)
	srv := newTestServer(t)
	spoolDir := t.TempDir()
	fields := map[string]any{"session_id": "bg", "hook_event_name": EventPreToolUse, "cwd": t.TempDir(),
		"tool_name": "Bash", "tool_use_id": "toolu_bg", "tool_input": map[string]any{"command": "rm -rf /"}}
	cmd := exec.Command(binaries[LeanBinary][0], binaries[LeanBinary][1:]...)
	cmd.Env = append(os.Environ(), "LOGBOOK_URL="+srv.url(), "LOGBOOK_TOKEN="+srv.token,
		"LOGBOOK_PROJECT="+testProject, "LOGBOOK_SPOOL_DIR="+spoolDir)
	cmd.Stdin = bytes.NewReader(payload(t, fields))
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), `"permissionDecision":"deny"`) {
		t.Fatalf("the hook: %v, output %q", err, out)
	}
	// The hook has exited; only its background delivery can send the record.
	for wait := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if v, ok := srv.findSession("bg"); ok && len(entriesOf(v, logbook.KindToolCall)) == 1 {
			break
		}
		if time.Since(wait) > 30*time.Second {
			t.Fatal("the PreToolUse record never reached the server")
		}
	}
	spool, _ := OpenSpool(spoolDir)
	// The delivery removes the record from the spool after the server took it.
	for wait := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if n, _ := spool.Pending(); n == 0 {
			break
		}
		if time.Since(wait) > 30*time.Second {
			t.Fatal("the record stays in the spool")
		}
	}
}

// TestMessagesGivenAtNextHookCall: a message sent to the actor of a live
// Claude Code session reaches it at its next PostToolUse as added context
// (and a line for the user), is recorded in its transcript, and is given
// once; a subagent's hook call gives none.
func TestMessagesGivenAtNextHookCall(t *testing.T) {
	srv := newTestServer(t)
	cfg := srv.config(t)
	now := time.Now()
	cfg.Now = func() time.Time { return now }
	var bob struct {
		Token string `json:"token"`
	}
	srv.call("POST", "/v1/tokens", testAdminToken, map[string]string{"project": testProject, "actor": "bob"}, &bob)

	if stdout, _ := runClaude(t, cfg, promptPayload(t, "s1", "refactor the store")); stdout != "" {
		t.Fatalf("with no message waiting the hook printed %q", stdout)
	}
	var sent logbook.Message
	srv.call("POST", "/v1/messages", bob.Token, map[string]string{"to_actor": "alice", "text": "I hold internal/store until noon"}, &sent)

	sub := payload(t, map[string]any{"session_id": "s1", "agent_id": "a1", "hook_event_name": EventPostToolUse,
		"tool_name": "Read", "tool_use_id": "toolu_sub", "tool_input": map[string]any{"file_path": "x"}, "tool_response": "ok"})
	if stdout, _ := runClaude(t, cfg, sub); stdout != "" {
		t.Errorf("a subagent's call printed %q", stdout)
	}
	post := func(n int) []byte {
		return payload(t, map[string]any{"session_id": "s1", "hook_event_name": EventPostToolUse, "tool_name": "Bash",
			"tool_use_id": fmt.Sprint("toolu_", n), "tool_input": map[string]any{"command": "ls"}, "tool_response": map[string]any{"stdout": "a"}})
	}
	// PostToolUse asks at most every InboxEvery: the prompt just asked.
	if stdout, _ := runClaude(t, cfg, post(1)); stdout != "" {
		t.Errorf("a PostToolUse right after the prompt asked again: %q", stdout)
	}
	now = now.Add(InboxEvery)
	stdout, stderr := runClaude(t, cfg, post(2))
	var out Output
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("PostToolUse printed %q (stderr %q): %v", stdout, stderr, err)
	}
	if out.HookSpecificOutput == nil || out.HookSpecificOutput.HookEventName != EventPostToolUse ||
		!strings.Contains(out.HookSpecificOutput.AdditionalContext, "I hold internal/store until noon") ||
		!strings.Contains(out.HookSpecificOutput.AdditionalContext, sent.ID) {
		t.Errorf("the added context %+v should carry the message and its id", out.HookSpecificOutput)
	}
	if !strings.Contains(out.SystemMessage, "from bob") {
		t.Errorf("systemMessage %q should tell the user", out.SystemMessage)
	}
	var notes []logbook.Entry
	for _, e := range entriesOf(srv.session("s1"), logbook.KindNote) {
		if e.Key == "message:"+sent.ID {
			notes = append(notes, e)
		}
	}
	if len(notes) != 1 {
		t.Errorf("the transcript holds %d notes of the message, want 1", len(notes))
	}
	if stdout, _ := runClaude(t, cfg, promptPayload(t, "s1", "go on")); stdout != "" {
		t.Errorf("the message was given again: %q", stdout)
	}
}

// TestCodexMessagesGivenAtNextHookCall: Codex CLI's hooks take added
// context in Claude Code's shape (its SessionStart, UserPromptSubmit and
// PostToolUse outputs have hookSpecificOutput.additionalContext), so a
// message for the actor of a live Codex session reaches it at its next
// prompt, once.
func TestCodexMessagesGivenAtNextHookCall(t *testing.T) {
	srv := newTestServer(t)
	cfg := srv.config(t)
	var bob struct {
		Token string `json:"token"`
	}
	srv.call("POST", "/v1/tokens", testAdminToken, map[string]string{"project": testProject, "actor": "bob"}, &bob)
	prompt := func(text string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		New(cfg, &errOut).CodexHook(context.Background(), bytes.NewReader(payload(t, map[string]any{"session_id": "codex-thread-9",
			"turn_id": "turn-" + text, "hook_event_name": EventUserPromptSubmit, "cwd": t.TempDir(), "model": "gpt-5-codex", "prompt": text})), &out)
		if errOut.Len() > 0 {
			t.Fatalf("the hook reported: %s", errOut.String())
		}
		return out.String()
	}
	if stdout := prompt("tidy the store"); stdout != "" {
		t.Fatalf("with no message waiting the hook printed %q", stdout)
	}
	var sent logbook.Message
	srv.call("POST", "/v1/messages", bob.Token, map[string]string{"to_actor": "alice", "text": "store is mine until noon"}, &sent)
	stdout := prompt("go on")
	var out Output
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("UserPromptSubmit printed %q: %v", stdout, err)
	}
	if out.HookSpecificOutput == nil || out.HookSpecificOutput.HookEventName != EventUserPromptSubmit ||
		!strings.Contains(out.HookSpecificOutput.AdditionalContext, "store is mine until noon") {
		t.Errorf("the added context %+v should carry the message", out.HookSpecificOutput)
	}
	if stdout := prompt("and then"); stdout != "" {
		t.Errorf("the message was given again: %q", stdout)
	}
}
