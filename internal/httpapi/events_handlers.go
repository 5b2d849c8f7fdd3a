package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// SSE timings.
const (
	keepAliveEvery = 15 * time.Second
	// writeDeadline drops a follower that does not take a write within it:
	// a slow reader is cut off instead of growing memory.
	writeDeadline = 10 * time.Second
	// pollEvery reads the outbox even without a wake, in case one was missed.
	pollEvery = 2 * time.Second
)

// events streams a project's events as Server-Sent Events. Each event
// carries its id; a client that reconnects with Last-Event-ID (or ?after=ID)
// gets everything after it, from the durable outbox, without loss or
// repeat. Memory per follower is one page of events.
func (h *handler) events(w http.ResponseWriter, r *http.Request, c service.Caller) {
	project := r.URL.Query().Get("project")
	// Checks access before answering 200: a bad project is a problem document.
	latest, err := h.svc.LatestEventID(r.Context(), c, project)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	after, err := lastEventID(r, latest)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	write := func(format string, args ...any) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeDeadline))
		if _, err := fmt.Fprintf(w, format, args...); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write(": logbook events for %s after %d\n\n", project, after) {
		return
	}
	keepAlive := time.NewTicker(keepAliveEvery)
	defer keepAlive.Stop()
	poll := time.NewTicker(pollEvery)
	defer poll.Stop()
	for {
		changed := h.svc.EventsChanged() // before reading, so no wake is missed
		events, err := h.svc.Events(r.Context(), c, project, after, 500)
		if err != nil {
			return
		}
		for _, ev := range events {
			data, _ := json.Marshal(ev)
			if !write("id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Type, data) {
				return
			}
			after = ev.ID
		}
		if len(events) == 500 {
			continue // more are waiting
		}
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		case <-poll.C:
		case <-keepAlive.C:
			if !write(": keep-alive\n\n") {
				return
			}
		}
	}
}

// lastEventID reads where a follower resumes: Last-Event-ID, else ?after
// (an id, or "latest" for only what happens from now on), else from the
// oldest event kept.
func lastEventID(r *http.Request, latest int64) (int64, error) {
	raw := r.Header.Get("Last-Event-ID")
	field := "Last-Event-ID"
	if raw == "" {
		raw, field = r.URL.Query().Get("after"), "after"
	}
	switch raw {
	case "":
		return 0, nil
	case "latest":
		return latest, nil
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 0 {
		return 0, logbook.Invalid(field, "%q is not an event id", raw)
	}
	return id, nil
}
