package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// Options tune Handler. Zero values take the defaults; there are none to
// tune today (the service holds how far back set_goal looks).
type Options struct{}

// Handler serves the MCP tools over streamable HTTP, for logbook serve to
// mount at /mcp. It takes the same bearer tokens as /v1: a request without
// a valid one gets a 401 problem document, and each tool call acts as the
// caller of the token that came with it.
//
// It is stateless (no MCP session is kept between requests), so any
// replica may answer any request.
func Handler(svc *service.Service, log *slog.Logger, opts Options) http.Handler {
	log = orDiscard(log)
	server := newServer(func(req *sdk.CallToolRequest) (ledger.Ledger, error) {
		caller, ok := callerOf(req)
		if !ok {
			return nil, errors.New("this call came without a bearer token; send Authorization: Bearer TOKEN")
		}
		return svc.For(caller), nil
	}, true, log)
	streamable := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server },
		&sdk.StreamableHTTPOptions{Stateless: true, Logger: log, MaxRequestBodyBytes: logbook.MaxRequestLen})
	// auth.RequireBearerToken is how the SDK hands a token's identity to
	// tool calls (CallToolRequest.Extra.TokenInfo); authenticate checks the
	// token first, so that a bad one gets the same answer as on /v1.
	withCaller := auth.RequireBearerToken(callerTokenInfo, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return authenticate(svc, log, withCaller(streamable))
}

// ServeStdio serves the MCP tools on l over a newline-delimited JSON-RPC
// stream (a harness's pipes to logbook mcp) until the client closes it or
// ctx ends. l is usually a server's, through the typed client.
func ServeStdio(ctx context.Context, l ledger.Ledger, in io.Reader, out io.Writer, log *slog.Logger) error {
	server := newServer(func(*sdk.CallToolRequest) (ledger.Ledger, error) { return l, nil }, false, log)
	return server.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
}

// orDiscard is log, or a logger that discards when log is nil.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// callerKey is the request context key of the caller authenticate found.
type callerKey struct{}

// callerExtra is the TokenInfo.Extra key of the caller.
const callerExtra = "logbook.caller"

// authenticate lets through requests with a valid bearer token within the
// token's rate limit (service.Admit, which /v1 shares), their caller in the
// context, and answers the others as /v1 does: 401 or 429 with a problem
// document.
func authenticate(svc *service.Service, log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, err := service.BearerToken(r.Header.Get("Authorization"))
		var caller service.Caller
		if err == nil {
			caller, err = svc.Admit(r.Context(), token)
		}
		var limited *logbook.LimitError
		switch {
		case errors.As(err, &limited):
			w.Header().Set("Retry-After", strconv.Itoa(logbook.Seconds(limited.RetryAfter)))
			writeProblem(w, http.StatusTooManyRequests, "Too many requests", limited.Error())
		case errors.Is(err, logbook.ErrUnauthorized):
			w.Header().Set("WWW-Authenticate", `Bearer realm="logbook"`)
			detail := strings.TrimSuffix(err.Error(), ": "+logbook.ErrUnauthorized.Error())
			writeProblem(w, http.StatusUnauthorized, "Unauthorized", detail)
		case err != nil:
			log.ErrorContext(r.Context(), "mcp authentication failed", "err", err)
			writeProblem(w, http.StatusInternalServerError, "Internal error", "the server could not complete this request; it was logged")
		default:
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, caller)))
		}
	})
}

// callerTokenInfo is the token verifier of auth.RequireBearerToken: the
// token was checked by authenticate, whose caller it passes on.
func callerTokenInfo(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	caller, ok := ctx.Value(callerKey{}).(service.Caller)
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Extra: map[string]any{callerExtra: caller}}, nil
}

// callerOf returns the caller a tool call came from over HTTP.
func callerOf(req *sdk.CallToolRequest) (service.Caller, bool) {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return service.Caller{}, false
	}
	caller, ok := req.Extra.TokenInfo.Extra[callerExtra].(service.Caller)
	return caller, ok
}

// writeProblem answers with an RFC 9457 problem document, as /v1 does.
func writeProblem(w http.ResponseWriter, status int, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "about:blank", "title": title, "status": status, "detail": detail})
}

// WithProject returns l with project as the default project of the tools
// that take one (start_session, classify_command, list_sessions,
// send_message, list_alerts): an
// agent that names none acts in it, rather than in its token's project
// (an admin token has none). logbook mcp --project (LOGBOOK_PROJECT)
// sets it.
func WithProject(l ledger.Ledger, project string) ledger.Ledger {
	if project == "" {
		return l
	}
	return defaultProject{l, project}
}

// defaultProject fills in the project of the calls the tools make with one.
type defaultProject struct {
	ledger.Ledger
	project string
}

func (d defaultProject) or(named string) string {
	if named == "" {
		return d.project
	}
	return named
}

func (d defaultProject) StartSession(ctx context.Context, p ledger.StartParams) (logbook.Session, bool, error) {
	p.Project = d.or(p.Project)
	return d.Ledger.StartSession(ctx, p)
}

func (d defaultProject) ListSessions(ctx context.Context, p ledger.ListParams) (ledger.SessionPage, error) {
	p.Project = d.or(p.Project)
	return d.Ledger.ListSessions(ctx, p)
}

func (d defaultProject) Classify(ctx context.Context, project, command string) (classify.Verdict, error) {
	return d.Ledger.Classify(ctx, d.or(project), command)
}

func (d defaultProject) Alerts(ctx context.Context, p ledger.AlertsParams) ([]logbook.Alert, error) {
	p.Project = d.or(p.Project)
	return d.Ledger.Alerts(ctx, p)
}

func (d defaultProject) SendMessage(ctx context.Context, p ledger.SendParams) (logbook.Message, error) {
	p.Project = d.or(p.Project)
	return d.Ledger.SendMessage(ctx, p)
}
