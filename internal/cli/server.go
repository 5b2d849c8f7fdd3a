package cli

import (
	"net/http"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/otlp"
)

// What a connection and a request may hold of the server (serve's flags
// set the timeouts). There is no overall write timeout: event streams
// stay open for hours and bound each of their writes themselves.
const (
	// defaultHeaderTimeout: a request's headers must arrive within it
	// (a new connection that sends nothing is closed after it).
	defaultHeaderTimeout = 10 * time.Second
	// defaultBodyTimeout: a request's body must arrive within it once the
	// server starts reading it, 8 MiB at 2.2 Mbit/s.
	defaultBodyTimeout = 30 * time.Second
	// defaultIdleTimeout: a kept-alive connection without a request is
	// closed after it. It is longer than the 30 s for which logbook's own
	// clients keep an idle connection (package client), so that they never
	// send on a connection the server is closing.
	defaultIdleTimeout = 60 * time.Second
	// bodyBudget bounds the bytes of large request bodies the server
	// holds at once: a body of smallBody bytes or more waits for room in
	// it before its handler reads it (first come, first served), and
	// counts until its handler returns. Smaller bodies, which agents'
	// hooks send, go straight in. Decoded and stored, a body takes
	// several times its size, which GOGC=400 multiplies: 32 clients
	// sending 8 MiB batches took the server to 3.0 GB resident without a
	// budget, 293 MB with this one (96 clients: 333 MB).
	bodyBudget = 32 << 20
	smallBody  = 1 << 20
)

// serverLimits are the timeouts of newHTTPServer.
type serverLimits struct {
	Header, Body, Idle time.Duration
}

// newHTTPServer is the HTTP server serve (and bench, in process) runs h
// on, within limits: headers, bodies and idle connections are timed out,
// and large bodies are held a few at a time (bodyBudget).
func newHTTPServer(h http.Handler, limits serverLimits) *http.Server {
	return &http.Server{
		Handler:           limitBodies(h, limits.Body, semaphore.NewWeighted(bodyBudget)),
		ReadHeaderTimeout: limits.Header,
		IdleTimeout:       limits.Idle,
	}
}

// limitBodies makes a request with a body wait for its weight (bodyWeight)
// in budget, then gives the body timeout to arrive: a read past it fails
// with an error matching os.ErrDeadlineExceeded (the API answers 408).
// net/http lifts the deadline once the body has been read to its end, so
// a handler that runs longer is not cut off by it.
func limitBodies(next http.Handler, timeout time.Duration, budget *semaphore.Weighted) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if weight := bodyWeight(r); weight > 0 {
			if err := budget.Acquire(r.Context(), weight); err != nil {
				return // the client went away while waiting
			}
			defer budget.Release(weight)
		}
		if timeout > 0 {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
		}
		next.ServeHTTP(w, r)
	})
}

// bodyWeight is what a request's body counts against bodyBudget: nothing
// for a small body, its length for a large one, and the most it may come
// to when its length is unknown or it is compressed (an OTLP export
// inflates to otlp.MaxDecodedBytes at most).
func bodyWeight(r *http.Request) int64 {
	var weight int64
	switch {
	case r.Header.Get("Content-Encoding") != "":
		weight = otlp.MaxDecodedBytes
	case r.ContentLength < 0:
		weight = max(logbook.MaxRequestLen, otlp.MaxBodyBytes)
	case r.ContentLength < smallBody:
		return 0
	default:
		weight = r.ContentLength
	}
	return min(weight, bodyBudget)
}
