package httpapi

import (
	"net/http"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// claimsAnswer is the answer of GET /v1/claims.
type claimsAnswer struct {
	Claims []logbook.Claim `json:"claims"`
}

type claimRequest struct {
	SessionID  string `json:"session_id"`
	Subject    string `json:"subject"`
	TTLMinutes int    `json:"ttl_minutes"`
}

func (h *handler) claim(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req claimRequest
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	if req.SessionID == "" {
		h.writeError(w, r, logbook.Invalid("session_id", "name the session that claims"))
		return
	}
	claim, created, err := h.svc.Claim(r.Context(), c, service.ClaimParams{SessionID: req.SessionID, Subject: req.Subject, TTLMinutes: req.TTLMinutes})
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
	q := r.URL.Query()
	claims, err := h.svc.Claims(r.Context(), c, service.ClaimsParams{Project: q.Get("project"), Subject: q.Get("subject"), SessionID: q.Get("session_id")})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, claimsAnswer{claims})
}
