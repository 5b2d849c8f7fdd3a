package web

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// listFilters are the audit filters of the sessions list, as they stand in
// the URL, so that a filtered view can be shared as a link.
type listFilters struct {
	State, Outcome, Blocker, Harness, Agent, Actor string
	Since, Path, Issue, Query, Sort                string
	Subagents                                      bool
}

// filterParams are the query parameters the filters use, in form order.
var filterParams = []string{"state", "outcome", "blocker", "harness", "agent", "actor", "since", "path", "issue", "q", "sort", "subagents"}

// sinceChoices are the "since" periods the form offers; the URL takes any
// duration (90m, 36h, 7d) or an RFC 3339 time.
var sinceChoices = []choice{{"", "any time"}, {"1h", "last hour"}, {"24h", "last 24 hours"}, {"7d", "last 7 days"}, {"30d", "last 30 days"}}

// choice is an option of a select.
type choice struct{ Value, Label string }

// sessionListPage is the data of the sessions list view.
type sessionListPage struct {
	Filters  listFilters
	Sessions []logbook.Session
	// Problem says what is wrong with the filters, when something is.
	Problem string
	// NextURL is the next page; FirstURL the first, shown on later pages.
	NextURL, FirstURL string
	// RowsURL draws the table's rows alone, for the live refresh.
	RowsURL  string
	Filtered bool
	// MoreFilters opens the less used filters when one of them is set.
	MoreFilters bool
	Setup       setupHelp

	States, Outcomes, Blockers, Since, Sorts []choice
}

// listSessions shows a project's sessions, filtered and paged by cursor.
// ?part=rows draws the table's rows only.
func (h *handler) listSessions(w http.ResponseWriter, r *http.Request, v viewer) {
	if v.Project == "" {
		h.renderChooseProject(w, r, v, "sessions")
		return
	}
	q := r.URL.Query()
	data := sessionListPage{
		Filters: readFilters(q), States: choices("", "any state", "active", "idle", "ended"),
		Outcomes: choices("", "any outcome", "success", "partial", "failed"), Blockers: blockerChoices(),
		Since: sinceChoices, Sorts: []choice{{"", "last seen"}, {"started", "started"}, {"duration", "duration"}},
		Setup: h.newSetupHelp(r, v.Project),
	}
	f := data.Filters
	data.Filtered = f != (listFilters{})
	data.MoreFilters = f.Harness != "" || f.Agent != "" || f.Actor != "" || f.Path != "" || f.Issue != "" || f.Sort != "" || f.Subagents
	if !slices.ContainsFunc(data.Since, func(c choice) bool { return c.Value == data.Filters.Since }) {
		data.Since = append(slices.Clone(data.Since), choice{data.Filters.Since, data.Filters.Since})
	}
	keep := filterQuery(q)
	data.RowsURL = v.projectURL("/sessions", with(keep, "part", "rows", "cursor", q.Get("cursor")))
	if q.Get("cursor") != "" {
		data.FirstURL = v.projectURL("/sessions", keep)
	}
	params, err := listParams(q, time.Now())
	if err == nil {
		params.Project = v.Project
		var page service.SessionPage
		if page, err = h.svc.ListSessions(r.Context(), v.Caller, params); err == nil {
			data.Sessions = page.Sessions
			if page.NextCursor != "" {
				data.NextURL = v.projectURL("/sessions", with(keep, "cursor", page.NextCursor))
			}
		}
	}
	status := http.StatusOK
	if err != nil {
		// A filter that cannot be read is a 400 showing the form again
		// with what to fix; the refresh of the rows alone just fails.
		var invalid *logbook.ValidationError
		if !errors.As(err, &invalid) || q.Get("part") == "rows" {
			h.renderError(w, r, v, err)
			return
		}
		data.Problem, status = invalid.Error(), http.StatusBadRequest
	}
	if q.Get("part") == "rows" {
		h.renderPart(w, r, "session_list", "rows", v.page("", "", data))
		return
	}
	h.render(w, r, status, "session_list", v.page("Sessions", "sessions", data))
}

// readFilters reads the filters as given, to fill the form again.
func readFilters(q url.Values) listFilters {
	return listFilters{
		State: q.Get("state"), Outcome: q.Get("outcome"), Blocker: q.Get("blocker"), Harness: q.Get("harness"),
		Agent: q.Get("agent"), Actor: q.Get("actor"), Since: q.Get("since"), Path: q.Get("path"),
		Issue: q.Get("issue"), Query: q.Get("q"), Sort: q.Get("sort"), Subagents: q.Get("subagents") == "on",
	}
}

// filterQuery keeps the filter parameters that are set.
func filterQuery(q url.Values) url.Values {
	keep := url.Values{}
	for _, name := range filterParams {
		if v := strings.TrimSpace(q.Get(name)); v != "" {
			keep.Set(name, v)
		}
	}
	return keep
}

// with returns a copy of q with the given key, value pairs set (an empty
// value is left out).
func with(q url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			out.Set(kv[i], kv[i+1])
		}
	}
	return out
}

// listParams turns the filters into the service's list parameters. A bad
// value is a *logbook.ValidationError naming the filter.
func listParams(q url.Values, now time.Time) (service.ListParams, error) {
	p := service.ListParams{Cursor: q.Get("cursor"), Sort: logbook.SessionSort(q.Get("sort"))}
	f := &p.Filter
	f.Harness, f.Agent, f.Actor = strings.TrimSpace(q.Get("harness")), strings.TrimSpace(q.Get("agent")), strings.TrimSpace(q.Get("actor"))
	f.Issue = strings.TrimPrefix(strings.TrimSpace(q.Get("issue")), "#")
	f.Query = strings.TrimSpace(q.Get("q"))
	f.Subagents = q.Get("subagents") == "on"
	if path := strings.TrimSpace(q.Get("path")); path != "" {
		f.Path = logbook.NormalizeSubject(path)
	}
	if v := q.Get("state"); v != "" {
		if f.State = logbook.State(v); !f.State.Valid() {
			return p, logbook.Invalid("state", "%q is not a state; choose active, idle or ended", v)
		}
	}
	if v := q.Get("outcome"); v != "" {
		if f.Outcome = logbook.Outcome(v); !f.Outcome.Valid() {
			return p, logbook.Invalid("outcome", "%q is not an outcome; choose success, partial or failed", v)
		}
	}
	if v := q.Get("blocker"); v != "" {
		if f.Blocker = logbook.Blocker(v); !f.Blocker.Valid() {
			return p, logbook.Invalid("blocker", "%q is not a blocker", v)
		}
	}
	if v := strings.TrimSpace(q.Get("since")); v != "" {
		since, ok := logbook.ParseTime(v, now)
		if !ok {
			return p, logbook.Invalid("since", "%q is not a time; %s", v, logbook.TimeHint)
		}
		f.Since = since
	}
	return p, nil
}

// choices makes select options whose labels are their values, after a
// first option (value, label).
func choices(firstValue, firstLabel string, values ...string) []choice {
	out := []choice{{firstValue, firstLabel}}
	for _, v := range values {
		out = append(out, choice{v, v})
	}
	return out
}

func blockerChoices() []choice {
	out := []choice{{"", "any blocker"}}
	for _, b := range logbook.Blockers {
		out = append(out, choice{string(b), strings.ReplaceAll(string(b), "_", " ")})
	}
	return out
}
