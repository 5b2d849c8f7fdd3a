package mcp

import (
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// TestMessagesThroughTools: an agent in process writes to another that
// uses the tools over stdio (the HTTP API behind them): send_message,
// read_inbox (each message given once), a reply back to the sender's
// session in the thread, and ack by the recipient only.
func TestMessagesThroughTools(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.inProcess(t, w.alice), w.overStdio(t, w.bob)
	var mine, theirs session
	ok(t, alice, "start_session", map[string]any{"harness": "claude-code", "harness_session_id": "a"}, &mine)
	ok(t, bob, "start_session", map[string]any{"harness": "codex", "harness_session_id": "b"}, &theirs)

	var sent logbook.Message
	ok(t, alice, "send_message", map[string]any{"session_id": mine.ID, "to_actor": "bob", "text": "the login test is mine today"}, &sent)
	if sent.ToActor != "bob" || sent.FromSession != mine.ID || sent.Thread != sent.ID {
		t.Errorf("sent %+v", sent)
	}
	var inbox ledger.MessagesAnswer
	ok(t, bob, "read_inbox", map[string]any{"session_id": theirs.ID}, &inbox)
	if len(inbox.Messages) != 1 || inbox.Messages[0].ID != sent.ID || inbox.Messages[0].DeliveredTo != theirs.ID {
		t.Fatalf("bob's inbox %+v", inbox)
	}
	ok(t, bob, "read_inbox", map[string]any{"session_id": theirs.ID}, &inbox)
	if len(inbox.Messages) != 0 {
		t.Errorf("read again: %+v", inbox)
	}

	var reply logbook.Message
	ok(t, bob, "send_message", map[string]any{"session_id": theirs.ID, "reply_to": sent.ID, "text": "fine, I take the signup test"}, &reply)
	if reply.ToSession != mine.ID || reply.Thread != sent.ID {
		t.Errorf("reply %+v, want it to alice's session in the thread", reply)
	}
	ok(t, alice, "read_inbox", map[string]any{"session_id": mine.ID}, &inbox)
	if len(inbox.Messages) != 1 || inbox.Messages[0].Text != "fine, I take the signup test" {
		t.Errorf("alice's inbox %+v", inbox)
	}

	if text := fails(t, alice, "ack", map[string]any{"message_id": sent.ID}); !strings.Contains(text, "only its recipient") {
		t.Errorf("alice acking bob's message: %q", text)
	}
	var acked logbook.Message
	ok(t, bob, "ack", map[string]any{"message_id": sent.ID}, &acked)
	if acked.AckedAt == nil {
		t.Errorf("acked %+v", acked)
	}
	if text := fails(t, bob, "send_message", map[string]any{"text": "to nobody"}); !strings.Contains(text, "to_session") {
		t.Errorf("a message to nobody: %q", text)
	}
}
