package web

import (
	"net/http"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// alertListPage is the data of the alerts view.
type alertListPage struct {
	Rules  []logbook.AlertRule
	Alerts []logbook.Alert
	// RuleNames names each rule by its id, for the alerts' rows.
	RuleNames map[string]string
}

// listAlerts shows the project's alert rules (webhooks masked) and its
// latest alerts, each with how its delivery went: every attempt's status
// code or error, and when the next one is due.
func (h *handler) listAlerts(w http.ResponseWriter, r *http.Request, v viewer) {
	if v.Project == "" {
		h.renderChooseProject(w, r, v, "alerts")
		return
	}
	rules, err := h.svc.AlertRules(r.Context(), v.Caller, v.Project)
	if err != nil {
		h.renderError(w, r, v, err)
		return
	}
	alerts, err := h.svc.Alerts(r.Context(), v.Caller, ledger.AlertsParams{Project: v.Project, Limit: 100})
	if err != nil {
		h.renderError(w, r, v, err)
		return
	}
	data := alertListPage{Rules: rules, Alerts: alerts, RuleNames: map[string]string{}}
	for _, rule := range rules {
		data.RuleNames[rule.ID] = rule.Name
	}
	h.render(w, r, http.StatusOK, "alert_list", v.page("Alerts", "alerts", data))
}
