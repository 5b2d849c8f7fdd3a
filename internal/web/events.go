package web

import (
	"net/http"
	"strconv"

	"github.com/logbookhq/logbook/internal/sse"
)

// events streams the viewer's project's events as Server-Sent Events, for
// the pages' script. It starts with what happens from now on; a browser
// that reconnects sends Last-Event-ID and gets what it missed.
func (h *handler) events(w http.ResponseWriter, r *http.Request, v viewer) {
	release, err := h.svc.OpenStream(v.token) // the streams the API counts too
	if err != nil {
		h.renderError(w, r, v, err)
		return
	}
	defer release()
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
	err = sse.Follow(r.Context(), h.svc, v.Caller, v.Project, after, sse.Open(w))
	if err != nil && r.Context().Err() == nil {
		h.log.DebugContext(r.Context(), "event stream ended", "err", err)
	}
}
