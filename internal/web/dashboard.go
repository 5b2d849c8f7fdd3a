package web

import (
	"context"
	"net/http"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// What the dashboard shows.
const (
	chartDays   = 14 // days of outcomes
	filesDays   = 7  // days of the busiest files
	activeShown = 12 // active sessions listed
)

// dashboardPage is the data of the dashboard view.
type dashboardPage struct {
	Active     []logbook.Session
	ActiveMore bool // more active sessions than are listed
	Claims     []logbook.Claim
	Outcomes   stackedChart
	Blockers   barChart
	Files      []fileBar
	// Totals over the chart's days, by outcome ("" for not ended): the
	// tiles count the same sessions as the chart, those started since
	// Since (a date, for the sessions list's links): the sessions people
	// and agents started, or with Subagents their subagents too.
	Totals    map[string]int64
	Since     string
	Days      int
	Subagents bool
	// Cost is what the sessions started since Since cost, subagents
	// included (their calls are spent all the same), in micro-dollars;
	// Costs is it per day.
	Cost  int64
	Costs stackedChart
	// Empty is true when the project has no session at all.
	Empty bool
	Setup setupHelp
}

// fileBar is one of the busiest files, with its share of the busiest.
type fileBar struct {
	logbook.Touch
	Percent  int
	Sessions string // the sessions list of those that touched it
}

// showDashboard shows a project at a glance: what runs and what is
// claimed now, outcomes and blockers of the last days, the busiest files.
// ?part=now draws only the "now" panels, for the live refresh.
func (h *handler) showDashboard(w http.ResponseWriter, r *http.Request, v viewer) {
	if v.Project == "" {
		h.renderChooseProject(w, r, v, "dashboard")
		return
	}
	ctx := r.Context()
	data := dashboardPage{Days: chartDays, Setup: h.newSetupHelp(r, v.Project), Subagents: r.URL.Query().Get("subagents") == "on"}
	active, err := h.svc.ListSessions(ctx, v.Caller, service.ListParams{Project: v.Project,
		Filter: logbook.SessionFilter{State: logbook.StateActive}, Limit: activeShown})
	if err != nil {
		h.renderError(w, r, v, err)
		return
	}
	data.Active, data.ActiveMore = active.Sessions, active.NextCursor != ""
	if data.Claims, err = h.svc.Claims(ctx, v.Caller, service.ClaimsParams{Project: v.Project}); err != nil {
		h.renderError(w, r, v, err)
		return
	}
	if r.URL.Query().Get("part") == "now" {
		h.renderPart(w, r, "dashboard", "now", v.page("", "", data))
		return
	}
	if err := h.fillCharts(ctx, v, &data); err != nil {
		h.renderError(w, r, v, err)
		return
	}
	h.render(w, r, http.StatusOK, "dashboard", v.page(v.Project, "dashboard", data))
}

// fillCharts reads the statistics behind the charts and the busiest files.
func (h *handler) fillCharts(ctx context.Context, v viewer, data *dashboardPage) error {
	now := time.Now()
	days, err := h.dailyOutcomes(ctx, v, chartDays, now, !data.Subagents)
	if err != nil {
		return err
	}
	data.Outcomes = outcomeChart(days)
	data.Since = days[0].Day.Format(time.DateOnly)
	data.Totals = map[string]int64{}
	for _, d := range days {
		for o, n := range d.Counts {
			data.Totals[string(o)] += n
		}
	}
	costs, err := h.dailyCosts(ctx, v, days)
	if err != nil {
		return err
	}
	data.Costs = costChart(costs)
	data.Cost = data.Costs.Total
	blockers, err := h.svc.Stats(ctx, v.Caller, service.StatsParams{Project: v.Project, Since: days[0].Day, By: logbook.ByBlocker,
		TopLevel: !data.Subagents})
	if err != nil {
		return err
	}
	data.Blockers = blockerChart(blockers, func(b string) string {
		return v.projectURL("/sessions", with(nil, "blocker", b, "since", days[0].Day.Format(time.DateOnly), "subagents", onOrEmpty(data.Subagents)))
	})
	// The last filesDays UTC days, today's included, as the charts count days.
	files, err := h.svc.BusiestFiles(ctx, v.Caller, v.Project, days[len(days)-filesDays].Day, 10)
	if err != nil {
		return err
	}
	for _, f := range files {
		bar := fileBar{Touch: f, Percent: 100, Sessions: v.projectURL("/sessions", with(nil, "path", f.Value, "subagents", "on"))}
		if files[0].Count > 0 {
			bar.Percent = max(2, int(100*f.Count/files[0].Count))
		}
		data.Files = append(data.Files, bar)
	}
	if len(data.Active) == 0 && data.Outcomes.Total == 0 {
		all, err := h.svc.ListSessions(ctx, v.Caller, service.ListParams{Project: v.Project, Limit: 1,
			Filter: logbook.SessionFilter{Subagents: true}})
		if err != nil {
			return err
		}
		data.Empty = len(all.Sessions) == 0
	}
	return nil
}

// onOrEmpty is "on" for true, for a query's checkbox, and "" (left out)
// for false.
func onOrEmpty(b bool) string {
	if b {
		return "on"
	}
	return ""
}

// dailyCosts is what the sessions started on each of days cost (in
// Counts[""]), subagents included, from the statistics' rollups.
func (h *handler) dailyCosts(ctx context.Context, v viewer, days []dayOutcomes) ([]dayOutcomes, error) {
	rows, err := h.svc.Stats(ctx, v.Caller, service.StatsParams{Project: v.Project, Since: days[0].Day, By: logbook.ByDay})
	if err != nil {
		return nil, err
	}
	costs := make([]dayOutcomes, len(days))
	index := map[string]int{}
	for i, d := range days {
		costs[i] = dayOutcomes{Day: d.Day, Counts: map[logbook.Outcome]int64{}}
		index[d.Day.Format(time.DateOnly)] = i
	}
	for _, r := range rows {
		if i, ok := index[r.Key]; ok {
			costs[i].Counts[""] = r.CostMicros
		}
	}
	return costs, nil
}

// dailyOutcomes counts the sessions started on each of the last n UTC
// days by outcome, in one grouped query: those with no parent, when
// topLevel, else subagents too.
func (h *handler) dailyOutcomes(ctx context.Context, v viewer, n int, now time.Time, topLevel bool) ([]dayOutcomes, error) {
	today := now.UTC().Truncate(24 * time.Hour)
	first := today.AddDate(0, 0, 1-n)
	rows, err := h.svc.Stats(ctx, v.Caller, service.StatsParams{Project: v.Project, Since: first, By: logbook.ByDay, Then: logbook.ByOutcome,
		TopLevel: topLevel})
	if err != nil {
		return nil, err
	}
	days := make([]dayOutcomes, n)
	index := map[string]int{}
	for i := range days {
		day := first.AddDate(0, 0, i)
		days[i] = dayOutcomes{Day: day, Counts: map[logbook.Outcome]int64{}}
		index[day.Format(time.DateOnly)] = i
	}
	for _, r := range rows {
		if i, ok := index[r.Key]; ok { // Then is "" for sessions not ended
			days[i].Counts[logbook.Outcome(r.Then)] = r.Sessions
		}
	}
	return days, nil
}

// chooseProjectPage is the data of the project chooser, for the admin
// token, which names no project.
type chooseProjectPage struct {
	Path string // where the form goes: the page that asked
}

// renderChooseProject asks the admin which project to look at.
func (h *handler) renderChooseProject(w http.ResponseWriter, r *http.Request, v viewer, nav string) {
	h.render(w, r, http.StatusOK, "choose_project", v.page("Choose a project", nav, chooseProjectPage{Path: r.URL.Path}))
}
