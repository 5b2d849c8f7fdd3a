package hook

import (
	"fmt"
	"net/url"
	"os"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
)

// TestStartedOncePerSession: each hook call is a process of its own, yet
// a session is started on the server once, not before every append: the
// spool remembers the spec it was started with. A changed spec (another
// branch or commit), an end, or a server that no longer takes writes to the
// remembered id start it again, and nothing is lost on the way.
func TestStartedOncePerSession(t *testing.T) {
	srv := newTestServer(t)
	cfg := srv.config(t)
	cwd := t.TempDir() // no repository: the spec carries no branch or commit
	post := func(sessionID string, i int) {
		t.Helper()
		_, stderr := runClaude(t, cfg, payload(t, map[string]any{
			"session_id": sessionID, "hook_event_name": EventPostToolUse, "cwd": cwd,
			"tool_name": "Bash", "tool_use_id": fmt.Sprintf("toolu_%s_%d", sessionID, i),
			"tool_input":    map[string]any{"command": fmt.Sprintf("echo %d", i)},
			"tool_response": map[string]any{"stdout": fmt.Sprint(i), "stderr": ""},
		}))
		if stderr != "" {
			t.Fatalf("hook reported: %s", stderr)
		}
	}
	starts := func() int {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return srv.requests["POST /v1/sessions"]
	}

	for i := range 4 {
		post("s1", i)
	}
	if got := starts(); got != 1 {
		t.Fatalf("four calls of one session started it %d times, want once", got)
	}
	v := srv.session("s1")
	if calls := entriesOf(v, logbook.KindToolCall); len(calls) != 4 {
		t.Fatalf("stored %d tool calls, want 4", len(calls))
	}

	post("s2", 0) // another session is started on its own
	if got := starts(); got != 2 {
		t.Fatalf("a second session: %d starts in all, want 2", got)
	}

	// Ended elsewhere (a person ends it in the web UI): the next call's
	// append is refused as ended, so the hook starts the session again and
	// the call is stored, not set aside.
	srv.call("POST", "/v1/sessions/"+url.PathEscape(v.Session.ID)+"/end", srv.token,
		map[string]string{"outcome": "partial"}, nil)
	post("s1", 4)
	if got := starts(); got != 3 {
		t.Fatalf("after the session was ended elsewhere: %d starts in all, want 3", got)
	}
	if pending, rejected := spoolState(t, cfg.SpoolDir); pending != 0 || rejected {
		t.Fatalf("spool after the restart: %d pending, set aside %v; want everything delivered", pending, rejected)
	}
	found := false
	for _, e := range entriesOf(srv.session("s1"), logbook.KindToolCall) {
		found = found || e.ToolCallID == "toolu_s1_4"
	}
	if !found {
		t.Fatal("the call after the session ended elsewhere was not stored")
	}

	// A new server (its database replaced) knows none of the remembered
	// ids: a subagent's call, whose parent's id the spool remembers, is
	// refused as not found, and the hook starts both again.
	srv2 := newTestServer(t)
	cfg2 := srv2.config(t)
	cfg2.SpoolDir = cfg.SpoolDir
	_, stderr := runClaude(t, cfg2, payload(t, map[string]any{
		"session_id": "s1", "agent_id": "sub-1", "agent_type": "Explore", "hook_event_name": EventPostToolUse, "cwd": cwd,
		"tool_name": "Read", "tool_use_id": "toolu_sub_1", "tool_input": map[string]any{"file_path": "x.go"}, "tool_response": "ok"}))
	if stderr != "" {
		t.Fatalf("a subagent's call against a new server: %s", stderr)
	}
	if pending, rejected := spoolState(t, cfg.SpoolDir); pending != 0 || rejected {
		t.Fatalf("spool after the new server: %d pending, set aside %v; want everything delivered", pending, rejected)
	}
	if v := srv2.session("s1"); len(v.Subagents) != 1 {
		t.Fatalf("the new server holds s1 with %d subagents, want the one just recorded", len(v.Subagents))
	}

	// SessionEnd forgets the start: a resumed session is started again.
	_, stderr = runClaude(t, cfg, payload(t, map[string]any{
		"session_id": "s2", "hook_event_name": EventSessionEnd, "cwd": cwd, "reason": "exit"}))
	if stderr != "" {
		t.Fatalf("SessionEnd: %s", stderr)
	}
	before := starts()
	post("s2", 1)
	if got := starts(); got != before+1 {
		t.Fatalf("the first call after SessionEnd started the session %d times, want once", got-before)
	}
}

// spoolState reports how many records wait in the spool at dir and
// whether any was set aside as refused.
func spoolState(t *testing.T, dir string) (pending int, rejected bool) {
	t.Helper()
	spool, err := OpenSpool(dir)
	if err != nil {
		t.Fatal(err)
	}
	n, err := spool.Pending()
	if err != nil {
		t.Fatal(err)
	}
	_, err = os.Stat(spool.path(rejectedFile))
	return n, err == nil
}
