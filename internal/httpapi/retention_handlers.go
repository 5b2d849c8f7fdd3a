package httpapi

import (
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
	var ret logbook.Retention
	if err := decodeKnown(w, r, &ret, `{"sessions_days": N, "payloads_days": M} (0 keeps for ever)`); err != nil {
		h.writeError(w, r, err)
		return
	}
	ret, err := h.svc.SetRetention(r.Context(), c, r.PathValue("project"), ret)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ledger.RetentionAnswer{Project: r.PathValue("project"), Retention: ret})
}
