package httpapi

import (
	"net/http"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// claimsAnswer is the answer of GET /v1/claims.
func (h *handler) claim(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req ledger.ClaimParams
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	if req.SessionID == "" {
		h.writeError(w, r, logbook.Invalid("session_id", "name the session that claims"))
		return
	}
	claim, created, err := h.svc.Claim(r.Context(), c, req)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, claim)
}

func (h *handler) release(w http.ResponseWriter, r *http.Request, c service.Caller) {
	claim, err := h.svc.Release(r.Context(), c, r.PathValue("id"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, claim)
}

func (h *handler) listClaims(w http.ResponseWriter, r *http.Request, c service.Caller) {
	claims, err := h.svc.Claims(r.Context(), c, ledger.ParseClaimsParams(r.URL.Query()))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ledger.ClaimsAnswer{Claims: claims})
}

func (h *handler) gate(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req ledger.GateParams
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	ans, err := h.svc.Gate(r.Context(), c, req)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ans)
}
