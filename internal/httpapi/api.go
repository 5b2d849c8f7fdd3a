// Package httpapi serves logbook's JSON API under /v1.
//
// Handlers decode a request, call one service method and encode its answer;
// they hold no rules. Every /v1 route needs a bearer token. Errors are RFC
// 9457 problem documents whose detail says what to fix.
package httpapi

import (
	"crypto/sha256"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/service"
)

// handler serves the API.
type handler struct {
	svc         *service.Service
	log         *slog.Logger
	priorWindow time.Duration
	limits      *limiter
}

// Options tune the API. Zero values take the defaults.
type Options struct {
	// PriorWindow is how far back goal memory looks (default 24 hours).
	PriorWindow time.Duration
	// RateLimit is how many requests a second one token may make on
	// average (default DefaultRateLimit), RateBurst how many at once after
	// a quiet spell (default DefaultRateBurst). Over it a request gets 429
	// with Retry-After. A negative RateLimit turns the limit off.
	RateLimit float64
	RateBurst int
	// MaxStreams is how many event streams one token may hold open at
	// once (default DefaultMaxStreams; negative: no limit).
	MaxStreams int
}

// New returns the API's routes on mux: /healthz and everything under /v1.
func New(mux *http.ServeMux, svc *service.Service, log *slog.Logger, opts Options) {
	h := &handler{svc: svc, log: log, priorWindow: opts.PriorWindow, limits: newLimiter(opts)}
	mux.HandleFunc("GET /healthz", h.health)

	v1 := func(pattern string, fn func(http.ResponseWriter, *http.Request, service.Caller)) {
		mux.Handle(pattern, h.authenticated(fn))
	}
	v1("POST /v1/tokens", h.createToken)

	v1("POST /v1/sessions", h.startSession)
	v1("GET /v1/sessions", h.listSessions)
	v1("GET /v1/sessions/{id}", h.getSession)
	v1("PATCH /v1/sessions/{id}", h.updateSession)
	v1("DELETE /v1/sessions/{id}", h.deleteSession)
	v1("POST /v1/sessions/{id}/entries", h.appendEntries)
	v1("POST /v1/sessions/{id}/end", h.endSession)
	v1("POST /v1/sessions/{id}/compact", h.compactSession)
	v1("PUT /v1/sessions/{id}/plan", h.setPlan)
	v1("PATCH /v1/sessions/{id}/plan/{n}", h.updatePlanStep)
	v1("POST /v1/sessions/{id}/goal", h.setGoal)
	v1("GET /v1/sessions/{id}/tool_calls", h.toolCalls)
	v1("GET /v1/tool_calls", h.toolCalls)
	v1("GET /v1/commits/{sha}/sessions", h.sessionsByCommit)
	v1("GET /v1/stats", h.stats)

	v1("POST /v1/claims", h.claim)
	v1("GET /v1/claims", h.listClaims)
	v1("DELETE /v1/claims/{id}", h.release)

	v1("GET /v1/events", h.streamLimited(h.events))

	v1("POST /v1/classify", h.classify)
	v1("GET /v1/projects/{project}/policy", h.getPolicy)
	v1("PUT /v1/projects/{project}/policy", h.setPolicy)

	v1("POST /v1/agents/{agent}/session", h.ensureAgentSession)
	v1("POST /v1/agents/{agent}/rotate", h.rotateAgent)
	v1("GET /v1/agents/{agent}", h.getAgent)
	v1("PUT /v1/agents/{agent}/rotation_policy", h.setRotationPolicy)
	v1("POST /v1/agents/{agent}/tasks", h.addTask)
	v1("GET /v1/agents/{agent}/tasks", h.listTasks)
	v1("GET /v1/tasks/{task_id}", h.getTask)
	v1("POST /v1/notes", h.addNote)

	// Anything else under /v1 is a problem document, not the mux's plain text.
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, http.StatusNotFound, "No such route", "there is no "+r.Method+" "+r.URL.Path+"; see the README for the routes", "")
	})
}

func (h *handler) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "engine": h.svc.Store().Engine()})
}

// authenticated runs fn with the caller its bearer token stands for, or
// answers 401; a token over its rate limit gets 429.
func (h *handler) authenticated(fn func(http.ResponseWriter, *http.Request, service.Caller)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := bearerToken(r)
		c, err := h.svc.Authenticate(r.Context(), token)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		if ok, wait := h.limits.allow(sha256.Sum256([]byte(token))); !ok {
			h.rateLimited(w, wait)
			return
		}
		fn(w, r, c)
	})
}

// bearerToken is the token of the request's Authorization header.
func bearerToken(r *http.Request) string {
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return strings.TrimSpace(token)
}
