package logbook

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
)

// AlertKinds lists every kind of alert rule.
var AlertKinds = []AlertKind{AlertSessionFailed, AlertCommandDenied, AlertIdleWithClaims, AlertToolLoop}

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
