package httpapi

import (
	"net/http"

	"github.com/logbookhq/logbook/internal/service"
)

type tokenRequest struct {
	Project string `json:"project"`
	Actor   string `json:"actor"`
}

type tokenResponse struct {
	Token   string `json:"token"`
	Project string `json:"project"`
	Actor   string `json:"actor"`
}

func (h *handler) createToken(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req tokenRequest
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	value, token, err := h.svc.MakeToken(r.Context(), c, req.Project, req.Actor)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, tokenResponse{Token: value, Project: token.Project, Actor: token.Actor})
}
