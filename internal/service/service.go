// Package service holds logbook's use cases: start a session, record
// entries, end it, rotate an agent. Each method checks who is asking,
// applies the rules of package logbook, decides the transaction and calls
// the store. HTTP, MCP, the hooks, the web UI and the CLI call the service,
// never the store, so a rule is enforced once and every interface gives the
// same answer.
package service

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// Options tune a Service. Zero values take the defaults.
type Options struct {
	// IdleWindow is how long an active session goes unseen before it reads
	// idle (default 10 minutes).
	IdleWindow time.Duration
	// PriorWindow is how far back setting a goal looks for the project's
	// earlier partial and failed attempts (default DefaultPriorWindow).
	PriorWindow time.Duration
	// SessionTimeout is how long an active session goes unseen before the
	// sweeper ends it as timed_out (default 2 hours).
	SessionTimeout time.Duration
	// NowFunc returns the current time (default time.Now); tests move it.
	NowFunc func() time.Time
	// Logger receives the service's logs (default slog.Default()).
	Logger *slog.Logger
	// AuthCacheTTL, when positive, keeps what a token stands for in memory
	// that long, so most requests skip the token lookup. A revoked token
	// then keeps working up to that long on servers that saw it recently;
	// event streams look their token up again that often (RecheckEvery).
	// Zero looks every token up.
	AuthCacheTTL time.Duration
	// RateLimit is how many requests a second one token may make on
	// average through Admit (default DefaultRateLimit), RateBurst how many
	// at once after a quiet spell (default DefaultRateBurst); a negative
	// RateLimit turns the limit off. MaxStreams is how many event streams
	// one token may hold open at once (default DefaultMaxStreams; negative:
	// no limit).
	RateLimit  float64
	RateBurst  int
	MaxStreams int
	// RateClock is the clock the rate limit measures how fast requests
	// come by (default time.Now). It is apart from NowFunc, which tests
	// move by hours; a test of the limit steps it instead of sleeping.
	RateClock func() time.Time
	// Committed, when set, is told the type of every event a transaction
	// wrote, once it has committed (session.started, claim.taken, …): what
	// /metrics counts.
	Committed func(eventType string)
	// Removed, when set, is told what the sweeper's retention removed, as
	// it commits: n "sessions" (subagents too), their "entries", the
	// "payloads" of n entries, or n "messages" (see logbook.Retention).
	// /metrics counts it.
	Removed func(what string, n int64)
	// AlertAttempted, when set, is told what came of each post of an
	// alert the deliverer recorded: "delivered", "retrying" (tried again
	// later) or "failed" (given up). Posts go side by side: it is called
	// concurrently. /metrics counts it.
	AlertAttempted func(result string)
	// AlertClient posts alerts to the rules' webhooks (default: a client
	// with AlertTimeout that follows no redirect). Tests give one that
	// trusts their TLS receivers.
	AlertClient *http.Client
	// Costed, when set, is told what the model calls a committed batch of
	// entries recorded cost, in micro-dollars (logbook.Usage.CostMicros).
	// /metrics counts it.
	Costed func(micros int64)
}

// Defaults for Options.
const (
	DefaultIdleWindow     = 10 * time.Minute
	DefaultSessionTimeout = logbook.DefaultSessionTimeout
)

// Service runs logbook's use cases on a store. It is safe for concurrent use.
type Service struct {
	// store is the engine's store behind the redacting boundary (see
	// cleaner): the service never holds the engine's own.
	store   *redactingStore
	idle    time.Duration
	prior   time.Duration // Options.PriorWindow
	timeout time.Duration
	nowFunc func() time.Time
	log     *slog.Logger
	hub     hub
	auth    authCache
	limits  *limiter
	counted func(eventType string) // Options.Committed
	// removedFunc is Options.Removed.
	removedFunc func(what string, n int64)
	costedFunc  func(micros int64) // Options.Costed
	// committer, once Run starts it, groups concurrent write transactions
	// (on a single-writer engine: SQLite).
	committer atomic.Pointer[committer]
	// sessionCommitters, once Run starts them on an engine whose
	// transactions commit side by side (PostgreSQL), group the writes to
	// sessions, each session's always in the same one (see inSessionTx).
	sessionCommitters atomic.Pointer[[]*committer]
	// searchIndexing is set while the search backfill has work left.
	searchIndexing atomic.Bool
	// alertRules caches the projects' alert rules (see raise).
	alertRules alertRuleCache
	// alertClient posts alerts to webhooks (Options.AlertClient).
	alertClient *http.Client
	// alertAttempted is Options.AlertAttempted.
	alertAttempted func(result string)
	// alertRaised is poked when a commit raised an alert, to wake the
	// deliverer (DeliverAlerts).
	alertRaised chan struct{}
}

// New returns a Service on st.
func New(st store.Store, opts Options) *Service {
	s := &Service{store: newRedactingStore(st), idle: opts.IdleWindow, prior: opts.PriorWindow, timeout: opts.SessionTimeout, nowFunc: opts.NowFunc, log: opts.Logger,
		hub: hub{ch: make(chan struct{})}, auth: authCache{ttl: opts.AuthCacheTTL, entries: map[string]authEntry{}}, limits: newLimiter(opts),
		counted: opts.Committed, removedFunc: opts.Removed, alertClient: opts.AlertClient, alertRaised: make(chan struct{}, 1),
		alertAttempted: opts.AlertAttempted, costedFunc: opts.Costed}
	if s.alertClient == nil {
		s.alertClient = newAlertClient()
	}
	if s.idle <= 0 {
		s.idle = DefaultIdleWindow
	}
	if s.timeout <= 0 {
		s.timeout = DefaultSessionTimeout
	}
	if s.prior <= 0 {
		s.prior = DefaultPriorWindow
	}
	if s.nowFunc == nil {
		s.nowFunc = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

// Run starts the service's background work and blocks until ctx ends:
// announcing appended entries every logbook.AppendedEvery (see announce),
// counting the sessions a migration left uncounted into the statistics'
// rollups (BackfillStats), indexing for search what was written before the
// index was made (BackfillSearch) and, on a single-writer engine (SQLite),
// the group committer that coalesces concurrent writes into shared
// transactions. Without Run every
// write is a transaction of its own, which is correct but slower, and
// entries appended within AppendedEvery of a session's last
// session.appended wait for its next append or its end to be announced.
func (s *Service) Run(ctx context.Context) {
	announced := make(chan struct{})
	go func() {
		defer close(announced)
		s.announceEvery(ctx, logbook.AppendedEvery)
	}()
	defer func() { <-announced }()
	backfilled := make(chan struct{})
	go func() {
		defer close(backfilled)
		s.backfillStats(ctx)
	}()
	defer func() { <-backfilled }()
	indexed := make(chan struct{})
	go func() {
		defer close(indexed)
		s.backfillSearch(ctx)
	}()
	defer func() { <-indexed }()
	if !s.store.SingleWriter() {
		s.runSessionCommitters(ctx)
		return
	}
	c := newCommitter(s.store, s.committed)
	c.alertRules = &s.alertRules
	s.committer.Store(c)
	c.run(ctx)
	s.committer.Store(nil)          // from now on each write commits on its own
	c.drain(100 * time.Millisecond) // and the ones already queued are answered
}

// announceEvery calls announcePending every interval until ctx ends. A
// failure (a lost connection, say) is logged and retried at the next
// tick: what is left to announce stays in the sessions' rows.
func (s *Service) announceEvery(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := s.announcePending(ctx); err != nil && ctx.Err() == nil {
				s.log.WarnContext(ctx, "announcing appended entries failed; retrying", "err", err)
			}
		}
	}
}

// Engine names the database engine the service runs on ("sqlite" or
// "postgres"), for the health check.
func (s *Service) Engine() string { return s.store.Engine() }

// now is the current time at the store's precision (microseconds, UTC), so
// what a method returns equals what a later read gives back.
func (s *Service) now() time.Time { return s.nowFunc().UTC().Truncate(time.Microsecond) }

// Caller is who makes a request: the actor and project of its token. The
// admin token has no project and may act on every project.
type Caller struct {
	Actor   string
	Project string
	Admin   bool
	// TokenID is the id of the token the caller authenticated with (empty
	// for a caller made in code, such as the CLI's admin on the database).
	TokenID string
	// hash is that token's SHA-256, by which Recheck looks it up again.
	hash string
}

// sees reports whether the caller may read the project's data.
func (c Caller) sees(project string) bool { return c.Admin || c.Project == project }

// projectFor picks the project a request is about: the one it names
// (cleaned by logbook.Name), else the token's own.
func (c Caller) projectFor(named string) (string, error) {
	project, err := logbook.Name("project", named, logbook.MaxID)
	if err != nil {
		return "", err
	}
	if project == "" {
		project = c.Project
	}
	if project == "" {
		return "", logbook.Invalid("project", "name the project this is about")
	}
	if !c.sees(project) {
		return "", fmt.Errorf("this token is for project %q, not %q: %w", c.Project, project, logbook.ErrForbidden)
	}
	return project, nil
}

// work is a transaction plus the events it will write: events go into the
// outbox last, just before the commit, so the event lock (PostgreSQL) is
// held as briefly as possible.
type work struct {
	store.Tx
	events []*logbook.Event
	// alertRules is the service's cache of alert rules, which the facts
	// a transaction changes are checked against (see raise).
	alertRules *alertRuleCache
}

// emit queues an event about a change made in this transaction.
func (w *work) emit(project, typ, sessionID string, at time.Time, data any) {
	raw, _ := json.Marshal(data) // data is always a map or struct of plain values
	w.events = append(w.events, &logbook.Event{Project: project, Type: typ, SessionID: sessionID, At: at, Data: raw})
}

// inTx runs fn in a transaction, writes the events it emitted and commits
// when fn succeeds; followers are woken after the commit. On a single-writer
// engine, concurrent calls share transactions (group commit) once Run has
// started the committer.
func (s *Service) inTx(ctx context.Context, fn func(tx *work) error) error {
	return s.inTxLocking(ctx, store.SessionKeys{}, fn)
}

// inTxLocking is inTx for a write that locks session's row (none where its
// ID is "").
func (s *Service) inTxLocking(ctx context.Context, session store.SessionKeys, fn func(tx *work) error) error {
	if c := s.committer.Load(); c != nil {
		return c.do(ctx, session, fn)
	}
	tx, err := s.store.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	w := &work{Tx: tx, alertRules: &s.alertRules}
	if err := fn(w); err != nil {
		return err
	}
	if err := tx.EventInsert(ctx, w.events); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.committed(w.events)
	return nil
}

// inSessionTx is inTx for a write that locks one session's row and no
// other row a concurrent request may lock first: appends, heartbeats, plan
// steps. Where the engine commits transactions side by side (PostgreSQL)
// and Run has started the session committers, it shares a transaction
// with the concurrent writes to other sessions of the same committer: one
// BEGIN and COMMIT, one flush of the log and one write of the statistics'
// rollup rows for the group instead of for each request. A session's
// writes always go to the same committer, so two groups never wait for
// each other's locks on a session row.
func (s *Service) inSessionTx(ctx context.Context, session store.SessionKeys, fn func(tx *work) error) error {
	if cs := s.sessionCommitters.Load(); cs != nil {
		return (*cs)[committerOf(session.ID, len(*cs))].do(ctx, session, fn)
	}
	return s.inTxLocking(ctx, session, fn)
}

// committed wakes the event stream's followers and counts the events, once
// the transaction that wrote them has committed.
func (s *Service) committed(events []*logbook.Event) {
	if len(events) == 0 {
		return
	}
	s.hub.wake()
	for _, e := range events {
		if s.counted != nil {
			s.counted(e.Type)
		}
		if e.Type == logbook.EventAlertRaised {
			s.wakeDeliverer()
		}
	}
}

// withState fills the state a reader sees.
func (s *Service) withState(sess logbook.Session, now time.Time) logbook.Session {
	sess.State = sess.StateAt(now, s.idle)
	return sess
}

// hub wakes the followers of the event stream: a channel closed and
// replaced on every wake, so any number of waiters see it without a
// goroutine or a buffer per follower.
type hub struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel closed at the next wake.
func (h *hub) wait() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ch
}

func (h *hub) wake() {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.ch)
	h.ch = make(chan struct{})
}
