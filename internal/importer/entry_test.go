package importer

import (
	"testing"

	"github.com/logbookhq/logbook/internal/transcript"
)

// TestToolKeysMatchTheHook: a tool call and its result imported from a
// transcript carry the keys the Claude Code hook gives them
// (internal/hook: "<tool_use_id>:call", "<tool_use_id>:result"), so
// importing a session the hook already recorded adds no second copy.
func TestToolKeysMatchTheHook(t *testing.T) {
	call := toEntry(&transcript.Entry{Kind: "tool_call", Tool: "Bash", ToolCallID: "toolu_01", Key: "uuid-1:0"})
	result := toEntry(&transcript.Entry{Kind: "tool_result", ToolCallID: "toolu_01", Key: "uuid-2:0"})
	prompt := toEntry(&transcript.Entry{Kind: "prompt", Text: "hi", Key: "uuid-3:0"})
	if call.Key != "toolu_01:call" || result.Key != "toolu_01:result" || prompt.Key != "uuid-3:0" {
		t.Errorf("keys: call %q, result %q, prompt %q", call.Key, result.Key, prompt.Key)
	}
}
