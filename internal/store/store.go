// Package store defines the storage interface logbook runs on, and the
// parameters of each method. Engines (sqlitestore, pgstore) implement it;
// the conformance suite in storetest holds both to the same contract.
//
// A store keeps rows; it applies no rules. What a session's title is, when
// a session may be written to, how a blocker is derived: that is the
// service's job, so every engine gives the same answer.
//
// Contract shared by every method:
//   - A missing row is logbook.ErrNotFound, never a zero value and nil.
//   - A unique key clash is logbook.ErrConflict.
//   - Times are stored with microsecond precision, in UTC.
package store

import (
	"context"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// Store is a database logbook keeps its ledger in.
type Store interface {
	Executor

	// Begin starts a transaction. The service decides where transactions
	// begin and end. On SQLite every transaction is serialised with every
	// other write; on PostgreSQL rows read with ForUpdate are locked until
	// the transaction ends.
	Begin(ctx context.Context) (Tx, error)

	// Engine names the engine: "sqlite" or "postgres".
	Engine() string

	// Close releases the database.
	Close() error
}

// Tx is a transaction. After Commit or Rollback it must not be used;
// Rollback after Commit is a harmless no-op, so `defer tx.Rollback()` is
// the usual shape.
type Tx interface {
	Executor
	Commit() error
	Rollback() error
}

// Executor holds the queries, usable on a Store or inside a Tx.
type Executor interface {
	// ProjectEnsure makes the project the first time it is named.
	ProjectEnsure(ctx context.Context, name string, now time.Time) error

	// TokenInsert stores a token record (its hash, never the token).
	TokenInsert(ctx context.Context, t *logbook.Token) error
	// TokenGetByHash finds a token that is not revoked by its hash.
	TokenGetByHash(ctx context.Context, hash string) (logbook.Token, error)
	// TokenAdminExists reports whether any admin token that is not revoked exists.
	TokenAdminExists(ctx context.Context) (bool, error)

	// SessionInsert stores a new session. When the session has a harness
	// session id and a session with the same (project, actor, harness,
	// harness_session_id) exists, nothing is stored and inserted is false.
	SessionInsert(ctx context.Context, s *logbook.Session) (inserted bool, err error)
	// SessionGet reads one session by id.
	SessionGet(ctx context.Context, p SessionGetParams) (logbook.Session, error)
	// SessionGetByHarnessID reads the session a harness knows by its own id.
	SessionGetByHarnessID(ctx context.Context, p SessionGetByHarnessIDParams) (logbook.Session, error)
	// SessionUpdate writes every mutable field of s (all but id, project,
	// actor, harness, harness session id and started_at). ErrNotFound when
	// s.ID does not exist.
	SessionUpdate(ctx context.Context, s *logbook.Session) error
	// SessionMarkSeen moves an active session's last_seen_at forward to at
	// (never back). Ended sessions are left alone.
	SessionMarkSeen(ctx context.Context, id string, at time.Time) error
	// SessionList lists a project's sessions newest first (started_at, then
	// id, descending), starting after the cursor position when one is given.
	SessionList(ctx context.Context, p SessionListParams) ([]logbook.Session, error)
	// SessionListChildren lists the direct subagents of a session, oldest first.
	SessionListChildren(ctx context.Context, parentID string) ([]logbook.Session, error)
	// SessionTimeOut ends every active session last seen before cutoff with
	// end_reason timed_out, setting closed_at where it is not set, and
	// returns how many it ended.
	SessionTimeOut(ctx context.Context, cutoff, now time.Time) (int64, error)

	// EntryInsert stores entries whose Seq the caller has assigned.
	EntryInsert(ctx context.Context, entries []logbook.Entry) error
	// EntryExistingKeys answers which of keys the session already has.
	EntryExistingKeys(ctx context.Context, sessionID string, keys []string) (map[string]bool, error)
	// EntryList reads a session's entries after a seq, in seq order.
	EntryList(ctx context.Context, p EntryListParams) ([]logbook.Entry, error)
	// EntrySupersede marks every active entry of a session superseded at at
	// and returns how many it marked.
	EntrySupersede(ctx context.Context, sessionID string, at time.Time) (int64, error)

	// PlanReplace replaces a session's plan with steps (numbered by N).
	PlanReplace(ctx context.Context, sessionID string, steps []logbook.PlanStep) error
	// PlanList reads a session's plan in step order.
	PlanList(ctx context.Context, sessionID string) ([]logbook.PlanStep, error)
	// PlanStepUpdate sets one step's status; ErrNotFound when there is no step n.
	PlanStepUpdate(ctx context.Context, sessionID string, n int, status logbook.StepStatus, at time.Time) error
	// PlanCloseInFlight sets every pending or running step to status.
	PlanCloseInFlight(ctx context.Context, sessionID string, status logbook.StepStatus, at time.Time) error

	// AgentEnsure makes the agent the first time it is named.
	AgentEnsure(ctx context.Context, project, name string, now time.Time) error
	// AgentGet reads an agent.
	AgentGet(ctx context.Context, p AgentGetParams) (logbook.Agent, error)
	// AgentUpdate writes an agent's current session and generation.
	AgentUpdate(ctx context.Context, a *logbook.Agent) error
}

// SessionGetParams selects one session. ForUpdate locks its row until the
// transaction ends (PostgreSQL; SQLite serialises writers anyway).
type SessionGetParams struct {
	ID        string
	ForUpdate bool
}

// SessionGetByHarnessIDParams selects a session by the harness's own id.
type SessionGetByHarnessIDParams struct {
	Project, Actor, Harness, HarnessSessionID string
	ForUpdate                                 bool
}

// SessionListParams selects a page of a project's sessions.
type SessionListParams struct {
	Project string
	Limit   int
	// After, when set, continues a list after the session with this
	// position: sessions started before it, or at the same instant with a
	// smaller id.
	After *SessionCursor
}

// SessionCursor is a position in the newest-first session list.
type SessionCursor struct {
	StartedAt time.Time
	ID        string
}

// EntryListParams selects a session's entries.
type EntryListParams struct {
	SessionID         string
	AfterSeq          int64
	Limit             int
	IncludeSuperseded bool
}

// AgentGetParams selects an agent; ForUpdate locks it as SessionGetParams does.
type AgentGetParams struct {
	Project, Name string
	ForUpdate     bool
}
