package logbook

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// AlertKind is what an alert rule watches for.
type AlertKind string

// The kinds of alert rule. Each raises at most one alert per subject (see
// Alert.Subject), however often its condition holds again.
const (
	// AlertSessionFailed: a session ended failed, or with a blocker
	// (partial with one). Subject: the session.
	AlertSessionFailed AlertKind = "session_failed"
	// AlertCommandDenied: the gate denied a tool call (a destructive
	// command, by the default policy). Subject: the tool call.
	AlertCommandDenied AlertKind = "command_denied"
	// AlertIdleWithClaims: a session not seen for Threshold minutes still
	// holds claims, keeping other sessions off what it claimed. Subject:
	// the session.
	AlertIdleWithClaims AlertKind = "idle_with_claims"
	// AlertToolLoop: a session made the same tool call (same tool, same
	// input) Threshold times in a row: an agent in a loop. Subject: the
	// session.
	AlertToolLoop AlertKind = "tool_loop"
	// AlertCostOverBudget: what model calls cost went over the rule's
	// budget (BudgetMicros) in its scope (Scope): a session, an agent's
	// sessions started in a UTC day, or all the project's sessions
	// started in a UTC day. Subject: the session id, "agent:NAME@DAY" or
	// "day:DAY" (DAY as 2006-01-02).
	AlertCostOverBudget AlertKind = "cost_over_budget"
)

// AlertKinds lists every kind of alert rule.
var AlertKinds = []AlertKind{AlertSessionFailed, AlertCommandDenied, AlertIdleWithClaims, AlertToolLoop, AlertCostOverBudget}

// AlertScope is whose cost a cost_over_budget rule adds up.
type AlertScope string

// The scopes of a cost_over_budget rule. A day is a UTC day, and the
// sessions of a day are those that started in it, as the statistics and
// the cost per day count them: a session that runs past midnight keeps
// adding to the day it started in.
const (
	// ScopeSession: one session's own model calls. A subagent is a
	// session of its own, checked on its own; its cost is not its
	// parent's.
	ScopeSession AlertScope = "session"
	// ScopeAgentDay: the sessions of one named agent (Session.Agent)
	// started in a UTC day, subagents with that agent included. Sessions
	// of no agent are not counted.
	ScopeAgentDay AlertScope = "agent_day"
	// ScopeProjectDay: every session of the project started in a UTC
	// day, subagents included.
	ScopeProjectDay AlertScope = "project_day"
)

// AlertScopes lists every scope of a cost_over_budget rule.
var AlertScopes = []AlertScope{ScopeSession, ScopeAgentDay, ScopeProjectDay}

// Valid reports whether k is a known kind.
func (k AlertKind) Valid() bool {
	for _, known := range AlertKinds {
		if k == known {
			return true
		}
	}
	return false
}

// AlertFormat is the body a rule's webhook receives.
type AlertFormat string

// Webhook formats.
const (
	// AlertJSON is logbook's own JSON body (AlertBody), signed.
	AlertJSON AlertFormat = "json"
	// AlertSlack is a Slack incoming-webhook body: {"text": "..."}.
	AlertSlack AlertFormat = "slack"
)

// Bounds and defaults of alert rules and their delivery.
const (
	// DefaultIdleMinutes and MaxIdleMinutes bound AlertIdleWithClaims's
	// threshold (a week at most).
	DefaultIdleMinutes = 30
	MaxIdleMinutes     = 7 * 24 * 60
	// DefaultLoopCalls and MaxLoopCalls bound AlertToolLoop's threshold.
	DefaultLoopCalls = 5
	MaxLoopCalls     = 100
	// MaxBudgetUSD bounds a cost_over_budget rule's budget; its least is
	// a millionth of a dollar, the unit costs are kept in.
	MaxBudgetUSD = 1_000_000
	// MaxWebhookURL bounds a webhook URL's length.
	MaxWebhookURL = 2048
	// MaxAlertAttempts is how many times a webhook is tried before the
	// alert is given up as failed.
	MaxAlertAttempts = 10
	// FirstAlertRetry is the wait after the first failed attempt; each
	// later one waits twice the one before, at most MaxAlertRetry.
	FirstAlertRetry = 10 * time.Second
	MaxAlertRetry   = time.Hour
)

// AlertRule is a project's rule: when its kind's condition holds, an
// alert is raised and delivered to its webhook.
type AlertRule struct {
	ID      string    `json:"id"`
	Project string    `json:"project"`
	Name    string    `json:"name" redact:"text"`
	Kind    AlertKind `json:"kind"`
	// Threshold is the minutes of AlertIdleWithClaims, the calls in a row
	// of AlertToolLoop; the other kinds take none (0).
	Threshold int `json:"threshold,omitempty"`
	// BudgetUSD is AlertCostOverBudget's budget in US dollars, as a
	// person gives it (a decimal such as 12.50); BudgetMicros is the same
	// in millionths of a dollar, the unit costs are kept and compared in.
	// Normalize sets BudgetMicros from BudgetUSD; a rule read from the
	// store has both.
	BudgetUSD    float64 `json:"budget_usd,omitempty"`
	BudgetMicros int64   `json:"budget_micros,omitempty"`
	// Scope is whose cost AlertCostOverBudget adds up.
	Scope AlertScope `json:"scope,omitempty"`
	// WebhookURL is where alerts go (http or https). It often carries a
	// secret of its own (Slack's do), so a rule read back shows it masked
	// (MaskWebhookURL).
	WebhookURL string      `json:"webhook_url"`
	Format     AlertFormat `json:"format"`
	// Secret signs the bodies (see SignAlert). It is shown once, in
	// the answer that made the rule.
	Secret    string    `json:"secret,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Normalize checks a rule a person sent and fills its defaults: the
// threshold of its kind, the json format, a name.
func (r *AlertRule) Normalize() error {
	if !r.Kind.Valid() {
		return Invalid("kind", "%q is not a kind of alert rule; use one of %v", r.Kind, AlertKinds)
	}
	switch r.Kind {
	case AlertIdleWithClaims:
		if r.Threshold == 0 {
			r.Threshold = DefaultIdleMinutes
		}
		if r.Threshold < 1 || r.Threshold > MaxIdleMinutes {
			return Invalid("threshold", "give the minutes a session may be idle while it holds claims, 1 to %d", MaxIdleMinutes)
		}
	case AlertToolLoop:
		if r.Threshold == 0 {
			r.Threshold = DefaultLoopCalls
		}
		if r.Threshold < 2 || r.Threshold > MaxLoopCalls {
			return Invalid("threshold", "give how many times in a row the same tool call makes a loop, 2 to %d", MaxLoopCalls)
		}
	default:
		if r.Threshold != 0 {
			return Invalid("threshold", "a %s rule takes no threshold; leave it out", r.Kind)
		}
	}
	if err := r.normalizeBudget(); err != nil {
		return err
	}
	switch r.Format {
	case "":
		r.Format = AlertJSON
	case AlertJSON, AlertSlack:
	default:
		return Invalid("format", "%q is not a webhook format; use json (signed) or slack", r.Format)
	}
	if err := CheckWebhookURL(r.WebhookURL); err != nil {
		return err
	}
	r.Name = Clip(strings.TrimSpace(r.Name), MaxTitle)
	if r.Name == "" {
		r.Name = string(r.Kind)
	}
	return nil
}

// normalizeBudget checks the budget and scope of a cost_over_budget rule
// (and that no other kind has them) and sets BudgetMicros.
func (r *AlertRule) normalizeBudget() error {
	if r.Kind != AlertCostOverBudget {
		switch {
		case r.BudgetUSD != 0 || r.BudgetMicros != 0:
			return Invalid("budget_usd", "a %s rule takes no budget; leave it out", r.Kind)
		case r.Scope != "":
			return Invalid("scope", "a %s rule takes no scope; leave it out", r.Kind)
		}
		return nil
	}
	micros := math.Round(r.BudgetUSD * 1e6)
	if math.IsNaN(r.BudgetUSD) || micros < 1 || r.BudgetUSD > MaxBudgetUSD {
		return Invalid("budget_usd", "give the budget in US dollars, a number from 0.000001 to %d such as 25 or 2.50", MaxBudgetUSD)
	}
	r.BudgetMicros, r.BudgetUSD = int64(micros), micros/1e6
	switch r.Scope {
	case ScopeSession, ScopeAgentDay, ScopeProjectDay:
	case "":
		return Invalid("scope", "say whose cost the budget is for: session (each session's), agent_day (each agent's in a UTC day) or project_day (the project's in a UTC day)")
	default:
		return Invalid("scope", "%q is not a scope; use session, agent_day or project_day", r.Scope)
	}
	return nil
}

// Budget says a cost_over_budget rule's budget for a person: "$25.00 a
// session", "$2.125 an agent a day", "$100.00 a day"; "" for other kinds.
func (r AlertRule) Budget() string {
	if r.Kind != AlertCostOverBudget {
		return ""
	}
	dollars := fmt.Sprintf("%d.%06d", r.BudgetMicros/1_000_000, r.BudgetMicros%1_000_000)
	for strings.HasSuffix(dollars, "0") && len(dollars)-strings.IndexByte(dollars, '.') > 3 {
		dollars = dollars[:len(dollars)-1] // the cents always, more digits where the budget has them
	}
	per := map[AlertScope]string{ScopeSession: "a session", ScopeAgentDay: "an agent a day", ScopeProjectDay: "a day"}[r.Scope]
	return strings.TrimSpace("$" + dollars + " " + per)
}

// CheckWebhookURL refuses what is not an absolute http or https URL with
// a host: logbook posts alerts nowhere else.
func CheckWebhookURL(raw string) error {
	if raw == "" {
		return Invalid("webhook_url", "give the webhook's URL (http or https)")
	}
	if len(raw) > MaxWebhookURL {
		return Invalid("webhook_url", "a webhook URL has at most %d characters", MaxWebhookURL)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Invalid("webhook_url", "%q is not an http or https URL with a host; give one such as https://hooks.example.com/logbook", MaskWebhookURL(raw))
	}
	return nil
}

// MaskWebhookURL shows a webhook URL without what may be secret in it
// (its path, query and user): the scheme and host, then "/…" when more
// followed. Slack's URLs, say, carry their secret in the path.
func MaskWebhookURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "…"
	}
	masked := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		masked += "/…"
	}
	return masked
}

// AlertStatus is where an alert's delivery stands.
type AlertStatus string

// Alert statuses.
const (
	// AlertPending: not delivered yet; tried at NextAttemptAt.
	AlertPending AlertStatus = "pending"
	// AlertDelivered: the webhook answered 2xx.
	AlertDelivered AlertStatus = "delivered"
	// AlertFailed: MaxAlertAttempts attempts failed; it is not tried again.
	AlertFailed AlertStatus = "failed"
)

// Alert is what a rule raised about a subject, and where its delivery
// stands. It is written in the transaction that changed the facts (the
// outbox), and delivered after that commits.
type Alert struct {
	ID      string    `json:"id"`
	RuleID  string    `json:"rule_id"`
	Project string    `json:"project"`
	Kind    AlertKind `json:"kind"`
	// Subject is what the alert is about: a session id, or a session id
	// and a tool call id. A rule raises one alert per subject.
	Subject   string `json:"subject"`
	SessionID string `json:"session_id,omitempty"`
	// Summary is one line for a person.
	Summary string `json:"summary" redact:"text"`
	// Details are the facts behind it, by kind (outcome, blocker, tool,
	// command, claims, …).
	Details  json.RawMessage `json:"details,omitempty"`
	RaisedAt time.Time       `json:"raised_at"`

	Status        AlertStatus `json:"status"`
	Attempts      int         `json:"attempts"`
	NextAttemptAt *time.Time  `json:"next_attempt_at,omitempty"`
	DeliveredAt   *time.Time  `json:"delivered_at,omitempty"`
	// Log lists the delivery attempts, the first first (filled when
	// alerts are listed).
	Log []AlertAttempt `json:"log,omitempty"`
}

// AlertAttempt is one try at delivering an alert: the webhook's HTTP
// status (0 when none came), or what went wrong.
type AlertAttempt struct {
	At         time.Time `json:"at"`
	StatusCode int       `json:"status_code"`
	Error      string    `json:"error,omitempty"`
	DurationMS int64     `json:"duration_ms"`
}

// MaxAttemptError bounds what an attempt keeps of an error or of the
// webhook's answer.
const MaxAttemptError = 500

// AlertRetryAfter is how long to wait before the next try of an alert
// tried attempts times: FirstAlertRetry, doubled each time, at most
// MaxAlertRetry.
func AlertRetryAfter(attempts int) time.Duration {
	wait := FirstAlertRetry
	for i := 1; i < attempts && wait < MaxAlertRetry; i++ {
		wait *= 2
	}
	return min(wait, MaxAlertRetry)
}

// AlertBody is the JSON body a json webhook receives.
type AlertBody struct {
	// ID is the alert's id: the same on every retry, so a receiver drops
	// one it has seen (also sent as the Logbook-Alert-Id header).
	ID        string          `json:"id"`
	Rule      AlertBodyRule   `json:"rule"`
	Project   string          `json:"project"`
	Kind      AlertKind       `json:"kind"`
	Subject   string          `json:"subject"`
	SessionID string          `json:"session_id,omitempty"`
	Summary   string          `json:"summary"`
	Details   json.RawMessage `json:"details,omitempty"`
	RaisedAt  time.Time       `json:"raised_at"`
	// Test is true for the sample `logbook alerts test` sends.
	Test bool `json:"test,omitempty"`
}

// AlertBodyRule names the rule that raised an alert.
type AlertBodyRule struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// AlertPayload is the body rule r's webhook receives for alert a, in the
// rule's format.
func AlertPayload(r AlertRule, a Alert, test bool) []byte {
	var v any
	switch r.Format {
	case AlertSlack:
		text := "logbook alert in project " + a.Project + ": " + a.Summary + " (rule " + r.Name + ")"
		if test {
			text = "[test] " + text
		}
		v = map[string]string{"text": text}
	default:
		v = AlertBody{ID: a.ID, Rule: AlertBodyRule{ID: r.ID, Name: r.Name}, Project: a.Project, Kind: a.Kind,
			Subject: a.Subject, SessionID: a.SessionID, Summary: a.Summary, Details: a.Details, RaisedAt: a.RaisedAt, Test: test}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // plain values only
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// SignAlert is the Logbook-Signature header of a webhook body sent at
// timestamp (Unix seconds, also sent as Logbook-Timestamp):
// "sha256=" and the hex HMAC-SHA256, keyed by the rule's secret, of the
// timestamp, a dot and the body. A receiver computes the same over what
// it got, compares in constant time, and refuses a timestamp too old, so
// a body captured on the way cannot be sent again later.
func SignAlert(secret string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte("."))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// IdleClaimer is an active session gone quiet while it holds claims.
type IdleClaimer struct {
	SessionID  string
	Actor      string
	Title      string `redact:"text"`
	LastSeenAt time.Time
	Subjects   []string
}
