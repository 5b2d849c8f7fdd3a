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

func (h *handler) getPrices(w http.ResponseWriter, r *http.Request, c service.Caller) {
	prices, err := h.svc.Prices(r.Context(), c, r.PathValue("project"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, prices)
}

func (h *handler) setPrices(w http.ResponseWriter, r *http.Request, c service.Caller) {
	// Every field is known: a misspelt rate would price calls at 0.
	const shape = `{"models": {"MODEL": {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}}} in US dollars per million tokens ({"models": {}} drops the project's own prices)`
	var body ledger.PricesBody
	if err := decodeKnown(w, r, &body, shape); err != nil {
		h.writeError(w, r, err)
		return
	}
	if body.Models == nil {
		h.writeError(w, r, logbook.Invalid("models", "models is missing; send %s", shape))
		return
	}
	prices, err := h.svc.SetPrices(r.Context(), c, r.PathValue("project"), body.Models)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, prices)
}
