package sqlstore

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"time"
)

// Reads from a replica (logbook serve --read-db): lists, searches,
// statistics and transcripts are read from a read-only copy of the
// database, a streaming standby, while it keeps up; everything else, and
// everything inside a transaction, from the primary.
//
// How far the replica has come is measured against the primary's
// write-ahead log, not a clock: when a read asks, at most every
// Replica.ProbeEvery, the store notes the primary's WAL position with the
// instant before it read it, and reads the position the replica has
// replayed. The replica then holds every commit made before the newest
// noted instant whose position it has replayed: its caught-up instant.
// Read-your-writes: the store notes when it committed entries of a session
// (after the commit returned); a transcript read goes to the replica only
// when that was before the caught-up instant. Reads across sessions go to
// the replica while it is at most MaxLag behind: they may miss the last
// MaxLag of writes, as a list refreshed a moment later would.

// Replica says where reads may go besides the primary.
type Replica struct {
	// DB is the replica's handle.
	DB *sql.DB
	// MaxLag is how far behind the replica may be for reads across
	// sessions (lists, searches, statistics) to go to it.
	MaxLag time.Duration
	// PrimaryPositionSQL answers the primary's WAL position now, as a
	// number; ReplayedPositionSQL the position the replica has replayed,
	// NULL when it is no standby at all (then it is the primary, or a
	// copy as current: every read may go to it).
	PrimaryPositionSQL, ReplayedPositionSQL string
	// ProbeEvery is how often, at most, the replica's progress is
	// measured (0: every 200 ms).
	ProbeEvery time.Duration
	// Log notes a replica that cannot be reached (its reads go to the
	// primary meanwhile). Nil: slog's default.
	Log *slog.Logger
}

// defaultProbeEvery is how often, at most, the replica's progress is
// measured: a fifth of a second of commits more or less on the primary.
const defaultProbeEvery = 200 * time.Millisecond

// unreachableFor is how long reads stay on the primary after the replica
// failed to answer.
const unreachableFor = 5 * time.Second

// walMark is the primary's WAL position read just after an instant.
type walMark struct {
	at       time.Time
	position int64
}

// readRouter decides, read by read, whether the replica may answer.
type readRouter struct {
	Replica
	primary *sql.DB
	replica executor

	mu       sync.Mutex
	probedAt time.Time
	downTill time.Time
	marks    []walMark
	// caughtUp: the replica holds every commit made before it.
	caughtUp time.Time
	// written: when this process last committed entries of each session,
	// for those after caughtUp.
	written map[string]time.Time
}

// ReadFrom sends the store's reads across sessions, and transcripts
// not written lately, to r (see Replica). Call it before the store is
// used.
func (s *Store) ReadFrom(r Replica) {
	if r.Log == nil {
		r.Log = slog.Default()
	}
	if r.ProbeEvery <= 0 {
		r.ProbeEvery = defaultProbeEvery
	}
	s.reads = &readRouter{Replica: r, primary: s.db, written: map[string]time.Time{},
		replica: executor{q: r.DB, d: s.d, root: s}}
}

// forSession returns the executor a read of session id's transcript runs
// on: the replica when it has every commit of id this process made, and
// is no more than MaxLag behind; else e.
func (e executor) forSession(ctx context.Context, id string) executor {
	r := e.root.reads
	if e.tx != nil || r == nil {
		return e
	}
	caughtUp, ok := r.progress(ctx)
	if !ok || time.Since(caughtUp) > r.MaxLag {
		return e
	}
	r.mu.Lock()
	wrote, recent := r.written[id]
	r.mu.Unlock()
	if recent && !wrote.Before(caughtUp) {
		return e
	}
	return r.replica
}

// forReadAcross returns the executor a read across sessions runs on: the
// replica while it is no more than MaxLag behind, else e.
func (e executor) forReadAcross(ctx context.Context) executor {
	r := e.root.reads
	if e.tx != nil || r == nil {
		return e
	}
	if caughtUp, ok := r.progress(ctx); !ok || time.Since(caughtUp) > r.MaxLag {
		return e
	}
	return r.replica
}

// noteWritten notes that this executor changed session id's entries, for
// the replica's reads of it to wait until it has them (see forSession).
func (e executor) noteWritten(id string) {
	switch {
	case e.root == nil || e.root.reads == nil:
	case e.written != nil:
		e.written[id] = true
	case e.tx == nil: // committed already
		e.root.reads.wrote(map[string]bool{id: true})
	}
}

// wrote notes that this process committed to sessions just now.
func (r *readRouter) wrote(sessions map[string]bool) {
	if r == nil || len(sessions) == 0 {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range sessions {
		r.written[id] = now
	}
}

// progress measures the replica (at most every ProbeEvery) and returns
// its caught-up instant; ok is false while it cannot be reached.
func (r *readRouter) progress(ctx context.Context) (caughtUp time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if now.Before(r.downTill) {
		return time.Time{}, false
	}
	if now.Sub(r.probedAt) < r.ProbeEvery {
		return r.caughtUp, true
	}
	r.probedAt = now
	// Holding the lock through two short queries keeps the marks in order
	// and one probe at a time; other reads wait for it at most once per
	// ProbeEvery.
	var primary int64
	if err := r.primary.QueryRowContext(ctx, r.PrimaryPositionSQL).Scan(&primary); err != nil {
		r.Log.Warn("reading the primary's WAL position failed; reads stay on the primary", "err", err)
		r.downTill = now.Add(unreachableFor)
		return time.Time{}, false
	}
	var replayed sql.NullInt64
	if err := r.replica.q.QueryRowContext(ctx, r.ReplayedPositionSQL).Scan(&replayed); err != nil {
		r.Log.Warn("the read replica does not answer; reads go to the primary for a while", "err", err, "for", unreachableFor)
		r.downTill = now.Add(unreachableFor)
		return time.Time{}, false
	}
	r.marks = append(r.marks, walMark{at: now, position: primary})
	if !replayed.Valid { // no standby: as current as the primary
		r.caughtUp, r.marks = now, r.marks[:0]
	} else {
		kept := 0
		for i, m := range r.marks {
			if m.position <= replayed.Int64 {
				r.caughtUp, kept = m.at, i
			}
		}
		r.marks = r.marks[kept:]
		if len(r.marks) > 1000 { // a replica that stopped: keep the newest
			r.marks = r.marks[len(r.marks)-1000:]
		}
	}
	for id, at := range r.written {
		if at.Before(r.caughtUp) {
			delete(r.written, id)
		}
	}
	return r.caughtUp, true
}
