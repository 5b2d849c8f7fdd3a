// Package ledger is the port of logbook: what the ledger offers one caller
// (start, record, end, plan, goal, claim, release, list, get, classify,
// tasks, notes…), with its requests and results, and nothing of how it is
// reached.
//
// Two things implement Ledger. The service (package service, through
// service.For) answers in process, as one caller. The typed client
// (package client) answers over the HTTP API, and owns every /v1 path. The
// MCP server, the importers, the hooks, the CLI and the bench take a
// Ledger, so each works in process or against a remote server without
// knowing which, and both give the same answers and the same errors:
// errors.Is(err, logbook.ErrEnded) holds for an error that crossed the
// wire as a problem document (see logbook.ProblemType).
//
// The request and result types double as the API's wire format: the HTTP
// handlers decode requests into them and the client encodes them, so a body
// is declared once. The package imports only the standard library, the
// domain package (logbook) and the classifier's verdict and policy types.
package ledger

import (
	"context"
	"time"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/logbook"
)

// FromNow, as the event id to follow after, means only the events
// committed from now on.
const FromNow int64 = -1

// Ledger is logbook as one caller sees it. Every method answers with the
// errors of package logbook (ErrInvalid with a *logbook.ValidationError,
// ErrNotFound, ErrForbidden, ErrUnauthorized, ErrEnded, ErrConflict,
// ErrUnavailable…), or a failure to reach the ledger.
type Ledger interface {
	// StartSession starts a session, or returns the one the harness
	// already started under the same harness session id (created false),
	// its fields refreshed.
	StartSession(ctx context.Context, p StartParams) (sess logbook.Session, created bool, err error)
	// UpdateSession is a heartbeat that sets the given fields.
	UpdateSession(ctx context.Context, id string, fields logbook.SessionFields) (logbook.Session, error)
	// SetGoal sets the session's goal and returns the project's earlier
	// partial and failed attempts at it.
	SetGoal(ctx context.Context, id, goal string) (GoalResult, error)
	// AppendEntries records a batch of entries, all or none.
	AppendEntries(ctx context.Context, id string, b Batch) (AppendResult, error)
	// Compact supersedes every active entry and appends these.
	Compact(ctx context.Context, id string, entries []logbook.Entry) (AppendResult, error)
	// EndSession ends the session with an outcome.
	EndSession(ctx context.Context, id string, p EndParams) (logbook.Session, error)
	// DeleteSession deletes a session and its subagents.
	DeleteSession(ctx context.Context, id string, force bool) (Deleted, error)
	// SetPlan replaces the session's plan.
	SetPlan(ctx context.Context, id string, steps []StepInput) ([]logbook.PlanStep, error)
	// UpdatePlanStep sets one step's status (steps are numbered from 1).
	UpdatePlanStep(ctx context.Context, id string, n int, status logbook.StepStatus) ([]logbook.PlanStep, error)

	// GetSession returns a session with a page of its entries.
	GetSession(ctx context.Context, id string, p GetParams) (SessionView, error)
	// ListSessions returns a page of sessions.
	ListSessions(ctx context.Context, p ListParams) (SessionPage, error)
	// Search finds entries and sessions of a project by what they say,
	// best first.
	Search(ctx context.Context, p SearchParams) (SearchPage, error)
	// Stats counts sessions by a grouping.
	Stats(ctx context.Context, p StatsParams) ([]logbook.StatsRow, error)
	// ToolCalls lists tool calls paired with their results, for audit.
	ToolCalls(ctx context.Context, p ToolCallParams) (ToolCallPage, error)
	// SessionsByCommit lists the sessions that ran at or made a commit.
	SessionsByCommit(ctx context.Context, project, sha string) ([]logbook.Session, error)

	// Claim takes (or renews) a claim on a subject for a session.
	Claim(ctx context.Context, p ClaimParams) (claim logbook.Claim, created bool, err error)
	// Release releases a claim.
	Release(ctx context.Context, claimID string) (logbook.Claim, error)
	// Claims lists the active claims, or who holds a subject.
	Claims(ctx context.Context, p ClaimsParams) ([]logbook.Claim, error)
	// Gate decides whether a session may write files another live
	// session may hold, and with the project's auto claims claims them.
	Gate(ctx context.Context, p GateParams) (GateAnswer, error)
	// AddNote puts a note into every live session on an issue, pull or
	// subject.
	AddNote(ctx context.Context, p NoteParams) (NoteResult, error)
	// SendMessage sends a message to a session, an agent or an actor of
	// the project.
	SendMessage(ctx context.Context, p SendParams) (logbook.Message, error)
	// Messages lists messages of the project, newest first.
	Messages(ctx context.Context, p MessagesParams) ([]logbook.Message, error)
	// ReadInbox gives the session the messages waiting for it (addressed
	// to it, or, for a top-level session, to its agent or its actor):
	// each is delivered once, into one session, recorded in its
	// transcript and marked read. Oldest first; none is an empty list.
	ReadInbox(ctx context.Context, sessionID string) ([]logbook.Message, error)
	// MarkMessage marks a message addressed to the caller read, or
	// acknowledged.
	MarkMessage(ctx context.Context, id string, mark logbook.MessageMark) (logbook.Message, error)
	// Follow calls fn with each event of the project after afterID
	// (FromNow: only events committed from now on), oldest first, as they
	// are committed, until ctx is done or fn returns an error (which
	// Follow returns).
	Follow(ctx context.Context, project string, afterID int64, fn func(logbook.Event) error) error

	// Classify says how risky a command is and what the project's policy
	// decides for it.
	Classify(ctx context.Context, project, command string) (classify.Verdict, error)
	// Policy returns the project's command policy as it was set.
	Policy(ctx context.Context, project string) (classify.Policy, error)
	// Retention returns how long the project keeps ended sessions and
	// their tool output.
	Retention(ctx context.Context, project string) (logbook.Retention, error)
	// SetRetention sets it (the admin only).
	SetRetention(ctx context.Context, project string, r logbook.Retention) (logbook.Retention, error)
	// Prices returns the prices the project's model calls are costed at.
	Prices(ctx context.Context, project string) (Prices, error)
	// SetPrices replaces the project's own prices (the admin only): they
	// price the calls recorded from then on; recorded costs stay.
	SetPrices(ctx context.Context, project string, own map[string]logbook.Price) (Prices, error)

	// AlertRules lists the project's alert rules, their webhook URLs
	// masked and without their secrets.
	AlertRules(ctx context.Context, project string) ([]logbook.AlertRule, error)
	// AddAlertRule adds one (the admin only); it comes back with the
	// secret that signs its webhook's bodies, shown this once.
	AddAlertRule(ctx context.Context, project string, r AlertRuleBody) (logbook.AlertRule, error)
	// DeleteAlertRule deletes one with its alerts (the admin only).
	DeleteAlertRule(ctx context.Context, project, id string) (logbook.AlertRule, error)
	// TestAlertRule posts a sample alert to a rule's webhook now and says
	// how it went (the admin only).
	TestAlertRule(ctx context.Context, project, id string) (logbook.AlertAttempt, error)
	// Alerts lists the project's alerts, the newest first, with where
	// their delivery stands and its log.
	Alerts(ctx context.Context, p AlertsParams) ([]logbook.Alert, error)

	// EnsureAgentSession returns the agent's current session, made when
	// it has none.
	EnsureAgentSession(ctx context.Context, project, agent string) (sess logbook.Session, created bool, err error)
	// RotateAgent starts the agent's next session; its tasks move to it.
	RotateAgent(ctx context.Context, project, agent, reason string) (Rotation, error)
	// Agent returns the agent, its current session and its rotations.
	Agent(ctx context.Context, project, agent string) (AgentView, error)
	// SetRotationPolicy makes the agent rotate by itself past an age or a
	// token count (zero: never).
	SetRotationPolicy(ctx context.Context, project, agent string, maxAge time.Duration, maxInputTokens int64) (logbook.Agent, error)
	// AddTask hands the agent a task, a user turn in its current session.
	AddTask(ctx context.Context, project, agent string, in TaskInput) (TaskResult, error)
	// Tasks lists the agent's tasks.
	Tasks(ctx context.Context, project, agent string) ([]logbook.Task, error)
	// Task returns one task with its active session and history.
	Task(ctx context.Context, project, taskID string) (logbook.Task, error)
}
