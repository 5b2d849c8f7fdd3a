package hook

import (
	"context"
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
