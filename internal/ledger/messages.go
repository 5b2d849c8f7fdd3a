package ledger

import (
	"net/url"
	"strconv"

	"github.com/logbookhq/logbook/internal/logbook"
)

// SendParams address a message (POST /v1/messages): to one session, a
// named agent or an actor of the project, exactly one of them; a reply
// (ReplyTo) without one goes back to the message's sender (its session,
// else its actor). FromSession names the sender's own session, when it
// writes from one.
type SendParams struct {
	Project     string `json:"project,omitempty"`
	ToSession   string `json:"to_session,omitempty"`
	ToAgent     string `json:"to_agent,omitempty"`
	ToActor     string `json:"to_actor,omitempty"`
	FromSession string `json:"from_session,omitempty"`
	ReplyTo     string `json:"reply_to,omitempty"`
	Text        string `json:"text"`
}

// MessagesParams select messages of a project (GET /v1/messages): for a
// session (addressed to it, its agent or its actor, or delivered into it)
// or from it, for an agent, for an actor, one thread, the unread ones.
// With no session, agent, actor or thread, the caller's own: those for
// its actor.
type MessagesParams struct {
	Project   string
	SessionID string
	Agent     string
	Actor     string
	Thread    string
	Unread    bool
	Limit     int // default and maximum logbook.MaxMessagePage
}

// MessagesAnswer is the answer of GET /v1/messages and of a session's
// inbox (POST /v1/sessions/{id}/inbox).
type MessagesAnswer struct {
	Messages []logbook.Message `json:"messages"`
}

// MessagesQueryNames are the query parameters of GET /v1/messages.
var MessagesQueryNames = []string{"project", "session_id", "agent", "actor", "thread", "unread", "limit"}

// Values writes p as the query of GET /v1/messages.
func (p MessagesParams) Values() url.Values {
	q := url.Values{}
	for name, v := range map[string]string{"project": p.Project, "session_id": p.SessionID, "agent": p.Agent, "actor": p.Actor, "thread": p.Thread} {
		if v != "" {
			q.Set(name, v)
		}
	}
	if p.Unread {
		q.Set("unread", "true")
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	return q
}

// ParseMessagesParams reads the query of GET /v1/messages.
func ParseMessagesParams(q url.Values) (MessagesParams, error) {
	unread, err := QueryBool(q, "unread")
	if err != nil {
		return MessagesParams{}, err
	}
	limit, err := QueryInt(q, "limit", 0)
	if err != nil {
		return MessagesParams{}, err
	}
	if limit > logbook.MaxMessagePage {
		return MessagesParams{}, logbook.Invalid("limit", "ask for %d messages at most", logbook.MaxMessagePage)
	}
	return MessagesParams{Project: q.Get("project"), SessionID: q.Get("session_id"), Agent: q.Get("agent"), Actor: q.Get("actor"),
		Thread: q.Get("thread"), Unread: unread, Limit: int(limit)}, nil
}
