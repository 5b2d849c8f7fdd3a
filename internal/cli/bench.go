package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/logbookhq/logbook/internal/bench"
	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/metrics"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store"
)

// benchCmd is `logbook bench`: a load generator with realistic agents, and
// in the same run the raw engine doing the same inserts.
func benchCmd(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	agents := fs.Int("agents", 200, "concurrent agents")
	duration := fs.Duration("duration", 10*time.Second, "how long to send load")
	batch := fs.Int("batch", 1, "entries per batch (hooks send 1)")
	server := fs.String("server", "", "load an existing server at this URL (with --token and --project) instead of an in-process one; several URLs separated by commas (replicas on one PostgreSQL) share the agents out")
	token := tokenFlag(fs, env, "with --server: a project `token` (default: env LOGBOOK_TOKEN)")
	project := fs.String("project", "bench", "with --server: the token's project")
	db := fs.String("db", "", "in-process server's database: a postgres:// URL (default: SQLite in a temporary folder)")
	seed := fs.Int("seed", 0, "instead of load: fill --db with this many sessions and realistic entries")
	entriesPer := fs.Int("entries-per-session", 20, "with --seed: entries per session on average")
	read := fs.Bool("read", false, "instead of load: time the read paths on --db (filled with --seed)")
	explain := fs.Bool("explain", false, "with --read: also print the query plan of each main list filter")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	boundFor := fs.Duration("http-bound", 10*time.Second, "after the load, measure for this long the trivial-handler HTTP bound (the same agents against a net/http handler that only decodes the batch) and print logbook's requests/s as a share of it; 0 skips it")
	traceFile := fs.String("trace", "", "write an execution trace of the run to this file (go tool trace: where each goroutine, the group committer's among them, spends its time; about 3 MB a second)")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: logbook bench [flags]

Sends realistic agent load (start, entries in batches, heartbeats, claims,
subagents, ends) and prints throughput (overall and in each 10 s),
latency per route, errors, the raw engine's rows/s for the same inserts in
the same run, the trivial-handler HTTP bound (the same agents against a
handler that only decodes the batch: requests/s as a share of it), how the
machine's cores spent the load (on a shared machine, time stolen by other
guests or no idle time means the machine, not logbook, set the pace), the
CPU a request and an entry (and PostgreSQL's own, when it runs on this
machine), and resident memory every 10 s.

  logbook bench --agents 200 --duration 30s             in-process server on SQLite
  logbook bench --db postgres://… --batch 100           in-process server on PostgreSQL
  logbook bench --db /tmp/big.db --seed 1000000         fill a database for read benchmarks
  logbook bench --db /tmp/big.db --read                 time the read paths on it
  logbook bench --server http://127.0.0.1:7474,http://127.0.0.1:7475 --token T --project P
                                                        agents shared out over two replicas

Against a running server (--server URL --token T --project P), start it
with --rate-limit -1: its default limit of 200 requests a second per token
would answer most of the load 429, and the in-process server runs without it.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, r := range []struct {
		path  string
		start func(io.Writer) error
		stop  func()
	}{{*cpuProfile, pprof.StartCPUProfile, pprof.StopCPUProfile}, {*traceFile, trace.Start, trace.Stop}} {
		if r.path == "" {
			continue
		}
		stop, err := record(r.path, r.start, r.stop)
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
		defer stop()
	}
	if *seed > 0 || *read {
		if *db == "" {
			fmt.Fprintln(env.Stderr, "logbook bench: --seed and --read need --db (a SQLite path or a postgres:// URL)")
			return 2
		}
		st, err := env.OpenStore(ctx, *db)
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
		defer st.Close()
		if *seed > 0 {
			return seedCmd(ctx, env, st, *seed, *entriesPer)
		}
		return readCmd(ctx, env, st, *asJSON, *explain)
	}

	var st store.Store
	cfg := bench.Config{Server: *server, Token: *token, Project: *project, Agents: *agents, Duration: *duration, Batch: *batch}
	dsn := *db // the in-process server's database
	if *server == "" {
		if dsn == "" {
			dir, err := os.MkdirTemp("", "logbook-bench-")
			if err != nil {
				fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
				return 1
			}
			defer os.RemoveAll(dir)
			dsn = filepath.Join(dir, "bench.db")
		}
		var err error
		if st, err = env.OpenStore(ctx, dsn); err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
		defer st.Close()
		collectLessOften(env) // as serve runs it
		// Requests and events are counted for /metrics, as serve counts them.
		counted := metrics.New()
		// The load is one token on purpose: no rate limit.
		svc := service.New(st, service.Options{Logger: log, AuthCacheTTL: 2 * time.Second, Committed: counted.Event, RateLimit: -1})
		runCtx, stopService := context.WithCancel(ctx)
		defer stopService()
		go svc.Run(runCtx)
		cfg.Token, err = svc.CreateToken(ctx, service.Caller{Actor: "admin", Admin: true}, cfg.Project, "bench")
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
		mux := http.NewServeMux()
		httpapi.New(mux, svc, log, httpapi.Options{})
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
		srv := newHTTPServer(counted.Wrap(mux), serverLimits{Header: defaultHeaderTimeout, Body: defaultBodyTimeout, Idle: defaultIdleTimeout})
		go srv.Serve(listener)
		defer srv.Close()
		cfg.Server = "http://" + listener.Addr().String()
		fmt.Fprintf(env.Stderr, "in-process server on %s, %s\n", st.Engine(), describeDB(dsn))
	}
	var every tenSeconds
	cfg.Progress = func(elapsed time.Duration, entries int64) {
		fmt.Fprintf(env.Stderr, "\r%5.0fs  %10d entries  %8.0f/s ", elapsed.Seconds(), entries, float64(entries)/elapsed.Seconds())
		every.observe(elapsed, entries, rssMB)
	}
	var dbFrom bench.BackendCPU
	dbOK := false
	if st != nil {
		dbFrom, dbOK = bench.SampleBackendCPU(ctx, st)
	}
	res := bench.Run(ctx, cfg)
	fmt.Fprintln(env.Stderr)
	out := benchOutput{Load: res, RSSMB: rssMB(), RSSEvery10s: every.rss, EntriesPerSecEvery10s: every.rates, RSSOf: "server and load generator"}
	if dbOK && res.Requests > 0 {
		if dbTo, ok := bench.SampleBackendCPU(ctx, st); ok {
			out.DatabaseCPUPerRequest = float64(dbTo.Since(dbFrom).Microseconds()) / float64(res.Requests)
		}
	}
	if *server != "" {
		out.RSSOf = "load generator only; the server runs elsewhere"
	}
	if st != nil {
		fmt.Fprintf(env.Stderr, "raw baseline: inserting %d rows straight into a fresh %s database…\n", res.Entries, st.Engine())
		fresh, cleanup, err := bench.FreshStore(ctx, st, dsn, env.OpenStore)
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
		raw, err := bench.RawInsert(ctx, fresh, "bench-raw", max(res.Entries, 1))
		cleanup()
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: raw baseline: %v\n", err)
			return 1
		}
		out.Engine, out.Raw = st.Engine(), &raw
		out.Ratio = res.EntriesPerSec / raw.RowsPerSec
	}
	if *boundFor > 0 {
		fmt.Fprintf(env.Stderr, "HTTP bound: %d agents against a trivial handler for %s…\n", res.Agents, *boundFor)
		bound, err := bench.HTTPBound(ctx, res.Agents, *boundFor, res.Batch)
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
		out.Bound = &bound
		out.RatioToBound = res.RequestsPerSec / bound.RequestsPerSec
	}
	if m := res.Machine; m != nil && res.Entries > 0 {
		out.CPUPerEntry = 1e6 * m.ProcessSeconds / float64(res.Entries)
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
	} else {
		printBench(env.Stdout, out)
	}
	if res.Errors > 0 {
		return 1
	}
	return 0
}

type benchOutput struct {
	Engine string           `json:"engine,omitempty"`
	Load   bench.Result     `json:"load"`
	Raw    *bench.RawResult `json:"raw,omitempty"`
	Ratio  float64          `json:"ratio_to_raw,omitempty"`
	// Bound is the trivial-handler HTTP bound measured after the load, and
	// RatioToBound the load's requests/s as a share of its requests/s.
	Bound        *bench.BoundResult `json:"http_bound,omitempty"`
	RatioToBound float64            `json:"ratio_to_http_bound,omitempty"`
	// CPUPerEntry is this process's CPU time an acknowledged entry, in
	// microseconds (server and load generator in-process; the load
	// generator alone with --server).
	CPUPerEntry float64 `json:"cpu_us_per_entry,omitempty"`
	// DatabaseCPUPerRequest is the CPU time PostgreSQL's processes serving
	// the load's database used a request, in microseconds, where they run
	// on this machine (see bench.SampleBackendCPU).
	DatabaseCPUPerRequest float64 `json:"database_cpu_us_per_request,omitempty"`
	RSSMB                 float64 `json:"rss_mb"`
	// RSSOf says whose memory RSSMB is: this process's.
	RSSOf string `json:"rss_of"`
	// RSSEvery10s is the resident memory sampled every 10 seconds of load.
	RSSEvery10s []float64 `json:"rss_mb_every_10s,omitempty"`
	// EntriesPerSecEvery10s is the rate of acknowledged entries over each
	// 10 seconds of load.
	EntriesPerSecEvery10s []float64 `json:"entries_per_sec_every_10s,omitempty"`
}

// tenSeconds samples a load run every 10 seconds of its progress: the rate
// of entries acknowledged since the last sample, and the resident memory.
// A long run then shows whether either drifts, which its overall figures
// hide. Sample k is taken at the first progress tick at or after k×10 s,
// so ticks that come late on a busy machine do not add up to fewer
// samples.
type tenSeconds struct {
	lastAt      time.Duration
	lastEntries int64
	rates, rss  []float64
}

func (t *tenSeconds) observe(elapsed time.Duration, entries int64, rss func() float64) {
	if elapsed < time.Duration(len(t.rates)+1)*10*time.Second {
		return
	}
	t.rates = append(t.rates, float64(entries-t.lastEntries)/(elapsed-t.lastAt).Seconds())
	t.rss = append(t.rss, rss())
	t.lastAt, t.lastEntries = elapsed, entries
}

func printBench(w io.Writer, out benchOutput) {
	r := out.Load
	fmt.Fprintf(w, "%d agents, batches of %d, %.1fs\n", r.Agents, r.Batch, r.Seconds)
	fmt.Fprintf(w, "entries acknowledged: %d (%.0f/s)   requests: %d (%.0f/s)   errors: %d\n",
		r.Entries, r.EntriesPerSec, r.Requests, r.RequestsPerSec, r.Errors)
	if r.FirstError != "" {
		fmt.Fprintf(w, "first error: %s\n", r.FirstError)
	}
	if len(out.EntriesPerSecEvery10s) > 0 {
		fmt.Fprintf(w, "entries/s in each 10 s: %.0f\n", out.EntriesPerSecEvery10s)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "route\tcount\tp50 ms\tp95 ms\tp99 ms\tmax ms\t")
	routes := make([]string, 0, len(r.Routes))
	for name := range r.Routes {
		routes = append(routes, name)
	}
	sort.Strings(routes)
	for _, name := range routes {
		l := r.Routes[name]
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t\n", name, l.Count, l.P50, l.P95, l.P99, l.Max)
	}
	tw.Flush()
	if out.Raw != nil {
		fmt.Fprintf(w, "raw %s baseline (%d writers): %d rows in %.2fs = %.0f rows/s; logbook reached %.1f%% of it\n",
			out.Engine, out.Raw.Writers, out.Raw.Rows, out.Raw.Seconds, out.Raw.RowsPerSec, 100*out.Ratio)
	}
	if b := out.Bound; b != nil {
		fmt.Fprintf(w, "trivial-handler HTTP bound (%d agents, the same clients, %.0fs): %.0f requests/s at %.0f µs of CPU a request; logbook answered %.0f requests/s = %.1f%% of it\n",
			b.Agents, b.Seconds, b.RequestsPerSec, b.CPUPerRequest, r.RequestsPerSec, 100*out.RatioToBound)
	}
	if m := r.Machine; m != nil {
		fmt.Fprintf(w, "machine during the load (%d cores): %.0f%% busy, %.0f%% waiting on disk, %.0f%% idle, %.0f%% stolen by other guests; %s: %.0f µs of CPU a request, %.0f µs an entry\n",
			m.Cores, 100*m.Busy, 100*m.IOWait, 100*m.Idle, 100*m.Steal, out.RSSOf, 1e6*m.ProcessSeconds/float64(max(r.Requests, 1)), out.CPUPerEntry)
	}
	if out.DatabaseCPUPerRequest > 0 {
		fmt.Fprintf(w, "PostgreSQL's processes of the database, on this machine: %.0f µs of CPU a request\n", out.DatabaseCPUPerRequest)
	}
	fmt.Fprintf(w, "resident memory (%s): %.0f MB", out.RSSOf, out.RSSMB)
	if len(out.RSSEvery10s) > 0 {
		fmt.Fprintf(w, "; every 10 s: %.0f", out.RSSEvery10s)
	}
	fmt.Fprintln(w)
}

// rssMB is this process's resident memory, from /proc (0 where there is none).
func rssMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(rest), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

// seedCmd fills a database for the read benchmarks, with a count.
func seedCmd(ctx context.Context, env Env, st store.Store, n, entriesPer int) int {
	start := time.Now()
	err := bench.Seed(ctx, st, n, entriesPer, func(done int) {
		rate := float64(done) / time.Since(start).Seconds()
		fmt.Fprintf(env.Stderr, "\rseeded %d/%d sessions (%.0f/s, %.0f%%) ", done, n, rate, 100*float64(done)/float64(n))
	})
	fmt.Fprintln(env.Stderr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	fmt.Fprintf(env.Stdout, "seeded %d sessions in %s into project %q\n", n, time.Since(start).Round(time.Second), bench.SeedProject)
	return 0
}

// readCmd times the read paths on a seeded database.
func readCmd(ctx context.Context, env Env, st store.Store, asJSON, explain bool) int {
	if explain {
		plans, err := bench.Explain(ctx, st)
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
		for _, p := range plans {
			fmt.Fprintf(env.Stdout, "-- %s\n%s\n", p.Name, p.Plan)
		}
	}
	results := bench.Read(ctx, st, 20)
	if asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(results)
		return 0
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "read path\trows\tp50 ms\tp95 ms\tmax ms\t")
	failed := false
	for _, r := range results {
		if r.Failure != "" {
			fmt.Fprintf(tw, "%s\tERROR: %s\t\t\t\t\n", r.Name, r.Failure)
			failed = true
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t\n", r.Name, r.Rows, r.P50, r.P95, r.Max)
	}
	tw.Flush()
	if failed {
		return 1
	}
	return 0
}

// record starts writing a profile or trace of the run to path (with start,
// such as pprof.StartCPUProfile); the func it returns stops and closes it.
func record(path string, start func(io.Writer) error, stop func()) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		stop()
		f.Close()
	}, nil
}
