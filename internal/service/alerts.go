package service

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// Alerts: a project's rules (logbook.AlertRule) are checked where the
// facts they watch change, in the same transaction: a session's end
// (EndSession), entries recorded (appendLocked: a denied tool call, the
// same call again and again), and the sweeper for what only time makes
// true (idle with claims). An alert raised is a row of the outbox (the
// alerts table) that commits with the facts or not at all, one per rule
// and subject; the deliverer (alert_delivery.go) posts it to the rule's
// webhook after the commit.

// AlertRules lists a project's alert rules, the oldest first, each
// webhook URL masked (logbook.MaskWebhookURL) and without its secret.
func (s *Service) AlertRules(ctx context.Context, c Caller, project string) ([]logbook.AlertRule, error) {
	project, err := c.projectFor(project)
	if err != nil {
		return nil, err
	}
	rules, err := s.store.AlertRuleList(ctx, store.AlertRuleListParams{Project: project})
	for i := range rules {
		rules[i] = shownRule(rules[i])
	}
	return rules, err
}

// shownRule is a rule as it is shown: its webhook URL masked, its secret
// left out.
func shownRule(r logbook.AlertRule) logbook.AlertRule {
	r.WebhookURL, r.Secret = logbook.MaskWebhookURL(r.WebhookURL), ""
	return r
}

// AddAlertRule adds a rule to a project; only the admin may (logbook then
// posts to the URL it names). The rule comes back with its secret, which
// signs what its webhook receives and is never shown again.
func (s *Service) AddAlertRule(ctx context.Context, c Caller, project string, b AlertRuleBody) (logbook.AlertRule, error) {
	project, err := adminProject(c, project, "adds alert rules")
	if err != nil {
		return logbook.AlertRule{}, err
	}
	r := logbook.AlertRule{Name: b.Name, Kind: b.Kind, Threshold: b.Threshold, BudgetUSD: b.BudgetUSD, Scope: b.Scope,
		WebhookURL: b.WebhookURL, Format: b.Format}
	if err := r.Normalize(); err != nil {
		return logbook.AlertRule{}, err
	}
	now := s.now()
	var secret [24]byte
	_, _ = rand.Read(secret[:]) // crypto/rand.Read never fails on supported platforms
	r.ID, r.Project, r.Secret, r.CreatedAt = logbook.NewID(now), project, "whsec_"+hex.EncodeToString(secret[:]), now
	err = s.inTx(ctx, func(tx *work) error {
		if err := tx.ProjectEnsure(ctx, project, now); err != nil {
			return err
		}
		return tx.AlertRuleInsert(ctx, &r)
	})
	if err != nil {
		return logbook.AlertRule{}, err
	}
	s.alertRules.forget(project)
	r.WebhookURL = logbook.MaskWebhookURL(r.WebhookURL)
	return r, nil
}

// DeleteAlertRule deletes a project's rule with its alerts and their
// delivery log, and returns it as it is shown; only the admin may.
func (s *Service) DeleteAlertRule(ctx context.Context, c Caller, project, id string) (logbook.AlertRule, error) {
	project, err := adminProject(c, project, "deletes alert rules")
	if err != nil {
		return logbook.AlertRule{}, err
	}
	var r logbook.AlertRule
	err = s.inTx(ctx, func(tx *work) error {
		if r, err = ruleOf(ctx, tx, project, id); err != nil {
			return err
		}
		return tx.AlertRuleDelete(ctx, id)
	})
	s.alertRules.forget(project)
	return shownRule(r), err
}

// Alerts lists a project's alerts, the newest raised first, with where
// each delivery stands and its log of attempts.
func (s *Service) Alerts(ctx context.Context, c Caller, p AlertsParams) ([]logbook.Alert, error) {
	project, err := c.projectFor(p.Project)
	if err != nil {
		return nil, err
	}
	switch {
	case p.Limit == 0:
		p.Limit = 50
	case p.Limit < 0 || p.Limit > 200:
		return nil, logbook.Invalid("limit", "give a limit from 1 to 200")
	}
	if p.RuleID != "" {
		if _, err := ruleOf(ctx, s.store, project, p.RuleID); err != nil {
			return nil, err
		}
	}
	return s.store.AlertList(ctx, store.AlertListParams{Project: project, RuleID: p.RuleID, Limit: p.Limit})
}

// adminProject checks that the admin asks, doing what, and cleans the
// project it names.
func adminProject(c Caller, project, doing string) (string, error) {
	if !c.Admin {
		return "", fmt.Errorf("only the admin token %s: %w", doing, logbook.ErrForbidden)
	}
	project, err := logbook.Name("project", project, logbook.MaxID)
	if err != nil {
		return "", err
	}
	if project == "" {
		return "", logbook.Invalid("project", "name the project")
	}
	return project, nil
}

// ruleOf reads a project's rule; ErrNotFound when the project has none
// of that id (another project's rule is not named, nor its URL).
func ruleOf(ctx context.Context, ex store.Executor, project, id string) (logbook.AlertRule, error) {
	r, err := ex.AlertRuleGet(ctx, id)
	if err == nil && r.Project != project {
		err = logbook.ErrNotFound
	}
	if err != nil {
		return logbook.AlertRule{}, fmt.Errorf("no alert rule %q in project %s: %w", id, project, errOr(ignoreNotFound(err), logbook.ErrNotFound))
	}
	return r, nil
}

// alertRulesTTL is how long a replica checks facts against the rules it
// read: a rule added or deleted on another replica applies there within
// it (on this one at once).
const alertRulesTTL = 10 * time.Second

// alertRuleCache keeps each project's rules in memory for alertRulesTTL,
// so that recording entries reads no rule most of the time.
type alertRuleCache struct {
	mu        sync.Mutex
	byProject map[string]cachedRules
	// overBudget notes the day subjects of cost_over_budget rules this
	// process found over budget and raised (or found raised): see
	// raiseCost.
	overBudget map[string]bool
}

// maxOverBudget bounds alertRuleCache.overBudget: past it, it starts
// again empty (each subject then costs one more try at raising it).
const maxOverBudget = 4096

type cachedRules struct {
	rules  []logbook.AlertRule
	readAt time.Time
}

// of returns the project's rules of a kind, read through ex (the
// transaction asking: on SQLite the only connection) when the cache has
// none fresh. A nil cache reads them every time.
func (a *alertRuleCache) of(ctx context.Context, ex store.Executor, project string, kind logbook.AlertKind) ([]logbook.AlertRule, error) {
	if a == nil {
		return ex.AlertRuleList(ctx, store.AlertRuleListParams{Project: project, Kind: kind})
	}
	a.mu.Lock()
	cached, ok := a.byProject[project]
	a.mu.Unlock()
	if !ok || time.Since(cached.readAt) > alertRulesTTL {
		rules, err := ex.AlertRuleList(ctx, store.AlertRuleListParams{Project: project})
		if err != nil {
			return nil, err
		}
		cached = cachedRules{rules: rules, readAt: time.Now()}
		a.mu.Lock()
		if a.byProject == nil {
			a.byProject = map[string]cachedRules{}
		}
		a.byProject[project] = cached
		a.mu.Unlock()
	}
	var out []logbook.AlertRule
	for _, r := range cached.rules {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out, nil
}

// raisedBefore reports whether this process raised (or found raised)
// rule's alert about subject; a nil cache knows of none.
func (a *alertRuleCache) raisedBefore(rule, subject string) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.overBudget[rule+"\x00"+subject]
}

// noteRaised remembers that rule's alert about subject is raised.
func (a *alertRuleCache) noteRaised(rule, subject string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.overBudget == nil || len(a.overBudget) >= maxOverBudget {
		a.overBudget = map[string]bool{}
	}
	a.overBudget[rule+"\x00"+subject] = true
}

// forget drops a project's rules, read again at their next use.
func (a *alertRuleCache) forget(project string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.byProject, project)
}

// raise writes an alert of rule r about a subject into the transaction's
// outbox, unless r raised one about it before, and emits alert.raised.
func raise(ctx context.Context, tx *work, r logbook.AlertRule, subject, sessionID, summary string, details map[string]any, now time.Time) error {
	raw, _ := json.Marshal(details) // plain values
	a := logbook.Alert{ID: logbook.NewID(now), RuleID: r.ID, Project: r.Project, Kind: r.Kind, Subject: subject,
		SessionID: sessionID, Summary: logbook.Clip(summary, logbook.MaxLongText), Details: raw, RaisedAt: now}
	inserted, err := tx.AlertInsert(ctx, &a)
	if err != nil || !inserted {
		return err
	}
	tx.emit(r.Project, logbook.EventAlertRaised, sessionID, now, map[string]any{
		"alert_id": a.ID, "rule_id": r.ID, "kind": r.Kind, "subject": subject, "summary": a.Summary})
	return nil
}

// sessionName names a session in an alert's summary.
func sessionName(sess *logbook.Session) string {
	title := logbook.Clip(sess.Title, 80)
	if title == "" {
		title = "(untitled)"
	}
	return fmt.Sprintf("session %q of %s (%s)", title, sess.Actor, sess.ID)
}

// raiseOnEnd raises the project's session_failed alerts about a session
// that ended failed, or with a blocker.
func raiseOnEnd(ctx context.Context, tx *work, sess *logbook.Session, now time.Time) error {
	if sess.Outcome != logbook.OutcomeFailed && sess.Blocker == "" {
		return nil
	}
	rules, err := tx.alertRules.of(ctx, tx, sess.Project, logbook.AlertSessionFailed)
	if err != nil || len(rules) == 0 {
		return err
	}
	summary := fmt.Sprintf("%s ended %s", sessionName(sess), sess.Outcome)
	if sess.Blocker != "" {
		summary += ", blocked by " + string(sess.Blocker)
	}
	if sess.Result != "" {
		summary += ": " + logbook.Clip(sess.Result, 200)
	}
	details := map[string]any{"outcome": sess.Outcome, "blocker": sess.Blocker, "result": sess.Result, "actor": sess.Actor,
		"agent": sess.Agent, "title": sess.Title, "end_reason": sess.EndReason}
	for _, r := range rules {
		if err := raise(ctx, tx, r, sess.ID, sess.ID, summary, details, now); err != nil {
			return err
		}
	}
	return nil
}

// raiseOnEntries checks entries a session just recorded (and counted in
// sess) against the project's rules: a tool call the gate denied
// (command_denied), the session's last tool calls all the same
// (tool_loop), and what their model calls cost (cost_over_budget).
func raiseOnEntries(ctx context.Context, tx *work, sess *logbook.Session, entries []logbook.Entry, now time.Time) error {
	var denied []logbook.Entry
	calls := false
	var cost int64
	for _, e := range entries {
		if e.Usage != nil {
			cost = logbook.AddTokens(cost, e.Usage.CostMicros)
		}
		switch e.Kind {
		case logbook.KindToolCall:
			calls = true
		case logbook.KindNote:
			if e.ToolCallID != "" && gateDenied(e.Payload) {
				denied = append(denied, e)
			}
		}
	}
	if len(denied) > 0 {
		if err := raiseDenied(ctx, tx, sess, denied, now); err != nil {
			return err
		}
	}
	if cost > 0 {
		if err := raiseCost(ctx, tx, sess, cost, now); err != nil {
			return err
		}
	}
	if calls {
		return raiseLoop(ctx, tx, sess, now)
	}
	return nil
}

// gateDenied reports whether a note's payload is the gate denying a tool
// call (logbook.GateDecision).
func gateDenied(payload json.RawMessage) bool {
	var d logbook.GateDecision
	return len(payload) > 0 && json.Unmarshal(payload, &d) == nil && d.Decision == "deny"
}

func raiseDenied(ctx context.Context, tx *work, sess *logbook.Session, notes []logbook.Entry, now time.Time) error {
	rules, err := tx.alertRules.of(ctx, tx, sess.Project, logbook.AlertCommandDenied)
	if err != nil || len(rules) == 0 {
		return err
	}
	for _, note := range notes {
		var d struct {
			logbook.GateDecision
			Command string `json:"command"`
			Class   string `json:"class"`
			Path    string `json:"path"`
		}
		_ = json.Unmarshal(note.Payload, &d) // gateDenied read it
		what := d.Command
		if what == "" {
			what = strings.TrimSpace(note.Tool + " " + d.Path)
		}
		summary := fmt.Sprintf("the gate denied %q in %s", logbook.Clip(what, 200), sessionName(sess))
		if d.Reason != "" {
			summary += ": " + logbook.Clip(d.Reason, 300)
		}
		details := map[string]any{"tool": note.Tool, "tool_call_id": note.ToolCallID, "command": d.Command, "path": d.Path,
			"class": d.Class, "reason": d.Reason, "actor": sess.Actor, "title": sess.Title}
		for _, r := range rules {
			if err := raise(ctx, tx, r, sess.ID+":"+note.ToolCallID, sess.ID, summary, details, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// raiseLoop raises the tool_loop alerts whose threshold the session's
// last tool calls reach: that many in a row with the same tool and the
// same input.
func raiseLoop(ctx context.Context, tx *work, sess *logbook.Session, now time.Time) error {
	rules, err := tx.alertRules.of(ctx, tx, sess.Project, logbook.AlertToolLoop)
	if err != nil || len(rules) == 0 {
		return err
	}
	most := 0
	for _, r := range rules {
		most = max(most, r.Threshold)
	}
	last, err := tx.EntryLastToolCalls(ctx, sess.ID, most)
	if err != nil {
		return err
	}
	same := sameCallsInARow(last)
	for _, r := range rules {
		if same < r.Threshold {
			continue
		}
		call := last[0]
		summary := fmt.Sprintf("%s made the same %s call %d times in a row: %s", sessionName(sess), call.Tool, same,
			logbook.Clip(string(call.Payload), 200))
		details := map[string]any{"tool": call.Tool, "input": call.Payload, "times": same, "actor": sess.Actor, "title": sess.Title}
		if err := raise(ctx, tx, r, sess.ID, sess.ID, summary, details, now); err != nil {
			return err
		}
	}
	return nil
}

// raiseCost raises the cost_over_budget alerts whose budget the entries
// a session just recorded took their scope's cost over: cost is what
// their model calls cost, already counted in sess.CostMicros. A rule is
// crossed when the cost before was under its budget and is now at or
// over it: the write that crosses it raises it, and the later ones do
// not try again.
//
// A session's cost is exact: the transaction holds the session's row. A
// day's (the project's, or an agent's) is read from the statistics'
// rollups with what this transaction changed (store.SessionCostOfDay),
// only when the project has such a rule. On PostgreSQL, transactions
// side by side (replicas, or one replica's committers) that cross a
// budget together may both raise it (the outbox keeps one per rule and
// subject), or neither, when each read the total without the other's.
// So a write that finds a day over its budget raises it too, unless this
// process raised it or found it raised before (alertRuleCache.overBudget):
// the next write raises what such a race left, and the sweeper what no
// later write did (raiseCostDays).
func raiseCost(ctx context.Context, tx *work, sess *logbook.Session, cost int64, now time.Time) error {
	rules, err := tx.alertRules.of(ctx, tx, sess.Project, logbook.AlertCostOverBudget)
	if err != nil || len(rules) == 0 {
		return err
	}
	var dayTotals, agentTotals map[string]int64 // read at their first use, without this write's cost
	for _, r := range rules {
		var before int64
		subject := ""
		switch r.Scope {
		case logbook.ScopeSession:
			before = sess.CostMicros - cost
		case logbook.ScopeAgentDay:
			if sess.Agent == "" {
				continue
			}
			if agentTotals == nil {
				if agentTotals, err = tx.SessionCostOfDay(ctx, store.SessionCostOfDayParams{Project: sess.Project, Day: sess.StartedAt, Agent: sess.Agent}); err != nil {
					return err
				}
			}
			before, subject = agentTotals[sess.Agent], agentDaySubject(sess.Agent, sess.StartedAt)
		case logbook.ScopeProjectDay:
			if dayTotals == nil {
				if dayTotals, err = tx.SessionCostOfDay(ctx, store.SessionCostOfDayParams{Project: sess.Project, Day: sess.StartedAt}); err != nil {
					return err
				}
			}
			before, subject = dayTotals[""], projectDaySubject(sess.StartedAt)
		default:
			continue
		}
		after := logbook.AddTokens(before, cost)
		crossed := before < r.BudgetMicros && after >= r.BudgetMicros
		overLeft := subject != "" && before >= r.BudgetMicros && !tx.alertRules.raisedBefore(r.ID, subject)
		if !crossed && !overLeft {
			continue
		}
		if err := raiseBudget(ctx, tx, r, sess, sess.StartedAt, sess.Agent, after, now); err != nil {
			return err
		}
		if subject != "" {
			tx.alertRules.noteRaised(r.ID, subject) // or found raised; if this transaction fails, the sweeper raises it
		}
	}
	return nil
}

// agentDaySubject and projectDaySubject are the subjects of a
// cost_over_budget rule of the day: "agent:NAME@2006-01-02",
// "day:2006-01-02" (UTC).
func agentDaySubject(agent string, day time.Time) string {
	return "agent:" + agent + "@" + day.UTC().Format(time.DateOnly)
}

func projectDaySubject(day time.Time) string { return "day:" + day.UTC().Format(time.DateOnly) }

// raiseBudget raises cost_over_budget rule r's alert about its subject:
// session sess (ScopeSession), or the UTC day of day, an agent's or the
// project's; cost is what the subject cost, at or over the budget. sess
// is the session whose write crossed it (nil from the sweeper).
func raiseBudget(ctx context.Context, tx *work, r logbook.AlertRule, sess *logbook.Session, day time.Time, agent string,
	cost int64, now time.Time) error {
	date := day.UTC().Format(time.DateOnly)
	details := map[string]any{"scope": r.Scope, "budget_usd": r.BudgetUSD, "budget_micros": r.BudgetMicros,
		"cost_usd": float64(cost) / 1e6, "cost_micros": cost}
	var subject, sessionID, whose string
	switch r.Scope {
	case logbook.ScopeSession:
		subject, sessionID, whose = sess.ID, sess.ID, sessionName(sess)
		details["actor"], details["agent"], details["title"] = sess.Actor, sess.Agent, sess.Title
	case logbook.ScopeAgentDay:
		subject, whose = agentDaySubject(agent, day), fmt.Sprintf("agent %s's sessions started on %s (UTC)", agent, date)
		details["agent"], details["day"] = agent, date
	default:
		subject, whose = projectDaySubject(day), fmt.Sprintf("project %s's sessions started on %s (UTC)", r.Project, date)
		details["day"] = date
	}
	if sess != nil && r.Scope != logbook.ScopeSession {
		details["session_id"] = sess.ID // whose write crossed it, not the subject
	}
	summary := fmt.Sprintf("%s cost %s, over the budget of %s", whose, logbook.FormatUSD(cost), logbook.FormatUSD(r.BudgetMicros))
	return raise(ctx, tx, r, subject, sessionID, summary, details, now)
}

// raiseCostDays raises the cost_over_budget alerts of every project whose
// today (UTC) is over the budget of a rule of the day (the project's or
// an agent's), unless raised already: what the write that crossed it did
// not raise, as when two replicas crossed it together without seeing each
// other's write, or a rule added once the day was over. It runs in the
// sweeper, under the sweep lock.
func (s *Service) raiseCostDays(ctx context.Context, now time.Time) (raised int, err error) {
	rules, err := s.store.AlertRuleList(ctx, store.AlertRuleListParams{Kind: logbook.AlertCostOverBudget})
	if err != nil || len(rules) == 0 {
		return 0, err
	}
	_, err = s.sweepBatch(ctx, func(tx *work) error {
		for _, r := range rules {
			if r.Scope != logbook.ScopeAgentDay && r.Scope != logbook.ScopeProjectDay {
				continue
			}
			totals, err := tx.SessionCostOfDay(ctx, store.SessionCostOfDayParams{Project: r.Project, Day: now, ByAgent: r.Scope == logbook.ScopeAgentDay})
			if err != nil {
				return err
			}
			for agent, total := range totals {
				if total < r.BudgetMicros || (r.Scope == logbook.ScopeAgentDay && agent == "") {
					continue
				}
				before := len(tx.events)
				if err := raiseBudget(ctx, tx, r, nil, now, agent, total, now); err != nil {
					return err
				}
				raised += len(tx.events) - before
			}
		}
		return nil
	})
	return raised, err
}

// sameCallsInARow counts how many of calls, the newest first, are the same
// call as the newest: the same tool with the same input (its JSON with
// the spaces between tokens left out).
func sameCallsInARow(calls []logbook.Entry) int {
	if len(calls) == 0 {
		return 0
	}
	key := func(e logbook.Entry) string {
		var compact bytes.Buffer
		if err := json.Compact(&compact, e.Payload); err != nil {
			return e.Tool + "\x00" + string(e.Payload)
		}
		return e.Tool + "\x00" + compact.String()
	}
	first := key(calls[0])
	n := 1
	for _, c := range calls[1:] {
		if key(c) != first {
			break
		}
		n++
	}
	return n
}

// raiseIdle raises the idle_with_claims alerts of every project: active
// sessions not seen for a rule's minutes that still hold claims. Each
// quiet spell of a session is a subject of its own (its id and when it
// was last seen), so a session that came back and went quiet again is
// told of again. It runs in the sweeper, under the sweep lock.
func (s *Service) raiseIdle(ctx context.Context, now time.Time) (raised int, err error) {
	rules, err := s.store.AlertRuleList(ctx, store.AlertRuleListParams{Kind: logbook.AlertIdleWithClaims})
	if err != nil || len(rules) == 0 {
		return 0, err
	}
	_, err = s.sweepBatch(ctx, func(tx *work) error {
		for _, r := range rules {
			idle, err := tx.SessionListIdleClaiming(ctx, r.Project, now.Add(-time.Duration(r.Threshold)*time.Minute), now, 100)
			if err != nil {
				return err
			}
			for _, c := range idle {
				minutes := int(now.Sub(c.LastSeenAt) / time.Minute)
				named := sessionName(&logbook.Session{ID: c.SessionID, Actor: c.Actor, Title: c.Title})
				summary := fmt.Sprintf("%s has not been seen for %d minutes and still holds %s", named, minutes, strings.Join(c.Subjects, ", "))
				details := map[string]any{"last_seen_at": c.LastSeenAt, "claims": c.Subjects, "actor": c.Actor, "title": c.Title,
					"idle_minutes": minutes}
				before := len(tx.events)
				if err := raise(ctx, tx, r, c.SessionID+"@"+c.LastSeenAt.Format(time.RFC3339Nano), c.SessionID, summary, details, now); err != nil {
					return err
				}
				raised += len(tx.events) - before
			}
		}
		return nil
	})
	return raised, err
}
