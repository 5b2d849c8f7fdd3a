package service

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// committer coalesces concurrent write transactions into shared ones:
// group commit. Each request still runs alone and in order inside the
// shared transaction, under a savepoint, so it sees every earlier
// request's writes (per-session numbering and idempotency keys hold) and a
// failing request rolls back only itself. One commit, one sync of the log,
// then every request of the group is answered: acknowledged means durable.
//
// It is used where the engine has one writer anyway (SQLite): there a
// transaction per request spends most of its time waiting for its own sync.
// On PostgreSQL several committers, each on a connection of its own, share
// the writes to sessions (see Service.inSessionTx): there a transaction per
// request costs a BEGIN, a COMMIT with its log flush and a write of the
// statistics' rollup rows, each a round trip. A group locks its requests'
// sessions first, in one statement (store.Tx.LockSessions); the store then
// holds back their entries and session rows and writes them once for the
// group.
type committer struct {
	store    store.Store
	requests chan *txRequest
	// stopped closes once the committer takes no more requests (after
	// drain); a request still queued then was never run.
	stopped chan struct{}
	// maxGroup bounds how many requests share one transaction, so one
	// slow group cannot hold many callers for long.
	maxGroup int
	onCommit func([]*logbook.Event) // told the events of each commit (Service.committed)
	// alertRules is the service's cache of alert rules, for the work (nil:
	// rules are read in each transaction).
	alertRules *alertRuleCache
}

// txRequest is one caller's transaction waiting for a group.
type txRequest struct {
	ctx  context.Context
	fn   func(*work) error
	done chan error
	// session is the session whose row fn locks (ID "" for none), with
	// the keys of the entries it may insert: the group locks its requests'
	// sessions together before running them.
	session store.SessionKeys
}

func newCommitter(st store.Store, onCommit func([]*logbook.Event)) *committer {
	return &committer{store: st, requests: make(chan *txRequest, 1024), stopped: make(chan struct{}), maxGroup: 256, onCommit: onCommit}
}

// Session committers on an engine whose transactions commit side by side
// (PostgreSQL): how many, and how many requests one group holds at most.
// The store writes a group's entries and session rows set-based at its end
// (sqlstore.heldWrites), so a bigger group costs less a request: two
// committers made 913 entries/s where four made 721 and one 606
// (BENCHMARKS.md, "Thirteenth pass"). A request's savepoint that is sent
// and writes takes a subtransaction id, and PostgreSQL keeps 64 of them
// for each transaction in shared memory; past that, every other
// transaction's snapshot has to look subtransactions up on disk.
const (
	sessionCommitterCount = 2
	sessionGroupMax       = 64
)

// runSessionCommitters groups the writes to sessions on an engine whose
// transactions commit side by side (see inSessionTx) until ctx ends, then
// answers the ones still queued.
func (s *Service) runSessionCommitters(ctx context.Context) {
	committers := make([]*committer, sessionCommitterCount)
	for i := range committers {
		committers[i] = newCommitter(s.store, s.committed)
		committers[i].maxGroup, committers[i].alertRules = sessionGroupMax, &s.alertRules
	}
	s.sessionCommitters.Store(&committers)
	each := func(do func(c *committer)) {
		var wg sync.WaitGroup
		for _, c := range committers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				do(c)
			}()
		}
		wg.Wait()
	}
	each(func(c *committer) { c.run(ctx) })
	s.sessionCommitters.Store(nil) // from now on each write commits on its own
	each(func(c *committer) { c.drain(100 * time.Millisecond) })
}

// committerOf is the committer, of n, that a session's writes go to.
func committerOf(sessionID string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(sessionID))
	return int(h.Sum32() % uint32(n))
}

// do runs fn in the next group and returns its outcome once the group is
// committed (or fn failed). session names the session whose row fn locks,
// if any.
func (c *committer) do(ctx context.Context, session store.SessionKeys, fn func(*work) error) error {
	req := &txRequest{ctx: ctx, fn: fn, done: make(chan error, 1), session: session}
	select {
	case c.requests <- req:
	case <-c.stopped:
		return ErrShuttingDown
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once queued, wait for the answer even if ctx ends: the group may
	// already have committed this request's writes.
	select {
	case err := <-req.done:
		return err
	case <-c.stopped:
		select {
		case err := <-req.done: // answered just before the committer stopped
			return err
		default:
			return ErrShuttingDown // never run: nothing was written
		}
	}
}

// ErrShuttingDown answers a write that arrived as the server was stopping;
// nothing of it was written, and the caller may retry it (on another
// replica, or once this one is back).
// It matches logbook.ErrUnavailable.
var ErrShuttingDown error = logbook.Unavailable("the server is shutting down; retry shortly", nil)

// run takes groups of requests until ctx ends.
func (c *committer) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case first := <-c.requests:
			c.commitGroup(c.fill(first))
		}
	}
}

// drain answers the requests still queued once the service stopped
// handing new ones to the committer, until none came for idle.
func (c *committer) drain(idle time.Duration) {
	for {
		select {
		case first := <-c.requests:
			c.commitGroup(c.fill(first))
		case <-time.After(idle):
			close(c.stopped)
			return
		}
	}
}

// fill makes a group of first and everything already waiting.
func (c *committer) fill(first *txRequest) []*txRequest {
	group := []*txRequest{first}
	for len(group) < c.maxGroup {
		select {
		case req := <-c.requests:
			group = append(group, req)
		default:
			return group
		}
	}
	return group
}

// commitGroup runs one group in one transaction.
func (c *committer) commitGroup(group []*txRequest) {
	results := make([]error, len(group))
	// answerFrom answers the requests before from with their own results
	// and the rest with err.
	answerFrom := func(from int, err error) {
		for i, req := range group {
			if i < from {
				req.done <- results[i]
			} else {
				req.done <- err
			}
		}
	}
	fail := func(err error) { answerFrom(0, err) }
	ctx := context.Background() // the group outlives any one caller's context
	// begin starts the group's transaction for the requests from the
	// from-th on, and locks their sessions' rows at once, in one statement
	// instead of one a request.
	begin := func(from int) (store.Tx, error) {
		tx, err := c.store.Begin(ctx)
		if err != nil {
			return nil, err
		}
		var sessions []store.SessionKeys
		for _, req := range group[from:] {
			if req.session.ID != "" {
				sessions = append(sessions, req.session)
			}
		}
		if len(sessions) > 0 {
			if err := tx.LockSessions(ctx, sessions); err != nil {
				tx.Rollback()
				return nil, err
			}
		}
		return tx, nil
	}
	tx, err := begin(0)
	if err != nil {
		fail(err)
		return
	}
	var events []*logbook.Event
	// clean: the transaction holds no request's writes yet. The first
	// request to run then needs no savepoint (two statements, on
	// PostgreSQL two round trips): should it fail, the transaction is
	// rolled back and begun again for the rest, losing nothing else. A
	// group of one, what a quiet server mostly runs, has none.
	clean := true
	for i, req := range group {
		if err := req.ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		if clean {
			w := &work{Tx: tx, alertRules: c.alertRules}
			if err := safely(func() error { return req.fn(w) }); err != nil {
				results[i] = err
				tx.Rollback()
				if tx, err = begin(i + 1); err != nil {
					answerFrom(i+1, err)
					return
				}
				continue
			}
			clean = false
			events = append(events, w.events...)
			continue
		}
		if err := tx.Savepoint(ctx); err != nil {
			tx.Rollback()
			fail(err)
			return
		}
		w := &work{Tx: tx, alertRules: c.alertRules}
		err := safely(func() error { return req.fn(w) })
		if err != nil {
			results[i] = err
			if rbErr := tx.RollbackToSavepoint(ctx); rbErr != nil {
				tx.Rollback()
				fail(fmt.Errorf("%w (and undoing it failed: %v)", err, rbErr))
				return
			}
			continue
		}
		if err := tx.ReleaseSavepoint(ctx); err != nil {
			tx.Rollback()
			fail(err)
			return
		}
		events = append(events, w.events...)
	}
	if err := tx.EventInsert(ctx, events); err != nil {
		tx.Rollback()
		fail(err)
		return
	}
	if err := tx.Commit(); err != nil {
		fail(err)
		return
	}
	c.onCommit(events)
	for i, req := range group {
		req.done <- results[i]
	}
}

// safely runs fn, turning a panic into an error so one bad request cannot
// take the whole group (and every caller waiting on it) down.
func safely(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New(fmt.Sprint("internal error: ", r))
		}
	}()
	return fn()
}
