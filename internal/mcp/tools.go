package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// instructions tell an agent, when it connects, how the tools fit together.
const instructions = `logbook records your session so people and other agents can see what you did and why you stopped.
Call start_session first (pass harness and harness_session_id so that a repeat returns the same session) and keep its id.
Call set_goal with what you are trying to do: it answers with earlier partial or failed attempts at the same thing; read them.
Before you start on something, call search with its key words (an error message, a file, a function, a host): it finds what agents before you said and ran about it, in every transcript of the project.
Before running a shell command, call classify_command and follow its decision: deny means do not run it; ask means ask the user first; defer means logbook has no objection and your harness's own permission settings decide; allow means the project approved it.
Claim a file, folder, issue or branch before changing it, so other agents stay off it; before writing files, call check_write and follow its decision as for classify_command.
Record prompts, messages, tool calls and results as you go; keep your plan current with plan.
Other agents may write to you: read_inbox gives your session its messages (Claude Code gets them at its next tool call too); answer with send_message and ack what you acted on.
When you finish or stop, call complete_task with the outcome and what was done.`

// register adds logbook's tools to s. Annotations say what each does to
// the ledger (none reaches outside it, so none is open-world):
//
//   - read-only: classify_command, search, list_sessions, get_session,
//     list_alerts;
//   - additive and idempotent: start_session (on harness_session_id),
//     set_goal, claim (claiming again renews), check_write (claims the
//     files when the project claims on first write), ack;
//   - additive, not idempotent: record (a repeat without keys records again),
//     send_message, read_inbox (see registerMessages);
//   - destructive and idempotent: plan (replaces the steps), release (hands
//     the subject to others), complete_task (ends the session for good).
func (ts *toolset) register(s *sdk.Server) {
	add(s, ts, &sdk.Tool{Name: "start_session", Title: "Start a session", Annotations: writes(false, true), Description: `Start your session in the logbook before you work, and keep the id it returns: every other tool takes it.
Calling again with the same harness and harness_session_id returns the same session (reopened if it had ended), with the fields you give applied, so a retry is safe.
For a subagent, pass parent_id. Returns the session.`}, startSession)

	add(s, ts, &sdk.Tool{Name: "set_goal", Title: "Set the goal", Annotations: writes(false, true), Description: `Say what your session is trying to do.
Answers {session, prior}: prior lists the project's partial and failed sessions of the last day on a similar goal or the same issue, pull or subject, with their result and blocker.
Read them before you start, to pick up the thread instead of repeating what failed.`}, setGoal)

	add(s, ts, &sdk.Tool{Name: "record", Title: "Record entries", Annotations: writes(false, false), Description: `Record what happened in your session, in order: prompts, messages, tool calls and their results, notes, summaries.
At most 500 entries a call; they are numbered after the session's last one.
Give an entry a key to make a retry safe: an entry whose key the session already has is skipped and counted as a duplicate.
touched lists the files you edited and commands you ran. Returns {recorded, duplicates, last_seq}.`}, record)

	add(s, ts, &sdk.Tool{Name: "plan", Title: "Set the plan", Annotations: writes(true, true), Description: `Keep your session's plan current.
Give steps to replace the whole plan (numbered from 1; a step without a status is pending),
or give step (a step's number) and status to change that one step.
Statuses: pending, running, done, skipped, failed. Returns {plan}.`}, plan)

	add(s, ts, &sdk.Tool{Name: "classify_command", Title: "Classify a shell command", Annotations: readOnly(), Description: `Before you run a shell command, ask how risky it is and what the project's policy decides.
decision is deny (do not run it), ask (ask the user first), defer (logbook has no objection: your harness's own permission settings decide) or allow (the project's policy approves it).
The command is parsed, never run. Returns {class, decision, reasons, commands, writes}: the same verdict the API and the Claude Code hook give.`}, classifyCommand)

	add(s, ts, &sdk.Tool{Name: "claim", Title: "Claim a subject", Annotations: writes(false, true), Description: `Claim what you are about to change so other agents stay off it: a file path, a folder (ending in /), issue:12, pull:7, branch:NAME, or any name.
The claim lasts ttl_minutes (default 30, at most 1440); each write to your session renews it, and ending the session releases it. Claiming again renews it.
When another session holds the subject (or a folder around it) the call fails naming the holder and until when: work on something else, or wait.
Returns the claim; keep its id for release.`}, claim)

	add(s, ts, &sdk.Tool{Name: "check_write", Title: "Check a write against claims", Annotations: writes(false, true), Description: `Before you change files, ask whether another live session holds them: give your session_id and the paths (relative to the repository's top folder), or the shell command that writes them.
decision is defer (nobody else holds them: go ahead) or the project's claims guard, deny (do not write them) or ask (ask the user first), with reason naming the holder, its goal and when its claim expires. Your own claims, your parent's and your subagents' pass.
When the project claims files on first write, the files you may write are claimed for you (listed in claimed). The same answer the hooks give. Returns {decision, reason, paths, held, claimed}.`}, checkWrite)

	add(s, ts, &sdk.Tool{Name: "release", Title: "Release a claim", Annotations: writes(true, true), Description: `Release a claim you hold, so others may take its subject. Releasing again does nothing. Returns the claim.`}, release)

	add(s, ts, &sdk.Tool{Name: "complete_task", Title: "Complete the task", Annotations: writes(true, true), Description: `End your session when the task is done or you stop: outcome success, partial or failed, and result saying what was done.
For partial and failed, give blocker when you know why you stopped (approval_timeout, user_abandoned, classifier_overreach, model_refusal, tool_error, rate_limited, context_exhausted, unknown); without one it is derived from your last assistant message.
Pending and running plan steps close (done on success, skipped otherwise), your claims are released and subagents still going end.
The session then takes no more entries. Returns the session.`}, completeTask)

	add(s, ts, &sdk.Tool{Name: "search", Title: "Search every transcript", Annotations: readOnly(), Description: `Has anyone tried this before? Search every transcript of the project (prompts, messages, tool calls and their results, notes, summaries) and its sessions' titles, goals and results, before you start work.
q holds words that must all be found, in any order: an error message, a file path, a function name, a host; a phrase in double quotes is found as written; a word ending in * also finds longer ones (migrat* finds migration). Chinese, Japanese and Korean text is found by any run of its characters.
Returns {results, next_cursor, ranked, more}, best first: each result names the session (session_id, title, actor, outcome) and the entry (seq; 0 for the session's own title, goal or result, named in field), with a snippet of the text around the match, matched words marked. Read a whole session with get_session.`}, searchTranscripts)

	add(s, ts, &sdk.Tool{Name: "list_sessions", Title: "List sessions", Annotations: readOnly(), Description: `List a project's sessions, most recently seen first, with their outcome, blocker and counters.
Every filter is optional and they combine. Returns {sessions, next_cursor}; pass next_cursor as cursor for the next page.`}, listSessions)

	add(s, ts, &sdk.Tool{Name: "get_session", Title: "Read a session", Annotations: readOnly(), Description: `Read a session: its fields (cost_micros: what its model calls cost, in millionths of a US dollar), up to 500 entries after after_seq (call again with next_after_seq to read on; a model call's usage carries its cost_micros), its subagents, plan, links, touched files and claims.`}, getSession)

	add(s, ts, &sdk.Tool{Name: "list_alerts", Title: "List alerts", Annotations: readOnly(), Description: `List the alerts the project's rules raised, the newest first, and where the delivery of each to its rule's webhook stands.
The rules post when a session ends failed or blocked (session_failed), the gate denies a command (command_denied), a quiet session holds claims (idle_with_claims), a session repeats a tool call (tool_loop), or model calls cost more than a budget (cost_over_budget).
Returns {alerts}: each with kind, subject, session_id, summary, details, raised_at, and status (pending, delivered or failed), attempts, next_attempt_at and log (each attempt's HTTP status or error).`}, listAlerts)

	ts.registerMessages(s)
}

// readOnly annotates a tool that changes nothing.
func readOnly() *sdk.ToolAnnotations {
	closed := false
	return &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &closed}
}

// writes annotates a tool that changes the ledger.
func writes(destructive, idempotent bool) *sdk.ToolAnnotations {
	closed := false
	return &sdk.ToolAnnotations{DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: &closed}
}

// ref is an issue or pull request number, which agents send as 12 or "12".
type ref string

func (r *ref) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		*r = ref(n.String())
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("expected an issue or pull request number")
	}
	*r = ref(strings.TrimPrefix(strings.TrimSpace(s), "#"))
	return nil
}

// ptr returns a pointer to r as a string, for logbook.SessionFields.
func (r ref) ptr() *string {
	s := string(r)
	return &s
}

type startInput struct {
	Project          string `json:"project,omitempty" jsonschema:"the project; leave out for the default one (logbook mcp --project) or your token's"`
	Harness          string `json:"harness,omitempty" jsonschema:"what runs you: claude-code, codex, or your own agent's name"`
	HarnessSessionID string `json:"harness_session_id,omitempty" jsonschema:"your harness's own id for this run; starting again with the same harness and id returns the same session"`
	ParentID         string `json:"parent_id,omitempty" jsonschema:"for a subagent: the logbook id of the session that started it"`
	Title            string `json:"title,omitempty" jsonschema:"a short title; the goal is used when set"`
	Goal             string `json:"goal,omitempty" jsonschema:"what the session is trying to do, in a sentence"`
	Task             string `json:"task,omitempty" jsonschema:"the task as it was given"`
	Prompt           string `json:"prompt,omitempty" jsonschema:"the user's first prompt"`
	Model            string `json:"model,omitempty" jsonschema:"the model, e.g. claude-sonnet-4-5"`
	AgentType        string `json:"agent_type,omitempty" jsonschema:"for a subagent: its type, e.g. Explore"`
	Agent            string `json:"agent,omitempty" jsonschema:"the named long-lived agent this session belongs to, e.g. engineer-1"`
	Issue            ref    `json:"issue,omitempty" jsonschema:"the issue the session works on, e.g. 12"`
	Pull             ref    `json:"pull,omitempty" jsonschema:"the pull request the session works on, e.g. 7"`
	Branch           string `json:"branch,omitempty" jsonschema:"the git branch"`
	HeadCommit       string `json:"head_commit,omitempty" jsonschema:"the git commit checked out"`
	Subject          string `json:"subject,omitempty" jsonschema:"what the session works on when it is not an issue or pull: a path, a host, a ticket"`
}

func startSession(ctx context.Context, l ledger.Ledger, in startInput) (logbook.Session, error) {
	// Blank fields are dropped by StartSession, so a repeated start with
	// fewer fields keeps what an earlier one said.
	sess, _, err := l.StartSession(ctx, ledger.StartParams{
		Project: in.Project, Harness: in.Harness, HarnessSessionID: in.HarnessSessionID, ParentID: in.ParentID,
		Fields: logbook.SessionFields{
			Title: &in.Title, Goal: &in.Goal, Task: &in.Task, Prompt: &in.Prompt, Model: &in.Model,
			AgentType: &in.AgentType, Agent: &in.Agent, Issue: in.Issue.ptr(), Pull: in.Pull.ptr(),
			Branch: &in.Branch, HeadCommit: &in.HeadCommit, Subject: &in.Subject,
		},
	})
	return sess, err
}

type goalInput struct {
	SessionID string `json:"session_id" jsonschema:"the id of your session, as start_session returned it"`
	Goal      string `json:"goal" jsonschema:"what the session is trying to do, in a sentence"`
}

func setGoal(ctx context.Context, l ledger.Ledger, in goalInput) (ledger.GoalResult, error) {
	return l.SetGoal(ctx, in.SessionID, in.Goal)
}

type recordInput struct {
	SessionID string       `json:"session_id" jsonschema:"the id of your session, as start_session returned it"`
	Entries   []entryInput `json:"entries,omitempty" jsonschema:"the entries, in the order they happened; at most 500"`
	Touched   []touchInput `json:"touched,omitempty" jsonschema:"files edited and commands run since the last call"`
}

type entryInput struct {
	Kind       logbook.Kind   `json:"kind" jsonschema:"prompt, message, tool_call, tool_result, note, skill, summary or compaction"`
	Role       string         `json:"role,omitempty" jsonschema:"for a message: user, assistant or system"`
	Text       string         `json:"text,omitempty" jsonschema:"what was said, or the tool's output"`
	Tool       string         `json:"tool,omitempty" jsonschema:"for a tool call: the tool's name, e.g. Bash"`
	ToolCallID string         `json:"tool_call_id,omitempty" jsonschema:"pairs a tool_result with its tool_call"`
	Payload    any            `json:"payload,omitempty" jsonschema:"any JSON: a tool call's input, a result's details"`
	Commit     string         `json:"commit,omitempty" jsonschema:"a git commit the entry made"`
	Key        string         `json:"key,omitempty" jsonschema:"an idempotency key: an entry whose key the session already has is skipped"`
	Usage      *logbook.Usage `json:"usage,omitempty" jsonschema:"the tokens the model call used"`
}

type touchInput struct {
	Kind  string `json:"kind,omitempty" jsonschema:"file (the default) or command"`
	Value string `json:"value" jsonschema:"the file path, or the command line"`
}

func record(ctx context.Context, l ledger.Ledger, in recordInput) (ledger.AppendResult, error) {
	batch := ledger.Batch{Entries: make([]logbook.Entry, len(in.Entries)), Touched: make([]logbook.Touch, len(in.Touched))}
	for i, e := range in.Entries {
		batch.Entries[i] = logbook.Entry{Kind: e.Kind, Role: e.Role, Text: e.Text, Tool: e.Tool, ToolCallID: e.ToolCallID,
			Commit: e.Commit, Key: e.Key, Usage: e.Usage}
		if e.Payload != nil {
			raw, err := json.Marshal(e.Payload) // it was decoded from JSON: it encodes again
			if err != nil {
				return ledger.AppendResult{}, logbook.Invalid(fmt.Sprintf("entries[%d].payload", i), "%v", err)
			}
			batch.Entries[i].Payload = raw
		}
	}
	for i, t := range in.Touched {
		batch.Touched[i] = logbook.Touch{Kind: t.Kind, Value: t.Value}
	}
	return l.AppendEntries(ctx, in.SessionID, batch)
}

type planInput struct {
	SessionID string      `json:"session_id" jsonschema:"the id of your session, as start_session returned it"`
	Steps     []stepInput `json:"steps,omitempty" jsonschema:"the whole plan, in order, replacing the one before; [] clears it"`
	Step      int         `json:"step,omitempty" jsonschema:"the number of the one step to change (from 1), with status"`
	Status    string      `json:"status,omitempty" jsonschema:"the new status of step: pending, running, done, skipped or failed"`
}

type stepInput struct {
	Text   string `json:"text" jsonschema:"what the step does"`
	Status string `json:"status,omitempty" jsonschema:"pending (the default), running, done, skipped or failed"`
}

// planAnswer is what plan answers, and the API too: the session's plan
// after the change.
type planAnswer struct {
	Plan []logbook.PlanStep `json:"plan"`
}

func plan(ctx context.Context, l ledger.Ledger, in planInput) (planAnswer, error) {
	var steps []logbook.PlanStep
	var err error
	switch {
	case in.Steps != nil && in.Step != 0:
		return planAnswer{}, logbook.Invalid("step", "give steps to replace the plan, or step and status to change one step, not both")
	case in.Steps != nil:
		input := make([]ledger.StepInput, len(in.Steps))
		for i, s := range in.Steps {
			input[i] = ledger.StepInput{Text: s.Text, Status: logbook.StepStatus(s.Status)}
		}
		steps, err = l.SetPlan(ctx, in.SessionID, input)
	case in.Step > 0:
		steps, err = l.UpdatePlanStep(ctx, in.SessionID, in.Step, logbook.StepStatus(in.Status))
	case in.Step < 0:
		return planAnswer{}, logbook.Invalid("step", "steps are numbered from 1")
	default:
		return planAnswer{}, logbook.Invalid("steps", "give steps to replace the plan, or step and status to change one step")
	}
	return planAnswer{Plan: steps}, err
}

type classifyInput struct {
	Command string `json:"command" jsonschema:"the shell command line, exactly as it would run"`
	Project string `json:"project,omitempty" jsonschema:"the project whose policy decides; leave out for the default one (logbook mcp --project) or your token's"`
}

func classifyCommand(ctx context.Context, l ledger.Ledger, in classifyInput) (classify.Verdict, error) {
	return l.Classify(ctx, in.Project, in.Command)
}

type claimInput struct {
	SessionID  string `json:"session_id" jsonschema:"the id of your session, as start_session returned it"`
	Subject    string `json:"subject" jsonschema:"what to claim: a file path, a folder ending in /, issue:12, pull:7, branch:NAME, or any name"`
	TTLMinutes int    `json:"ttl_minutes,omitempty" jsonschema:"how long the claim lasts without a write to the session, in minutes: 1 to 1440, default 30"`
}

func claim(ctx context.Context, l ledger.Ledger, in claimInput) (logbook.Claim, error) {
	claim, _, err := l.Claim(ctx, ledger.ClaimParams{SessionID: in.SessionID, Subject: in.Subject, TTLMinutes: in.TTLMinutes})
	return claim, err
}

type checkWriteInput struct {
	SessionID string   `json:"session_id" jsonschema:"the id of your session, as start_session returned it"`
	Paths     []string `json:"paths,omitempty" jsonschema:"the files you are about to write, relative to the repository's top folder"`
	Command   string   `json:"command,omitempty" jsonschema:"or the shell command that would write them: the files it writes are found in its parsed syntax"`
}

func checkWrite(ctx context.Context, l ledger.Ledger, in checkWriteInput) (ledger.GateAnswer, error) {
	p := ledger.GateParams{SessionID: in.SessionID, Paths: in.Paths}
	if in.Command != "" {
		p.Tool = "Bash"
		p.Input, _ = json.Marshal(map[string]string{"command": in.Command})
	}
	return l.Gate(ctx, p)
}

type releaseInput struct {
	ClaimID string `json:"claim_id" jsonschema:"the id of the claim, as claim returned it"`
}

func release(ctx context.Context, l ledger.Ledger, in releaseInput) (logbook.Claim, error) {
	return l.Release(ctx, in.ClaimID)
}

type completeInput struct {
	SessionID string `json:"session_id" jsonschema:"the id of your session, as start_session returned it"`
	Outcome   string `json:"outcome" jsonschema:"success, partial or failed"`
	Result    string `json:"result" jsonschema:"what was done, and for partial or failed what is left, in a few sentences"`
	Blocker   string `json:"blocker,omitempty" jsonschema:"why you stopped, for partial or failed: approval_timeout, user_abandoned, classifier_overreach, model_refusal, tool_error, rate_limited, context_exhausted or unknown; derived when left out"`
}

func completeTask(ctx context.Context, l ledger.Ledger, in completeInput) (logbook.Session, error) {
	return l.EndSession(ctx, in.SessionID, ledger.EndParams{
		Outcome: logbook.Outcome(in.Outcome), Result: in.Result, Blocker: logbook.Blocker(in.Blocker)})
}

type listInput struct {
	Project string `json:"project,omitempty" jsonschema:"the project; leave out for the default one (logbook mcp --project) or your token's"`
	State   string `json:"state,omitempty" jsonschema:"active, idle or ended"`
	Outcome string `json:"outcome,omitempty" jsonschema:"success, partial or failed"`
	Blocker string `json:"blocker,omitempty" jsonschema:"approval_timeout, user_abandoned, classifier_overreach, model_refusal, tool_error, rate_limited, context_exhausted or unknown"`
	Harness string `json:"harness,omitempty" jsonschema:"only sessions of this harness, e.g. claude-code"`
	Agent   string `json:"agent,omitempty" jsonschema:"only sessions of this named agent"`
	Issue   ref    `json:"issue,omitempty" jsonschema:"only sessions on this issue (attached or named as #12)"`
	Pull    ref    `json:"pull,omitempty" jsonschema:"only sessions on this pull request"`
	Path    string `json:"path,omitempty" jsonschema:"only sessions that touched this file, or a file under this folder when it ends in /"`
	Since   string `json:"since,omitempty" jsonschema:"only sessions started since: a time (2026-11-30T12:00:00Z) or a duration back from now (36h, 7d)"`
	Query   string `json:"q,omitempty" jsonschema:"words that must all be found in the title, goal or result (as search reads them)"`
	Limit   int    `json:"limit,omitempty" jsonschema:"sessions per page: 1 to 200, default 50"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

func listSessions(ctx context.Context, l ledger.Ledger, in listInput) (ledger.SessionPage, error) {
	if in.Limit < 0 {
		return ledger.SessionPage{}, logbook.Invalid("limit", "give a limit from 1 to %d", logbook.MaxPageSize)
	}
	p := ledger.ListParams{Project: in.Project, Limit: in.Limit, Cursor: in.Cursor}
	f := &p.Filter
	f.Harness, f.Agent, f.Query = in.Harness, in.Agent, in.Query
	f.Issue, f.Pull = string(in.Issue), string(in.Pull)
	f.Path = logbook.NormalizeSubject(in.Path)
	if f.State = logbook.State(in.State); f.State != "" && !f.State.Valid() {
		return ledger.SessionPage{}, logbook.Invalid("state", "%q is not a state; use active, idle or ended", in.State)
	}
	if f.Outcome = logbook.Outcome(in.Outcome); f.Outcome != "" && !f.Outcome.Valid() {
		return ledger.SessionPage{}, logbook.Invalid("outcome", "%q is not an outcome; use success, partial or failed", in.Outcome)
	}
	if f.Blocker = logbook.Blocker(in.Blocker); f.Blocker != "" && !f.Blocker.Valid() {
		return ledger.SessionPage{}, logbook.Invalid("blocker", "%q is not a blocker; use one of %v", in.Blocker, logbook.Blockers)
	}
	if in.Since != "" {
		var ok bool
		if f.Since, ok = logbook.ParseTime(in.Since, time.Now()); !ok {
			return ledger.SessionPage{}, logbook.Invalid("since", "%q is not a time; %s", in.Since, logbook.TimeHint)
		}
	}
	return l.ListSessions(ctx, p)
}

type searchInput struct {
	Project string `json:"project,omitempty" jsonschema:"the project; leave out for the default one (logbook mcp --project) or your token's"`
	Query   string `json:"q" jsonschema:"what to search for: words that must all be found, a phrase in double quotes found as written"`
	Actor   string `json:"actor,omitempty" jsonschema:"only sessions of this actor"`
	Harness string `json:"harness,omitempty" jsonschema:"only sessions of this harness, e.g. claude-code"`
	Outcome string `json:"outcome,omitempty" jsonschema:"only sessions that ended success, partial or failed"`
	Tool    string `json:"tool,omitempty" jsonschema:"only calls of this tool and their results, e.g. Bash"`
	Kind    string `json:"kind,omitempty" jsonschema:"only entries of this kind (prompt, message, tool_call, tool_result, note, summary, …), or session for the sessions' own title, goal and result"`
	Since   string `json:"since,omitempty" jsonschema:"only what was recorded since: a time (2026-11-30T12:00:00Z) or a duration back from now (36h, 7d)"`
	Limit   int    `json:"limit,omitempty" jsonschema:"results per page: 1 to 100, default 20"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

func searchTranscripts(ctx context.Context, l ledger.Ledger, in searchInput) (ledger.SearchPage, error) {
	if in.Limit < 0 {
		return ledger.SearchPage{}, logbook.Invalid("limit", "give a limit from 1 to %d", logbook.MaxSearchPage)
	}
	p := ledger.SearchParams{Project: in.Project, Query: in.Query, Limit: in.Limit, Cursor: in.Cursor, Filter: logbook.SearchFilter{
		Actor: in.Actor, Harness: in.Harness, Outcome: logbook.Outcome(in.Outcome), Tool: in.Tool, Kind: logbook.Kind(in.Kind)}}
	if in.Since != "" {
		var ok bool
		if p.Filter.Since, ok = logbook.ParseTime(in.Since, time.Now()); !ok {
			return ledger.SearchPage{}, logbook.Invalid("since", "%q is not a time; %s", in.Since, logbook.TimeHint)
		}
	}
	return l.Search(ctx, p)
}

type getInput struct {
	SessionID string `json:"session_id" jsonschema:"the id of the session, as start_session or list_sessions returned it"`
	AfterSeq  int64  `json:"after_seq,omitempty" jsonschema:"read the entries after this number: 0 (the default) from the start, next_after_seq to read on"`
}

func getSession(ctx context.Context, l ledger.Ledger, in getInput) (ledger.SessionView, error) {
	if in.AfterSeq < 0 {
		return ledger.SessionView{}, logbook.Invalid("after_seq", "give 0 to read from the start, or next_after_seq to read on")
	}
	return l.GetSession(ctx, in.SessionID, ledger.GetParams{AfterSeq: in.AfterSeq})
}

type alertsInput struct {
	Project string `json:"project,omitempty" jsonschema:"the project; leave out for the default one (logbook mcp --project) or your token's"`
	RuleID  string `json:"rule_id,omitempty" jsonschema:"only the alerts of this rule (its id)"`
	Limit   int    `json:"limit,omitempty" jsonschema:"how many alerts, the newest: 1 to 200, default 50"`
}

func listAlerts(ctx context.Context, l ledger.Ledger, in alertsInput) (ledger.AlertsAnswer, error) {
	if in.Limit < 0 {
		return ledger.AlertsAnswer{}, logbook.Invalid("limit", "give a limit from 1 to 200")
	}
	alerts, err := l.Alerts(ctx, ledger.AlertsParams{Project: in.Project, RuleID: in.RuleID, Limit: in.Limit})
	return ledger.AlertsAnswer{Alerts: alerts}, err
}
