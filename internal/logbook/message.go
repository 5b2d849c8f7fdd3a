package logbook

import (
	"fmt"
	"strings"
	"time"
)

// Message is a note from one agent (or person) to another, kept in the
// project's inbox until read: addressed to one session, to a named agent
// (whichever of its sessions is live), or to an actor (any live session
// of theirs). It is delivered once into a live session of the recipient:
// recorded in that session's transcript as a note and handed to the agent
// (for Claude Code, at its next hook call). Replies form a thread.
type Message struct {
	ID      string `json:"id"`
	Project string `json:"project"`
	// The recipient: exactly one of ToSession, ToAgent, ToActor.
	ToSession string `json:"to_session,omitempty"`
	ToAgent   string `json:"to_agent,omitempty"`
	ToActor   string `json:"to_actor,omitempty"`
	// From is who sent it; FromSession the session it was sent from, when
	// the sender said.
	From        Author `json:"from"`
	FromSession string `json:"from_session,omitempty"`
	Text        string `json:"text" redact:"text"`
	// ReplyTo is the message this one answers; Thread the first message of
	// the thread (its own id for a message that answers none).
	ReplyTo   string    `json:"reply_to,omitempty"`
	Thread    string    `json:"thread"`
	CreatedAt time.Time `json:"created_at"`
	// DeliveredAt is when the message was given to a live session of the
	// recipient, DeliveredTo that session; nil until then. A message is
	// delivered once.
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
	DeliveredTo string     `json:"delivered_to,omitempty"`
	// ReadAt is when the recipient read it (in its inbox, or given to its
	// session); AckedAt when it acknowledged it (done, or taken in hand).
	ReadAt  *time.Time `json:"read_at,omitempty"`
	AckedAt *time.Time `json:"acked_at,omitempty"`
}

// Recipient names whom the message is for, as people read it:
// "session 01H…", "agent reviewer", "actor bob".
func (m Message) Recipient() string {
	switch {
	case m.ToSession != "":
		return "session " + m.ToSession
	case m.ToAgent != "":
		return "agent " + m.ToAgent
	default:
		return "actor " + m.ToActor
	}
}

// Message event types: sent (with the text, so a follower of the
// project's events hears it without asking), delivered into a session,
// read and acknowledged by its recipient.
const (
	EventMessageSent      = "message.sent"
	EventMessageDelivered = "message.delivered"
	EventMessageRead      = "message.read"
	EventMessageAcked     = "message.acked"
)

// State says how far the message got: "waiting" for delivery,
// "delivered", "read" or "acked".
func (m Message) State() string {
	switch {
	case m.AckedAt != nil:
		return "acked"
	case m.ReadAt != nil:
		return "read"
	case m.DeliveredAt != nil:
		return "delivered"
	}
	return "waiting"
}

// MessageMark is a state a recipient gives a message.
type MessageMark string

// Message marks: read, or acknowledged (which reads it too).
const (
	MarkRead  MessageMark = "read"
	MarkAcked MessageMark = "acked"
)

// MaxMessagePage is how many messages one inbox read returns at most.
const MaxMessagePage = 200

// MessagesContext renders messages for an agent's context: who sent each, to
// whom, what it answers, its text, and how to reply and acknowledge.
func MessagesContext(msgs []Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "logbook: %d new %s for you from other agents of the project:\n", len(msgs), plural(len(msgs), "message", "messages"))
	for _, m := range msgs {
		b.WriteString("\n")
		b.WriteString(m.Heading())
		fmt.Fprintf(&b, ":\n%s\n", m.Text)
	}
	b.WriteString("\nReply with the logbook MCP tool send_message (reply_to: the message id) or `logbook send --reply-to ID`; " +
		"acknowledge with the ack tool or `logbook inbox ack ID` once you have acted on it.")
	return b.String()
}

// Heading says in one line which message it is: its id, sender, recipient
// and the message it answers.
func (m Message) Heading() string {
	s := fmt.Sprintf("[message %s from %s", m.ID, m.From.Actor)
	if m.FromSession != "" {
		s += " (session " + m.FromSession + ")"
	}
	s += " to " + m.Recipient()
	if m.ReplyTo != "" {
		s += ", in reply to " + m.ReplyTo
	}
	return s + "]"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
