package httpapi

import (
	"net/http"

	"github.com/logbookhq/logbook/internal/service"
)

func (h *handler) ensureAgentSession(w http.ResponseWriter, r *http.Request, c service.Caller) {
	sess, created, err := h.svc.EnsureAgentSession(r.Context(), c, r.URL.Query().Get("project"), r.PathValue("agent"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, sess)
}

type rotateRequest struct {
	Project string `json:"project"`
	Reason  string `json:"reason"`
}

func (h *handler) rotateAgent(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req rotateRequest
	if r.ContentLength != 0 {
		if err := decode(w, r, &req); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	if req.Project == "" {
		req.Project = r.URL.Query().Get("project")
	}
	rot, err := h.svc.RotateAgent(r.Context(), c, req.Project, r.PathValue("agent"), req.Reason)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, rot)
}
