// Package bench is logbook's load generator: realistic agents that start
// sessions, send entries in small batches as hooks do, heartbeat, claim and
// release paths, start subagents and end with an outcome, against a real
// server over HTTP. It measures throughput and latency per route, and in the
// same run the raw engine doing the same inserts without HTTP, so every
// figure comes with its ratio to what the storage engine itself can do.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logbookhq/logbook/internal/client"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// Config says what load to send.
type Config struct {
	// Server is the base URL of the server under load; several,
	// separated by commas (replicas on one database), share the agents
	// out: agent i sends to the i-th, counting round.
	Server   string
	Token    string        // a project token for the agents
	Project  string        // the project the token is for
	Agents   int           // concurrent agents (default 200)
	Duration time.Duration // how long to send (default 10 s)
	Batch    int           // entries per batch (default 1, as hooks send)
	// Progress, when set, is called about once a second with the entries
	// acknowledged so far.
	Progress func(elapsed time.Duration, entries int64)
}

// Latency sums up one route's response times, in milliseconds.
type Latency struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50_ms"`
	P95   float64 `json:"p95_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

// Result is what a load run measured.
type Result struct {
	Agents         int                `json:"agents"`
	Batch          int                `json:"batch"`
	Seconds        float64            `json:"seconds"`
	Entries        int64              `json:"entries"`
	Requests       int64              `json:"requests"`
	Errors         int64              `json:"errors"`
	EntriesPerSec  float64            `json:"entries_per_sec"`
	RequestsPerSec float64            `json:"requests_per_sec"`
	Routes         map[string]Latency `json:"routes"`
	FirstError     string             `json:"first_error,omitempty"`
	// Machine is how the machine's cores spent the load's time (nil where
	// there is no /proc).
	Machine *MachineCPU `json:"machine_cpu,omitempty"`
}

// recorder collects latencies per route from many goroutines, in
// histograms of fixed size, so that a long run measures the server's memory
// and not a growing list of samples.
type recorder struct {
	mu       sync.Mutex
	routes   map[string]*histogram
	entries  atomic.Int64
	requests atomic.Int64
	errors   atomic.Int64
	firstErr atomic.Value
}

func (r *recorder) observe(route string, d time.Duration, err error) {
	r.requests.Add(1)
	if err != nil {
		if r.errors.Add(1) == 1 {
			r.firstErr.Store(fmt.Sprintf("%s: %v", route, err))
		}
	}
	r.mu.Lock()
	h := r.routes[route]
	if h == nil {
		h = &histogram{}
		r.routes[route] = h
	}
	h.add(d)
	r.mu.Unlock()
}

// histogram counts durations in buckets 2% wide (from 1 µs to about an
// hour), so a percentile it reports is within 2% of the true one.
type histogram struct {
	counts [1200]int64
	n      int64
	max    time.Duration
}

const bucketGrowth = 1.02

func (h *histogram) add(d time.Duration) {
	us := max(float64(d.Microseconds()), 1)
	i := min(int(math.Log(us)/math.Log(bucketGrowth)), len(h.counts)-1)
	h.counts[i]++
	h.n++
	h.max = max(h.max, d)
}

// quantile returns the upper edge of the bucket holding quantile q, in ms.
func (h *histogram) quantile(q float64) float64 {
	want := int64(math.Ceil(q * float64(h.n)))
	var seen int64
	for i, c := range h.counts {
		if seen += c; seen >= want && c > 0 {
			return math.Pow(bucketGrowth, float64(i+1)) / 1000
		}
	}
	return float64(h.max.Microseconds()) / 1000
}

func (h *histogram) summary() Latency {
	return Latency{Count: h.n, P50: h.quantile(0.50), P95: h.quantile(0.95), P99: h.quantile(0.99),
		Max: float64(h.max.Microseconds()) / 1000}
}

// Run sends the load until cfg.Duration passes or ctx ends.
func Run(ctx context.Context, cfg Config) Result {
	if cfg.Agents <= 0 {
		cfg.Agents = 200
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 10 * time.Second
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 1
	}
	rec := &recorder{routes: map[string]*histogram{}}
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	cpuFrom, cpuOK := sampleCPU()
	start := time.Now()
	run := strconv.FormatInt(start.UnixNano(), 36)
	stopProgress := make(chan struct{})
	if cfg.Progress != nil {
		go func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-stopProgress:
					return
				case <-tick.C:
					cfg.Progress(time.Since(start), rec.entries.Load())
				}
			}
		}()
	}
	var wg sync.WaitGroup
	for i := range cfg.Agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := &agent{id: i, run: run, cfg: cfg, rec: rec, rng: rand.New(rand.NewPCG(uint64(i), uint64(start.UnixNano())))}
			defer a.hangUp()
			for n := 0; ctx.Err() == nil; n++ {
				a.session(ctx, n)
			}
		}()
	}
	wg.Wait()
	close(stopProgress)
	elapsed := time.Since(start).Seconds()
	cpuTo, cpuToOK := sampleCPU()
	res := Result{
		Agents: cfg.Agents, Batch: cfg.Batch, Seconds: elapsed,
		Entries: rec.entries.Load(), Requests: rec.requests.Load(), Errors: rec.errors.Load(),
		Routes: map[string]Latency{},
	}
	if cpuOK && cpuToOK {
		res.Machine = machineCPU(cpuFrom, cpuTo)
	}
	res.EntriesPerSec = float64(res.Entries) / elapsed
	res.RequestsPerSec = float64(res.Requests) / elapsed
	if s, ok := rec.firstErr.Load().(string); ok {
		res.FirstError = s
	}
	for route, h := range rec.routes {
		res.Routes[route] = h.summary()
	}
	return res
}

// agent is one simulated agent harness.
type agent struct {
	id int
	// run tells this run's agents from an earlier run's on the same
	// database, whose claims may still be held when it was cut short.
	run string
	cfg Config
	c   *conn         // nil until the first request, and after a broken one
	l   ledger.Ledger // the typed client on c (see ledger)
	rec *recorder
	rng *rand.Rand
}

// call makes one call of the ledger, records its latency under route,
// and reports whether it succeeded. A call cut short by the end of the
// run is not counted.
func (a *agent) call(ctx context.Context, route string, fn func(ledger.Ledger) error) bool {
	t := time.Now()
	err := fn(a.ledger())
	if ended(ctx) {
		return false
	}
	a.rec.observe(route, time.Since(t), err)
	if err != nil { // back off as a real harness would, instead of spinning
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return err == nil
}

// ended reports whether the run is over. The connection's deadline is the
// run's, and may pass a moment before ctx says so.
func ended(ctx context.Context) bool {
	deadline, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(deadline)
}

// ledger is the server's ledger as the typed client sees it, its requests
// sent on the agent's own connection (see Do).
func (a *agent) ledger() ledger.Ledger {
	if a.l == nil {
		a.l = (&client.Client{Requester: a}).Ledger()
	}
	return a.l
}

// Do sends one request on the agent's connection, dialing it first when
// there is none: the typed client's Requester. A connection that failed
// other than with an answer is closed (what it would read next is
// unknown), as is one the server is closing.
func (a *agent) Do(ctx context.Context, method, path string, body, out any) (int, error) {
	if a.c == nil {
		servers := strings.Split(a.cfg.Server, ",")
		c, err := dial(servers[a.id%len(servers)], a.cfg.Token, nil)
		if err != nil {
			return 0, err
		}
		a.c = c
	}
	status, err := a.c.Do(ctx, method, path, body, out)
	var p *client.Problem
	if err != nil && !errors.As(err, &p) || a.c.closing {
		a.hangUp()
	}
	return status, err
}

func (a *agent) hangUp() {
	if a.c != nil {
		a.c.Close()
		a.c = nil
	}
}

// session runs one realistic session: start, batches of entries with a
// heartbeat now and then, a claim held for a while, sometimes a subagent,
// then an end with an outcome.
func (a *agent) session(ctx context.Context, n int) {
	var s logbook.Session
	prompt := "Fix the failing test in pkg/api #" + fmt.Sprint(a.rng.IntN(500))
	model, branch := "bench-model", "main"
	if !a.call(ctx, "start", func(l ledger.Ledger) (err error) {
		s, _, err = l.StartSession(ctx, ledger.StartParams{Project: a.cfg.Project, Harness: "bench",
			HarnessSessionID: fmt.Sprintf("agent-%d-%d-%d", a.id, n, a.rng.Uint32()),
			Fields:           logbook.SessionFields{Prompt: &prompt, Model: &model, Branch: &branch}})
		return err
	}) {
		return
	}
	var claim logbook.Claim
	path := fmt.Sprintf("src/%s/agent-%d/file-%d.go", a.run, a.id, a.rng.IntN(20))
	a.call(ctx, "claim", func(l ledger.Ledger) (err error) {
		claim, _, err = l.Claim(ctx, ledger.ClaimParams{SessionID: s.ID, Subject: path, TTLMinutes: 10})
		return err
	})
	batches := 10 + a.rng.IntN(30)
	for b := 0; b < batches && ctx.Err() == nil; b++ {
		a.sendBatch(ctx, s.ID, b, path)
		if b%10 == 9 {
			head := fmt.Sprintf("%x", a.rng.Uint64())
			a.call(ctx, "heartbeat", func(l ledger.Ledger) error {
				_, err := l.UpdateSession(ctx, s.ID, logbook.SessionFields{HeadCommit: &head})
				return err
			})
		}
		if b == batches/2 && a.rng.IntN(5) == 0 {
			a.subagent(ctx, s.ID)
		}
	}
	if claim.ID != "" {
		a.call(ctx, "release", func(l ledger.Ledger) error {
			_, err := l.Release(ctx, claim.ID)
			return err
		})
	}
	outcome := []logbook.Outcome{"success", "success", "success", "partial", "failed"}[a.rng.IntN(5)]
	a.end(ctx, s.ID, ledger.EndParams{Outcome: outcome, Result: "bench run"})
}

func (a *agent) subagent(ctx context.Context, parent string) {
	var s logbook.Session
	agentType := "explorer"
	if !a.call(ctx, "start", func(l ledger.Ledger) (err error) {
		s, _, err = l.StartSession(ctx, ledger.StartParams{Project: a.cfg.Project, Harness: "bench", ParentID: parent,
			Fields: logbook.SessionFields{AgentType: &agentType}})
		return err
	}) {
		return
	}
	for b := 0; b < 3 && ctx.Err() == nil; b++ {
		a.sendBatch(ctx, s.ID, b, "")
	}
	a.end(ctx, s.ID, ledger.EndParams{Outcome: logbook.OutcomeSuccess})
}

func (a *agent) end(ctx context.Context, session string, p ledger.EndParams) {
	a.call(ctx, "end", func(l ledger.Ledger) error {
		_, err := l.EndSession(ctx, session, p)
		return err
	})
}

// sendBatch sends one batch of realistic entries (see loadEntry).
func (a *agent) sendBatch(ctx context.Context, session string, b int, path string) {
	batch := ledger.Batch{Entries: make([]logbook.Entry, a.cfg.Batch)}
	for i := range batch.Entries {
		batch.Entries[i] = a.loadEntry(b*a.cfg.Batch + i)
	}
	if path != "" && b%5 == 0 {
		batch.Touched = []logbook.Touch{{Kind: "file", Value: path}}
	}
	if a.call(ctx, "entries", func(l ledger.Ledger) error {
		_, err := l.AppendEntries(ctx, session, batch)
		return err
	}) {
		a.rec.entries.Add(int64(len(batch.Entries)))
	}
}

// What the load's entries say: a test run, its failure, the agent's
// reading of it.
const (
	loadResult = "--- FAIL: TestLogin (0.02s)\n    login_test.go:41: expected 200, got 500\nFAIL"
	loadText   = "The handler returns 500 when the password is empty; adding a check."
)

var loadPayload = json.RawMessage(`{"command":"go test ./pkg/api -run TestLogin -count=1"}`)

// LoadEntry is the n-th entry (from 0) of a session as hooks report them:
// a tool call, its result and the agent's text in turn, keyed as hooks key
// them; call names the tool call the entry belongs to (one every three
// entries). The load generator sends these, RawInsert stores them, and the
// service's benchmarks append them.
func LoadEntry(call string, n int) logbook.Entry {
	switch n % 3 {
	case 0:
		return logbook.Entry{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: call, Key: call + ":call", Payload: loadPayload}
	case 1:
		return logbook.Entry{Kind: logbook.KindToolResult, ToolCallID: call, Key: call + ":result", Text: loadResult}
	default:
		return logbook.Entry{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Key: call + ":text", Text: loadText,
			Usage: &logbook.Usage{InputTokens: 1600, OutputTokens: 140}}
	}
}

// loadEntry is the n-th entry of the agent's current session, stamped now
// as a hook stamps it. It follows the entry's place in the session, not in
// its batch, so one-entry batches (one hook event each) carry the same mix
// as large ones.
func (a *agent) loadEntry(n int) logbook.Entry {
	e := LoadEntry(fmt.Sprintf("toolu_%d_%d", a.id, n/3), n)
	e.At = time.Now()
	return e
}
