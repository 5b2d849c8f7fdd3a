package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/testdb"
)

// startSession starts a session for the token's actor and returns its id.
func (c *client) startSession(t *testing.T, token string, body map[string]string) string {
	t.Helper()
	body["project"] = "demo"
	return c.do("POST", "/v1/sessions", token, body).expect(t, 201).body["id"].(string)
}

// inbox reads a session's inbox and returns the messages it was given.
func (c *client) inbox(t *testing.T, token, session string) []logbook.Message {
	t.Helper()
	var answer struct {
		Messages []logbook.Message `json:"messages"`
	}
	// Taking messages races other sessions' inboxes and the senders: on
	// PostgreSQL the database may give way to one of them, answered 503
	// "retry shortly (nothing of this one was stored)", which a client
	// retries.
	r := c.do("POST", "/v1/sessions/"+session+"/inbox", token, nil)
	for try := 0; r.status == http.StatusServiceUnavailable && try < 20; try++ {
		time.Sleep(10 * time.Millisecond)
		r = c.do("POST", "/v1/sessions/"+session+"/inbox", token, nil)
	}
	r.expect(t, 200)
	if err := json.Unmarshal([]byte(r.raw), &answer); err != nil || answer.Messages == nil {
		t.Fatalf("inbox answer %s: %v", r.raw, err)
	}
	return answer.Messages
}

// messageNotes returns the notes a session's transcript holds for
// delivered messages.
func (c *client) messageNotes(t *testing.T, token, session string) []logbook.Entry {
	t.Helper()
	var view struct {
		Entries []logbook.Entry `json:"entries"`
	}
	r := c.do("GET", "/v1/sessions/"+session, token, nil).expect(t, 200)
	if err := json.Unmarshal([]byte(r.raw), &view); err != nil {
		t.Fatal(err)
	}
	var notes []logbook.Entry
	for _, e := range view.Entries {
		if strings.HasPrefix(e.Key, "message:") {
			notes = append(notes, e)
		}
	}
	return notes
}

// TestMessages: a message to an actor is pushed over the event stream as
// it is sent, delivered once into one live session of the actor (recorded
// in its transcript, marked read), answered in its thread back to the
// sender's session, and acknowledged by its recipient only; bad requests
// get problems naming the field to fix.
func TestMessages(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		c := newServer(t, e)
		alice, bob, carol := c.token("demo", "alice"), c.token("demo", "bob"), c.token("other", "carol")
		fromA := c.startSession(t, alice, map[string]string{"harness": "h", "harness_session_id": "a"})
		b1 := c.startSession(t, bob, map[string]string{"harness": "h", "harness_session_id": "b1"})
		b2 := c.startSession(t, bob, map[string]string{"harness": "h", "harness_session_id": "b2"})

		followed := make(chan []sseEvent)
		connected := make(chan struct{})
		// The stream replays the three starts, then the message as it is sent.
		go func() { followed <- follow(t, c.url+"/v1/events?project=demo", bob, 0, 4, connected) }()
		<-connected
		sent := c.do("POST", "/v1/messages", alice, map[string]string{"to_actor": "bob", "from_session": fromA,
			"text": "I am changing internal/store; hold off on migrations"}).expect(t, 201)
		id := sent.body["id"].(string)
		if sent.body["thread"] != id || sent.body["to_actor"] != "bob" || sent.body["from"].(map[string]any)["actor"] != "alice" {
			t.Errorf("sent message %s", sent.raw)
		}
		events := <-followed
		var data map[string]string
		if len(events) != 4 || events[3].Type != "message.sent" || json.Unmarshal(events[3].Data, &data) != nil ||
			data["message_id"] != id || !strings.Contains(data["text"], "hold off on migrations") {
			t.Fatalf("the live follower got %v", events)
		}

		for _, bad := range []struct {
			name, token string
			body        map[string]string
			status      int
			field       string
		}{
			{"no recipient", alice, map[string]string{"text": "hi"}, 400, "to_session"},
			{"two recipients", alice, map[string]string{"to_actor": "bob", "to_agent": "x", "text": "hi"}, 400, "to_session"},
			{"no text", alice, map[string]string{"to_actor": "bob"}, 400, "text"},
			{"from another's session", alice, map[string]string{"to_actor": "bob", "from_session": b1, "text": "hi"}, 403, ""},
			{"to no session", alice, map[string]string{"to_session": "nope", "text": "hi"}, 404, ""},
			{"reply to no message", alice, map[string]string{"reply_to": "nope", "text": "hi"}, 404, ""},
			{"the admin", adminToken, map[string]string{"project": "demo", "to_actor": "bob", "text": "hi"}, 403, ""},
			{"another project's token", carol, map[string]string{"project": "demo", "to_actor": "bob", "text": "hi"}, 403, ""},
		} {
			t.Run(bad.name, func(t *testing.T) {
				c.do("POST", "/v1/messages", bad.token, bad.body).problem(t, bad.status, bad.field)
			})
		}

		c.do("POST", "/v1/sessions/"+b1+"/inbox", alice, nil).problem(t, 403, "")
		got := c.inbox(t, bob, b1)
		if len(got) != 1 || got[0].ID != id || got[0].DeliveredTo != b1 || got[0].DeliveredAt == nil || got[0].ReadAt == nil {
			t.Fatalf("b1's inbox gave %+v", got)
		}
		if again := c.inbox(t, bob, b1); len(again) != 0 {
			t.Errorf("asked again, b1 got %d messages", len(again))
		}
		if other := c.inbox(t, bob, b2); len(other) != 0 {
			t.Errorf("bob's other session got the message too: %+v", other)
		}
		notes := c.messageNotes(t, bob, b1)
		if len(notes) != 1 || !strings.Contains(notes[0].Text, "hold off on migrations") || notes[0].Author == nil || notes[0].Author.Actor != "alice" {
			t.Errorf("b1's transcript holds %+v", notes)
		}
		if n := len(c.messageNotes(t, bob, b2)); n != 0 {
			t.Errorf("b2's transcript holds %d message notes", n)
		}

		// The reply goes back to the session it came from, in the thread.
		reply := c.do("POST", "/v1/messages", bob, map[string]string{"reply_to": id, "from_session": b1, "text": "ok, after you"}).expect(t, 201)
		if reply.body["to_session"] != fromA || reply.body["thread"] != id {
			t.Errorf("reply %s", reply.raw)
		}
		if back := c.inbox(t, alice, fromA); len(back) != 1 || back[0].Text != "ok, after you" {
			t.Errorf("alice's session got %+v", back)
		}
		thread := c.do("GET", "/v1/messages?thread="+id, alice, nil).expect(t, 200)
		if n := len(thread.body["messages"].([]any)); n != 2 {
			t.Errorf("the thread holds %d messages: %s", n, thread.raw)
		}
		mine := c.do("GET", "/v1/messages", bob, nil).expect(t, 200)
		if msgs := mine.body["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["id"] != id {
			t.Errorf("bob's messages: %s", mine.raw)
		}
		c.do("GET", "/v1/messages?limit=1000", bob, nil).problem(t, 400, "limit")

		c.do("POST", "/v1/messages/"+id+"/ack", alice, nil).problem(t, 403, "")
		c.do("POST", "/v1/messages/nope/ack", bob, nil).problem(t, 404, "")
		acked := c.do("POST", "/v1/messages/"+id+"/ack", bob, nil).expect(t, 200)
		if acked.body["acked_at"] == nil || acked.body["read_at"] == nil {
			t.Errorf("acked: %s", acked.raw)
		}
		unread := c.do("GET", "/v1/messages?unread=true&session_id="+fromA, alice, nil).expect(t, 200)
		if n := len(unread.body["messages"].([]any)); n != 0 {
			t.Errorf("alice's session has %d unread messages after its inbox gave them: %s", n, unread.raw)
		}

		// A message to an agent goes to the agent's live session.
		agentSession := c.do("POST", "/v1/agents/reviewer/session?project=demo", bob, nil).expect(t, 201).body["id"].(string)
		c.do("POST", "/v1/messages", alice, map[string]string{"to_agent": "reviewer", "text": "look at #12"}).expect(t, 201)
		if got := c.inbox(t, bob, agentSession); len(got) != 1 || got[0].ToAgent != "reviewer" {
			t.Errorf("the agent's session got %+v", got)
		}
	})
}

// TestMessagesTwoReplicas: with two servers on one PostgreSQL database,
// four sessions of one actor read their inboxes through both at once while
// messages arrive: every message is delivered once, into one session, and
// recorded once in its transcript.
func TestMessagesTwoReplicas(t *testing.T) {
	url := testdb.PostgresURL(t)
	a, b := startReplica(t, url), startReplica(t, url)
	alice, bob := a.token("demo", "alice"), a.token("demo", "bob")
	var sessions []string
	for i := range 4 {
		sessions = append(sessions, []replica{a, b}[i%2].startSession(t, bob, map[string]string{"harness": "h", "harness_session_id": fmt.Sprint(i)}))
	}
	const n = 40
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			send := func() response {
				return []replica{a, b}[i%2].do("POST", "/v1/messages", alice, map[string]string{"project": "demo", "to_actor": "bob", "text": fmt.Sprint("message ", i)})
			}
			r := send()
			for try := 0; r.status == http.StatusServiceUnavailable && try < 20; try++ { // as the inbox, retried
				time.Sleep(10 * time.Millisecond)
				r = send()
			}
			r.expect(t, 201)
		}
	})
	var mu sync.Mutex
	delivered := map[string][]string{} // message id → sessions it was delivered into
	for i, session := range sessions {
		for _, r := range []replica{a, b} { // each session asks through both replicas
			wg.Go(func() {
				for {
					got := r.inbox(t, bob, session)
					mu.Lock()
					for _, m := range got {
						if m.DeliveredTo != session {
							t.Errorf("session %d was given a message delivered to %s", i, m.DeliveredTo)
						}
						delivered[m.ID] = append(delivered[m.ID], session)
					}
					done := len(delivered) == n
					mu.Unlock()
					if done {
						return
					}
					if len(got) == 0 {
						// As an agent asks between tool calls: eight
						// pollers spinning would pass the token's rate
						// limit (200 a second a server) and be answered 429.
						time.Sleep(25 * time.Millisecond)
					}
				}
			})
		}
	}
	wg.Wait()
	notes := 0
	for _, session := range sessions {
		notes += len(a.messageNotes(t, bob, session))
	}
	for id, into := range delivered {
		if len(into) != 1 {
			t.Errorf("message %s was delivered %d times: %v", id, len(into), into)
		}
	}
	if len(delivered) != n || notes != n {
		t.Errorf("%d messages delivered and %d recorded in transcripts, want %d each", len(delivered), notes, n)
	}
}
