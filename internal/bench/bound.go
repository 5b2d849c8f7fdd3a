package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// BoundResult is what the trivial-handler HTTP bound measured: the most
// requests a second this machine answers over HTTP with the load's
// clients and a handler that does nothing but decode the batch and answer
// in JSON. logbook's own figures are read as a share of it, which swings
// less from machine to machine (and from hour to hour on a shared one)
// than requests a second do.
type BoundResult struct {
	Agents         int     `json:"agents"`
	Seconds        float64 `json:"seconds"`
	Requests       int64   `json:"requests"`
	RequestsPerSec float64 `json:"requests_per_sec"`
	// CPUPerRequest is this process's CPU time (clients and handler) a
	// request, in microseconds; 0 where it cannot be read.
	CPUPerRequest float64 `json:"cpu_us_per_request"`
}

// HTTPBound runs agents clients, each on its own connection as the load's
// agents are, that send batches of batch entries to a trivial net/http
// JSON handler in this process for duration, and counts the answers.
func HTTPBound(ctx context.Context, agents int, duration time.Duration, batch int) (BoundResult, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return BoundResult{}, fmt.Errorf("HTTP bound: %w", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(trivialAppend), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(listener) // ends with ErrServerClosed at Close
	}()
	defer func() {
		srv.Close()
		<-served
	}()
	base := "http://" + listener.Addr().String()

	body := ledger.Batch{Entries: make([]logbook.Entry, batch)}
	for i := range body.Entries {
		body.Entries[i] = LoadEntry("toolu_bound", i)
		body.Entries[i].At = time.Now()
	}
	ctx, cancel := context.WithTimeout(ctx, duration)
	defer cancel()
	var answered atomic.Int64
	var firstErr error
	var errOnce sync.Once
	cpuFrom := processCPU()
	start := time.Now()
	var wg sync.WaitGroup
	for range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dial(base, "bound", nil)
			if err != nil {
				errOnce.Do(func() { firstErr = err })
				return
			}
			defer c.Close()
			for !ended(ctx) {
				var out ledger.AppendResult
				if _, err := c.Do(ctx, http.MethodPost, "/v1/sessions/bound/entries", body, &out); err != nil {
					if !ended(ctx) {
						errOnce.Do(func() { firstErr = err })
					}
					return
				}
				answered.Add(1)
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	if firstErr != nil {
		return BoundResult{}, fmt.Errorf("HTTP bound: %w", firstErr)
	}
	res := BoundResult{Agents: agents, Seconds: secs, Requests: answered.Load()}
	res.RequestsPerSec = float64(res.Requests) / secs
	if cpu := processCPU() - cpuFrom; cpu > 0 && res.Requests > 0 {
		res.CPUPerRequest = float64(cpu.Microseconds()) / float64(res.Requests)
	}
	return res, nil
}

// trivialAppend is the least a JSON API can do with an append: read and
// decode the batch, answer how many entries it held.
func trivialAppend(w http.ResponseWriter, r *http.Request) {
	var b ledger.Batch
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		http.Error(w, "not a batch: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	// An error here is a client that hung up: there is no one to tell.
	_ = json.NewEncoder(w).Encode(ledger.AppendResult{Recorded: len(b.Entries), LastSeq: int64(len(b.Entries))})
}
