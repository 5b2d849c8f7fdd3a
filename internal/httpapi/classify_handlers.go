package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/service"
)

// policyAnswer is the answer of GET and PUT /v1/projects/{project}/policy:
// the policy as the project set it, and in effect, every class named.
type policyAnswer struct {
	Project   string          `json:"project"`
	Policy    classify.Policy `json:"policy"`
	Effective classify.Policy `json:"effective"`
}

func newPolicyAnswer(project string, p classify.Policy) policyAnswer {
	return policyAnswer{Project: project, Policy: p, Effective: p.Effective()}
}

func (h *handler) classify(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req ledger.ClassifyBody
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	verdict, err := h.svc.Classify(r.Context(), c, req.Project, req.Command)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, verdict)
}

func (h *handler) getPolicy(w http.ResponseWriter, r *http.Request, c service.Caller) {
	policy, err := h.svc.Policy(r.Context(), c, r.PathValue("project"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newPolicyAnswer(r.PathValue("project"), policy))
}

func (h *handler) setPolicy(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var raw json.RawMessage
	if err := decode(w, r, &raw); err != nil {
		h.writeError(w, r, err)
		return
	}
	// Accept the policy itself or {"policy": {...}}.
	var wrapped struct {
		Policy json.RawMessage `json:"policy"`
	}
	if json.Unmarshal(raw, &wrapped) == nil && len(wrapped.Policy) > 0 {
		raw = wrapped.Policy
	}
	policy, err := h.svc.SetPolicy(r.Context(), c, r.PathValue("project"), raw)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newPolicyAnswer(r.PathValue("project"), policy))
}
