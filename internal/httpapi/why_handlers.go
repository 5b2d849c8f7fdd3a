package httpapi

import (
	"net/http"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/service"
)

// sessionsByCommit is GET /v1/commits/{sha}/sessions?project=P: the
// sessions behind a commit, newest first → {sessions}.
func (h *handler) sessionsByCommit(w http.ResponseWriter, r *http.Request, c service.Caller) {
	sessions, err := h.svc.SessionsByCommit(r.Context(), c, r.URL.Query().Get("project"), r.PathValue("sha"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ledger.SessionsAnswer{Sessions: sessions})
}
