package web

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// searchParams are the query parameters of the search page, in form order:
// the API's (GET /v1/search), so a search can be shared as a link.
var searchParams = []string{"q", "kind", "outcome", "since", "actor", "harness", "tool"}

// searchPage is the data of the search view.
type searchPage struct {
	Query, Kind, Outcome, Since, Actor, Harness, Tool string
	// Searched is set when the page shows a search, not only the form.
	Searched bool
	Results  []searchResult
	Ranked   int
	More     bool // more matched than were ranked
	Indexing bool
	// Problem says what is wrong with the search, when something is.
	Problem string
	// NextURL is the next page of results.
	NextURL     string
	MoreFilters bool

	Kinds, Outcomes, SinceChoices []choice
}

// searchResult is a match, with the link to it in its session.
type searchResult struct {
	Hit  logbook.SearchHit
	Link string
}

// search shows the form and what a search found: each match with the
// text around it, the words found marked, linking to the entry in its
// session (or the session, for its title, goal or result).
func (h *handler) search(w http.ResponseWriter, r *http.Request, v viewer) {
	if v.Project == "" {
		h.renderChooseProject(w, r, v, "search")
		return
	}
	q := r.URL.Query()
	data := searchPage{
		Query: q.Get("q"), Kind: q.Get("kind"), Outcome: q.Get("outcome"), Since: q.Get("since"),
		Actor: q.Get("actor"), Harness: q.Get("harness"), Tool: q.Get("tool"),
		Kinds:    append(choices("", "anything", "prompt", "message", "tool_call", "tool_result", "note", "summary"), choice{"session", "titles, goals, results"}),
		Outcomes: choices("", "any outcome", "success", "partial", "failed"), SinceChoices: sinceChoices,
	}
	data.MoreFilters = data.Actor != "" || data.Harness != "" || data.Tool != ""
	if !slices.ContainsFunc(data.SinceChoices, func(c choice) bool { return c.Value == data.Since }) {
		data.SinceChoices = append(slices.Clone(data.SinceChoices), choice{data.Since, data.Since})
	}
	status := http.StatusOK
	if strings.TrimSpace(data.Query) != "" {
		data.Searched = true
		keep := url.Values{}
		for _, name := range searchParams {
			if value := strings.TrimSpace(q.Get(name)); value != "" {
				keep.Set(name, value)
			}
		}
		params, err := ledger.ParseSearchParams(with(keep, "cursor", q.Get("cursor")), time.Now())
		if err == nil {
			params.Project = v.Project
			var page ledger.SearchPage
			if page, err = h.svc.Search(r.Context(), v.Caller, params); err == nil {
				data.Ranked, data.More, data.Indexing = page.Ranked, page.More, page.Indexing
				for _, hit := range page.Results {
					data.Results = append(data.Results, searchResult{Hit: hit, Link: entryLink(v, hit)})
				}
				if page.NextCursor != "" {
					data.NextURL = v.projectURL("/search", with(keep, "cursor", page.NextCursor))
				}
			}
		}
		if err != nil {
			var invalid *logbook.ValidationError
			if !errors.As(err, &invalid) {
				h.renderError(w, r, v, err)
				return
			}
			data.Problem, status = invalid.Error(), http.StatusBadRequest
		}
	}
	h.render(w, r, status, "search_list", v.page("Search", "search", data))
}

// entryLink is where a hit's entry stands in its session's page: the
// transcript's first page, or the one starting a little before the entry,
// at the entry's anchor. A hit in the session's own fields is the session.
func entryLink(v viewer, hit logbook.SearchHit) string {
	q := url.Values{}
	if hit.Seq > logbook.MaxEntryPage {
		q.Set("after_seq", strconv.FormatInt(hit.Seq-10, 10))
	}
	link := v.projectURL("/sessions/"+url.PathEscape(hit.SessionID), q)
	if hit.Seq > 0 {
		link += "#e" + strconv.FormatInt(hit.Seq, 10)
	}
	return link
}
