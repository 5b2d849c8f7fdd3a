package ledger

import (
	"encoding/json"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// The requests and results of Ledger. A request type that is a JSON body
// of the API carries its JSON names; the API's handlers decode into it and
// the client encodes it, so each body is declared here once.

// StartParams describe a session to start. In JSON (POST /v1/sessions) the
// session fields sit beside the others, and issue and pull may be numbers.
type StartParams struct {
	Project          string
	Harness          string
	HarnessSessionID string
	ParentID         string
	Fields           logbook.SessionFields
	// KeepEnded marks a report about a session rather than the harness
	// starting it (OTLP logs that arrive after the session's end): a
	// session ended on purpose stays ended, as a subagent always does,
	// and takes no more entries.
	KeepEnded bool
	// StartedAt is when the session began, for a session recorded after
	// the fact (an import of a transcript): a new session starts then
	// rather than now, so lists, statistics and retention see old history
	// as old. Zero means now; a time after now is taken as now. A session
	// that exists keeps its start.
	StartedAt time.Time
}

// startWire is StartParams as JSON.
type startWire struct {
	Project          string    `json:"project,omitempty"`
	Harness          string    `json:"harness"`
	HarnessSessionID string    `json:"harness_session_id,omitempty"`
	ParentID         string    `json:"parent_id,omitempty"`
	KeepEnded        bool      `json:"keep_ended,omitempty"`
	StartedAt        time.Time `json:"started_at,omitzero"`
	FieldsBody
}

// JSONShape returns a value of the type StartParams is written as in
// JSON, for describing it (see the API's /openapi.json).
func (StartParams) JSONShape() any { return startWire{} }

// MarshalJSON writes the body of POST /v1/sessions.
func (p StartParams) MarshalJSON() ([]byte, error) {
	return json.Marshal(startWire{p.Project, p.Harness, p.HarnessSessionID, p.ParentID, p.KeepEnded, p.StartedAt, BodyOf(p.Fields)})
}

// UnmarshalJSON reads the body of POST /v1/sessions.
func (p *StartParams) UnmarshalJSON(data []byte) error {
	var w startWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*p = StartParams{Project: w.Project, Harness: w.Harness, HarnessSessionID: w.HarnessSessionID, ParentID: w.ParentID,
		KeepEnded: w.KeepEnded, StartedAt: w.StartedAt, Fields: w.Fields()}
	return nil
}

// FieldsBody is logbook.SessionFields as JSON bodies carry them (PATCH
// /v1/sessions/{id}, and inside a start): fields left out are not set, and
// issue and pull may be sent as numbers.
type FieldsBody struct {
	Title      *string   `json:"title,omitempty"`
	Goal       *string   `json:"goal,omitempty"`
	Task       *string   `json:"task,omitempty"`
	Prompt     *string   `json:"prompt,omitempty"`
	Model      *string   `json:"model,omitempty"`
	AgentType  *string   `json:"agent_type,omitempty"`
	Agent      *string   `json:"agent,omitempty"`
	Issue      *IssueRef `json:"issue,omitempty"`
	Pull       *IssueRef `json:"pull,omitempty"`
	Branch     *string   `json:"branch,omitempty"`
	HeadCommit *string   `json:"head_commit,omitempty"`
	Subject    *string   `json:"subject,omitempty"`
}

// BodyOf returns the body that carries f.
func BodyOf(f logbook.SessionFields) FieldsBody {
	return FieldsBody{Title: f.Title, Goal: f.Goal, Task: f.Task, Prompt: f.Prompt, Model: f.Model, AgentType: f.AgentType,
		Agent: f.Agent, Issue: (*IssueRef)(f.Issue), Pull: (*IssueRef)(f.Pull), Branch: f.Branch, HeadCommit: f.HeadCommit, Subject: f.Subject}
}

// Fields returns the session fields the body sets.
func (b FieldsBody) Fields() logbook.SessionFields {
	return logbook.SessionFields{Title: b.Title, Goal: b.Goal, Task: b.Task, Prompt: b.Prompt, Model: b.Model, AgentType: b.AgentType,
		Agent: b.Agent, Issue: (*string)(b.Issue), Pull: (*string)(b.Pull), Branch: b.Branch, HeadCommit: b.HeadCommit, Subject: b.Subject}
}

// IssueRef is an issue or pull request number or name: read from a JSON
// string or number, written as a number when it is all digits (see
// logbook.Ref).
type IssueRef = logbook.Ref

// Batch is a batch of entries and the files they touched (POST
// /v1/sessions/{id}/entries and /compact).
type Batch struct {
	Entries []logbook.Entry `json:"entries"`
	Touched []logbook.Touch `json:"touched,omitempty"`
}

// AppendResult says what a batch did.
type AppendResult struct {
	Recorded   int   `json:"recorded"`
	Duplicates int   `json:"duplicates"`
	LastSeq    int64 `json:"last_seq"`
}

// EndParams say how a session ended.
type EndParams struct {
	Outcome logbook.Outcome `json:"outcome"`
	Result  string          `json:"result,omitempty"`
	Blocker logbook.Blocker `json:"blocker,omitempty"` // optional; derived for partial and failed when empty
	Reason  string          `json:"reason,omitempty"`  // end_reason; "ended" when empty
	// EndedAt is when the session ended, for a session recorded after the
	// fact (an import): its closed_at and last activity, instead of now.
	// Zero means now; it is taken within the session's start and now.
	EndedAt time.Time `json:"ended_at,omitzero"`
}

// Deleted is what deleting a session removed, by table.
type Deleted struct {
	SessionID string           `json:"session_id"`
	Deleted   map[string]int64 `json:"deleted"`
}

// StepInput is a plan step as a caller gives it.
type StepInput struct {
	Text   string             `json:"text"`
	Status logbook.StepStatus `json:"status,omitempty"`
}

// PlanBody is the body of PUT /v1/sessions/{id}/plan.
type PlanBody struct {
	Steps []StepInput `json:"steps"`
}

// StepBody is the body of PATCH /v1/sessions/{id}/plan/{n}.
type StepBody struct {
	Status logbook.StepStatus `json:"status"`
}

// PlanAnswer is the answer of the plan routes.
type PlanAnswer struct {
	Plan []logbook.PlanStep `json:"plan"`
}

// GoalBody is the body of POST /v1/sessions/{id}/goal.
type GoalBody struct {
	Goal string `json:"goal"`
}

// GoalResult is a session after its goal was set, with the earlier
// attempts at the same thing.
type GoalResult struct {
	Session logbook.Session `json:"session"`
	Prior   []Prior         `json:"prior"`
}

// Prior is an earlier partial or failed session on a similar goal or the
// same issue, pull or subject.
type Prior struct {
	ID         string          `json:"id"`
	Title      string          `json:"title"`
	Goal       string          `json:"goal"`
	Actor      string          `json:"actor"`
	Outcome    logbook.Outcome `json:"outcome"`
	Blocker    logbook.Blocker `json:"blocker"`
	Result     string          `json:"result"`
	ClosedAt   *time.Time      `json:"closed_at"`
	Why        string          `json:"why"` // "similar goal (0.67)", "same issue 12", …
	Similarity float64         `json:"similarity"`
}

// GetParams select the entries a session view carries.
type GetParams struct {
	AfterSeq int64 // entries after this seq
	Limit    int   // at most this many (default and maximum 500)
	All      bool  // include superseded entries
}

// SessionView is a session with its entries and what surrounds it.
type SessionView struct {
	Session      logbook.Session    `json:"session"`
	Entries      []logbook.Entry    `json:"entries"`
	NextAfterSeq int64              `json:"next_after_seq"`
	Subagents    []logbook.Session  `json:"subagents"`
	Plan         []logbook.PlanStep `json:"plan"`
	Links        []logbook.Link     `json:"links"`
	Touched      []logbook.Touch    `json:"touched"`
	Claims       []logbook.Claim    `json:"claims"`
	// Skills lists the skills used anywhere in the session's tree.
	Skills []string `json:"skills"`
}

// ListParams select a page of sessions.
type ListParams struct {
	Project string
	Filter  logbook.SessionFilter
	Sort    logbook.SessionSort // default last_seen
	Limit   int                 // default 50, at most 200
	Cursor  string              // from a previous page's NextCursor
}

// SessionPage is a page of sessions.
type SessionPage struct {
	Sessions   []logbook.Session `json:"sessions"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

// SearchParams select what a search finds (GET /v1/search): entries of
// the project's sessions, and the sessions' own title, goal and result,
// that match Query (see logbook.ParseSearch) and pass Filter.
type SearchParams struct {
	Project string
	Query   string
	Filter  logbook.SearchFilter
	Limit   int    // default logbook.DefaultSearchPage, at most logbook.MaxSearchPage
	Cursor  string // from a previous page's NextCursor
}

// SearchPage is a page of what a search found, best first.
type SearchPage struct {
	Results    []logbook.SearchHit `json:"results"`
	NextCursor string              `json:"next_cursor,omitempty"`
	// Ranked is how many matches were ranked: the newest
	// logbook.SearchCandidates matching entries and as many sessions at
	// most. More says more matched than that; more words narrow a search.
	Ranked int  `json:"ranked"`
	More   bool `json:"more,omitempty"`
	// Indexing says the index is still taking in what was written before
	// it was made: older matches may be missing yet.
	Indexing bool `json:"indexing,omitempty"`
}

// SessionsAnswer is the answer of GET /v1/commits/{sha}/sessions.
type SessionsAnswer struct {
	Sessions []logbook.Session `json:"sessions"`
}

// StatsParams select what to count.
type StatsParams struct {
	Project string
	Since   time.Time // default: 30 days ago
	By      logbook.StatsBy
	Then    logbook.StatsBy // optional second grouping within By, e.g. by day then outcome
	// Zone is where days begin and end, for grouping by day; nil is UTC.
	Zone *time.Location
	// TopLevel counts only sessions with no parent (the dashboard's
	// default), leaving the subagents out.
	TopLevel bool
}

// StatsAnswer is the answer of GET /v1/stats.
type StatsAnswer struct {
	By     string             `json:"by"`
	Groups []logbook.StatsRow `json:"groups"`
}

// ToolCallParams select tool calls: a session's, or a project's.
type ToolCallParams struct {
	Project   string
	SessionID string
	Tool      string
	Since     time.Time
	Limit     int    // default 100, at most 500
	Cursor    string // from a previous page
}

// ToolCallPage is a page of tool calls: a session's in the order they were
// recorded, a project's newest first.
type ToolCallPage struct {
	ToolCalls  []logbook.ToolCall `json:"tool_calls"`
	NextCursor string             `json:"next_cursor,omitempty"`
}

// ClaimParams describe a claim a session asks for (POST /v1/claims).
type ClaimParams struct {
	SessionID  string `json:"session_id"`
	Subject    string `json:"subject"`
	TTLMinutes int    `json:"ttl_minutes,omitempty"` // default 30, at most 1440
}

// ClaimsParams select active claims of a project.
type ClaimsParams struct {
	Project   string
	Subject   string // who holds this subject or a prefix of it
	SessionID string
}

// ClaimsAnswer is the answer of GET /v1/claims.
type ClaimsAnswer struct {
	Claims []logbook.Claim `json:"claims"`
}

// NoteParams address a note to the live sessions about something (POST
// /v1/notes; issue and pull may be numbers).
type NoteParams struct {
	Project string   `json:"project,omitempty"`
	Issue   IssueRef `json:"issue,omitempty"`
	Pull    IssueRef `json:"pull,omitempty"`
	Subject string   `json:"subject,omitempty"`
	Text    string   `json:"text"`
	Key     string   `json:"key,omitempty"` // makes a repeated note a no-op
}

// NoteResult says how many sessions heard a note.
type NoteResult struct {
	Told       int      `json:"told"`
	Duplicates int      `json:"duplicates"`
	Sessions   []string `json:"sessions"`
}

// ClassifyBody is the body of POST /v1/classify.
type ClassifyBody struct {
	Command string `json:"command"`
	Project string `json:"project,omitempty"`
}

// RetentionAnswer is a project's retention, the answer of GET and PUT
// /v1/projects/{project}/retention (PUT takes the days alone).
type RetentionAnswer struct {
	Project string `json:"project"`
	logbook.Retention
}

// AlertRuleBody is the body of POST /v1/projects/{project}/alert_rules:
// a new alert rule (see logbook.AlertRule).
type AlertRuleBody struct {
	Name      string            `json:"name,omitempty"`
	Kind      logbook.AlertKind `json:"kind"`
	Threshold int               `json:"threshold,omitempty"`
	// BudgetUSD is a cost_over_budget rule's budget, in US dollars (a
	// decimal: 25, 2.50), and Scope whose cost it is for: session,
	// agent_day or project_day (logbook.AlertScope). Other kinds take
	// neither.
	BudgetUSD float64            `json:"budget_usd,omitempty"`
	Scope     logbook.AlertScope `json:"scope,omitempty"`
	// WebhookURL is where alerts are posted (http or https).
	WebhookURL string `json:"webhook_url"`
	// Format is json (default: logbook.AlertBody, signed) or slack.
	Format logbook.AlertFormat `json:"format,omitempty"`
}

// AlertRulesAnswer is the answer of GET /v1/projects/{project}/alert_rules.
type AlertRulesAnswer struct {
	Rules []logbook.AlertRule `json:"rules"`
}

// AlertsParams select a project's alerts.
type AlertsParams struct {
	Project string
	// RuleID keeps one rule's alerts.
	RuleID string
	// Limit is how many, the newest raised first (default 50, at most 200).
	Limit int
}

// AlertsAnswer is the answer of GET /v1/projects/{project}/alerts.
type AlertsAnswer struct {
	Alerts []logbook.Alert `json:"alerts"`
}

// Prices is a project's price table, the answer of GET and PUT
// /v1/projects/{project}/prices: the prices its model calls are costed
// at (the built-in table read on Date, with the project's own), and the
// project's own apart.
type Prices struct {
	Project string                   `json:"project"`
	Date    string                   `json:"date"`
	Models  map[string]logbook.Price `json:"models"`
	Own     map[string]logbook.Price `json:"own"`
}

// PricesBody is the body of PUT /v1/projects/{project}/prices: the
// project's own prices by model name, replacing those it had ({} drops
// them all).
type PricesBody struct {
	Models map[string]logbook.Price `json:"models"`
}

// RotateBody is the body of POST /v1/agents/{agent}/rotate.
type RotateBody struct {
	Project string `json:"project,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Rotation is what rotating an agent did.
type Rotation struct {
	Session           logbook.Session `json:"session"`
	PreviousSessionID string          `json:"previous_session_id"`
	Reason            string          `json:"reason"`
}

// RotationPolicyBody is the body of PUT /v1/agents/{agent}/rotation_policy.
type RotationPolicyBody struct {
	MaxAge         string `json:"max_age,omitempty"` // a duration: 24h, 90m, 7d
	MaxInputTokens int64  `json:"max_input_tokens,omitempty"`
}

// AgentView is an agent with its current session and its rotations.
type AgentView struct {
	Agent     logbook.Agent      `json:"agent"`
	Session   *logbook.Session   `json:"session"`
	Rotations []logbook.Rotation `json:"rotations"`
}

// TaskInput is a task handed to an agent (POST /v1/agents/{agent}/tasks).
type TaskInput struct {
	TaskID string `json:"task_id"`
	Title  string `json:"title,omitempty"`
	Text   string `json:"text"`
}

// TaskResult is a task handed over, with the session it went to.
type TaskResult struct {
	Task    logbook.Task    `json:"task"`
	Session logbook.Session `json:"session"`
	// Added is false when the same task with the same text was handed
	// over before: nothing was added.
	Added bool `json:"added"`
}

// TasksAnswer is the answer of GET /v1/agents/{agent}/tasks.
type TasksAnswer struct {
	Tasks []logbook.Task `json:"tasks"`
}
