package service

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// Defaults of the per-token limits (Options.RateLimit, RateBurst,
// MaxStreams). A busy agent's hooks send a few requests a second; a token
// shared by a team's agents, or an import, many more.
const (
	DefaultRateLimit  = 200  // requests a second, on average
	DefaultRateBurst  = 1000 // requests at once after a quiet spell
	DefaultMaxStreams = 8    // event streams open at once
)

// Admit is how every surface that serves requests (the JSON API, /mcp,
// /v1/traces, the web UI) lets one in: it authenticates the bearer token
// (see Authenticate) and takes one request from the token's allowance, so
// a token's requests are counted together whichever way they come. A
// token over its allowance gets a *logbook.LimitError saying when to
// retry; an unknown token is ErrUnauthorized and costs no allowance.
func (s *Service) Admit(ctx context.Context, token string) (Caller, error) {
	c, err := s.Authenticate(ctx, token)
	if err != nil {
		return c, err
	}
	if err := s.limits.allow(token); err != nil {
		return Caller{}, err
	}
	return c, nil
}

// OpenStream counts an event stream (GET /v1/events, the web UI's
// /ui/events) of an admitted token. Past Options.MaxStreams streams of one
// token it returns a *logbook.LimitError; otherwise release must be called
// when the stream ends.
func (s *Service) OpenStream(token string) (release func(), err error) {
	return s.limits.openStream(hashToken(strings.TrimSpace(token)))
}

// limiter enforces the per-token limits: a token bucket of requests and a
// count of open event streams. Tokens are known by their hash, never by
// their value. Buckets that have filled up again are forgotten, so memory
// follows the tokens active in the last minute. It counts real time
// (Options.RateClock, not the service's clock, which tests move): it
// measures how fast requests come.
type limiter struct {
	rate       float64 // tokens added a second; <= 0: no rate limit
	burst      float64
	maxStreams int // <= 0: no limit
	now        func() time.Time

	mu        sync.Mutex
	buckets   map[string]*bucket
	streams   map[string]int
	lastSweep time.Time
}

// bucket is one token's request allowance: tokens left at a time.
type bucket struct {
	tokens float64
	at     time.Time
}

// newLimiter applies the defaults to opts: zero means the default,
// negative means no limit.
func newLimiter(opts Options) *limiter {
	l := &limiter{rate: opts.RateLimit, burst: float64(opts.RateBurst), maxStreams: opts.MaxStreams, now: time.Now,
		buckets: map[string]*bucket{}, streams: map[string]int{}}
	if opts.RateClock != nil {
		l.now = opts.RateClock
	}
	if l.rate == 0 {
		l.rate = DefaultRateLimit
	}
	if l.burst == 0 {
		l.burst = DefaultRateBurst
	}
	if l.burst < 1 {
		l.burst = 1
	}
	if l.maxStreams == 0 {
		l.maxStreams = DefaultMaxStreams
	}
	return l
}

// allow takes one request from token's bucket, or says how long until the
// next one would be allowed.
func (l *limiter) allow(token string) error {
	if l.rate <= 0 {
		return nil
	}
	key := hashToken(strings.TrimSpace(token))
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b := l.buckets[key]
	if b == nil {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.rate)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return nil
	}
	wait := time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
	return &logbook.LimitError{RetryAfter: wait, Message: fmt.Sprintf(
		"this token made more than %g requests a second (bursts of %g); slow down and retry after %d s", l.rate, l.burst, logbook.Seconds(wait))}
}

// sweep forgets, at most once a minute, the buckets that are full again:
// a new bucket would be the same.
func (l *limiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < time.Minute {
		return
	}
	l.lastSweep = now
	for key, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.buckets, key)
		}
	}
}

// openStream counts an event stream of key (see Service.OpenStream).
func (l *limiter) openStream(key string) (release func(), err error) {
	if l.maxStreams <= 0 {
		return func() {}, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streams[key] >= l.maxStreams {
		return nil, &logbook.LimitError{RetryAfter: 30 * time.Second, Message: fmt.Sprintf(
			"this token already holds %d event streams open; close one (a browser tab, a follower) before opening another", l.maxStreams)}
	}
	l.streams[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.streams[key]--; l.streams[key] <= 0 {
				delete(l.streams, key)
			}
		})
	}, nil
}
