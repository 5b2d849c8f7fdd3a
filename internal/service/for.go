package service

import (
	"context"
	"time"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// For returns the ledger as caller c sees it, in process: each method is
// the service's method of the same name, acting as c. The MCP server, the
// importers and the CLI take it where they take the HTTP client, and get
// the same answers.
func (s *Service) For(c Caller) ledger.Ledger { return callerLedger{s: s, c: c} }

// callerLedger is the service acting as one caller.
type callerLedger struct {
	s *Service
	c Caller
}

var _ ledger.Ledger = callerLedger{}

func (l callerLedger) StartSession(ctx context.Context, p ledger.StartParams) (logbook.Session, bool, error) {
	return l.s.StartSession(ctx, l.c, p)
}

func (l callerLedger) UpdateSession(ctx context.Context, id string, f logbook.SessionFields) (logbook.Session, error) {
	return l.s.UpdateSession(ctx, l.c, id, f)
}

func (l callerLedger) SetGoal(ctx context.Context, id, goal string) (ledger.GoalResult, error) {
	return l.s.SetGoal(ctx, l.c, id, goal)
}

func (l callerLedger) AppendEntries(ctx context.Context, id string, b ledger.Batch) (ledger.AppendResult, error) {
	return l.s.AppendEntries(ctx, l.c, id, b)
}

func (l callerLedger) Compact(ctx context.Context, id string, entries []logbook.Entry) (ledger.AppendResult, error) {
	return l.s.Compact(ctx, l.c, id, entries)
}

func (l callerLedger) EndSession(ctx context.Context, id string, p ledger.EndParams) (logbook.Session, error) {
	return l.s.EndSession(ctx, l.c, id, p)
}

func (l callerLedger) DeleteSession(ctx context.Context, id string, force bool) (ledger.Deleted, error) {
	return l.s.DeleteSession(ctx, l.c, id, force)
}

func (l callerLedger) SetPlan(ctx context.Context, id string, steps []ledger.StepInput) ([]logbook.PlanStep, error) {
	return l.s.SetPlan(ctx, l.c, id, steps)
}

func (l callerLedger) UpdatePlanStep(ctx context.Context, id string, n int, status logbook.StepStatus) ([]logbook.PlanStep, error) {
	return l.s.UpdatePlanStep(ctx, l.c, id, n, status)
}

func (l callerLedger) GetSession(ctx context.Context, id string, p ledger.GetParams) (ledger.SessionView, error) {
	return l.s.GetSession(ctx, l.c, id, p)
}

func (l callerLedger) ListSessions(ctx context.Context, p ledger.ListParams) (ledger.SessionPage, error) {
	return l.s.ListSessions(ctx, l.c, p)
}

func (l callerLedger) Search(ctx context.Context, p ledger.SearchParams) (ledger.SearchPage, error) {
	return l.s.Search(ctx, l.c, p)
}

func (l callerLedger) Stats(ctx context.Context, p ledger.StatsParams) ([]logbook.StatsRow, error) {
	return l.s.Stats(ctx, l.c, p)
}

func (l callerLedger) ToolCalls(ctx context.Context, p ledger.ToolCallParams) (ledger.ToolCallPage, error) {
	return l.s.ToolCalls(ctx, l.c, p)
}

func (l callerLedger) SessionsByCommit(ctx context.Context, project, sha string) ([]logbook.Session, error) {
	return l.s.SessionsByCommit(ctx, l.c, project, sha)
}

func (l callerLedger) Claim(ctx context.Context, p ledger.ClaimParams) (logbook.Claim, bool, error) {
	return l.s.Claim(ctx, l.c, p)
}

func (l callerLedger) Release(ctx context.Context, claimID string) (logbook.Claim, error) {
	return l.s.Release(ctx, l.c, claimID)
}

func (l callerLedger) Claims(ctx context.Context, p ledger.ClaimsParams) ([]logbook.Claim, error) {
	return l.s.Claims(ctx, l.c, p)
}

func (l callerLedger) AddNote(ctx context.Context, p ledger.NoteParams) (ledger.NoteResult, error) {
	return l.s.AddNote(ctx, l.c, p)
}

func (l callerLedger) SendMessage(ctx context.Context, p ledger.SendParams) (logbook.Message, error) {
	return l.s.SendMessage(ctx, l.c, p)
}

func (l callerLedger) Messages(ctx context.Context, p ledger.MessagesParams) ([]logbook.Message, error) {
	return l.s.Messages(ctx, l.c, p)
}

func (l callerLedger) ReadInbox(ctx context.Context, sessionID string) ([]logbook.Message, error) {
	return l.s.ReadInbox(ctx, l.c, sessionID)
}

func (l callerLedger) MarkMessage(ctx context.Context, id string, mark logbook.MessageMark) (logbook.Message, error) {
	return l.s.MarkMessage(ctx, l.c, id, mark)
}

// Follow reads the project's events after afterID, then waits for the
// service to say more may have been committed (here or on another
// replica), and reads again.
func (l callerLedger) Follow(ctx context.Context, project string, afterID int64, fn func(logbook.Event) error) error {
	if afterID == ledger.FromNow {
		latest, err := l.s.LatestEventID(ctx, l.c, project)
		if err != nil {
			return err
		}
		afterID = latest
	}
	for {
		changed := l.s.EventsChanged() // before reading, so nothing slips between
		events, err := l.s.Events(ctx, l.c, project, afterID, 500)
		if err != nil {
			return err
		}
		for _, e := range events {
			if err := fn(e); err != nil {
				return err
			}
			afterID = e.ID
		}
		if len(events) == 500 {
			continue // more are waiting
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

func (l callerLedger) Gate(ctx context.Context, p ledger.GateParams) (ledger.GateAnswer, error) {
	return l.s.Gate(ctx, l.c, p)
}

func (l callerLedger) Classify(ctx context.Context, project, command string) (classify.Verdict, error) {
	return l.s.Classify(ctx, l.c, project, command)
}

func (l callerLedger) Policy(ctx context.Context, project string) (classify.Policy, error) {
	return l.s.Policy(ctx, l.c, project)
}

func (l callerLedger) Retention(ctx context.Context, project string) (logbook.Retention, error) {
	return l.s.Retention(ctx, l.c, project)
}

func (l callerLedger) Prices(ctx context.Context, project string) (ledger.Prices, error) {
	return l.s.Prices(ctx, l.c, project)
}

func (l callerLedger) SetPrices(ctx context.Context, project string, own map[string]logbook.Price) (ledger.Prices, error) {
	return l.s.SetPrices(ctx, l.c, project, own)
}

func (l callerLedger) SetRetention(ctx context.Context, project string, r logbook.Retention) (logbook.Retention, error) {
	return l.s.SetRetention(ctx, l.c, project, r)
}

func (l callerLedger) AlertRules(ctx context.Context, project string) ([]logbook.AlertRule, error) {
	return l.s.AlertRules(ctx, l.c, project)
}

func (l callerLedger) AddAlertRule(ctx context.Context, project string, r AlertRuleBody) (logbook.AlertRule, error) {
	return l.s.AddAlertRule(ctx, l.c, project, r)
}

func (l callerLedger) DeleteAlertRule(ctx context.Context, project, id string) (logbook.AlertRule, error) {
	return l.s.DeleteAlertRule(ctx, l.c, project, id)
}

func (l callerLedger) TestAlertRule(ctx context.Context, project, id string) (logbook.AlertAttempt, error) {
	return l.s.TestAlertRule(ctx, l.c, project, id)
}

func (l callerLedger) Alerts(ctx context.Context, p AlertsParams) ([]logbook.Alert, error) {
	return l.s.Alerts(ctx, l.c, p)
}

func (l callerLedger) EnsureAgentSession(ctx context.Context, project, agent string) (logbook.Session, bool, error) {
	return l.s.EnsureAgentSession(ctx, l.c, project, agent)
}

func (l callerLedger) RotateAgent(ctx context.Context, project, agent, reason string) (ledger.Rotation, error) {
	return l.s.RotateAgent(ctx, l.c, project, agent, reason)
}

func (l callerLedger) Agent(ctx context.Context, project, agent string) (ledger.AgentView, error) {
	return l.s.Agent(ctx, l.c, project, agent)
}

func (l callerLedger) SetRotationPolicy(ctx context.Context, project, agent string, maxAge time.Duration, maxInputTokens int64) (logbook.Agent, error) {
	return l.s.SetRotationPolicy(ctx, l.c, project, agent, maxAge, maxInputTokens)
}

func (l callerLedger) AddTask(ctx context.Context, project, agent string, in ledger.TaskInput) (ledger.TaskResult, error) {
	return l.s.AddTask(ctx, l.c, project, agent, in)
}

func (l callerLedger) Tasks(ctx context.Context, project, agent string) ([]logbook.Task, error) {
	return l.s.Tasks(ctx, l.c, project, agent)
}

func (l callerLedger) Task(ctx context.Context, project, taskID string) (logbook.Task, error) {
	return l.s.Task(ctx, l.c, project, taskID)
}
