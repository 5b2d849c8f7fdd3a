package logbook

import "time"

// StepStatus is where a plan step stands.
type StepStatus string

// Plan step statuses.
const (
	StepPending StepStatus = "pending"
	StepRunning StepStatus = "running"
	StepDone    StepStatus = "done"
	StepSkipped StepStatus = "skipped"
	StepFailed  StepStatus = "failed"
)

// Valid reports whether s is a known step status.
func (s StepStatus) Valid() bool {
	switch s {
	case StepPending, StepRunning, StepDone, StepSkipped, StepFailed:
		return true
	}
	return false
}

// InFlight reports whether the step is still to be done or being done, so
// ending the session must close it.
func (s StepStatus) InFlight() bool { return s == StepPending || s == StepRunning }

// PlanStep is one ordered step of a session's plan, numbered from 1.
type PlanStep struct {
	N         int        `json:"n"`
	Text      string     `json:"text" redact:"text"`
	Status    StepStatus `json:"status"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// ClosingStatus is what an in-flight step becomes when its session ends
// with outcome: done on success, skipped otherwise.
func ClosingStatus(outcome Outcome) StepStatus {
	if outcome == OutcomeSuccess {
		return StepDone
	}
	return StepSkipped
}

// Agent is a named long-lived agent in a project. Its current session is
// the one ensure returns; a rotation replaces it.
type Agent struct {
	Project          string         `json:"project"`
	Name             string         `json:"name"`
	CurrentSessionID string         `json:"current_session_id"`
	Generation       int64          `json:"generation"`
	CreatedAt        time.Time      `json:"created_at"`
	Policy           RotationPolicy `json:"rotation_policy"`
}

// Token is a bearer token's stored record. The token itself is never
// stored: only its SHA-256 hash.
type Token struct {
	ID        string     `json:"id"`
	Hash      string     `json:"-"`
	Project   string     `json:"project"` // empty for the admin token
	Actor     string     `json:"actor"`
	Admin     bool       `json:"admin"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// RotationPolicy makes an agent rotate by itself: when its current session
// is older than MaxAge or has used more than MaxInputTokens. Zero turns a
// limit off.
type RotationPolicy struct {
	MaxAgeSeconds  int64 `json:"max_age_seconds"`
	MaxInputTokens int64 `json:"max_input_tokens"`
}

// Due says why the session should rotate under the policy at now ("age"
// or "tokens"), or "".
func (p RotationPolicy) Due(s *Session, now time.Time) string {
	switch {
	case p.MaxAgeSeconds > 0 && now.Sub(s.StartedAt) >= time.Duration(p.MaxAgeSeconds)*time.Second:
		return "age"
	case p.MaxInputTokens > 0 && s.InputTokens > p.MaxInputTokens:
		return "tokens"
	}
	return ""
}

// Rotation records one rotation of an agent.
type Rotation struct {
	At            time.Time `json:"at"`
	Reason        string    `json:"reason" redact:"text"`
	FromSessionID string    `json:"from_session_id"`
	ToSessionID   string    `json:"to_session_id"`
}

// Task is a piece of work an agent owns; it enters the agent's ongoing
// session as a user turn and follows the agent across rotations.
type Task struct {
	Project         string    `json:"project"`
	ID              string    `json:"task_id"`
	Agent           string    `json:"agent"`
	Title           string    `json:"title" redact:"text"`
	Text            string    `json:"text" redact:"text"`
	ActiveSessionID string    `json:"active_session_id"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
	// Sessions lists every session the task has lived in, oldest first.
	Sessions []string `json:"sessions,omitempty"`
}
