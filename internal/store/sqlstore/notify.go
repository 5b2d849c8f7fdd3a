package sqlstore

import (
	"context"
	"database/sql"
	"log/slog"
	"maps"
	"sync"
	"time"
)

// notifier wakes the followers of other replicas (PostgreSQL NOTIFY) for
// the projects whose events were committed, after the commit and
// coalesced: while one round of notifications is out, and for
// notifySpacing after it, the projects of later commits wait for the next
// round, one notification each. Under load that is one notification a
// project every notifySpacing, where a round after every commit was one
// transaction of its own for every few commits.
//
// Why not inside the transaction that inserts the events: PostgreSQL makes
// every transaction that notifies wait at commit for the others, each
// holding one lock through its log flush, so hooks' transactions
// committed one at a time. A notification lost to a crash or an error only
// delays those followers until the next one; the events are committed.
type notifier struct {
	db        *sql.DB
	notifySQL string

	mu      sync.Mutex
	pending map[string]bool
	running bool
	closed  bool           // no more rounds start (the store is closing)
	rounds  sync.WaitGroup // the goroutine sending, while there is one
}

func newNotifier(db *sql.DB, notifySQL string) *notifier {
	return &notifier{db: db, notifySQL: notifySQL, pending: map[string]bool{}}
}

// notify queues projects for the next round and starts one if none is out.
// A nil notifier (an engine without NotifySQL) does nothing.
func (n *notifier) notify(projects map[string]bool) {
	if n == nil || len(projects) == 0 {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	maps.Copy(n.pending, projects)
	if n.running || n.closed {
		return
	}
	n.running = true
	n.rounds.Add(1)
	go n.send()
}

// send notifies round after round until nothing is pending.
func (n *notifier) send() {
	defer n.rounds.Done()
	for {
		n.mu.Lock()
		round := n.pending
		if len(round) == 0 {
			n.running = false
			n.mu.Unlock()
			return
		}
		n.pending = map[string]bool{}
		n.mu.Unlock()
		for project := range round {
			n.sendOne(project)
		}
		time.Sleep(notifySpacing)
	}
}

// notifySpacing is the least time between two rounds: how much later at
// most a follower on another replica learns of an event than one on this.
const notifySpacing = 20 * time.Millisecond

// sendOne sends one notification, giving up after notifyTimeout so that a
// stuck server cannot hold Close.
func (n *notifier) sendOne(project string) {
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	if _, err := n.db.ExecContext(ctx, n.notifySQL, project); err != nil {
		slog.WarnContext(ctx, "waking other replicas' followers failed; they catch up at the next event", "project", project, "err", err)
	}
}

const notifyTimeout = 5 * time.Second

// close starts no more rounds and returns once none is out.
func (n *notifier) close() {
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	n.rounds.Wait()
}
