package ledger

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// Query strings of the API's GET routes. Each params type says how it is
// written into a query (Values) and read back (Parse…), side by side, so
// the client and the handlers cannot drift apart.

// MaxListParameters bounds how many query parameters a list request may
// carry.
const MaxListParameters = 30

// ListQueryNames are the query parameters of GET /v1/sessions.
var ListQueryNames = []string{"project", "limit", "cursor", "sort", "state", "outcome", "blocker", "harness", "actor", "agent",
	"issue", "pull", "subject", "parent", "path", "q", "since", "until", "min_duration", "min_tool_calls", "subagents"}

// Values writes p as the query of GET /v1/sessions.
func (p ListParams) Values() url.Values {
	q := url.Values{}
	set := func(name, v string) {
		if v != "" {
			q.Set(name, v)
		}
	}
	f := p.Filter
	set("project", p.Project)
	set("cursor", p.Cursor)
	set("sort", string(p.Sort))
	set("state", string(f.State))
	set("outcome", string(f.Outcome))
	set("blocker", string(f.Blocker))
	set("harness", f.Harness)
	set("actor", f.Actor)
	set("agent", f.Agent)
	set("issue", f.Issue)
	set("pull", f.Pull)
	set("subject", f.Subject)
	set("parent", f.ParentID)
	set("path", f.Path)
	set("q", f.Query)
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.UTC().Format(time.RFC3339Nano))
	}
	if f.MinDuration > 0 {
		q.Set("min_duration", f.MinDuration.String())
	}
	if f.MinToolCalls > 0 {
		q.Set("min_tool_calls", strconv.FormatInt(f.MinToolCalls, 10))
	}
	if f.Subagents {
		q.Set("subagents", "true")
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	return q
}

// ParseListParams reads the query of GET /v1/sessions. A bad value is a
// *logbook.ValidationError naming the parameter; now resolves relative
// times ("7d").
func ParseListParams(q url.Values, now time.Time) (ListParams, error) {
	if len(q) > MaxListParameters {
		return ListParams{}, logbook.Invalid("", "a list takes at most %d query parameters", MaxListParameters)
	}
	p := ListParams{Project: q.Get("project"), Cursor: q.Get("cursor"), Sort: logbook.SessionSort(q.Get("sort"))}
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
	if f.Subagents, err = QueryBool(q, "subagents"); err != nil {
		return p, err
	}
	if f.Since, err = QueryTime(q, "since", now); err != nil {
		return p, err
	}
	if f.Until, err = QueryTime(q, "until", now); err != nil {
		return p, err
	}
	if f.MinDuration, err = QueryDuration(q, "min_duration"); err != nil {
		return p, err
	}
	if f.MinToolCalls, err = QueryInt(q, "min_tool_calls", 0); err != nil {
		return p, err
	}
	limit, err := QueryInt(q, "limit", 0)
	p.Limit = int(limit)
	return p, err
}

// SearchQueryNames are the query parameters of GET /v1/search.
var SearchQueryNames = []string{"project", "q", "actor", "harness", "outcome", "tool", "kind", "since", "limit", "cursor"}

// Values writes p as the query of GET /v1/search.
func (p SearchParams) Values() url.Values {
	q := url.Values{}
	f := p.Filter
	for name, v := range map[string]string{"project": p.Project, "q": p.Query, "actor": f.Actor, "harness": f.Harness,
		"outcome": string(f.Outcome), "tool": f.Tool, "kind": string(f.Kind), "cursor": p.Cursor} {
		if v != "" {
			q.Set(name, v)
		}
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	return q
}

// ParseSearchParams reads the query of GET /v1/search; now resolves
// relative times ("7d"). The search itself and the filter are checked by
// the ledger.
func ParseSearchParams(q url.Values, now time.Time) (SearchParams, error) {
	if len(q) > MaxListParameters {
		return SearchParams{}, logbook.Invalid("", "a search takes at most %d query parameters", MaxListParameters)
	}
	p := SearchParams{Project: q.Get("project"), Query: q.Get("q"), Cursor: q.Get("cursor"), Filter: logbook.SearchFilter{
		Actor: q.Get("actor"), Harness: q.Get("harness"), Outcome: logbook.Outcome(q.Get("outcome")),
		Tool: q.Get("tool"), Kind: logbook.Kind(q.Get("kind")),
	}}
	var err error
	if p.Filter.Since, err = QueryTime(q, "since", now); err != nil {
		return p, err
	}
	limit, err := QueryInt(q, "limit", 0)
	p.Limit = int(limit)
	return p, err
}

// Values writes p as the query of GET /v1/tool_calls (the session, when
// set, goes in the path of GET /v1/sessions/{id}/tool_calls instead).
func (p ToolCallParams) Values() url.Values {
	q := url.Values{}
	for name, v := range map[string]string{"project": p.Project, "tool": p.Tool, "cursor": p.Cursor} {
		if v != "" {
			q.Set(name, v)
		}
	}
	if !p.Since.IsZero() {
		q.Set("since", p.Since.UTC().Format(time.RFC3339Nano))
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	return q
}

// ParseToolCallParams reads the query of the tool-call routes; session is
// the session of the path, if any, else the query's.
func ParseToolCallParams(q url.Values, session string, now time.Time) (ToolCallParams, error) {
	since, err := QueryTime(q, "since", now)
	if err != nil {
		return ToolCallParams{}, err
	}
	limit, err := QueryInt(q, "limit", 0)
	if err != nil {
		return ToolCallParams{}, err
	}
	if session == "" {
		session = q.Get("session")
	}
	return ToolCallParams{Project: q.Get("project"), SessionID: session, Tool: q.Get("tool"), Since: since,
		Limit: int(limit), Cursor: q.Get("cursor")}, nil
}

// Values writes p as the query of GET /v1/stats.
func (p StatsParams) Values() url.Values {
	q := url.Values{}
	for name, v := range map[string]string{"project": p.Project, "by": string(p.By), "then": string(p.Then)} {
		if v != "" {
			q.Set(name, v)
		}
	}
	if !p.Since.IsZero() {
		q.Set("since", p.Since.UTC().Format(time.RFC3339Nano))
	}
	if p.Zone != nil && p.Zone != time.UTC {
		q.Set("tz", p.Zone.String())
	}
	if p.TopLevel {
		q.Set("top_level", "true")
	}
	return q
}

// ParseStatsParams reads the query of GET /v1/stats.
func ParseStatsParams(q url.Values, now time.Time) (StatsParams, error) {
	since, err := QueryTime(q, "since", now)
	if err != nil {
		return StatsParams{}, err
	}
	zone, err := logbook.ParseZone("tz", q.Get("tz"))
	if err != nil {
		return StatsParams{}, err
	}
	topLevel, err := QueryBool(q, "top_level")
	if err != nil {
		return StatsParams{}, err
	}
	return StatsParams{Project: q.Get("project"), Since: since, By: logbook.StatsBy(q.Get("by")), Then: logbook.StatsBy(q.Get("then")), Zone: zone,
		TopLevel: topLevel}, nil
}

// Values writes p as the query of GET /v1/claims.
func (p ClaimsParams) Values() url.Values {
	q := url.Values{}
	for name, v := range map[string]string{"project": p.Project, "subject": p.Subject, "session_id": p.SessionID} {
		if v != "" {
			q.Set(name, v)
		}
	}
	return q
}

// ParseClaimsParams reads the query of GET /v1/claims.
func ParseClaimsParams(q url.Values) ClaimsParams {
	return ClaimsParams{Project: q.Get("project"), Subject: q.Get("subject"), SessionID: q.Get("session_id")}
}

// QueryInt reads an optional whole-number parameter of 0 or more.
func QueryInt(q url.Values, name string, fallback int64) (int64, error) {
	raw := q.Get(name)
	if raw == "" {
		return fallback, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 {
		return 0, logbook.Invalid(name, "%q is not a whole number of 0 or more", raw)
	}
	return n, nil
}

// QueryBool reads an optional true/false parameter.
func QueryBool(q url.Values, name string) (bool, error) {
	raw := q.Get(name)
	if raw == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		return false, logbook.Invalid(name, "%q is not true or false", raw)
	}
	return b, nil
}

// QueryDuration reads an optional duration parameter (90m, 36h, 7d).
func QueryDuration(q url.Values, name string) (time.Duration, error) {
	v := q.Get(name)
	if v == "" {
		return 0, nil
	}
	d, ok := logbook.ParseDuration(v)
	if !ok {
		return 0, logbook.Invalid(name, "%q is not a duration; write it like 90m, 36h or 7d", v)
	}
	return d, nil
}

// QueryTime reads an optional time parameter (see logbook.ParseTime).
func QueryTime(q url.Values, name string, now time.Time) (time.Time, error) {
	v := q.Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, ok := logbook.ParseTime(v, now)
	if !ok {
		return time.Time{}, logbook.Invalid(name, "%q is not a time; %s", v, logbook.TimeHint)
	}
	return t, nil
}
