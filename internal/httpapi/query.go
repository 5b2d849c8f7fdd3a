package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// maxFilters bounds how many query parameters a list request may carry.
const maxFilters = 30

// listParams reads the session list's filters from the query string. A bad
// value is a *logbook.ValidationError naming the parameter.
func listParams(r *http.Request) (service.ListParams, error) {
	q := r.URL.Query()
	if len(q) > maxFilters {
		return service.ListParams{}, logbook.Invalid("", "a list takes at most %d query parameters", maxFilters)
	}
	p := service.ListParams{Project: q.Get("project"), Cursor: q.Get("cursor"), Sort: logbook.SessionSort(q.Get("sort"))}
	f := &p.Filter
	f.Harness, f.Actor, f.Agent = q.Get("harness"), q.Get("actor"), q.Get("agent")
	f.Issue, f.Pull, f.Subject = strings.TrimPrefix(q.Get("issue"), "#"), strings.TrimPrefix(q.Get("pull"), "#"), q.Get("subject")
	f.ParentID, f.Query = q.Get("parent"), q.Get("q")
	if path := q.Get("path"); path != "" {
		f.Path = logbook.NormalizeSubject(path)
	}
	if v := q.Get("state"); v != "" {
		f.State = logbook.State(v)
		if !f.State.Valid() {
			return p, logbook.Invalid("state", "%q is not a state; use active, idle or ended", v)
		}
	}
	if v := q.Get("outcome"); v != "" {
		if f.Outcome = logbook.Outcome(v); !f.Outcome.Valid() {
			return p, logbook.Invalid("outcome", "%q is not an outcome; use success, partial or failed", v)
		}
	}
	if v := q.Get("blocker"); v != "" {
		if f.Blocker = logbook.Blocker(v); !f.Blocker.Valid() {
			return p, logbook.Invalid("blocker", "%q is not a blocker; use one of %v", v, logbook.Blockers)
		}
	}
	var err error
	if f.Subagents, err = queryBool(r, "subagents"); err != nil {
		return p, err
	}
	now := time.Now()
	if f.Since, err = queryTime(r, "since", now); err != nil {
		return p, err
	}
	if f.Until, err = queryTime(r, "until", now); err != nil {
		return p, err
	}
	if f.MinDuration, err = queryDuration(r, "min_duration"); err != nil {
		return p, err
	}
	if f.MinToolCalls, err = queryInt(r, "min_tool_calls", 0); err != nil {
		return p, err
	}
	limit, err := queryInt(r, "limit", 0)
	p.Limit = int(limit)
	return p, err
}

// queryDuration reads an optional duration parameter.
func queryDuration(r *http.Request, name string) (time.Duration, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	d, ok := logbook.ParseDuration(v)
	if !ok {
		return 0, logbook.Invalid(name, "%q is not a duration; write it like 90m, 36h or 7d", v)
	}
	return d, nil
}

// queryTime reads an optional time parameter (see logbook.ParseTime).
func queryTime(r *http.Request, name string, now time.Time) (time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, ok := logbook.ParseTime(v, now)
	if !ok {
		return time.Time{}, logbook.Invalid(name, "%q is not a time; %s", v, logbook.TimeHint)
	}
	return t, nil
}
