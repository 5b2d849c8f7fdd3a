package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// Event stream timings, as the JSON API's stream has them.
const (
	keepAliveEvery = 15 * time.Second
	// writeDeadline drops a follower that does not take a write within it.
	writeDeadline = 10 * time.Second
	// pollEvery reads the outbox even without a wake, in case one was missed.
	pollEvery = 2 * time.Second
	// eventPage is how many events one read of the outbox takes.
	eventPage = 500
)

// events streams the viewer's project's events as Server-Sent Events, for
// the pages' script. It starts with what happens from now on; a browser
// that reconnects sends Last-Event-ID and gets what it missed.
func (h *handler) events(w http.ResponseWriter, r *http.Request, v viewer) {
	latest, err := h.svc.LatestEventID(r.Context(), v.Caller, v.Project)
	if err != nil {
		h.renderError(w, r, v, err)
		return
	}
	after := latest
	if raw := r.Header.Get("Last-Event-ID"); raw != "" {
		if id, err := strconv.ParseInt(raw, 10, 64); err == nil && id >= 0 && id <= latest {
			after = id
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(format string, args ...any) error {
		_ = rc.SetWriteDeadline(time.Now().Add(writeDeadline))
		if _, err := fmt.Fprintf(w, format, args...); err != nil {
			return err
		}
		return rc.Flush()
	}
	err = Follow(r.Context(), h.svc, v.Caller, v.Project, after, send)
	if err != nil && r.Context().Err() == nil {
		h.log.DebugContext(r.Context(), "event stream ended", "err", err)
	}
}

// Follow writes a project's events after the id after to send, in the
// Server-Sent Events format (id, event type, the event as JSON), until ctx
// ends or send fails. It waits on svc.EventsChanged between reads, reads
// the outbox every pollEvery in case a wake was missed, and sends a
// comment every keepAliveEvery so proxies keep the connection open.
func Follow(ctx context.Context, svc *service.Service, c service.Caller, project string, after int64,
	send func(format string, args ...any) error) error {
	if err := send(": logbook events for %s after %d\n\n", project, after); err != nil {
		return err
	}
	keepAlive := time.NewTicker(keepAliveEvery)
	defer keepAlive.Stop()
	poll := time.NewTicker(pollEvery)
	defer poll.Stop()
	for {
		changed := svc.EventsChanged() // before reading, so no wake is missed
		events, err := svc.Events(ctx, c, project, after, eventPage)
		if err != nil {
			return err
		}
		for _, ev := range events {
			if err := send("id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Type, eventJSON(ev)); err != nil {
				return err
			}
			after = ev.ID
		}
		if len(events) == eventPage {
			continue // more are waiting
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-poll.C:
		case <-keepAlive.C:
			if err := send(": keep-alive\n\n"); err != nil {
				return err
			}
		}
	}
}

// eventJSON is an event on one line, as an SSE data field must be.
func eventJSON(ev logbook.Event) []byte {
	data, _ := json.Marshal(ev) // an event is plain values and raw JSON
	return data
}
