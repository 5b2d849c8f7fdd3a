package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// registerMessages adds the tools of the inbox between agents: send_message
// (additive, not idempotent: sending again sends again), read_inbox
// (additive: it delivers what waits, once, so a second call gives nothing
// new) and ack (idempotent).
func (ts *toolset) registerMessages(s *sdk.Server) {
	add(s, ts, &sdk.Tool{Name: "send_message", Title: "Send a message", Annotations: writes(false, false), Description: `Tell another agent something it needs to know: that you are changing a file it depends on, what you found, a question.
Address one of to_session (a session id), to_agent (a named agent of the project) or to_actor (whoever runs it: any live session of theirs); to answer a message, give reply_to (its id) and leave the address out: the answer goes back to its sender, in its thread.
Give session_id (your own session) so the answer can come back to you. The message reaches a live recipient at once: over the event stream, and for Claude Code at its next tool call as added context.
Returns the message.`}, sendMessage)

	add(s, ts, &sdk.Tool{Name: "read_inbox", Title: "Read your inbox", Annotations: writes(false, false), Description: `Read the messages waiting for your session: those sent to it and, for a top-level session, to its agent or its actor.
Each message is given once, to one session, recorded in your transcript and marked read; a second call gives only what arrived since.
Returns {messages}, oldest first. Act on each, answer with send_message (reply_to), and ack it when done.`}, readInbox)

	add(s, ts, &sdk.Tool{Name: "ack", Title: "Acknowledge a message", Annotations: writes(false, true), Description: `Acknowledge a message addressed to you once you have acted on it (or taken it in hand), so its sender knows: it shows as acknowledged in the inbox, and message.acked goes out on the event stream.
Acknowledging again changes nothing. Returns the message.`}, ack)
}

type sendInput struct {
	Project   string `json:"project,omitempty" jsonschema:"the project; leave out for the default one (logbook mcp --project) or your token's"`
	SessionID string `json:"session_id,omitempty" jsonschema:"your own session, so that the answer can come back to it"`
	ToSession string `json:"to_session,omitempty" jsonschema:"the session the message is for"`
	ToAgent   string `json:"to_agent,omitempty" jsonschema:"the named agent the message is for (its live session gets it)"`
	ToActor   string `json:"to_actor,omitempty" jsonschema:"the actor the message is for (one of their live sessions gets it)"`
	ReplyTo   string `json:"reply_to,omitempty" jsonschema:"the id of the message this answers; without an address the answer goes to its sender"`
	Text      string `json:"text" jsonschema:"what to say"`
}

func sendMessage(ctx context.Context, l ledger.Ledger, in sendInput) (logbook.Message, error) {
	return l.SendMessage(ctx, ledger.SendParams{Project: in.Project, FromSession: in.SessionID, ToSession: in.ToSession,
		ToAgent: in.ToAgent, ToActor: in.ToActor, ReplyTo: in.ReplyTo, Text: in.Text})
}

type inboxInput struct {
	SessionID string `json:"session_id" jsonschema:"the id of your session, as start_session returned it"`
}

func readInbox(ctx context.Context, l ledger.Ledger, in inboxInput) (ledger.MessagesAnswer, error) {
	msgs, err := l.ReadInbox(ctx, in.SessionID)
	return ledger.MessagesAnswer{Messages: msgs}, err
}

type ackInput struct {
	MessageID string `json:"message_id" jsonschema:"the id of the message, as read_inbox or your context gave it"`
}

func ack(ctx context.Context, l ledger.Ledger, in ackInput) (logbook.Message, error) {
	return l.MarkMessage(ctx, in.MessageID, logbook.MarkAcked)
}
