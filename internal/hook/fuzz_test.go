package hook

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/logbookhq/logbook/internal/testshared"
)

// FuzzParsePayload feeds the hook payload reader arbitrary bytes: it never
// panics, and what it accepts names a session and maps to entries without
// panicking either.
func FuzzParsePayload(f *testing.F) {
	if dir := testshared.Find("fixtures"); dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "claude-code-hooks", "*.json"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"}}`))
	f.Add([]byte(`{"session_id":"s","hook_event_name":"SubagentStop","agent_id":"a1","agent_type":"explorer"}`))
	f.Add([]byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":7}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePayload(data)
		if err != nil {
			return
		}
		if p.SessionID == "" {
			t.Fatalf("accepted a payload without a session: %q", data)
		}
		_ = p.ToolInputString("command")
		_ = p.ToolInputString("file_path")
	})
}
