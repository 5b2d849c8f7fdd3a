package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// Ledger is the port over HTTP: the ledger as the token's actor sees it
// on the server c talks to.
func (c *Client) Ledger() ledger.Ledger { return httpLedger{c} }

// httpLedger implements ledger.Ledger with the /v1 API.
type httpLedger struct{ c *Client }

var _ ledger.Ledger = httpLedger{}

// Pacing of requests the server turns away for the token's rate limit.
const (
	// maxRateLimitedTries bounds how often one request is sent while the
	// server keeps answering 429.
	maxRateLimitedTries = 60
	// defaultRetryPause is the wait when a 429 names none.
	defaultRetryPause = time.Second
)

// call sends one request, and again after the pause the server asks for
// while it answers 429 (the token's rate limit), so a large import or a
// busy hook paces itself instead of failing.
func (l httpLedger) call(ctx context.Context, method, path string, body, out any) (int, error) {
	for try := 1; ; try++ {
		status, err := l.c.Do(ctx, method, path, body, out)
		var p *Problem
		if !errors.As(err, &p) || p.Status != http.StatusTooManyRequests || try == maxRateLimitedTries {
			return status, err
		}
		pause := p.RetryAfter
		if pause <= 0 || (l.c.RetryPause > 0 && l.c.RetryPause < pause) {
			pause = l.c.RetryPause
		}
		if pause <= 0 {
			pause = defaultRetryPause
		}
		select {
		case <-ctx.Done():
			return status, ctx.Err()
		case <-time.After(pause):
		}
	}
}

// sessionPath is the API path of a session, with more path after it.
func sessionPath(id, rest string) string { return "/v1/sessions/" + url.PathEscape(id) + rest }

// agentPath is the API path of an agent, with more path and the project.
func agentPath(project, agent, rest string) string {
	return "/v1/agents/" + url.PathEscape(agent) + rest + withProject(project)
}

// withProject is the query naming a project, when one is named.
func withProject(project string) string {
	if project == "" {
		return ""
	}
	return "?project=" + url.QueryEscape(project)
}

// withQuery appends q to path when it has values.
func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

func (l httpLedger) StartSession(ctx context.Context, p ledger.StartParams) (logbook.Session, bool, error) {
	var sess logbook.Session
	status, err := l.call(ctx, http.MethodPost, "/v1/sessions", p, &sess)
	return sess, status == http.StatusCreated, err
}

func (l httpLedger) UpdateSession(ctx context.Context, id string, f logbook.SessionFields) (logbook.Session, error) {
	var sess logbook.Session
	_, err := l.call(ctx, http.MethodPatch, sessionPath(id, ""), ledger.BodyOf(f), &sess)
	return sess, err
}

func (l httpLedger) SetGoal(ctx context.Context, id, goal string) (ledger.GoalResult, error) {
	var res ledger.GoalResult
	_, err := l.call(ctx, http.MethodPost, sessionPath(id, "/goal"), ledger.GoalBody{Goal: goal}, &res)
	return res, err
}

// AppendEntries sends the batch; a batch the server finds too large (413)
// is sent again in halves, its touches with the first. Entries with keys
// are recorded once however often they are sent.
func (l httpLedger) AppendEntries(ctx context.Context, id string, b ledger.Batch) (ledger.AppendResult, error) {
	var res ledger.AppendResult
	_, err := l.call(ctx, http.MethodPost, sessionPath(id, "/entries"), b, &res)
	if IsStatus(err, http.StatusRequestEntityTooLarge) && len(b.Entries) > 1 {
		half := len(b.Entries) / 2
		first, err := l.AppendEntries(ctx, id, ledger.Batch{Entries: b.Entries[:half], Touched: b.Touched})
		if err != nil {
			return first, err
		}
		second, err := l.AppendEntries(ctx, id, ledger.Batch{Entries: b.Entries[half:]})
		second.Recorded += first.Recorded
		second.Duplicates += first.Duplicates
		return second, err
	}
	return res, err
}

func (l httpLedger) Compact(ctx context.Context, id string, entries []logbook.Entry) (ledger.AppendResult, error) {
	var res ledger.AppendResult
	_, err := l.call(ctx, http.MethodPost, sessionPath(id, "/compact"), ledger.Batch{Entries: entries}, &res)
	return res, err
}

func (l httpLedger) EndSession(ctx context.Context, id string, p ledger.EndParams) (logbook.Session, error) {
	var sess logbook.Session
	_, err := l.call(ctx, http.MethodPost, sessionPath(id, "/end"), p, &sess)
	return sess, err
}

func (l httpLedger) DeleteSession(ctx context.Context, id string, force bool) (ledger.Deleted, error) {
	var res ledger.Deleted
	path := sessionPath(id, "")
	if force {
		path += "?force=true"
	}
	_, err := l.call(ctx, http.MethodDelete, path, nil, &res)
	return res, err
}

func (l httpLedger) SetPlan(ctx context.Context, id string, steps []ledger.StepInput) ([]logbook.PlanStep, error) {
	var res ledger.PlanAnswer
	_, err := l.call(ctx, http.MethodPut, sessionPath(id, "/plan"), ledger.PlanBody{Steps: steps}, &res)
	return res.Plan, err
}

func (l httpLedger) UpdatePlanStep(ctx context.Context, id string, n int, status logbook.StepStatus) ([]logbook.PlanStep, error) {
	var res ledger.PlanAnswer
	_, err := l.call(ctx, http.MethodPatch, sessionPath(id, "/plan/"+strconv.Itoa(n)), ledger.StepBody{Status: status}, &res)
	return res.Plan, err
}

func (l httpLedger) GetSession(ctx context.Context, id string, p ledger.GetParams) (ledger.SessionView, error) {
	q := url.Values{}
	if p.AfterSeq > 0 {
		q.Set("after_seq", strconv.FormatInt(p.AfterSeq, 10))
	}
	if p.All {
		q.Set("all", "true")
	}
	var view ledger.SessionView
	_, err := l.call(ctx, http.MethodGet, withQuery(sessionPath(id, ""), q), nil, &view)
	return view, err
}

func (l httpLedger) ListSessions(ctx context.Context, p ledger.ListParams) (ledger.SessionPage, error) {
	var page ledger.SessionPage
	_, err := l.call(ctx, http.MethodGet, withQuery("/v1/sessions", p.Values()), nil, &page)
	return page, err
}

func (l httpLedger) Search(ctx context.Context, p ledger.SearchParams) (ledger.SearchPage, error) {
	var page ledger.SearchPage
	_, err := l.call(ctx, http.MethodGet, withQuery("/v1/search", p.Values()), nil, &page)
	return page, err
}

func (l httpLedger) Stats(ctx context.Context, p ledger.StatsParams) ([]logbook.StatsRow, error) {
	var res ledger.StatsAnswer
	_, err := l.call(ctx, http.MethodGet, withQuery("/v1/stats", p.Values()), nil, &res)
	return res.Groups, err
}

func (l httpLedger) ToolCalls(ctx context.Context, p ledger.ToolCallParams) (ledger.ToolCallPage, error) {
	path := "/v1/tool_calls"
	if p.SessionID != "" {
		path = sessionPath(p.SessionID, "/tool_calls")
	}
	var page ledger.ToolCallPage
	_, err := l.call(ctx, http.MethodGet, withQuery(path, p.Values()), nil, &page)
	return page, err
}

func (l httpLedger) SessionsByCommit(ctx context.Context, project, sha string) ([]logbook.Session, error) {
	var res ledger.SessionsAnswer
	_, err := l.call(ctx, http.MethodGet, "/v1/commits/"+url.PathEscape(sha)+"/sessions"+withProject(project), nil, &res)
	return res.Sessions, err
}

func (l httpLedger) Claim(ctx context.Context, p ledger.ClaimParams) (logbook.Claim, bool, error) {
	var claim logbook.Claim
	status, err := l.call(ctx, http.MethodPost, "/v1/claims", p, &claim)
	return claim, status == http.StatusCreated, err
}

func (l httpLedger) Release(ctx context.Context, claimID string) (logbook.Claim, error) {
	var claim logbook.Claim
	_, err := l.call(ctx, http.MethodDelete, "/v1/claims/"+url.PathEscape(claimID), nil, &claim)
	return claim, err
}

func (l httpLedger) Claims(ctx context.Context, p ledger.ClaimsParams) ([]logbook.Claim, error) {
	var res ledger.ClaimsAnswer
	_, err := l.call(ctx, http.MethodGet, withQuery("/v1/claims", p.Values()), nil, &res)
	return res.Claims, err
}

func (l httpLedger) Gate(ctx context.Context, p ledger.GateParams) (ledger.GateAnswer, error) {
	var res ledger.GateAnswer
	_, err := l.call(ctx, http.MethodPost, "/v1/gate", p, &res)
	return res, err
}

func (l httpLedger) AddNote(ctx context.Context, p ledger.NoteParams) (ledger.NoteResult, error) {
	var res ledger.NoteResult
	_, err := l.call(ctx, http.MethodPost, "/v1/notes", p, &res)
	return res, err
}

// Follow follows the server's event stream (Server-Sent Events), calling
// fn for each event, and connects again after a break, resuming after the
// last event it saw (Last-Event-ID), until ctx ends or fn fails.
func (l httpLedger) Follow(ctx context.Context, project string, afterID int64, fn func(logbook.Event) error) error {
	for {
		err := l.follow(ctx, project, afterID, func(e logbook.Event) error {
			afterID = e.ID
			return fn(e)
		})
		var p *Problem
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &p) && p.Status < 500 && p.Status != http.StatusTooManyRequests:
			return err // a refusal, not a break: reconnecting would not help
		case err != nil && !errors.Is(err, errStreamEnded):
			if !isNetError(err) {
				return err // fn failed
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(reconnectPause):
		}
	}
}

// reconnectPause is the wait before following the stream again after it
// broke.
const reconnectPause = 2 * time.Second

// errStreamEnded is a stream the server closed.
var errStreamEnded = errors.New("the event stream ended")

// netError wraps a failure to reach the server or to read from it.
type netError struct{ err error }

func (e netError) Error() string { return e.err.Error() }
func (e netError) Unwrap() error { return e.err }

func isNetError(err error) bool {
	var n netError
	return errors.As(err, &n)
}

// follow reads the event stream once, until it ends or breaks, calling fn
// for each event.
func (l httpLedger) follow(ctx context.Context, project string, afterID int64, fn func(logbook.Event) error) error {
	q := url.Values{}
	if project != "" {
		q.Set("project", project)
	}
	switch {
	case afterID == ledger.FromNow:
		q.Set("after", "latest")
	case afterID > 0:
		q.Set("after", strconv.FormatInt(afterID, 10))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.c.BaseURL+withQuery("/v1/events", q), nil)
	if err != nil {
		return fmt.Errorf("error making the request (is %q a server URL?): %w", l.c.BaseURL, err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if l.c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+l.c.Token)
	}
	res, err := streamClient.Do(req)
	if err != nil {
		return netError{fmt.Errorf("cannot reach the logbook server at %s (is it running? set LOGBOOK_URL): %w", l.c.BaseURL, err)}
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		return ProblemFrom(res.StatusCode, raw)
	}
	lines := bufio.NewScanner(res.Body)
	lines.Buffer(make([]byte, 64<<10), 4<<20)
	var data strings.Builder
	for lines.Scan() {
		line := lines.Text()
		switch {
		case strings.HasPrefix(line, "data:"):
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case line == "" && data.Len() > 0:
			var e logbook.Event
			if err := json.Unmarshal([]byte(data.String()), &e); err != nil {
				return fmt.Errorf("the event stream sent an event that is not JSON: %w", err)
			}
			data.Reset()
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	if err := lines.Err(); err != nil && ctx.Err() == nil {
		return netError{fmt.Errorf("reading the event stream: %w", err)}
	}
	return errStreamEnded
}

// streamClient follows streams: no overall timeout, which would cut a
// long-lived stream.
var streamClient = &http.Client{}

func (l httpLedger) Classify(ctx context.Context, project, command string) (classify.Verdict, error) {
	var v classify.Verdict
	_, err := l.call(ctx, http.MethodPost, "/v1/classify", ledger.ClassifyBody{Command: command, Project: project}, &v)
	return v, err
}

// Policy returns the project's policy. A project the server has no
// policy for has the default one.
func (l httpLedger) Policy(ctx context.Context, project string) (classify.Policy, error) {
	var res struct {
		Policy classify.Policy `json:"policy"`
	}
	_, err := l.call(ctx, http.MethodGet, "/v1/projects/"+url.PathEscape(project)+"/policy", nil, &res)
	if err != nil {
		return classify.Policy{}, err
	}
	if err := res.Policy.Validate(); err != nil {
		return classify.Policy{}, fmt.Errorf("the policy of project %s cannot be used: %w", project, err)
	}
	return res.Policy, nil
}

func (l httpLedger) Retention(ctx context.Context, project string) (logbook.Retention, error) {
	var res ledger.RetentionAnswer
	_, err := l.call(ctx, http.MethodGet, "/v1/projects/"+url.PathEscape(project)+"/retention", nil, &res)
	return res.Retention, err
}

func (l httpLedger) SetRetention(ctx context.Context, project string, r logbook.Retention) (logbook.Retention, error) {
	var res ledger.RetentionAnswer
	_, err := l.call(ctx, http.MethodPut, "/v1/projects/"+url.PathEscape(project)+"/retention", r, &res)
	return res.Retention, err
}

// alertPath is the path of a project's alert rules and alerts.
func alertPath(project, rest string) string {
	return "/v1/projects/" + url.PathEscape(project) + rest
}

func (l httpLedger) AlertRules(ctx context.Context, project string) ([]logbook.AlertRule, error) {
	var res ledger.AlertRulesAnswer
	_, err := l.call(ctx, http.MethodGet, alertPath(project, "/alert_rules"), nil, &res)
	return res.Rules, err
}

func (l httpLedger) AddAlertRule(ctx context.Context, project string, r ledger.AlertRuleBody) (logbook.AlertRule, error) {
	var res logbook.AlertRule
	_, err := l.call(ctx, http.MethodPost, alertPath(project, "/alert_rules"), r, &res)
	return res, err
}

func (l httpLedger) DeleteAlertRule(ctx context.Context, project, id string) (logbook.AlertRule, error) {
	var res logbook.AlertRule
	_, err := l.call(ctx, http.MethodDelete, alertPath(project, "/alert_rules/"+url.PathEscape(id)), nil, &res)
	return res, err
}

func (l httpLedger) TestAlertRule(ctx context.Context, project, id string) (logbook.AlertAttempt, error) {
	var res logbook.AlertAttempt
	_, err := l.call(ctx, http.MethodPost, alertPath(project, "/alert_rules/"+url.PathEscape(id)+"/test"), nil, &res)
	return res, err
}

func (l httpLedger) Alerts(ctx context.Context, p ledger.AlertsParams) ([]logbook.Alert, error) {
	if p.Project == "" { // the route names it; the server would answer that it has no such route
		return nil, logbook.Invalid("project", "name the project whose alerts to list (logbook mcp takes a default from --project or LOGBOOK_PROJECT)")
	}
	q := url.Values{}
	if p.RuleID != "" {
		q.Set("rule", p.RuleID)
	}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	var res ledger.AlertsAnswer
	_, err := l.call(ctx, http.MethodGet, withQuery(alertPath(p.Project, "/alerts"), q), nil, &res)
	return res.Alerts, err
}

func (l httpLedger) Prices(ctx context.Context, project string) (ledger.Prices, error) {
	var res ledger.Prices
	_, err := l.call(ctx, http.MethodGet, "/v1/projects/"+url.PathEscape(project)+"/prices", nil, &res)
	return res, err
}

func (l httpLedger) SetPrices(ctx context.Context, project string, own map[string]logbook.Price) (ledger.Prices, error) {
	if own == nil {
		own = map[string]logbook.Price{}
	}
	var res ledger.Prices
	_, err := l.call(ctx, http.MethodPut, "/v1/projects/"+url.PathEscape(project)+"/prices", ledger.PricesBody{Models: own}, &res)
	return res, err
}

func (l httpLedger) EnsureAgentSession(ctx context.Context, project, agent string) (logbook.Session, bool, error) {
	var sess logbook.Session
	status, err := l.call(ctx, http.MethodPost, agentPath(project, agent, "/session"), nil, &sess)
	return sess, status == http.StatusCreated, err
}

func (l httpLedger) RotateAgent(ctx context.Context, project, agent, reason string) (ledger.Rotation, error) {
	var rot ledger.Rotation
	_, err := l.call(ctx, http.MethodPost, agentPath("", agent, "/rotate"), ledger.RotateBody{Project: project, Reason: reason}, &rot)
	return rot, err
}

func (l httpLedger) Agent(ctx context.Context, project, agent string) (ledger.AgentView, error) {
	var view ledger.AgentView
	_, err := l.call(ctx, http.MethodGet, agentPath(project, agent, ""), nil, &view)
	return view, err
}

func (l httpLedger) SetRotationPolicy(ctx context.Context, project, agent string, maxAge time.Duration, maxInputTokens int64) (logbook.Agent, error) {
	body := ledger.RotationPolicyBody{MaxInputTokens: maxInputTokens}
	if maxAge > 0 {
		body.MaxAge = maxAge.String()
	}
	var a logbook.Agent
	_, err := l.call(ctx, http.MethodPut, agentPath(project, agent, "/rotation_policy"), body, &a)
	return a, err
}

func (l httpLedger) AddTask(ctx context.Context, project, agent string, in ledger.TaskInput) (ledger.TaskResult, error) {
	var res ledger.TaskResult
	_, err := l.call(ctx, http.MethodPost, agentPath(project, agent, "/tasks"), in, &res)
	return res, err
}

func (l httpLedger) Tasks(ctx context.Context, project, agent string) ([]logbook.Task, error) {
	var res ledger.TasksAnswer
	_, err := l.call(ctx, http.MethodGet, agentPath(project, agent, "/tasks"), nil, &res)
	return res.Tasks, err
}

func (l httpLedger) Task(ctx context.Context, project, taskID string) (logbook.Task, error) {
	var task logbook.Task
	_, err := l.call(ctx, http.MethodGet, "/v1/tasks/"+url.PathEscape(taskID)+withProject(project), nil, &task)
	return task, err
}
