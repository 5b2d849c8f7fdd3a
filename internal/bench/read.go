package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/web"
)

// ReadResult is one read path's timings.
type ReadResult struct {
	Name    string  `json:"name"`
	Rows    int     `json:"rows"`
	Runs    int     `json:"runs"`
	P50     float64 `json:"p50_ms"`
	P95     float64 `json:"p95_ms"`
	Max     float64 `json:"max_ms"`
	Failure string  `json:"error,omitempty"`
}

// Read times the read paths people and agents use on a seeded database,
// through the service (no HTTP): the audit list with each filter, a
// session page of 500 entries, the tool-call views, searches and stats.
func Read(ctx context.Context, st store.Store, runs int) []ReadResult {
	svc := service.New(st, service.Options{})
	who := service.Caller{Actor: "bench", Project: SeedProject}
	page := func(f logbook.SessionFilter, sort logbook.SessionSort) func() (int, error) {
		return func() (int, error) {
			p, err := svc.ListSessions(ctx, who, service.ListParams{Filter: f, Sort: sort, Limit: 50})
			return len(p.Sessions), err
		}
	}
	// A session with 500 entries (Seed makes one in every 10,000).
	var big string
	if p, err := svc.ListSessions(ctx, who, service.ListParams{Filter: logbook.SessionFilter{MinToolCalls: 150, Subagents: true}, Limit: 1}); err == nil && len(p.Sessions) > 0 {
		big = p.Sessions[0].ID
	}
	week := time.Now().Add(-7 * 24 * time.Hour)
	paths := []readPath{
		{"list (no filter)", page(logbook.SessionFilter{}, "")},
		{"list state=ended", page(logbook.SessionFilter{State: logbook.StateEnded}, "")},
		{"list state=active", page(logbook.SessionFilter{State: logbook.StateActive}, "")},
		{"list outcome=failed", page(logbook.SessionFilter{Outcome: logbook.OutcomeFailed}, "")},
		{"list blocker=rate_limited", page(logbook.SessionFilter{Blocker: logbook.BlockerRateLimited}, "")},
		{"list harness=codex", page(logbook.SessionFilter{Harness: "codex"}, "")},
		{"list actor=carol", page(logbook.SessionFilter{Actor: "carol"}, "")},
		{"list agent=engineer-1", page(logbook.SessionFilter{Agent: "engineer-1"}, "")},
		{"list issue=1234", page(logbook.SessionFilter{Issue: "1234"}, "")},
		{"list path=src/api/", page(logbook.SessionFilter{Path: "src/api/"}, "")},
		{"list since=7d", page(logbook.SessionFilter{Since: week}, "")},
		{"list min_tool_calls=10", page(logbook.SessionFilter{MinToolCalls: 10}, "")},
		{"list q=postgres", page(logbook.SessionFilter{Query: "postgres"}, "")},
		{"list subagents=true", page(logbook.SessionFilter{Subagents: true}, "")},
		{"list sort=started", page(logbook.SessionFilter{}, logbook.SortStarted)},
		{"session page (500 entries)", func() (int, error) {
			if big == "" {
				return 0, fmt.Errorf("no session with 500 entries: seed at least 10,000 sessions")
			}
			v, err := svc.GetSession(ctx, who, big, service.GetParams{})
			return len(v.Entries), err
		}},
		{"tool calls of a session", func() (int, error) {
			p, err := svc.ToolCalls(ctx, who, service.ToolCallParams{SessionID: big, Limit: 500})
			return len(p.ToolCalls), err
		}},
		{"tool calls of the project, since 7d", func() (int, error) {
			p, err := svc.ToolCalls(ctx, who, service.ToolCallParams{Tool: "Bash", Since: week})
			return len(p.ToolCalls), err
		}},
	}
	// Searches of a page of 20: words as common and as rare as the seed
	// has them (seedWords), code, an error, CJK text, and with filters.
	search := func(q string, f logbook.SearchFilter) func() (int, error) {
		return func() (int, error) {
			p, err := svc.Search(ctx, who, service.SearchParams{Query: q, Filter: f})
			if err == nil && len(p.Results) == 0 {
				err = fmt.Errorf("search %q found nothing: seed the database with this version of logbook", q)
			}
			return len(p.Results), err
		}
	}
	for _, s := range []struct {
		name, q string
		f       logbook.SearchFilter
	}{
		{"search the (the commonest word)", "the", logbook.SearchFilter{}},
		{"search timeout (a word of rank 78)", "timeout", logbook.SearchFilter{}},
		{"search quokka (a rare word)", "quokka", logbook.SearchFilter{}},
		{"search connection refused", "connection refused", logbook.SearchFilter{}},
		{`search "connection refused" (a phrase)`, `"connection refused"`, logbook.SearchFilter{}},
		{"search parseConfig (an identifier's parts)", "parseConfig", logbook.SearchFilter{}},
		{"search internal/store (a path)", "internal/store", logbook.SearchFilter{}},
		{"search migrat* (a prefix)", "migrat*", logbook.SearchFilter{}},
		{"search 数据库 (Chinese)", "数据库", logbook.SearchFilter{}},
		{"search テスト (Japanese)", "テスト", logbook.SearchFilter{}},
		{"search connection refused, kind=tool_result", "connection refused", logbook.SearchFilter{Kind: logbook.KindToolResult}},
		{"search timeout, outcome=failed", "timeout", logbook.SearchFilter{Outcome: logbook.OutcomeFailed}},
		{"search timeout, since=7d", "timeout", logbook.SearchFilter{Since: week}},
		{"search postgres, kind=session (goals)", "postgres", logbook.SearchFilter{Kind: logbook.KindSession}},
	} {
		paths = append(paths, readPath{s.name, search(s.q, s.f)})
	}
	// Statistics by every grouping over 7 and 30 days (windows that start
	// between hours, as "7d" does), by two groupings, in zones whose days
	// do and do not start on a UTC hour; and the dashboard page.
	stats := func(by, then logbook.StatsBy, days int, zone string) func() (int, error) {
		loc, err := time.LoadLocation(zone)
		return func() (int, error) {
			if err != nil {
				return 0, err
			}
			rows, err := svc.Stats(ctx, who, service.StatsParams{By: by, Then: then, Zone: loc, Since: time.Now().Add(-time.Duration(days) * 24 * time.Hour)})
			return len(rows), err
		}
	}
	for _, days := range []int{7, 30} {
		for _, by := range logbook.StatsGroupings {
			paths = append(paths, readPath{fmt.Sprintf("stats by %s, %dd", by, days), stats(by, "", days, "UTC")})
		}
	}
	for _, p := range []struct {
		name     string
		by, then logbook.StatsBy
		days     int
		zone     string
	}{
		{"stats by day then outcome, 30d", logbook.ByDay, logbook.ByOutcome, 30, "UTC"},
		{"stats by harness then outcome, 7d", logbook.ByHarness, logbook.ByOutcome, 7, "UTC"},
		{"stats by harness then outcome, 30d", logbook.ByHarness, logbook.ByOutcome, 30, "UTC"},
		{"stats by day, 30d, tz=Europe/Berlin", logbook.ByDay, "", 30, "Europe/Berlin"},
		{"stats by day, 30d, tz=Asia/Kolkata (+05:30)", logbook.ByDay, "", 30, "Asia/Kolkata"},
	} {
		paths = append(paths, readPath{p.name, stats(p.by, p.then, p.days, p.zone)})
	}
	paths = append(paths, readPath{"dashboard page (web UI)", dashboard(ctx, svc)})
	var out []ReadResult
	for _, p := range paths {
		r := ReadResult{Name: p.name, Runs: runs}
		h := &histogram{}
		for range runs {
			t := time.Now()
			n, err := p.run()
			h.add(time.Since(t))
			r.Rows = n
			if err != nil {
				r.Failure = err.Error()
				break
			}
		}
		l := h.summary()
		r.P50, r.P95, r.Max = l.P50, l.P95, l.Max
		out = append(out, r)
	}
	return out
}

// readPath is a read Read times: run returns how many rows it read.
type readPath struct {
	name string
	run  func() (int, error)
}

// dashboard returns a read path that asks the web UI for the seed
// project's dashboard, as a signed-in person's browser does (in process,
// without a network): its lists, claims, charts and busiest files.
func dashboard(ctx context.Context, svc *service.Service) func() (int, error) {
	token, err := svc.CreateToken(ctx, service.Caller{Actor: "admin", Admin: true}, SeedProject, "bench")
	mux := http.NewServeMux()
	web.New(mux, svc, slog.New(slog.NewTextHandler(io.Discard, nil)), web.Options{})
	return func() (int, error) {
		if err != nil {
			return 0, err
		}
		r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
		r.AddCookie(&http.Cookie{Name: "logbook_token", Value: token})
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			return 0, fmt.Errorf("the dashboard answered %d", w.Code)
		}
		return w.Body.Len(), nil
	}
}

// explainer is a store that shows its query plans (both engines are).
type explainer interface {
	ExplainSessionList(ctx context.Context, p store.SessionListParams) (string, error)
}

// Plan is the query plan of one list filter.
type Plan struct {
	Name string `json:"name"`
	Plan string `json:"plan"`
}

// Explain returns the engine's plan for a page of 50 with each main filter.
func Explain(ctx context.Context, st store.Store) ([]Plan, error) {
	ex, ok := st.(explainer)
	if !ok {
		return nil, fmt.Errorf("this store cannot show query plans")
	}
	now := time.Now()
	filters := []struct {
		name string
		f    logbook.SessionFilter
	}{
		{"no filter", logbook.SessionFilter{}},
		{"state=active", logbook.SessionFilter{State: logbook.StateActive}},
		{"outcome=failed", logbook.SessionFilter{Outcome: logbook.OutcomeFailed}},
		{"blocker=rate_limited", logbook.SessionFilter{Blocker: logbook.BlockerRateLimited}},
		{"harness=codex", logbook.SessionFilter{Harness: "codex"}},
		{"agent=engineer-1", logbook.SessionFilter{Agent: "engineer-1"}},
		{"issue=1234", logbook.SessionFilter{Issue: "1234"}},
		{"path=src/api/", logbook.SessionFilter{Path: "src/api/"}},
		{"since=7d", logbook.SessionFilter{Since: now.Add(-7 * 24 * time.Hour)}},
	}
	var plans []Plan
	for _, f := range filters {
		plan, err := ex.ExplainSessionList(ctx, store.SessionListParams{Project: SeedProject, Filter: f.f, Limit: 51, Now: now, IdleBefore: now.Add(-10 * time.Minute)})
		if err != nil {
			return nil, err
		}
		plans = append(plans, Plan{Name: f.name, Plan: plan})
	}
	return plans, nil
}
