// Package httpapi serves logbook's JSON API under /v1.
//
// Handlers decode a request, call one service method and encode its answer;
// they hold no rules. Every /v1 route needs a bearer token. Errors are RFC
// 9457 problem documents whose detail says what to fix.
package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// handler serves the API.
type handler struct {
	svc *service.Service
	log *slog.Logger
}

// Options tune the API. Zero values take the defaults. The per-token
// limits (requests a second, event streams) are the service's: see
// service.Options.
type Options struct {
	// Beside lists the routes the same server answers beside the API
	// (OTLP traces, /mcp, /metrics, the web UI), which New does not serve
	// but /openapi.json describes, so that it names every route.
	Beside []Beside
}

// Beside is a route served beside the API, as /openapi.json describes it.
type Beside struct {
	// Pattern is the route as http.ServeMux takes it ("POST /v1/traces");
	// without a method ("/mcp") it is described as a POST.
	Pattern string
	// ID is its operationId: unique, stable, e.g. "otlp_traces".
	ID      string
	Summary string
	// Takes lists the media types of the request bodies it reads (none:
	// it reads no body); Answers is the media type of its answer.
	Takes   []string
	Answers string
	// Refuses says which client errors (4XX) it answers; "" for none.
	Refuses string
	// Auth is how a caller proves who it is: "bearer" (a token, as the
	// API), "cookie" (the web UI's sign-in) or "" (no one needs to).
	Auth string
}

// Mux is where New registers routes: an *http.ServeMux, or anything that
// registers on one (a test that lists the routes a server serves).
type Mux interface {
	Handle(pattern string, handler http.Handler)
}

// New returns the API's routes on mux: /healthz, /openapi.json and
// everything under /v1.
func New(mux Mux, svc *service.Service, log *slog.Logger, opts Options) {
	h := &handler{svc: svc, log: log}
	mux.Handle("GET /healthz", http.HandlerFunc(h.health))
	routes := h.routes()
	for _, rt := range routes {
		mux.Handle(rt.pattern, h.authenticated(rt.serve))
	}
	doc := openAPIDocument(routes, opts.Beside)
	mux.Handle("GET /openapi.json", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	}))

	// Anything else under /v1 is a problem document, not the mux's plain
	// text: the answer to a path that is no route, so no route itself.
	mux.Handle(NotFoundPattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, http.StatusNotFound, "No such route", "there is no "+r.Method+" "+r.URL.Path+"; GET /openapi.json lists the routes", "")
	}))
}

// NotFoundPattern catches every path under /v1 that is no route, to answer
// it with a problem document.
const NotFoundPattern = "/v1/"

// route is one operation under /v1: New serves it behind a bearer token,
// and /openapi.json describes it from the same entry.
type route struct {
	pattern string // method and path, as http.ServeMux takes it
	serve   func(http.ResponseWriter, *http.Request, service.Caller)
	summary string
	query   []string // the query parameters it reads
	body    any      // a value of its JSON body's type; nil: none
	answer  any      // a value of its JSON answer's type; nil: not JSON
}

// routes lists the operations under /v1.
func (h *handler) routes() []route {
	// What GET /v1/sessions filters on (see listParams).
	listQuery := ledger.ListQueryNames
	return []route{
		{"POST /v1/tokens", h.createToken, "Make a bearer token for an actor in a project (admin only)", nil, tokenRequest{}, tokenResponse{}},

		{"POST /v1/sessions", h.startSession, "Start a session; the same harness_session_id again returns it (200, not 201)", nil, ledger.StartParams{}, logbook.Session{}},
		{"GET /v1/sessions", h.listSessions, "A page of sessions, newest first, with aggregates and filters", listQuery, nil, ledger.SessionPage{}},
		{"GET /v1/search", h.search, "Search a project's transcripts and its sessions' titles, goals and results: ranked matches with snippets", ledger.SearchQueryNames, nil, ledger.SearchPage{}},
		{"GET /v1/sessions/{id}", h.getSession, "A session with its entries after a seq (at most 500), subagents and plan", []string{"after_seq", "all"}, nil, ledger.SessionView{}},
		{"PATCH /v1/sessions/{id}", h.updateSession, "Heartbeat, with any of the start fields; fields not given are kept", nil, ledger.FieldsBody{}, logbook.Session{}},
		{"DELETE /v1/sessions/{id}", h.deleteSession, "Delete a session and its subagents (the owner or the admin)", []string{"force"}, nil, ledger.Deleted{}},
		{"POST /v1/sessions/{id}/entries", h.appendEntries, "Record up to 500 entries; a repeated key is skipped", nil, ledger.Batch{}, ledger.AppendResult{}},
		{"POST /v1/sessions/{id}/end", h.endSession, "End the session with success, partial or failed", nil, ledger.EndParams{}, logbook.Session{}},
		{"POST /v1/sessions/{id}/compact", h.compactSession, "Supersede every active entry and append these, in one transaction", nil, ledger.Batch{}, ledger.AppendResult{}},
		{"PUT /v1/sessions/{id}/plan", h.setPlan, "Replace the plan", nil, ledger.PlanBody{}, ledger.PlanAnswer{}},
		{"PATCH /v1/sessions/{id}/plan/{n}", h.updatePlanStep, "Set one plan step's status", nil, ledger.StepBody{}, ledger.PlanAnswer{}},
		{"POST /v1/sessions/{id}/goal", h.setGoal, "Set the goal; answers with the project's earlier partial and failed attempts at it", nil, ledger.GoalBody{}, ledger.GoalResult{}},
		{"GET /v1/sessions/{id}/tool_calls", h.toolCalls, "The session's tool calls for audit: input, result, status, duration", []string{"tool", "since", "cursor", "limit"}, nil, ledger.ToolCallPage{}},
		{"GET /v1/tool_calls", h.toolCalls, "Tool calls across a project, newest first", []string{"project", "session", "tool", "since", "cursor", "limit"}, nil, ledger.ToolCallPage{}},
		{"GET /v1/commits/{sha}/sessions", h.sessionsByCommit, "The sessions that ran at or made a commit", []string{"project"}, nil, ledger.SessionsAnswer{}},
		{"GET /v1/stats", h.stats, "Counts, durations, tool calls, tokens and cost (micro-dollars) of the sessions started since a time, by outcome, blocker, harness, agent, actor, model or day (UTC days unless tz names a zone); top_level=true leaves subagents out", []string{"project", "since", "by", "then", "tz", "top_level"}, nil, ledger.StatsAnswer{}},

		{"POST /v1/claims", h.claim, "Claim a subject for a session (201; 200 renewing your own; 409 naming the holder)", nil, ledger.ClaimParams{}, logbook.Claim{}},
		{"GET /v1/claims", h.listClaims, "Active claims; with subject, who holds it or a folder above it", []string{"project", "subject", "session_id"}, nil, ledger.ClaimsAnswer{}},
		{"DELETE /v1/claims/{id}", h.release, "Release a claim (its owner only)", nil, nil, logbook.Claim{}},
		{"POST /v1/gate", h.gate, "May a session write these files (or this tool call's)? defer, or the claims guard's deny or ask naming the holder; claims them with the project's auto claims", nil, ledger.GateParams{}, ledger.GateAnswer{}},

		{"GET /v1/events", h.streamLimited(h.events), "Server-Sent Events of a project; resume with Last-Event-ID or after", []string{"project", "after"}, nil, nil},

		{"POST /v1/classify", h.classify, "How risky a shell command is, and the project's decision", nil, ledger.ClassifyBody{}, classify.Verdict{}},
		{"GET /v1/projects/{project}/policy", h.getPolicy, "The project's command policy", nil, nil, policyAnswer{}},
		{"PUT /v1/projects/{project}/policy", h.setPolicy, "Replace the project's command policy (admin only)", nil, json.RawMessage(nil), policyAnswer{}},
		{"GET /v1/projects/{project}/retention", h.getRetention, "How many days after a session ended the project deletes it, and its tool output (0: never)", nil, nil, ledger.RetentionAnswer{}},
		{"PUT /v1/projects/{project}/retention", h.setRetention, "Set the project's retention, which the sweeper enforces (admin only)", nil, logbook.Retention{}, ledger.RetentionAnswer{}},
		{"GET /v1/projects/{project}/alert_rules", h.listAlertRules, "The project's alert rules, webhook URLs masked", nil, nil, ledger.AlertRulesAnswer{}},
		{"POST /v1/projects/{project}/alert_rules", h.addAlertRule, "Add an alert rule (admin only; 201 with the secret that signs its webhook's bodies, shown once): threshold for idle_with_claims (minutes) and tool_loop (calls in a row); budget_usd (US dollars, e.g. 2.50) and scope (session, agent_day or project_day: UTC days of the sessions started in them) for cost_over_budget", nil, ledger.AlertRuleBody{}, logbook.AlertRule{}},
		{"DELETE /v1/projects/{project}/alert_rules/{id}", h.deleteAlertRule, "Delete an alert rule with its alerts (admin only)", nil, nil, logbook.AlertRule{}},
		{"POST /v1/projects/{project}/alert_rules/{id}/test", h.testAlertRule, "Post a sample alert to the rule's webhook now: its status code, or what went wrong (admin only)", nil, nil, logbook.AlertAttempt{}},
		{"GET /v1/projects/{project}/alerts", h.listAlerts, "The project's alerts, newest first, with their delivery and its log of attempts", []string{"rule", "limit"}, nil, ledger.AlertsAnswer{}},
		{"GET /v1/projects/{project}/prices", h.getPrices, "The prices, in US dollars per million tokens, the project's model calls are costed at: the built-in table (dated, each price with its source) with the project's own", nil, nil, ledger.Prices{}},
		{"PUT /v1/projects/{project}/prices", h.setPrices, "Replace the project's own prices (admin only); they cost the calls recorded from then on, recorded costs stay", nil, ledger.PricesBody{}, ledger.Prices{}},

		{"POST /v1/agents/{agent}/session", h.ensureAgentSession, "The agent's current session, made when it has none", []string{"project"}, nil, logbook.Session{}},
		{"POST /v1/agents/{agent}/rotate", h.rotateAgent, "Start the agent's next session; its tasks move to it", nil, ledger.RotateBody{}, ledger.Rotation{}},
		{"GET /v1/agents/{agent}", h.getAgent, "The agent, its current session and its rotations", []string{"project"}, nil, ledger.AgentView{}},
		{"PUT /v1/agents/{agent}/rotation_policy", h.setRotationPolicy, "Rotate the agent by itself past an age or a token count", []string{"project"}, ledger.RotationPolicyBody{}, logbook.Agent{}},
		{"POST /v1/agents/{agent}/tasks", h.addTask, "Hand an agent a task: a user turn in its current session", []string{"project"}, ledger.TaskInput{}, ledger.TaskResult{}},
		{"GET /v1/agents/{agent}/tasks", h.listTasks, "The agent's tasks", []string{"project"}, nil, ledger.TasksAnswer{}},
		{"GET /v1/tasks/{task_id}", h.getTask, "A task with its active session and history", []string{"project"}, nil, logbook.Task{}},
		{"POST /v1/messages", h.sendMessage, "Send a message to a session, an agent or an actor of the project (201); reply_to threads it", nil, ledger.SendParams{}, logbook.Message{}},
		{"GET /v1/messages", h.listMessages, "Messages of a project, newest first: for or from a session, for an agent, an actor (default: yours) or a thread", ledger.MessagesQueryNames, nil, ledger.MessagesAnswer{}},
		{"POST /v1/sessions/{id}/inbox", h.readInbox, "Give the session the messages waiting for it: each delivered once, recorded in its transcript, marked read", nil, nil, ledger.MessagesAnswer{}},
		{"POST /v1/messages/{id}/read", h.markMessage(logbook.MarkRead), "Mark a message for you read", nil, nil, logbook.Message{}},
		{"POST /v1/messages/{id}/ack", h.markMessage(logbook.MarkAcked), "Acknowledge a message for you (marks it read too)", nil, nil, logbook.Message{}},
		{"POST /v1/notes", h.addNote, "A note into every live session on an issue, pull or subject", nil, ledger.NoteParams{}, ledger.NoteResult{}},
	}
}

func (h *handler) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "engine": h.svc.Engine()})
}

// authenticated runs fn with the caller its bearer token stands for, or
// answers 401; a token over its rate limit gets 429 (service.Admit).
func (h *handler) authenticated(fn func(http.ResponseWriter, *http.Request, service.Caller)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, err := service.BearerToken(r.Header.Get("Authorization"))
		var c service.Caller
		if err == nil {
			c, err = h.svc.Admit(r.Context(), token)
		}
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		fn(w, r, c)
	})
}

// bearerToken is the token of the request's Authorization header, which
// authenticated has checked.
func bearerToken(r *http.Request) string {
	token, _ := service.BearerToken(r.Header.Get("Authorization"))
	return token
}
