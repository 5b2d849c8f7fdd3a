package service

import "github.com/logbookhq/logbook/internal/ledger"

// The requests and results of the service's use cases are the port's
// (package ledger): the service implements the port for one caller (see
// For), and the HTTP API carries the same types.
type (
	StartParams    = ledger.StartParams
	Batch          = ledger.Batch
	AppendResult   = ledger.AppendResult
	EndParams      = ledger.EndParams
	Deleted        = ledger.Deleted
	StepInput      = ledger.StepInput
	GoalResult     = ledger.GoalResult
	Prior          = ledger.Prior
	GetParams      = ledger.GetParams
	SessionView    = ledger.SessionView
	ListParams     = ledger.ListParams
	SessionPage    = ledger.SessionPage
	SearchParams   = ledger.SearchParams
	SearchPage     = ledger.SearchPage
	StatsParams    = ledger.StatsParams
	ToolCallParams = ledger.ToolCallParams
	ToolCallPage   = ledger.ToolCallPage
	ClaimParams    = ledger.ClaimParams
	ClaimsParams   = ledger.ClaimsParams
	NoteParams     = ledger.NoteParams
	NoteResult     = ledger.NoteResult
	Rotation       = ledger.Rotation
	AgentView      = ledger.AgentView
	TaskInput      = ledger.TaskInput
	TaskResult     = ledger.TaskResult
	AlertRuleBody  = ledger.AlertRuleBody
	AlertsParams   = ledger.AlertsParams
)
