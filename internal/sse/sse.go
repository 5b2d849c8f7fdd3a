// Package sse streams a project's events as Server-Sent Events, for the
// JSON API (GET /v1/events) and the web UI's pages alike: one loop that
// reads the durable outbox, waits for a wake between reads, keeps the
// connection alive and drops a follower that stops reading.
package sse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// Timings of a stream.
const (
	keepAliveEvery = 15 * time.Second
	// writeDeadline drops a follower that does not take a write within it:
	// a slow reader is cut off instead of growing memory.
	writeDeadline = 10 * time.Second
	// pollEvery reads the outbox even without a wake, in case one was missed.
	pollEvery = 2 * time.Second
	// page is how many events one read of the outbox takes; it bounds the
	// memory a follower costs.
	page = 500
)

// Writer writes one event stream response.
type Writer struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	// deadline is how long a write may wait for the follower to take it
	// (writeDeadline; tests shorten it).
	deadline time.Duration
}

// Open answers 200 with the event-stream headers and returns the writer.
func Open(w http.ResponseWriter) *Writer {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &Writer{w: w, rc: http.NewResponseController(w), deadline: writeDeadline}
}

// Send writes and flushes one piece of the stream, failing when the
// follower does not take it within the write deadline.
func (s *Writer) Send(format string, args ...any) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.deadline))
	if _, err := fmt.Fprintf(s.w, format, args...); err != nil {
		return err
	}
	return s.rc.Flush()
}

// Follow writes a project's events after the id after to s (id, event
// type, the event as JSON), until ctx ends, a write fails or the caller's
// token is revoked. Each event comes once and in order, from the outbox,
// so a follower that reconnects with the last id it saw loses nothing.
// The token is looked up again every svc.RecheckEvery(): a revoked
// token's stream ends as its requests stop working, within the auth
// cache's lifetime, with a last comment saying why.
func Follow(ctx context.Context, svc *service.Service, c service.Caller, project string, after int64, s *Writer) error {
	if err := s.Send(": logbook events for %s after %d\n\n", project, after); err != nil {
		return err
	}
	keepAlive := time.NewTicker(keepAliveEvery)
	defer keepAlive.Stop()
	poll := time.NewTicker(pollEvery)
	defer poll.Stop()
	recheck := time.NewTicker(svc.RecheckEvery())
	defer recheck.Stop()
	for {
		changed := svc.EventsChanged() // before reading, so no wake is missed
		events, err := svc.Events(ctx, c, project, after, page)
		if err != nil {
			return err
		}
		for _, ev := range events {
			data, _ := json.Marshal(ev) // plain values and raw JSON: one line
			if err := s.Send("id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Type, data); err != nil {
				return err
			}
			after = ev.ID
		}
		if len(events) == page {
			continue // more are waiting
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-poll.C:
		case <-keepAlive.C:
			if err := s.Send(": keep-alive\n\n"); err != nil {
				return err
			}
		case <-recheck.C:
			if err := svc.Recheck(ctx, c); err != nil {
				if errors.Is(err, logbook.ErrUnauthorized) {
					_ = s.Send(": the token was revoked; the stream ends\n\n")
				}
				return err
			}
		}
	}
}
