package httpapi

import (
	"net/http"
	"strconv"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/sse"
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
	_ = sse.Follow(r.Context(), h.svc, c, project, after, sse.Open(w)) // ends when the follower leaves
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
