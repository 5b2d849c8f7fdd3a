package crashtest

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/testdb"
)

// kills is how many times the server is killed mid-load.
const kills = 5

func TestKillSQLite(t *testing.T) {
	testKill(t, testdb.SQLitePath(t))
}

func TestKillPostgres(t *testing.T) {
	testKill(t, testdb.PostgresURL(t))
}

// testKill runs 50 writing clients, and 5 more reporting through the
// Claude Code hook (and its spool), against a server that is killed with
// SIGKILL at random moments, five times, and restarted each time; then
// every acknowledged entry must be there exactly once, without gaps.
func testKill(t *testing.T, db string) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, seed))
	t.Logf("random seed %d", seed)
	srv := startServer(t, db)
	l := newLoad(t, srv, clients)
	hooks := newHookLoad(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	hooksDone := make(chan struct{})
	go func() { hooks.run(ctx); close(hooksDone) }()

	var killed atomic.Int64
	go func() {
		for range kills {
			// A random moment while the clients write: 150 to 700 ms after
			// the server came back.
			time.Sleep(time.Duration(150+rng.IntN(550)) * time.Millisecond)
			srv.kill()
			killed.Add(1)
			srv.start()
		}
		killed.Add(1) // the last restart is done
	}()
	start := time.Now()
	l.run(ctx, 10, func() bool { return killed.Load() > kills })
	if ctx.Err() != nil {
		t.Fatal("the load did not finish within 90 s")
	}
	t.Logf("%d kills survived; %d clients, %d entries acknowledged in %v; clients met %s",
		killed.Load()-1, clients, l.acked(), time.Since(start).Round(time.Millisecond), &l.faults)
	<-hooksDone
	l.faults.check(t)
	l.verify()
	hooks.verify(t)
	if !t.Failed() {
		t.Logf("verified: all %d acknowledged entries there exactly once, numbered without a gap, counters right; %d sessions ended", l.acked(), clients)
	}
}
