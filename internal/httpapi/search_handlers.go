package httpapi

import (
	"net/http"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/service"
)

func (h *handler) search(w http.ResponseWriter, r *http.Request, c service.Caller) {
	params, err := ledger.ParseSearchParams(r.URL.Query(), time.Now())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	page, err := h.svc.Search(r.Context(), c, params)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}
