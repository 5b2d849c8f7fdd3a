package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

func (h *handler) getRetention(w http.ResponseWriter, r *http.Request, c service.Caller) {
	ret, err := h.svc.Retention(r.Context(), c, r.PathValue("project"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ledger.RetentionAnswer{Project: r.PathValue("project"), Retention: ret})
}

func (h *handler) setRetention(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var raw json.RawMessage
	if err := decode(w, r, &raw); err != nil {
		h.writeError(w, r, err)
		return
	}
	// Every field is known: a misspelt one would leave a retention as it
	// was while its sender believes it set.
	var ret logbook.Retention
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ret); err != nil {
		h.writeError(w, r, logbook.Invalid("", "%v; send {\"sessions_days\": N, \"payloads_days\": M} (0 keeps for ever)", jsonError(err)))
		return
	}
	ret, err := h.svc.SetRetention(r.Context(), c, r.PathValue("project"), ret)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ledger.RetentionAnswer{Project: r.PathValue("project"), Retention: ret})
}
