package store

import (
	"context"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// MessageStore keeps the messages between agents (logbook.Message).
type MessageStore interface {
	// MessageInsert stores a new message (ErrConflict for a taken id).
	MessageInsert(ctx context.Context, m *logbook.Message) error
	// MessageGet reads a message by id (ErrNotFound).
	MessageGet(ctx context.Context, id string) (logbook.Message, error)
	// MessageList lists a project's messages, newest first (by created_at,
	// then id), at most Limit.
	MessageList(ctx context.Context, p MessageListParams) ([]logbook.Message, error)
	// MessageMark sets when a message was read, or acknowledged (which
	// reads it too, when it was not read before), leaving a time already
	// set as it was, and returns the message (ErrNotFound).
	MessageMark(ctx context.Context, id string, mark logbook.MessageMark, at time.Time) (logbook.Message, error)
	// MessageDeliver marks the project's undelivered messages for a
	// session as delivered into it at Now, oldest first, at most Limit,
	// and returns them, oldest first. A message is delivered once: of
	// several transactions delivering it at once (two sessions of one
	// actor, two replicas on one database), one gets it and the others
	// skip it (on PostgreSQL they wait for the first to commit or roll
	// back, then see whether it is still undelivered).
	MessageDeliver(ctx context.Context, p MessageDeliverParams) ([]logbook.Message, error)
	// MessagePrune deletes at most limit of a project's messages created
	// before the given time, whatever their state (retention: a message
	// that old was read, or will never be), and returns how many it
	// deleted.
	MessagePrune(ctx context.Context, project string, before time.Time, limit int) (int64, error)
}

// MessageListParams select messages of a project. A message is listed
// when it is for Session (addressed to it, or delivered into it), for
// Agent, for Actor, or sent from FromSession: any of those given. With
// none given, every message of the project is. Thread keeps one thread,
// Unread the messages not read yet, Undelivered those not delivered yet
// (an index holds only those: asking whether any waits is cheap).
type MessageListParams struct {
	Project     string
	Session     string
	Agent       string
	Actor       string
	FromSession string
	Thread      string
	Unread      bool
	Undelivered bool
	Limit       int
}

// MessageDeliverParams name the session messages are delivered into, and
// which undelivered messages are for it: those addressed to SessionID,
// and, when set, those addressed to Agent or to Actor.
type MessageDeliverParams struct {
	Project   string
	SessionID string
	Agent     string
	Actor     string
	Now       time.Time
	Limit     int
}
