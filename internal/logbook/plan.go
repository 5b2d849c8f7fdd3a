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
	Text      string     `json:"text"`
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
	Project          string    `json:"project"`
	Name             string    `json:"name"`
	CurrentSessionID string    `json:"current_session_id"`
	Generation       int64     `json:"generation"`
	CreatedAt        time.Time `json:"created_at"`
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
