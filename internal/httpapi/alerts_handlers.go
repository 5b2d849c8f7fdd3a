package httpapi

import (
	"net/http"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/service"
)

func (h *handler) listAlertRules(w http.ResponseWriter, r *http.Request, c service.Caller) {
	rules, err := h.svc.AlertRules(r.Context(), c, r.PathValue("project"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ledger.AlertRulesAnswer{Rules: rules})
}

func (h *handler) addAlertRule(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var body ledger.AlertRuleBody
	if err := decodeKnown(w, r, &body, `{"kind": K, "webhook_url": U, "format": "json" or "slack", "threshold": N, "budget_usd": 25.50, "scope": "session", "agent_day" or "project_day", "name": S}`); err != nil {
		h.writeError(w, r, err)
		return
	}
	rule, err := h.svc.AddAlertRule(r.Context(), c, r.PathValue("project"), body)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, rule)
}

func (h *handler) deleteAlertRule(w http.ResponseWriter, r *http.Request, c service.Caller) {
	rule, err := h.svc.DeleteAlertRule(r.Context(), c, r.PathValue("project"), r.PathValue("id"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rule)
}

func (h *handler) testAlertRule(w http.ResponseWriter, r *http.Request, c service.Caller) {
	attempt, err := h.svc.TestAlertRule(r.Context(), c, r.PathValue("project"), r.PathValue("id"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, attempt)
}

func (h *handler) listAlerts(w http.ResponseWriter, r *http.Request, c service.Caller) {
	q := r.URL.Query()
	limit, err := ledger.QueryInt(q, "limit", 0)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	alerts, err := h.svc.Alerts(r.Context(), c, ledger.AlertsParams{Project: r.PathValue("project"), RuleID: q.Get("rule"), Limit: int(limit)})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ledger.AlertsAnswer{Alerts: alerts})
}
