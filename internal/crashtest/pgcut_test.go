package crashtest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/testdb"
)

// cuts is how many times the server's PostgreSQL connections are cut.
const cuts = 4

// TestPostgresConnectionsCut terminates every connection the server holds
// to its database, several times while 50 clients write. Meanwhile
// requests may fail, but only as 503 with Retry-After, never as another
// 5xx and never by hanging; the server reconnects by itself and every
// acknowledged entry is there.
func TestPostgresConnectionsCut(t *testing.T) {
	dbURL := testdb.PostgresURL(t)
	admin, name := testdb.PostgresAdmin(t, dbURL)

	srv := startServer(t, dbURL)
	l := newLoad(t, srv, clients)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	var done atomic.Bool
	var terminated atomic.Int64
	go func() {
		defer done.Store(true)
		for range cuts {
			time.Sleep(300 * time.Millisecond)
			var n int64
			err := admin.QueryRow(`SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = $1 AND pid <> pg_backend_pid()`, name).Scan(&n)
			if err != nil {
				t.Errorf("cutting connections: %v", err)
				return
			}
			terminated.Add(n)
		}
		time.Sleep(300 * time.Millisecond) // writes after the last cut
	}()
	start := time.Now()
	l.run(ctx, 10, done.Load)
	if ctx.Err() != nil {
		t.Fatal("the load did not finish within 90 s")
	}
	t.Logf("%d cuts (%d connections terminated); %d entries acknowledged in %v; clients met %s",
		cuts, terminated.Load(), l.acked(), time.Since(start).Round(time.Millisecond), &l.faults)
	if terminated.Load() < cuts {
		t.Errorf("only %d connections were terminated in %d cuts: the server held none open", terminated.Load(), cuts)
	}
	l.faults.check(t)
	if l.faults.transport.Load() > 0 {
		t.Errorf("the server process stopped answering (%d transport errors); it must keep running", l.faults.transport.Load())
	}
	l.verify()
}
