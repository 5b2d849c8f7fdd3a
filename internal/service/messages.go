package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// SendMessage stores a message for a session, an agent or an actor of the
// project and announces it (message.sent). Every actor of the project may
// send one; the admin may not, as it writes into no actor's session. A
// session it is sent from must be the caller's own (ErrForbidden); a
// session it is sent to must be the project's (ErrNotFound). A reply joins
// the thread of the message it answers and, addressed to nobody, goes to
// that message's sender.
func (s *Service) SendMessage(ctx context.Context, c Caller, p ledger.SendParams) (logbook.Message, error) {
	if c.Admin {
		return logbook.Message{}, fmt.Errorf("the admin token sends no messages: no agent could answer it; send it with a token of the project: %w", logbook.ErrForbidden)
	}
	project, err := c.projectFor(p.Project)
	if err != nil {
		return logbook.Message{}, err
	}
	m := logbook.Message{Project: project, From: logbook.Author{Actor: c.Actor, TokenID: c.TokenID},
		Text: logbook.Clip(p.Text, logbook.MaxEntryText)}
	if m.Text == "" {
		return logbook.Message{}, logbook.Invalid("text", "a message needs text")
	}
	for _, f := range []struct {
		field string
		in    string
		out   *string
	}{{"to_session", p.ToSession, &m.ToSession}, {"to_agent", p.ToAgent, &m.ToAgent}, {"to_actor", p.ToActor, &m.ToActor},
		{"from_session", p.FromSession, &m.FromSession}, {"reply_to", p.ReplyTo, &m.ReplyTo}} {
		if *f.out, err = logbook.Name(f.field, f.in, logbook.MaxID); err != nil {
			return logbook.Message{}, err
		}
	}
	if m.FromSession != "" {
		from, err := s.store.SessionGet(ctx, store.SessionGetParams{ID: m.FromSession})
		if err != nil || from.Project != project {
			return logbook.Message{}, fmt.Errorf("from_session: no session %q in project %s: %w", m.FromSession, project, errOr(ignoreNotFound(err), logbook.ErrNotFound))
		}
		if from.Actor != c.Actor {
			return logbook.Message{}, fmt.Errorf("from_session %s belongs to actor %q; send from a session of your own: %w", m.FromSession, from.Actor, logbook.ErrForbidden)
		}
	}
	if m.ReplyTo != "" {
		original, err := s.store.MessageGet(ctx, m.ReplyTo)
		if err != nil || original.Project != project {
			return logbook.Message{}, fmt.Errorf("reply_to: no message %q in project %s: %w", m.ReplyTo, project, errOr(ignoreNotFound(err), logbook.ErrNotFound))
		}
		m.Thread = original.Thread
		if m.ToSession == "" && m.ToAgent == "" && m.ToActor == "" { // back to its sender
			m.ToSession = original.FromSession
			if m.ToSession == "" {
				m.ToActor = original.From.Actor
			}
		}
	}
	switch addressed := countSet(m.ToSession, m.ToAgent, m.ToActor); {
	case addressed == 0:
		return logbook.Message{}, logbook.Invalid("to_session", "say whom the message is for: to_session, to_agent or to_actor (or reply_to a message)")
	case addressed > 1:
		return logbook.Message{}, logbook.Invalid("to_session", "address the message to one of to_session, to_agent and to_actor")
	}
	if m.ToSession != "" {
		to, err := s.store.SessionGet(ctx, store.SessionGetParams{ID: m.ToSession})
		if err != nil || to.Project != project {
			return logbook.Message{}, fmt.Errorf("to_session: no session %q in project %s: %w", m.ToSession, project, errOr(ignoreNotFound(err), logbook.ErrNotFound))
		}
	}
	err = s.inTx(ctx, func(tx *work) error {
		now := s.now()
		m.ID, m.CreatedAt = logbook.NewID(now), now
		if m.Thread == "" {
			m.Thread = m.ID
		}
		if err := tx.MessageInsert(ctx, &m); err != nil {
			return err
		}
		// The text goes in the event as stored, redacted.
		stored, err := tx.MessageGet(ctx, m.ID)
		if err != nil {
			return err
		}
		m = stored
		emitMessage(tx, logbook.EventMessageSent, m, now, "text", m.Text)
		return nil
	})
	if err != nil {
		return logbook.Message{}, err
	}
	return m, nil
}

func countSet(ss ...string) int {
	n := 0
	for _, s := range ss {
		if s != "" {
			n++
		}
	}
	return n
}

// emitMessage queues a message event; its session is the one it is for
// (or was delivered into), so a follower of one session hears of it.
func emitMessage(tx *work, typ string, m logbook.Message, at time.Time, more ...string) {
	data := map[string]any{"message_id": m.ID, "thread": m.Thread, "from": m.From.Actor, "from_session": m.FromSession,
		"to_session": m.ToSession, "to_agent": m.ToAgent, "to_actor": m.ToActor, "reply_to": m.ReplyTo}
	for i := 0; i+1 < len(more); i += 2 {
		data[more[i]] = more[i+1]
	}
	session := m.ToSession
	if m.DeliveredTo != "" {
		session = m.DeliveredTo
	}
	tx.emit(m.Project, typ, session, at, data)
}

// Messages lists the project's messages newest first: for a session (or
// from it), an agent, an actor or a thread; with none of them, those for
// the caller's actor (for the admin, all of the project's).
func (s *Service) Messages(ctx context.Context, c Caller, p ledger.MessagesParams) ([]logbook.Message, error) {
	project, err := c.projectFor(p.Project)
	if err != nil {
		return nil, err
	}
	q := store.MessageListParams{Project: project, Agent: p.Agent, Actor: p.Actor, Thread: p.Thread, Unread: p.Unread, Limit: p.Limit}
	if p.SessionID != "" {
		if _, err := s.sessionIn(ctx, c, project, p.SessionID); err != nil {
			return nil, err
		}
		q.Session, q.FromSession = p.SessionID, p.SessionID
	}
	if q.Session == "" && q.Agent == "" && q.Actor == "" && q.Thread == "" && !c.Admin {
		q.Actor = c.Actor
	}
	return s.store.MessageList(ctx, q)
}

// ReadInbox delivers to a live session of the caller's the messages
// waiting for it: addressed to it and, for a top-level session, to its
// agent or its actor. In one transaction, each is marked delivered into
// it (once, even with several replicas asking for several sessions at
// once) and read, and recorded in its transcript as a note from the
// sender, keyed by the message so it is recorded once. Asking costs one
// read when nothing waits, as on most hook calls. A session ended on
// purpose is given nothing.
func (s *Service) ReadInbox(ctx context.Context, c Caller, sessionID string) ([]logbook.Message, error) {
	sess, err := s.store.SessionGet(ctx, store.SessionGetParams{ID: sessionID})
	if err != nil || !c.sees(sess.Project) {
		return nil, sessionNotFound(sessionID, errOr(err, logbook.ErrNotFound))
	}
	if sess.Actor != c.Actor {
		return nil, fmt.Errorf("session %s belongs to actor %q; only its owner reads its inbox: %w", sessionID, sess.Actor, logbook.ErrForbidden)
	}
	if sess.EndedOnPurpose() {
		return []logbook.Message{}, nil
	}
	mine := store.MessageDeliverParams{Project: sess.Project, SessionID: sess.ID}
	if sess.ParentID == "" {
		mine.Agent, mine.Actor = sess.Agent, sess.Actor
	}
	waiting, err := s.store.MessageList(ctx, store.MessageListParams{Project: mine.Project, Session: mine.SessionID,
		Agent: mine.Agent, Actor: mine.Actor, Undelivered: true, Limit: 1})
	if err != nil || len(waiting) == 0 {
		return []logbook.Message{}, err
	}
	delivered := []logbook.Message{}
	_, err = s.writeHeartbeat(ctx, c, sessionID, func(tx *work, sess *logbook.Session, now time.Time) error {
		mine.Now = now
		msgs, err := tx.MessageDeliver(ctx, mine)
		if err != nil || len(msgs) == 0 {
			return err
		}
		entries := make([]logbook.Entry, 0, len(msgs))
		for i, m := range msgs {
			if msgs[i], err = tx.MessageMark(ctx, m.ID, logbook.MarkRead, now); err != nil {
				return err
			}
			entries = append(entries, messageEntry(msgs[i]))
			emitMessage(tx, logbook.EventMessageDelivered, msgs[i], now)
		}
		if _, err := appendLocked(ctx, tx, sess, entries, now); err != nil {
			return err
		}
		delivered = msgs
		return nil
	})
	if errors.Is(err, logbook.ErrEnded) {
		return []logbook.Message{}, nil // ended meanwhile: the messages wait for another session
	}
	if err != nil {
		return nil, err
	}
	return delivered, nil
}

// messageEntry is how a delivered message shows in the recipient's
// transcript: a note from its sender, with the message's id, thread and
// sender session in the payload.
func messageEntry(m logbook.Message) logbook.Entry {
	payload, _ := json.Marshal(map[string]string{"message_id": m.ID, "thread": m.Thread, "reply_to": m.ReplyTo,
		"from_session": m.FromSession, "to": m.Recipient()})
	author := m.From
	return logbook.Entry{Kind: logbook.KindNote, Role: logbook.RoleSystem, Text: m.Heading() + "\n" + m.Text,
		Payload: payload, Key: "message:" + m.ID, Author: &author}
}

// MarkMessage marks a message read, or acknowledged (read too), for its
// recipient: the actor it is addressed to, the owner of the session it is
// addressed to or was delivered into, or, for a message to an agent not
// delivered yet, any actor of the project. Anyone else gets ErrForbidden.
// Marking again keeps the first time.
func (s *Service) MarkMessage(ctx context.Context, c Caller, id string, mark logbook.MessageMark) (logbook.Message, error) {
	if mark != logbook.MarkRead && mark != logbook.MarkAcked {
		return logbook.Message{}, logbook.Invalid("mark", "mark a message read or acked")
	}
	var m logbook.Message
	err := s.inTx(ctx, func(tx *work) error {
		var err error
		m, err = tx.MessageGet(ctx, id)
		if err != nil || !c.sees(m.Project) {
			return fmt.Errorf("no message %q in your projects: %w", id, errOr(ignoreNotFound(err), logbook.ErrNotFound))
		}
		if c.Admin {
			return fmt.Errorf("the admin token is no message's recipient; its recipient marks it: %w", logbook.ErrForbidden)
		}
		owner, err := recipientActor(ctx, tx, m)
		if err != nil {
			return err
		}
		if owner != "" && owner != c.Actor {
			return fmt.Errorf("message %s is for %s (actor %q); only its recipient marks it: %w", id, m.Recipient(), owner, logbook.ErrForbidden)
		}
		was := m
		now := s.now()
		if m, err = tx.MessageMark(ctx, id, mark, now); err != nil {
			return err
		}
		if mark == logbook.MarkAcked && was.AckedAt == nil {
			emitMessage(tx, logbook.EventMessageAcked, m, now)
		} else if was.ReadAt == nil {
			emitMessage(tx, logbook.EventMessageRead, m, now)
		}
		return nil
	})
	return m, err
}

// recipientActor is the actor a message is for: the one it names, or the
// owner of the session it was delivered into or is addressed to; "" for a
// message to an agent that no session took yet.
func recipientActor(ctx context.Context, tx *work, m logbook.Message) (string, error) {
	session := m.DeliveredTo
	if session == "" {
		session = m.ToSession
	}
	if session == "" {
		return m.ToActor, nil
	}
	sess, err := tx.SessionGet(ctx, store.SessionGetParams{ID: session})
	if errors.Is(err, logbook.ErrNotFound) {
		return m.ToActor, nil // the session was deleted since
	}
	return sess.Actor, err
}
