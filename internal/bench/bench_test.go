package bench

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/sqlstore"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestHistogram: percentiles from the fixed-size histogram are within the
// 2% of its buckets.
func TestHistogram(t *testing.T) {
	h := &histogram{}
	for ms := 1; ms <= 1000; ms++ {
		h.add(time.Duration(ms) * time.Millisecond)
	}
	for _, c := range []struct{ q, want float64 }{{0.50, 500}, {0.95, 950}, {0.99, 990}} {
		if got := h.quantile(c.q); math.Abs(got-c.want)/c.want > 0.025 {
			t.Errorf("p%.0f = %.1f ms, want %.0f ms within 2.5%%", c.q*100, got, c.want)
		}
	}
	if s := h.summary(); s.Count != 1000 || s.Max != 1000 {
		t.Errorf("summary: %+v", s)
	}
}

// TestLoadMix: a session's entries are a tool call, its result and the
// agent's text in turn, whatever the batch size, and a result carries its
// call's id. One-entry batches (what hooks send) used to be all tool calls.
func TestLoadMix(t *testing.T) {
	a := &agent{id: 7, rng: rand.New(rand.NewPCG(1, 2))}
	want := []logbook.Kind{logbook.KindToolCall, logbook.KindToolResult, logbook.KindMessage, logbook.KindToolCall, logbook.KindToolResult, logbook.KindMessage}
	for n, kind := range want {
		e := a.loadEntry(n)
		if e.Kind != kind {
			t.Errorf("entry %d is a %v, want a %s", n, e.Kind, kind)
		}
		if kind == logbook.KindToolResult && e.ToolCallID != a.loadEntry(n-1).ToolCallID {
			t.Errorf("entry %d answers call %q, want %q", n, e.ToolCallID, a.loadEntry(n-1).ToolCallID)
		}
		if err := e.Normalize("entry"); err != nil {
			t.Errorf("entry %d is not one the server takes: %v", n, err)
		}
	}
	if a.loadEntry(0).Key == a.loadEntry(3).Key {
		t.Error("two calls of one session share a key: the second would be dropped as a duplicate")
	}
}

// TestRawInsertMix: the raw baseline writes the load's mix of entries.
func TestRawInsertMix(t *testing.T) {
	st := testdb.SQLite(t)
	ctx := context.Background()
	if _, err := RawInsert(ctx, st, "raw", 9); err != nil {
		t.Fatal(err)
	}
	rows, err := st.(*sqlstore.Store).DB().QueryContext(ctx, `SELECT kind, COUNT(*) FROM entries GROUP BY kind`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int{}
	for rows.Next() {
		var kind string
		var n int
		if err := rows.Scan(&kind, &n); err != nil {
			t.Fatal(err)
		}
		got[kind] = n
	}
	if want := map[string]int{"tool_call": 3, "tool_result": 3, "message": 3}; !maps.Equal(got, want) {
		t.Errorf("raw baseline entries by kind: %v, want %v", got, want)
	}
}

// TestRawInsertWriters: on an engine whose transactions commit side by
// side the raw baseline inserts with several writers, as the server does,
// and stores every row once, each session numbered without a gap.
func TestRawInsertWriters(t *testing.T) {
	for _, tc := range []struct {
		engine  string
		st      store.Store
		writers int
	}{{"sqlite", testdb.SQLite(t), 1}, {"postgres", testdb.Postgres(t), rawWriters}} {
		t.Run(tc.engine, func(t *testing.T) {
			ctx := context.Background()
			const rows = 1203 // several sessions a writer, and a remainder
			res, err := RawInsert(ctx, tc.st, "raw", rows)
			if err != nil {
				t.Fatal(err)
			}
			if res.Rows != rows || res.Writers != tc.writers {
				t.Fatalf("result %+v: want %d rows by %d writers", res, rows, tc.writers)
			}
			var stored, sessions, gapped int
			err = tc.st.(*sqlstore.Store).DB().QueryRowContext(ctx, `SELECT COUNT(*), COUNT(DISTINCT session_id),
				(SELECT COUNT(*) FROM (SELECT session_id FROM entries GROUP BY session_id
					HAVING MIN(seq) <> 1 OR MAX(seq) <> COUNT(*)) g) FROM entries`).Scan(&stored, &sessions, &gapped)
			if err != nil {
				t.Fatal(err)
			}
			if stored != rows || gapped != 0 {
				t.Errorf("stored %d rows in %d sessions, %d numbered with gaps; want %d rows, none with gaps", stored, sessions, gapped, rows)
			}
		})
	}
}

// startServer runs a real server (service and HTTP API) on a fresh SQLite
// database, as `logbook bench` does in process, and returns its URL, a
// project token and the store.
func startServer(t *testing.T) (url, token string, st store.Store) {
	t.Helper()
	st = testdb.SQLite(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(st, service.Options{Logger: log, RateLimit: -1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { svc.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	token, err := svc.CreateToken(context.Background(), service.Caller{Actor: "admin", Admin: true}, "load", "bench")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	httpapi.New(mux, svc, log, httpapi.Options{})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, token, st
}

// TestRunStoresWhatItCounts: a short load run sends every kind of request
// without an error, and every entry it counts as acknowledged is stored
// (a request the run's end cut short may be stored but is not counted).
func TestRunStoresWhatItCounts(t *testing.T) {
	url, token, st := startServer(t)
	const agents, batch = 4, 2
	res := Run(context.Background(), Config{Server: url, Token: token, Project: "load", Agents: agents, Batch: batch, Duration: 1500 * time.Millisecond})
	if res.Errors != 0 || res.FirstError != "" {
		t.Fatalf("%d errors, the first: %s", res.Errors, res.FirstError)
	}
	if res.Entries == 0 {
		t.Fatal("no entry acknowledged in 1.5 s")
	}
	for _, route := range []string{"start", "claim", "entries", "heartbeat", "release", "end"} {
		if res.Routes[route].Count == 0 {
			t.Errorf("no %s request was sent; routes: %v", route, res.Routes)
		}
	}
	var stored int64
	if err := st.(*sqlstore.Store).DB().QueryRow(`SELECT COUNT(*) FROM entries`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored < res.Entries || stored > res.Entries+agents*batch {
		t.Errorf("%d entries stored, %d acknowledged: want between %d and %d stored", stored, res.Entries, res.Entries, res.Entries+agents*batch)
	}
	// The server runs in this process, so the load used some of its CPU,
	// and the machine's time adds up.
	if m := res.Machine; runtime.GOOS == "linux" && (m == nil || m.ProcessSeconds <= 0 || math.Abs(m.Busy+m.IOWait+m.Idle+m.Steal-1) > 1e-9) {
		t.Errorf("machine CPU during the load: %+v; want fractions adding up to 1 and this process's CPU time", m)
	}
}

// TestParseCPULine reads /proc/stat's totals: busy time is user, nice,
// system, irq and softirq; guest time (already in user) is not counted
// twice.
func TestParseCPULine(t *testing.T) {
	from, err := parseCPULine("cpu  100 10 50 1000 20 5 5 0 40 0\n")
	if err != nil {
		t.Fatal(err)
	}
	to, err := parseCPULine("cpu  160 10 70 1080 30 5 15 10 90 0\n")
	if err != nil {
		t.Fatal(err)
	}
	// 90 busy (60 user, 20 system, 10 softirq), 10 iowait, 80 idle, 10 steal.
	got := machineCPU(from, to)
	want := MachineCPU{Cores: runtime.NumCPU(), Busy: 90.0 / 190, IOWait: 10.0 / 190, Idle: 80.0 / 190, Steal: 10.0 / 190}
	if got == nil || *got != want {
		t.Errorf("machineCPU = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4 5 6 7 8", "cpu 1 2 3 x 5 6 7 8", "cpu 1 2 3"} {
		if _, err := parseCPULine(bad); err == nil {
			t.Errorf("parseCPULine(%q) took it", bad)
		}
	}
}

// TestRunAgainOnTheSameDatabase: a run cut short leaves its last sessions'
// claims held; the next run on the same database must not collide with
// them.
func TestRunAgainOnTheSameDatabase(t *testing.T) {
	url, token, _ := startServer(t)
	cfg := Config{Server: url, Token: token, Project: "load", Agents: 4, Duration: time.Second}
	for run := 1; run <= 2; run++ {
		if res := Run(context.Background(), cfg); res.Errors != 0 {
			t.Fatalf("run %d: %d errors, the first: %s", run, res.Errors, res.FirstError)
		}
	}
}

// TestRunCountsRefusals: answers the server refuses are errors, and the
// first one says why.
func TestRunCountsRefusals(t *testing.T) {
	url, _, _ := startServer(t)
	res := Run(context.Background(), Config{Server: url, Token: "not-a-token", Project: "load", Agents: 2, Duration: 300 * time.Millisecond})
	if res.Errors == 0 || !strings.Contains(res.FirstError, "401") {
		t.Errorf("with a wrong token: %d errors, the first %q; want errors, the first a 401", res.Errors, res.FirstError)
	}
}

// TestDial: the load generator reaches http:// and https:// servers, and
// says what server URL it needs when given something else.
func TestDial(t *testing.T) {
	if _, err := dial("127.0.0.1:7474", "t", nil); err == nil || !strings.Contains(err.Error(), "http://127.0.0.1:7474") {
		t.Errorf("dialing a URL without a scheme: %v, want an error showing a server URL", err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"` + r.Header.Get("Authorization") + `"}`))
	}))
	defer srv.Close()
	if _, err := dial(srv.URL, "tok", nil); err == nil {
		t.Error("a server whose certificate no root signed was trusted")
	}
	// The test server's own client trusts its certificate.
	c, err := dial(srv.URL, "tok", srv.Client().Transport.(*http.Transport).TLSClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got struct{ ID string }
	if _, err := c.Do(context.Background(), http.MethodGet, "/", nil, &got); err != nil || got.ID != "Bearer tok" {
		t.Errorf("over TLS: %+v, %v; want the token sent and the answer decoded", got, err)
	}
}

// TestHTTPBoundAnswersEveryClient: the bound's clients all get answers
// from the trivial handler, and what it counts is what they were answered.
func TestHTTPBoundAnswersEveryClient(t *testing.T) {
	res, err := HTTPBound(context.Background(), 8, 300*time.Millisecond, 3)
	if err != nil {
		t.Fatal(err)
	}
	if res.Agents != 8 || res.Requests == 0 || res.RequestsPerSec <= 0 {
		t.Fatalf("bound %+v: want 8 agents and answers counted", res)
	}
	if runtime.GOOS == "linux" && res.CPUPerRequest <= 0 {
		t.Errorf("bound %+v: want this process's CPU a request", res)
	}
}

// TestRunSharesAgentsOutOverServers: given several servers (replicas on
// one database), the agents are shared out over them and every one of
// them is sent load.
func TestRunSharesAgentsOutOverServers(t *testing.T) {
	url, token, _ := startServer(t)
	target, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	var counts [3]atomic.Int64
	var replicas []string
	for i := range counts {
		proxy := httputil.NewSingleHostReverseProxy(target)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			counts[i].Add(1)
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		replicas = append(replicas, srv.URL)
	}
	res := Run(context.Background(), Config{Server: strings.Join(replicas, ","), Token: token, Project: "load", Agents: 6, Batch: 1, Duration: time.Second})
	if res.Errors != 0 || res.Entries == 0 {
		t.Fatalf("%d errors (the first: %s), %d entries", res.Errors, res.FirstError, res.Entries)
	}
	for i := range counts {
		if counts[i].Load() == 0 {
			t.Errorf("server %d of 3 was sent nothing", i+1)
		}
	}
}

// TestParseProcStat reads a process's user and system CPU time, also when
// its command holds spaces and parentheses.
func TestParseProcStat(t *testing.T) {
	line := "4242 (postgres: a (b) c) S 1 4242 4242 0 -1 4194560 500 0 0 0 150 25 0 0 20 0 1 0 100 0 0\n"
	got, err := parseProcStat(line)
	if err != nil || got != 1750*time.Millisecond {
		t.Errorf("parseProcStat = %v, %v; want 1.75 s (175 ticks)", got, err)
	}
	if _, err := parseProcStat("4242 (cut"); err == nil {
		t.Error("a line without its fields was read")
	}
}

// TestSampleBackendCPU: on PostgreSQL on this machine, the processes of
// the store's database are found and their CPU grows with work; on SQLite
// there are none to read.
func TestSampleBackendCPU(t *testing.T) {
	if _, ok := SampleBackendCPU(context.Background(), testdb.SQLite(t)); ok {
		t.Error("SQLite has no server processes, yet some were read")
	}
	st := testdb.Postgres(t)
	from, ok := SampleBackendCPU(context.Background(), st)
	if !ok || len(from) == 0 {
		t.Fatalf("PostgreSQL's processes of the database not read: %v, %v", from, ok)
	}
	db := st.(*sqlstore.Store).DB()
	if _, err := db.Exec(`SELECT count(*) FROM generate_series(1, 3000000)`); err != nil {
		t.Fatal(err)
	}
	to, ok := SampleBackendCPU(context.Background(), st)
	if !ok || to.Since(from) <= 0 {
		t.Errorf("no CPU counted for a query that counted 3 million rows: %v", to.Since(from))
	}
}
