package mcp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/client"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// Ledger is what the tools act on: the use cases of package service, as
// one caller. Each method is the service method of the same name, without
// the caller, answering with the same values. It holds no rules: the
// service applies them, in process or behind the HTTP API.
//
// Errors are the service's (matching logbook.ErrInvalid, ErrNotFound, …),
// a *client.Problem the API answered with, or a failure to reach the
// server; see describe.
type Ledger interface {
	StartSession(ctx context.Context, p service.StartParams) (logbook.Session, error)
	SetGoal(ctx context.Context, sessionID, goal string) (service.GoalResult, error)
	AppendEntries(ctx context.Context, sessionID string, b service.Batch) (service.AppendResult, error)
	SetPlan(ctx context.Context, sessionID string, steps []service.StepInput) ([]logbook.PlanStep, error)
	UpdatePlanStep(ctx context.Context, sessionID string, n int, status logbook.StepStatus) ([]logbook.PlanStep, error)
	Classify(ctx context.Context, project, command string) (classify.Verdict, error)
	Claim(ctx context.Context, p service.ClaimParams) (logbook.Claim, error)
	Release(ctx context.Context, claimID string) (logbook.Claim, error)
	EndSession(ctx context.Context, sessionID string, p service.EndParams) (logbook.Session, error)
	ListSessions(ctx context.Context, p service.ListParams) (service.SessionPage, error)
	GetSession(ctx context.Context, sessionID string, afterSeq int64) (service.SessionView, error)
}

// serviceLedger is the Ledger in process: the service, acting as the
// caller of one request's bearer token.
type serviceLedger struct {
	svc         *service.Service
	caller      service.Caller
	priorWindow time.Duration // for SetGoal; 0 is the service's default
	log         *slog.Logger
}

func (l serviceLedger) StartSession(ctx context.Context, p service.StartParams) (logbook.Session, error) {
	sess, _, err := l.svc.StartSession(ctx, l.caller, p)
	return sess, l.fail(ctx, err)
}

func (l serviceLedger) SetGoal(ctx context.Context, sessionID, goal string) (service.GoalResult, error) {
	res, err := l.svc.SetGoal(ctx, l.caller, sessionID, goal, l.priorWindow)
	return res, l.fail(ctx, err)
}

func (l serviceLedger) AppendEntries(ctx context.Context, sessionID string, b service.Batch) (service.AppendResult, error) {
	res, err := l.svc.AppendEntries(ctx, l.caller, sessionID, b)
	return res, l.fail(ctx, err)
}

func (l serviceLedger) SetPlan(ctx context.Context, sessionID string, steps []service.StepInput) ([]logbook.PlanStep, error) {
	plan, err := l.svc.SetPlan(ctx, l.caller, sessionID, steps)
	return plan, l.fail(ctx, err)
}

func (l serviceLedger) UpdatePlanStep(ctx context.Context, sessionID string, n int, status logbook.StepStatus) ([]logbook.PlanStep, error) {
	plan, err := l.svc.UpdatePlanStep(ctx, l.caller, sessionID, n, status)
	return plan, l.fail(ctx, err)
}

func (l serviceLedger) Classify(ctx context.Context, project, command string) (classify.Verdict, error) {
	verdict, err := l.svc.Classify(ctx, l.caller, project, command)
	return verdict, l.fail(ctx, err)
}

func (l serviceLedger) Claim(ctx context.Context, p service.ClaimParams) (logbook.Claim, error) {
	claim, _, err := l.svc.Claim(ctx, l.caller, p)
	return claim, l.fail(ctx, err)
}

func (l serviceLedger) Release(ctx context.Context, claimID string) (logbook.Claim, error) {
	claim, err := l.svc.Release(ctx, l.caller, claimID)
	return claim, l.fail(ctx, err)
}

func (l serviceLedger) EndSession(ctx context.Context, sessionID string, p service.EndParams) (logbook.Session, error) {
	sess, err := l.svc.EndSession(ctx, l.caller, sessionID, p)
	return sess, l.fail(ctx, err)
}

func (l serviceLedger) ListSessions(ctx context.Context, p service.ListParams) (service.SessionPage, error) {
	page, err := l.svc.ListSessions(ctx, l.caller, p)
	return page, l.fail(ctx, err)
}

func (l serviceLedger) GetSession(ctx context.Context, sessionID string, afterSeq int64) (service.SessionView, error) {
	view, err := l.svc.GetSession(ctx, l.caller, sessionID, service.GetParams{AfterSeq: afterSeq})
	return view, l.fail(ctx, err)
}

// errInternal is what an agent reads when the service failed for a reason
// of its own (a database error): like the API's 500, it reveals nothing.
var errInternal = errors.New("logbook could not complete this call; the error was logged on the server")

// fail passes on the errors an agent can act on and logs any other,
// answering it with errInternal.
func (l serviceLedger) fail(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	for _, known := range []error{logbook.ErrInvalid, logbook.ErrNotFound, logbook.ErrForbidden,
		logbook.ErrUnauthorized, logbook.ErrEnded, logbook.ErrConflict} {
		if errors.Is(err, known) {
			return err
		}
	}
	l.log.ErrorContext(ctx, "mcp tool call failed", "actor", l.caller.Actor, "project", l.caller.Project, "err", err)
	return errInternal
}

// httpLedger is the Ledger of a logbook server reached over its /v1 API.
type httpLedger struct {
	c *client.Client
}

// NewHTTPLedger returns a Ledger that calls the /v1 API of the server c
// talks to, with c's token.
func NewHTTPLedger(c *client.Client) Ledger { return httpLedger{c: c} }

// sessionPath is the API path of a session, with more path after it.
func sessionPath(id, rest string) string { return "/v1/sessions/" + url.PathEscape(id) + rest }

func (l httpLedger) StartSession(ctx context.Context, p service.StartParams) (logbook.Session, error) {
	body := struct {
		logbook.SessionFields
		Project          string `json:"project"`
		Harness          string `json:"harness"`
		HarnessSessionID string `json:"harness_session_id"`
		ParentID         string `json:"parent_id"`
	}{p.Fields, p.Project, p.Harness, p.HarnessSessionID, p.ParentID}
	var sess logbook.Session
	_, err := l.c.Do(ctx, http.MethodPost, "/v1/sessions", body, &sess)
	return sess, err
}

func (l httpLedger) SetGoal(ctx context.Context, sessionID, goal string) (service.GoalResult, error) {
	var res service.GoalResult
	_, err := l.c.Do(ctx, http.MethodPost, sessionPath(sessionID, "/goal"), map[string]string{"goal": goal}, &res)
	return res, err
}

func (l httpLedger) AppendEntries(ctx context.Context, sessionID string, b service.Batch) (service.AppendResult, error) {
	body := map[string]any{"entries": b.Entries, "touched": b.Touched}
	var res service.AppendResult
	_, err := l.c.Do(ctx, http.MethodPost, sessionPath(sessionID, "/entries"), body, &res)
	return res, err
}

func (l httpLedger) SetPlan(ctx context.Context, sessionID string, steps []service.StepInput) ([]logbook.PlanStep, error) {
	var res planAnswer
	_, err := l.c.Do(ctx, http.MethodPut, sessionPath(sessionID, "/plan"), map[string]any{"steps": steps}, &res)
	return res.Plan, err
}

func (l httpLedger) UpdatePlanStep(ctx context.Context, sessionID string, n int, status logbook.StepStatus) ([]logbook.PlanStep, error) {
	var res planAnswer
	path := sessionPath(sessionID, "/plan/"+strconv.Itoa(n))
	_, err := l.c.Do(ctx, http.MethodPatch, path, map[string]any{"status": status}, &res)
	return res.Plan, err
}

func (l httpLedger) Classify(ctx context.Context, project, command string) (classify.Verdict, error) {
	var verdict classify.Verdict
	_, err := l.c.Do(ctx, http.MethodPost, "/v1/classify", map[string]string{"project": project, "command": command}, &verdict)
	return verdict, err
}

func (l httpLedger) Claim(ctx context.Context, p service.ClaimParams) (logbook.Claim, error) {
	body := map[string]any{"session_id": p.SessionID, "subject": p.Subject, "ttl_minutes": p.TTLMinutes}
	var claim logbook.Claim
	_, err := l.c.Do(ctx, http.MethodPost, "/v1/claims", body, &claim)
	return claim, err
}

func (l httpLedger) Release(ctx context.Context, claimID string) (logbook.Claim, error) {
	var claim logbook.Claim
	_, err := l.c.Do(ctx, http.MethodDelete, "/v1/claims/"+url.PathEscape(claimID), nil, &claim)
	return claim, err
}

func (l httpLedger) EndSession(ctx context.Context, sessionID string, p service.EndParams) (logbook.Session, error) {
	body := map[string]any{"outcome": p.Outcome, "result": p.Result, "blocker": p.Blocker, "reason": p.Reason}
	var sess logbook.Session
	_, err := l.c.Do(ctx, http.MethodPost, sessionPath(sessionID, "/end"), body, &sess)
	return sess, err
}

func (l httpLedger) ListSessions(ctx context.Context, p service.ListParams) (service.SessionPage, error) {
	var page service.SessionPage
	_, err := l.c.Do(ctx, http.MethodGet, "/v1/sessions?"+listQuery(p).Encode(), nil, &page)
	return page, err
}

// listQuery writes list parameters as the query GET /v1/sessions reads.
func listQuery(p service.ListParams) url.Values {
	q := url.Values{}
	set := func(name, value string) {
		if value != "" {
			q.Set(name, value)
		}
	}
	f := p.Filter
	set("project", p.Project)
	set("sort", string(p.Sort))
	set("cursor", p.Cursor)
	set("state", string(f.State))
	set("outcome", string(f.Outcome))
	set("blocker", string(f.Blocker))
	set("harness", f.Harness)
	set("actor", f.Actor)
	set("agent", f.Agent)
	set("issue", f.Issue)
	set("pull", f.Pull)
	set("subject", f.Subject)
	set("path", f.Path)
	set("parent", f.ParentID)
	set("q", f.Query)
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if f.Subagents {
		q.Set("subagents", "true")
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.Format(time.RFC3339Nano))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.Format(time.RFC3339Nano))
	}
	if f.MinDuration != 0 {
		q.Set("min_duration", f.MinDuration.String())
	}
	if f.MinToolCalls != 0 {
		q.Set("min_tool_calls", strconv.FormatInt(f.MinToolCalls, 10))
	}
	return q
}

func (l httpLedger) GetSession(ctx context.Context, sessionID string, afterSeq int64) (service.SessionView, error) {
	var view service.SessionView
	path := sessionPath(sessionID, "?after_seq="+strconv.FormatInt(afterSeq, 10))
	_, err := l.c.Do(ctx, http.MethodGet, path, nil, &view)
	return view, err
}
