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
//   - An error that means the database cannot serve the call for now (out
//     of reach, shutting down, busy, a full disk) matches
//     logbook.ErrUnavailable; each engine reads its own codes for it.
package store

import (
	"context"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// PartitionMonthsAhead is how many months after the current one the
// server and the sweeper keep partitions of entries made for
// (EntryPartitionsMaintain): a server down for as long still finds its
// month's partition when it starts again.
const PartitionMonthsAhead = 2

// Store is a database logbook keeps its ledger in.
type Store interface {
	Executor

	// Begin starts a transaction. The service decides where transactions
	// begin and end. On SQLite every transaction is serialised with every
	// other write; on PostgreSQL rows read with ForUpdate are locked until
	// the transaction ends.
	Begin(ctx context.Context) (Tx, error)

	// Engine names the engine: "sqlite" or "postgres", for people to read
	// (the health check, bench reports). What engines do differently is
	// asked of a capability method such as CanBackup or SingleWriter,
	// never of this name.
	Engine() string

	// CanBackup reports whether Backup copies the database itself
	// (SQLite). Where it does not (PostgreSQL), Backup returns an error
	// that says which of the engine's own tools to use.
	CanBackup() bool

	// Optimize refreshes the query planner's statistics where the engine
	// needs to be told (SQLite's PRAGMA optimize; PostgreSQL's autovacuum
	// does it by itself). The sweeper calls it.
	Optimize(ctx context.Context) error

	// EntryPartitionsMaintain makes the partitions of entries for the UTC
	// months from now's through ahead months later where entries are
	// partitioned (PostgreSQL), so that the sessions of those months never
	// fall back on the default partition, and drops the past months'
	// partitions that retention emptied (EntryPartitionPrune). Replicas
	// take turns. A no-op on engines without partitions (SQLite).
	EntryPartitionsMaintain(ctx context.Context, now time.Time, ahead int) error

	// SingleWriter reports whether the engine commits one transaction at a
	// time (SQLite). The service then coalesces concurrent writes into
	// shared transactions (group commit) instead of queueing them.
	SingleWriter() bool

	// EventSequence numbers the committed events that have no id yet, in
	// the order they were written, after the highest id given so far, and
	// returns how many it numbered. One process sequences at a time; the
	// others return 0 at once. A no-op where events are numbered as they are
	// inserted (SQLite). Readers of events call it first.
	EventSequence(ctx context.Context) (int64, error)

	// Listen calls wake whenever another process commits events, until ctx
	// ends or the database cannot be reached (it reconnects). On SQLite,
	// where one process writes, it returns at once.
	Listen(ctx context.Context, wake func()) error

	// StatsPending says how many sessions the statistics' rollups do not
	// count yet: those a backfill has still to count after a migration
	// made the rollups (0 once it finished).
	StatsPending(ctx context.Context) (int64, error)
	// StatsBackfill counts up to limit more sessions into the rollups, in
	// one transaction of its own, and says how many it counted and whether
	// every session is counted now. It holds the writer only for that
	// transaction; other writes go on between calls, and keep the rollups
	// right for the sessions counted so far. Until the backfill finishes,
	// SessionStats counts from the sessions themselves (slower, as exact).
	StatsBackfill(ctx context.Context, limit int) (counted int, finished bool, err error)
	// StatsRebuild empties the rollups, so that StatsBackfill counts every
	// session again. No other process may write meanwhile: one that saw
	// the backfill finished would count its changes twice.
	StatsRebuild(ctx context.Context) error
	// SearchPending says how many entries and sessions the search index
	// does not hold yet: those written before the index was made (or
	// SearchRebuild emptied it), which SearchBackfill indexes. Everything
	// written since is indexed as it is written.
	SearchPending(ctx context.Context) (int64, error)
	// SearchBackfill indexes up to limit more of them, in one transaction
	// of its own, and says how many it indexed and whether none is left.
	// It holds the writer only for that transaction. Until it finishes, a
	// search does not find what is left.
	SearchBackfill(ctx context.Context, limit int) (indexed int, finished bool, err error)
	// SearchRebuild empties the search index and sets SearchBackfill to
	// index every entry and session again (for a database written by a
	// version of logbook that did not index, beside one that did).
	SearchRebuild(ctx context.Context) error

	// Export reads the rows of every table of recorded data (projects with
	// their policy and retention, sessions, entries superseded or not,
	// plans, touches, links, claims, agents, tasks…), or of one project's
	// (p.Project), column by column as stored, in one snapshot that holds
	// no lock writers wait on. It calls p.Counted once with the tables in
	// the order a restore writes them and how many rows each holds, then
	// p.Row for each row, table by table in that order, ordered by key
	// within a table. A callback's error stops it and is returned. Derived
	// tables (statistics' rollups, the search index) and what belongs to
	// this database alone (tokens, keys, events) are not exported.
	Export(ctx context.Context, p ExportParams) error

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

	// Savepoint marks a point RollbackToSavepoint returns to, so a group
	// of requests sharing one transaction can undo one of them. Savepoints
	// are not nested: each is released or rolled back before the next.
	Savepoint(ctx context.Context) error
	// RollbackToSavepoint undoes everything since Savepoint and releases it.
	RollbackToSavepoint(ctx context.Context) error
	// ReleaseSavepoint keeps everything since Savepoint.
	ReleaseSavepoint(ctx context.Context) error

	// LockSessions reads and locks the rows of the sessions named that
	// exist (on PostgreSQL in one statement, in id order; on SQLite, whose
	// one writer locks everything, it reads those not in memory), so that
	// the transaction's later SessionGet of any of them needs no statement
	// of its own: a group of requests sharing a transaction locks its
	// sessions at once. Where a session's Keys or Touches are given (even
	// none), an engine that writes a group's entries and touches
	// set-based at the end (PostgreSQL) also learns which of those keys
	// the session has stored and when those touches were first made, so
	// it knows without a statement how many of an EntryInsert's entries
	// are new and on which day a touch counts.
	LockSessions(ctx context.Context, sessions []SessionKeys) error
}

// SessionKeys names a session a transaction is about to write, the keys
// of the entries it may insert and what it may record as touched (nil:
// unknown; see Tx.LockSessions).
type SessionKeys struct {
	ID      string
	Keys    []string
	Touches []logbook.Touch
}

// Executor holds the queries, usable on a Store or inside a Tx.
type Executor interface {
	MessageStore

	// ProjectEnsure makes the project the first time it is named.
	ProjectEnsure(ctx context.Context, name string, now time.Time) error
	// ProjectPolicyGet reads the project's command policy as stored (JSON;
	// "" when it never set one). ErrNotFound when the project does not exist.
	ProjectPolicyGet(ctx context.Context, name string) (string, error)
	// ProjectPolicySet stores the project's command policy.
	ProjectPolicySet(ctx context.Context, name, policy string) error

	// ProjectRetentionGet reads the project's retention (zero: it keeps
	// everything). ErrNotFound when the project does not exist.
	ProjectRetentionGet(ctx context.Context, name string) (logbook.Retention, error)
	// ProjectRetentionSet stores the project's retention; ErrNotFound when
	// the project does not exist.
	ProjectRetentionSet(ctx context.Context, name string, r logbook.Retention) error
	// ProjectRetentionList lists the projects whose retention is not zero,
	// by name.
	ProjectRetentionList(ctx context.Context) ([]logbook.ProjectRetention, error)

	// Alerts (see logbook.AlertRule, logbook.Alert): the rules, the
	// outbox of alerts they raise and its delivery log.

	// AlertRuleInsert stores a new rule; ErrConflict when its id is taken.
	AlertRuleInsert(ctx context.Context, r *logbook.AlertRule) error
	// AlertRuleGet reads a rule by id, its webhook URL and secret whole;
	// ErrNotFound when there is none.
	AlertRuleGet(ctx context.Context, id string) (logbook.AlertRule, error)
	// AlertRuleList lists the rules of p.Project (every project's when
	// empty) of p.Kind (every kind when empty), the oldest first, their
	// webhook URLs and secrets whole.
	AlertRuleList(ctx context.Context, p AlertRuleListParams) ([]logbook.AlertRule, error)
	// AlertRuleDelete deletes a rule with its alerts and their delivery
	// log; ErrNotFound when there is none.
	AlertRuleDelete(ctx context.Context, id string) error
	// AlertInsert stores a pending alert, due at a.RaisedAt, unless its
	// rule already raised one about the same subject (then it stores
	// nothing and says false). Called in the transaction that changed the
	// facts, so the alert commits with them or not at all.
	AlertInsert(ctx context.Context, a *logbook.Alert) (bool, error)
	// AlertClaimDue takes up to limit pending alerts due at now (their
	// NextAttemptAt reached) that no one holds (no lease, or one that
	// lapsed before now), the longest due first, and leases them until
	// leaseUntil, in one statement: of several replicas claiming at once,
	// each alert goes to one (PostgreSQL skips rows another transaction
	// is claiming). The alerts come back with NextAttemptAt set to
	// leaseUntil, which AlertFinish names as the lease.
	AlertClaimDue(ctx context.Context, now, leaseUntil time.Time, limit int) ([]logbook.Alert, error)
	// AlertFinish records an attempt at delivering a leased alert and its
	// new state (p.Status; p.NextAttemptAt for one still pending), and
	// lets the lease go; false, and nothing changed, when the alert is no
	// longer held under p.Lease (the lease lapsed and another took it, or
	// its rule was deleted).
	AlertFinish(ctx context.Context, p AlertFinishParams) (bool, error)
	// AlertList lists the alerts of p.Project (of p.RuleID alone when
	// set), the newest raised first, at most p.Limit, with their delivery
	// log (Log, the first attempt first).
	AlertList(ctx context.Context, p AlertListParams) ([]logbook.Alert, error)
	// SessionListIdleClaiming lists the project's active sessions last
	// seen before seenBefore that hold claims still unexpired at now, with
	// the subjects they hold, the longest unseen first, at most limit.
	SessionListIdleClaiming(ctx context.Context, project string, seenBefore, now time.Time, limit int) ([]logbook.IdleClaimer, error)
	// EntryLastToolCalls lists a session's last n tool calls, the newest
	// first.
	EntryLastToolCalls(ctx context.Context, sessionID string, n int) ([]logbook.Entry, error)

	// ProjectPricesGet reads the project's own prices by model name (nil
	// when it set none). ErrNotFound when the project does not exist.
	ProjectPricesGet(ctx context.Context, name string) (map[string]logbook.Price, error)
	// ProjectPricesSet replaces the project's own prices (nil: none);
	// ErrNotFound when the project does not exist.
	ProjectPricesSet(ctx context.Context, name string, prices map[string]logbook.Price) error

	// KeyEnsure stores value as the key called name unless a key of that
	// name exists, and returns the key stored under name: the first value
	// given, on every replica. It commits at once when called on the Store.
	KeyEnsure(ctx context.Context, name, value string, now time.Time) (string, error)

	// ImportRows restores rows of table as Export read them (a column's
	// value a string, an int64, a float64, a bool or nil) and returns how
	// many it inserted. A row whose key the table holds already is left as
	// it is, so restoring the same rows again inserts nothing; held under
	// its key as a different row (another database's entry id), or clashing
	// with another unique key, it is ErrConflict. A table or column this
	// database does not have is ErrInvalid (an export of a newer logbook).
	// What inserted rows add to the statistics' rollups and the search index
	// is written with them; rows that refer to others (entries to their
	// session) come after them, in Export's order.
	ImportRows(ctx context.Context, table string, rows []map[string]any) (inserted int, err error)

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
	// SessionUpdate writes the mutable fields of s (all but id, project,
	// actor, harness, harness session id and started_at): those that differ
	// from was, the same session as read earlier in this transaction, or
	// every one when was is nil. ErrNotFound when s.ID does not exist. The
	// statistics' rollups take the difference: was must hold the fields
	// they count (outcome, blocker, agent, model, status, closed_at,
	// tokens, tool calls) as stored.
	SessionUpdate(ctx context.Context, s, was *logbook.Session) error
	// SessionMarkSeen moves an active session's last_seen_at forward to at
	// (never back). Ended sessions are left alone.
	SessionMarkSeen(ctx context.Context, id string, at time.Time) error
	// SessionList lists a project's sessions matching p.Filter in p.Sort
	// order (descending, ties broken by id descending), starting after the
	// cursor position when one is given. It runs one statement whatever the
	// page size; SubagentCount is filled. Filter.Query is a search
	// (logbook.ParseSearch) the session's own title, goal or result must
	// match, answered by the search index; one that does not parse is
	// ErrInvalid.
	SessionList(ctx context.Context, p SessionListParams) ([]logbook.Session, error)
	// SessionListPrior lists a project's sessions that ended partial or
	// failed at or after Since, newest first, for goal memory.
	SessionListPrior(ctx context.Context, p SessionListPriorParams) ([]logbook.Session, error)
	// SessionStats groups a project's sessions (subagents too, unless
	// p.TopLevel) started at
	// or after Since, by p.By and within it by p.Then, ordered by those
	// keys (bytes; dates as YYYY-MM-DD in p.Zone). It reads the rollups the
	// writes keep (see StatsBackfill) and the sessions of the parts of the
	// window they cannot split: the hour Since falls in, an hour a day of
	// p.Zone starts inside, the first day of two groupings neither of
	// which is the day. Its answer is the one a count of every session
	// gives. Token and cost sums saturate at math.MaxInt64 rather than
	// fail or wrap.
	SessionStats(ctx context.Context, p SessionStatsParams) ([]logbook.StatsRow, error)
	// SessionCostOfDay adds up what the model calls of a project's
	// sessions started in the UTC day of p.Day cost (micro-dollars,
	// saturated at math.MaxInt64): by agent when p.ByAgent (the map's
	// keys; sessions of no agent under ""), only p.Agent's when it is set,
	// else all of them under "". It reads the rollups, a few rows whatever
	// the number of sessions, and in a transaction counts what the
	// transaction's own writes to sessions changed, which the rollups
	// receive only when it commits. It is what the cost_over_budget alert
	// rules are checked against as entries are recorded.
	SessionCostOfDay(ctx context.Context, p SessionCostOfDayParams) (map[string]int64, error)
	// SessionListChildren lists the direct subagents of a session, oldest first.
	SessionListChildren(ctx context.Context, parentID string) ([]logbook.Session, error)
	// SessionListUnannounced lists the ids of active sessions with entries
	// not yet announced by a session.appended event, in no given order.
	SessionListUnannounced(ctx context.Context) ([]string, error)
	// SessionTimeOut ends every active session last seen before cutoff with
	// end_reason timed_out, setting closed_at where it is not set, and
	// returns the sessions it ended.
	SessionTimeOut(ctx context.Context, cutoff, now time.Time) ([]logbook.Session, error)

	// EntryInsert stores entries whose Seq the caller has assigned and
	// says how many it stored: an entry whose key its session already has
	// is skipped. A Seq the session already has is ErrConflict.
	EntryInsert(ctx context.Context, entries []logbook.Entry) (inserted int, err error)
	// EntryExistingKeys answers which of keys the session already has.
	EntryExistingKeys(ctx context.Context, sessionID string, keys []string) (map[string]bool, error)
	// EntryDeleteAfter deletes a session's entries numbered after afterSeq.
	// The service uses it to take back, in the same transaction, a batch
	// it has just inserted.
	EntryDeleteAfter(ctx context.Context, sessionID string, afterSeq int64) error
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

	// ClaimLock locks the project's subjects for claiming until the
	// transaction ends: of two transactions that lock subjects that may
	// conflict (the same subject, or a folder and a path under it: see
	// ClaimListParams.Conflicting) the second waits for the first to end,
	// so it then sees the claim the first took. Claims of subjects that
	// cannot conflict are decided side by side (PostgreSQL; SQLite
	// serialises writers anyway).
	ClaimLock(ctx context.Context, project string, subjects []string) error
	// SweepLock reports whether this transaction won the right to sweep:
	// at most one replica sweeps at a time. On SQLite it is always true.
	SweepLock(ctx context.Context) (bool, error)

	// ClaimInsert stores a new claim.
	ClaimInsert(ctx context.Context, c *logbook.Claim) error
	// ClaimGet reads a claim by id, active or not.
	ClaimGet(ctx context.Context, id string) (logbook.Claim, error)
	// ClaimUpdate writes a claim's ttl, expiry and release.
	ClaimUpdate(ctx context.Context, c *logbook.Claim) error
	// ClaimList lists active claims (not released, not expired at Now),
	// with the holding session's title, oldest first.
	ClaimList(ctx context.Context, p ClaimListParams) ([]logbook.Claim, error)
	// ClaimRenew moves the expiry of a session's active claims to now plus
	// their own TTL, never earlier than it was.
	ClaimRenew(ctx context.Context, sessionID string, now time.Time) error
	// ClaimReleaseSession releases every active claim of a session and
	// returns them as released.
	ClaimReleaseSession(ctx context.Context, sessionID, reason string, now time.Time) ([]logbook.Claim, error)
	// ClaimExpire marks claims that expired before now as released
	// (reason "expired") and returns them.
	ClaimExpire(ctx context.Context, now time.Time) ([]logbook.Claim, error)

	// TouchUpsert records what a session touched, counting repeats.
	TouchUpsert(ctx context.Context, sessionID, project string, touches []logbook.Touch) error
	// TouchList lists what a session touched, in first-touched order.
	TouchList(ctx context.Context, sessionID string) ([]logbook.Touch, error)
	// TouchTop lists a project's most touched files: those a session first
	// touched on the UTC day of since or later (since is rounded down to
	// its day), each with the sum of its touches and, as FirstAt, the
	// start of the first such day; most touched first (ties by file), at
	// most limit. It reads a rollup that TouchUpsert and deletions keep in
	// their transactions, so its time does not grow with the touches.
	TouchTop(ctx context.Context, project string, since time.Time, limit int) ([]logbook.Touch, error)
	// LinkSet replaces a session's attached links with attached and adds
	// named ones (named links are never removed).
	LinkSet(ctx context.Context, sessionID, project string, attached, named []logbook.Link) error
	// LinkList lists a session's links.
	LinkList(ctx context.Context, sessionID string) ([]logbook.Link, error)

	// EventInsert appends events to the outbox. A follower sees them once
	// they are numbered (their id): as they are inserted on SQLite, by
	// EventSequence after commit on PostgreSQL.
	EventInsert(ctx context.Context, events []*logbook.Event) error
	// EventList lists a project's numbered events after an id, in id order.
	// Ids only grow in the order events become visible, so a follower that
	// resumes after the last id it saw misses nothing.
	EventList(ctx context.Context, p EventListParams) ([]logbook.Event, error)
	// EventLatestID returns the id of a project's newest event, 0 when none.
	EventLatestID(ctx context.Context, project string) (int64, error)
	// EventPrune deletes events older than before.
	EventPrune(ctx context.Context, before time.Time) (int64, error)

	// ToolCallList lists tool calls paired with their results.
	ToolCallList(ctx context.Context, p ToolCallListParams) ([]logbook.ToolCall, error)

	// AgentEnsure makes the agent the first time it is named.
	AgentEnsure(ctx context.Context, project, name string, now time.Time) error
	// AgentGet reads an agent.
	AgentGet(ctx context.Context, p AgentGetParams) (logbook.Agent, error)
	// AgentUpdate writes an agent's current session, generation and
	// rotation policy.
	AgentUpdate(ctx context.Context, a *logbook.Agent) error
	// AgentRotationInsert records a rotation.
	AgentRotationInsert(ctx context.Context, project, agent string, r logbook.Rotation) error
	// AgentRotationList lists an agent's rotations, oldest first.
	AgentRotationList(ctx context.Context, project, agent string) ([]logbook.Rotation, error)

	// TaskGet reads a task with the sessions it has lived in.
	TaskGet(ctx context.Context, project, taskID string) (logbook.Task, error)
	// TaskUpsert stores a task (all its fields) and records its active
	// session in its history.
	TaskUpsert(ctx context.Context, t *logbook.Task) error
	// TaskList lists an agent's tasks, oldest first.
	TaskList(ctx context.Context, project, agent string) ([]logbook.Task, error)
	// TaskMoveAgent points every task of an agent at a new active session
	// and records it in their history; it returns how many moved.
	TaskMoveAgent(ctx context.Context, project, agent, sessionID string, now time.Time) (int64, error)

	// SessionListLinked lists the project's active sessions attached to or
	// naming an issue or pull (kind "issue"/"pull", ref), or, with kind
	// "subject", whose subject is ref.
	SessionListLinked(ctx context.Context, project, kind, ref string) ([]logbook.Session, error)
	// SkillList lists the skill names used anywhere in the tree rooted at rootID.
	SkillList(ctx context.Context, rootID string) ([]string, error)
	// SessionDeleteTree deletes a session, its subagents at any depth, and
	// everything that belongs to them (entries, plans, claims, touches,
	// links, events), and returns how many rows of each it deleted.
	SessionDeleteTree(ctx context.Context, id string) (map[string]int64, error)

	// Maintenance: revoking tokens, backups and retention.

	// TokenRevoke revokes, at at, the token whose id or hash is idOrHash
	// and returns it. ErrNotFound when no token that is not revoked has it.
	TokenRevoke(ctx context.Context, idOrHash string, at time.Time) (logbook.Token, error)
	// TokenRevokeActor revokes, at at, every token of an actor in a project
	// (never an admin token) and returns how many it revoked.
	TokenRevokeActor(ctx context.Context, project, actor string, at time.Time) (int64, error)
	// Backup writes a consistent copy of the whole database to path, a
	// file that must not exist yet, while other connections keep writing
	// (SQLite: VACUUM INTO). It must be called on the Store, not in a Tx.
	// On PostgreSQL it returns an error that says how to use pg_dump.
	Backup(ctx context.Context, path string) error
	// SessionPruneEnded deletes up to limit top-level sessions that ended
	// before before, and whose subagents all ended before it too, with
	// their trees and everything of theirs (as SessionDeleteTree does),
	// oldest first. It returns the rows deleted per table; "sessions"
	// counts every session of the trees, and is 0 when nothing was left to
	// prune. Sessions still going, or revived meanwhile, are kept. It
	// looks project by project, through the projects ProjectEnsure made.
	SessionPruneEnded(ctx context.Context, before time.Time, limit int) (map[string]int64, error)

	// SessionPruneProject is SessionPruneEnded for one project's sessions.
	SessionPruneProject(ctx context.Context, project string, before time.Time, limit int) (map[string]int64, error)
	// EntryPartitionPrune enforces session retention a month at a time
	// where entries are partitioned by the month of their session
	// (PostgreSQL): it empties the oldest partition of a past month whose
	// sessions' trees are all due under their own project's retention at
	// now (the trees SessionPruneProject would delete), and deletes those
	// trees. It returns the rows deleted per table as SessionPruneProject
	// does, "partitions" counting the month; "sessions" is 0 when no month
	// was due, and always on engines without partitions (SQLite).
	EntryPartitionPrune(ctx context.Context, now time.Time) (map[string]int64, error)
	// SessionListTrimmable lists the ids of up to limit of a project's
	// sessions that ended before before and were not marked trimmed
	// (SessionMarkTrimmed), the first ended first.
	SessionListTrimmable(ctx context.Context, project string, before time.Time, limit int) ([]string, error)
	// SessionMarkTrimmed marks a session trimmed at at: payload retention
	// is done with it.
	SessionMarkTrimmed(ctx context.Context, id string, at time.Time) error
	// EntryListTrimmable lists up to limit of a session's entries that
	// payload retention changes (logbook.Trimmable), in seq order.
	EntryListTrimmable(ctx context.Context, sessionID string, limit int) ([]logbook.Entry, error)
	// EntryUpdateContent writes the text and payload of entries, found by
	// their ID and SessionID, and indexes them again for search.
	EntryUpdateContent(ctx context.Context, entries []logbook.Entry) error

	// Why: sessions behind a commit.

	// Search finds what matches p.Query (see logbook.ParseSearch) in a
	// project, through the search index: entries, whose text is
	// logbook.EntrySearchText, and sessions' own title, goal and result
	// (logbook.SessionSearchText), both as they were stored. Of each, the
	// p.Candidates newest matches that pass p.Filter are ranked, best
	// first (ties: newest first), and the page at p.Offset of at most
	// p.Limit of them returned. Every engine holds the same words of a
	// text (logbook.SearchWords), so a search finds the same things on
	// each; how they rank is the engine's own. A query that does not
	// parse is ErrInvalid.
	Search(ctx context.Context, p SearchParams) (SearchResult, error)

	// SessionListByCommit lists a project's sessions (subagents too) whose
	// head commit, or the commit of one of whose entries, is sha: equal, sha
	// a prefix of it, or it (7 characters or more) a prefix of sha. Newest
	// started first, at most limit.
	SessionListByCommit(ctx context.Context, project, sha string, limit int) ([]logbook.Session, error)
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
	Filter  logbook.SessionFilter
	Sort    logbook.SessionSort
	Limit   int
	// Now is the instant states and open durations are computed at.
	Now time.Time
	// IdleBefore: an active session last seen before it reads idle.
	IdleBefore time.Time
	// After, when set, continues a list after the session at this position
	// of the sort order.
	After *SessionCursor
}

// SessionCursor is a position in a session list: the sort key's value
// (microseconds for times, seconds for durations) and the id breaking ties.
type SessionCursor struct {
	Value int64
	ID    string
}

// SessionListPriorParams selects the sessions goal memory looks at.
type SessionListPriorParams struct {
	Project   string
	Since     time.Time
	ExcludeID string
	Limit     int
}

// SessionStatsParams selects what SessionStats groups.
type SessionStatsParams struct {
	Project string
	Since   time.Time
	By      logbook.StatsBy
	Then    logbook.StatsBy // optional second grouping, e.g. outcomes per day
	// Now is the instant the durations of sessions still running run to.
	Now time.Time
	// Zone is where a day begins and ends for ByDay; nil is UTC.
	Zone *time.Location
	// TopLevel counts only the sessions with no parent, leaving out the
	// subagents.
	TopLevel bool
}

// SessionCostOfDayParams select what SessionCostOfDay adds up.
type SessionCostOfDayParams struct {
	Project string
	// Day is any instant of the UTC day.
	Day     time.Time
	ByAgent bool
	// Agent, when set, keeps that agent's sessions only (ByAgent is then
	// implied).
	Agent string
}

// ClaimListParams selects active claims of a project. Subject, when set,
// keeps the claims on that subject or on a prefix of it (who holds it);
// Conflicting, when set, keeps the claims that collide with it in either
// direction. SessionID keeps one session's claims.
type ClaimListParams struct {
	Project     string
	Subject     string
	Conflicting string
	SessionID   string
	Now         time.Time
}

// EventListParams selects events after an id.
type EventListParams struct {
	Project string
	AfterID int64
	Limit   int
}

// ToolCallListParams selects tool calls: of one session, or across a
// project (with optional tool and since), from an entry id cursor. In
// recorded order after AfterID, or with Newest, newest first before it.
type ToolCallListParams struct {
	Project   string
	SessionID string
	Tool      string
	Since     time.Time
	AfterID   int64
	Newest    bool
	Limit     int
}

// EntryListParams selects a session's entries.
type EntryListParams struct {
	SessionID         string
	AfterSeq          int64
	Limit             int
	IncludeSuperseded bool
}

// SearchParams select what Search finds.
type SearchParams struct {
	Project string
	// Query is what to search for, redacted as free text is, so that it
	// is read the way what it searches was stored.
	Query  string `redact:"text"`
	Filter logbook.SearchFilter
	// Candidates is how many of the newest matching entries, and of the
	// newest matching sessions, are ranked.
	Candidates    int
	Offset, Limit int
}

// SearchResult is a page of what a search found.
type SearchResult struct {
	Hits []SearchHit
	// Ranked is how many matches were ranked, of which Hits is a page;
	// Capped says more matched than Candidates of a kind.
	Ranked int
	Capped bool
}

// SearchHit is one match: an entry of a session, or (Entry nil) the
// session's own title, goal or result.
type SearchHit struct {
	Session logbook.Session
	Entry   *logbook.Entry
	Score   float64 // higher ranks first
}

// AgentGetParams selects an agent; ForUpdate locks it as SessionGetParams does.
type AgentGetParams struct {
	Project, Name string
	ForUpdate     bool
}

// ExportParams select what Export reads and receive it.
type ExportParams struct {
	// Project limits the export to one project's rows; "" exports all.
	Project string
	// Counted receives the tables, in order, and their row counts.
	Counted func(tables []ExportTable) error
	// Row receives one row of table: its columns by name.
	Row func(table string, row map[string]any) error
}

// ExportTable is a table an export holds and how many rows of it.
type ExportTable struct {
	Name string
	Rows int64
}

// AlertRuleListParams select alert rules.
type AlertRuleListParams struct {
	Project string
	Kind    logbook.AlertKind
}

// AlertFinishParams record an attempt at delivering an alert.
type AlertFinishParams struct {
	ID string
	// Lease is the lease AlertClaimDue gave (the NextAttemptAt it
	// returned).
	Lease   time.Time
	Attempt logbook.AlertAttempt
	Status  logbook.AlertStatus
	// NextAttemptAt is when a still pending alert is tried again.
	NextAttemptAt time.Time
}

// AlertListParams select alerts.
type AlertListParams struct {
	Project string
	RuleID  string
	Limit   int
}
