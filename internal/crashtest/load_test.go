package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Load shape: 50 clients (the fault tests' default), each with its own
// token and session, sending batches of entries with unique keys.
const (
	clients      = 50
	batchEntries = 5
	project      = "crash"
)

// loadClient is one writer. acked lists the keys of every entry the server
// acknowledged (answered 200 for).
type loadClient struct {
	n       int
	token   string
	session string
	batches int
	acked   []string
}

// faults counts what the clients met.
type faults struct {
	transport   atomic.Int64 // refused, reset: the server was down
	unavailable atomic.Int64 // 503 with Retry-After
	noRetry     atomic.Int64 // 503 without Retry-After
	other5xx    atomic.Int64 // any other 5xx: a bug
	timeouts    atomic.Int64 // no answer within 15 s: a hang
	// replayed counts batches that were committed, but whose answer was
	// lost to the fault, so the client sent them again: their keys made
	// the second time a no-op.
	replayed atomic.Int64
}

func (f *faults) String() string {
	return fmt.Sprintf("%d transport errors, %d 503s, %d 503s without Retry-After, %d other 5xx, %d timeouts; %d batches committed but unanswered, replayed as no-ops",
		f.transport.Load(), f.unavailable.Load(), f.noRetry.Load(), f.other5xx.Load(), f.timeouts.Load(), f.replayed.Load())
}

// check fails the test on what must never happen whatever the fault: a
// 5xx other than 503, a 503 without Retry-After, a hang.
func (f *faults) check(t *testing.T) {
	t.Helper()
	if f.other5xx.Load() > 0 || f.noRetry.Load() > 0 || f.timeouts.Load() > 0 {
		t.Errorf("clients met: %s", f)
	}
}

// load runs the clients until done() is true and each has sent at least
// minBatches batches; a batch that fails is sent again with the same keys
// until it is acknowledged.
type load struct {
	t       *testing.T
	srv     *server
	clients []*loadClient
	faults  faults
}

// newLoad makes n clients, each with its own token.
func newLoad(t *testing.T, srv *server, n int) *load {
	l := &load{t: t, srv: srv}
	for i := range n {
		l.clients = append(l.clients, &loadClient{n: i, token: srv.token(project, fmt.Sprintf("client-%02d", i))})
	}
	return l
}

// retry sends a request until it gets a 2xx, counting the faults met on
// the way. A 4xx is a bug of the test or the server: it fails the test.
func (l *load) retry(ctx context.Context, method, path, token string, body any) (reply, bool) {
	for {
		if ctx.Err() != nil {
			return reply{}, false
		}
		r, err := l.srv.do(ctx, method, path, token, body)
		switch {
		case err != nil && isTimeout(err):
			l.faults.timeouts.Add(1)
		case err != nil:
			l.faults.transport.Add(1)
		case r.status == 503 && r.header.Get("Retry-After") != "":
			l.faults.unavailable.Add(1)
		case r.status == 503:
			l.faults.noRetry.Add(1)
		case r.status >= 500:
			l.faults.other5xx.Add(1)
			l.t.Logf("%s %s: %d %s", method, path, r.status, r.body)
		case r.status >= 400:
			l.t.Errorf("%s %s: %d %s", method, path, r.status, r.body)
			return r, false
		default:
			return r, true
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// run drives every client until done() and minBatches each.
func (l *load) run(ctx context.Context, minBatches int, done func() bool) {
	var wg sync.WaitGroup
	for _, c := range l.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.runClient(ctx, c, minBatches, done)
		}()
	}
	wg.Wait()
}

func (l *load) runClient(ctx context.Context, c *loadClient, minBatches int, done func() bool) {
	if !l.start(ctx, c) {
		return
	}
	for c.batches < minBatches || !done() {
		if !l.send(ctx, c) {
			return
		}
	}
}

// start starts the client's session, retrying until it is answered.
func (l *load) start(ctx context.Context, c *loadClient) bool {
	r, ok := l.retry(ctx, "POST", "/v1/sessions", c.token, map[string]string{
		"project": project, "harness": "crashtest", "harness_session_id": fmt.Sprintf("client-%02d", c.n)})
	if !ok {
		return false
	}
	var sess struct{ ID string }
	if err := json.Unmarshal(r.body, &sess); err != nil || sess.ID == "" {
		l.t.Errorf("start answered %s", r.body)
		return false
	}
	c.session = sess.ID
	return true
}

// nextBatch is the client's next batch and its keys; it stays the same
// until the batch is acknowledged, so a retry sends the same keys.
func (c *loadClient) nextBatch() (keys []string, body map[string]any) {
	keys = make([]string, batchEntries)
	entries := make([]map[string]any, batchEntries)
	for i := range entries {
		keys[i] = fmt.Sprintf("c%02d-b%04d-e%d", c.n, c.batches, i)
		entries[i] = map[string]any{"kind": "note", "text": "entry " + keys[i], "key": keys[i]}
	}
	return keys, map[string]any{"entries": entries}
}

// ack records the answer to the client's current batch.
func (l *load) ack(c *loadClient, keys []string, r reply) bool {
	var res struct{ Duplicates int }
	if err := json.Unmarshal(r.body, &res); err != nil {
		l.t.Errorf("append answered %s", r.body)
		return false
	}
	if res.Duplicates > 0 {
		// The server had committed this batch but its answer was lost.
		l.faults.replayed.Add(1)
	}
	c.acked = append(c.acked, keys...)
	c.batches++
	return true
}

// send sends the client's next batch until it is acknowledged.
func (l *load) send(ctx context.Context, c *loadClient) bool {
	keys, body := c.nextBatch()
	r, ok := l.retry(ctx, "POST", "/v1/sessions/"+c.session+"/entries", c.token, body)
	return ok && l.ack(c, keys, r)
}

// acked counts the entries acknowledged across clients.
func (l *load) acked() int {
	n := 0
	for _, c := range l.clients {
		n += len(c.acked)
	}
	return n
}

// verify reads every client's session back, all entries included, and
// checks: each acknowledged key is there exactly once, seqs run 1..n
// without a gap, entry_count is n; then ends every session, which must
// work (no session is stuck), and checks there is one session per client.
func (l *load) verify() {
	t, srv := l.t, l.srv
	t.Helper()
	for _, c := range l.clients {
		if c.session == "" {
			t.Errorf("client %d never started its session", c.n)
			continue
		}
		seen := map[string]int{}
		var seqs []int64
		var entryCount int64
		after := int64(0)
		for {
			r := srv.must("GET", fmt.Sprintf("/v1/sessions/%s?all=true&after_seq=%d", c.session, after), c.token, nil, 200)
			var view struct {
				Session struct {
					EntryCount int64 `json:"entry_count"`
				} `json:"session"`
				Entries []struct {
					Seq int64  `json:"seq"`
					Key string `json:"key"`
				} `json:"entries"`
				NextAfterSeq int64 `json:"next_after_seq"`
			}
			if err := json.Unmarshal(r.body, &view); err != nil {
				t.Fatalf("reading session %s: %v", c.session, err)
			}
			entryCount = view.Session.EntryCount
			for _, e := range view.Entries {
				seen[e.Key]++
				seqs = append(seqs, e.Seq)
			}
			if len(view.Entries) == 0 {
				break
			}
			after = view.NextAfterSeq
		}
		for i, seq := range seqs {
			if seq != int64(i+1) {
				t.Errorf("client %d: entry %d has seq %d (a gap or a repeat)", c.n, i+1, seq)
				break
			}
		}
		if entryCount != int64(len(seqs)) {
			t.Errorf("client %d: entry_count %d, but %d entries", c.n, entryCount, len(seqs))
		}
		for _, key := range c.acked {
			if seen[key] != 1 {
				t.Errorf("client %d: acknowledged entry %s is there %d times", c.n, key, seen[key])
			}
		}
		for key, n := range seen {
			if n != 1 {
				t.Errorf("client %d: entry %s is there %d times", c.n, key, n)
			}
		}
		if len(seen) != len(c.acked) {
			// Every batch was retried until acknowledged, so nothing
			// unacknowledged may be left over either.
			t.Errorf("client %d: %d entries stored, %d acknowledged", c.n, len(seen), len(c.acked))
		}
	}

	var list struct {
		Sessions []struct{ ID string } `json:"sessions"`
	}
	r := srv.must("GET", "/v1/sessions?"+url.Values{"project": {project}, "limit": {"200"}}.Encode(), srv.admin, nil, 200)
	if err := json.Unmarshal(r.body, &list); err != nil || len(list.Sessions) != len(l.clients) {
		t.Errorf("%d sessions listed (%v), want one per client: %d", len(list.Sessions), err, len(l.clients))
	}
	for _, c := range l.clients {
		if c.session != "" {
			srv.must("POST", "/v1/sessions/"+c.session+"/end", c.token, map[string]string{"outcome": "success"}, 200)
		}
	}
}
