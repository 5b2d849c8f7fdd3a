package cli

import (
	"log/slog"
	"net/http"
	"net/url"

	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/mcp"
	"github.com/logbookhq/logbook/internal/metrics"
	"github.com/logbookhq/logbook/internal/otlp"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/web"
)

// serverRoutes registers on mux every route logbook serve answers: the
// API with /healthz and /openapi.json, OTLP traces, logs and metrics, /mcp, /metrics and the
// web UI. The API's /openapi.json describes each of them; a test holds the
// document, and the README's route table, to the routes registered here.
func serverRoutes(mux httpapi.Mux, svc *service.Service, log *slog.Logger, counted *metrics.Metrics, public *url.URL) {
	served := []struct {
		httpapi.Beside
		handler http.Handler
	}{
		{httpapi.Beside{Pattern: "POST /v1/traces", ID: "otlp_traces", Auth: "bearer",
			Summary: "OTLP/HTTP traces: GenAI spans become sessions and entries (protobuf or JSON; the answer is in the same encoding)",
			Takes:   []string{"application/x-protobuf", "application/json"}, Answers: "application/x-protobuf",
			Refuses: "a body that is not OTLP (400, as a google.rpc.Status), a missing or bad token (401), too many requests (429)"},
			otlp.Handler(svc, log)},
		{httpapi.Beside{Pattern: "POST /v1/logs", ID: "otlp_logs", Auth: "bearer",
			Summary: "OTLP/HTTP logs: Claude Code and Codex CLI events become entries of their sessions (protobuf or JSON; the answer is in the same encoding)",
			Takes:   []string{"application/x-protobuf", "application/json"}, Answers: "application/x-protobuf",
			Refuses: "a body that is not OTLP (400, as a google.rpc.Status), a missing or bad token (401), too many requests (429)"},
			otlp.LogsHandler(svc, log)},
		{httpapi.Beside{Pattern: "POST /v1/metrics", ID: "otlp_metrics", Auth: "bearer",
			Summary: "OTLP/HTTP metrics: the sessions Claude Code's metrics name are started, with their model (protobuf or JSON; the answer is in the same encoding)",
			Takes:   []string{"application/x-protobuf", "application/json"}, Answers: "application/x-protobuf",
			Refuses: "a body that is not OTLP (400, as a google.rpc.Status), a missing or bad token (401), too many requests (429)"},
			otlp.MetricsHandler(svc, log)},
		{httpapi.Beside{Pattern: "/mcp", ID: "mcp", Auth: "bearer",
			Summary: "The MCP server over streamable HTTP, stateless: JSON-RPC messages in, JSON or Server-Sent Events out",
			Takes:   []string{"application/json"}, Answers: "application/json",
			Refuses: "a missing or bad token (401, a problem document), too many requests (429)"},
			mcp.Handler(svc, log, mcp.Options{})},
		{httpapi.Beside{Pattern: "GET /metrics", ID: "metrics", Summary: "Prometheus metrics (text exposition format)", Answers: "text/plain"},
			counted.Handler()},
	}
	beside := make([]httpapi.Beside, 0, len(served)+len(webRoutes))
	for _, s := range served {
		beside = append(beside, s.Beside)
	}
	httpapi.New(mux, svc, log, httpapi.Options{Beside: append(beside, webRoutes...)})
	for _, s := range served {
		mux.Handle(s.Pattern, s.handler)
	}
	web.New(mux, svc, log, web.Options{PublicURL: public})
}

// webRoutes describes the routes web.New serves, for /openapi.json.
var webRoutes = []httpapi.Beside{
	{Pattern: "GET /{$}", ID: "ui_dashboard", Summary: "The web UI's dashboard (signed in; else the sign-in page)", Answers: "text/html", Auth: "cookie", Refuses: "not signed in (401), or another project's (403)"},
	{Pattern: "GET /sign-in", ID: "ui_sign_in_page", Summary: "The sign-in page", Answers: "text/html"},
	{Pattern: "POST /sign-in", ID: "ui_sign_in", Summary: "Sign in with a token (a form); sets the session cookie", Takes: []string{"application/x-www-form-urlencoded"}, Answers: "text/html",
		Refuses: "an unknown token (401) or an expired form (403): the form again, saying so"},
	{Pattern: "POST /sign-out", ID: "ui_sign_out", Summary: "Sign out (a form)", Takes: []string{"application/x-www-form-urlencoded"}, Answers: "text/html", Auth: "cookie", Refuses: "an expired form (403)"},
	{Pattern: "GET /sessions", ID: "ui_sessions", Summary: "The sessions page: filters, search, pages", Answers: "text/html", Auth: "cookie", Refuses: "a filter that cannot be read (400), or another project's (403)"},
	{Pattern: "GET /sessions/{id}", ID: "ui_session", Summary: "A session's page: its timeline, plan, claims and subagents", Answers: "text/html", Auth: "cookie", Refuses: "not signed in (401), or another project's (403)"},
	{Pattern: "GET /sessions/{id}/entries", ID: "ui_session_entries", Summary: "The next entries of a session's timeline (an HTML fragment)", Answers: "text/html", Auth: "cookie", Refuses: "not signed in (401), or another project's (403)"},
	{Pattern: "GET /search", ID: "ui_search", Summary: "The search page: every transcript of a project, ranked, with snippets", Answers: "text/html", Auth: "cookie", Refuses: "a search that cannot be read (400), or another project's (403)"},
	{Pattern: "GET /alerts", ID: "ui_alerts", Summary: "The alerts page: the project's alert rules and their delivery log", Answers: "text/html", Auth: "cookie", Refuses: "not signed in (401), or another project's (403)"},
	{Pattern: "GET /ui/events", ID: "ui_events", Summary: "Server-Sent Events that refresh the open page", Answers: "text/event-stream", Auth: "cookie", Refuses: "not signed in (401), or another project's (403)"},
	{Pattern: "GET /static/", ID: "ui_static", Summary: "The web UI's embedded scripts and styles", Answers: "application/octet-stream", Refuses: "no such file (404)"},
}
