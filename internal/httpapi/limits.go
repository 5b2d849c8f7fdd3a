package httpapi

import (
	"crypto/sha256"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// Limits on what a client controls, besides those of package logbook (body
// size, batch size, text lengths) and maxFilters.
const (
	// MaxJSONDepth is how deeply a request body's arrays and objects may
	// nest. logbook's own requests nest five levels at most (an entry's
	// payload is the client's, hence the room).
	MaxJSONDepth = 64
	// DefaultRateLimit is how many requests a second one token may make
	// on average, and DefaultRateBurst how many it may make at once after
	// a quiet spell. A busy agent's hooks send a few requests a second; a
	// token shared by a team's agents, or an import, many more.
	DefaultRateLimit = 200
	DefaultRateBurst = 1000
	// DefaultMaxStreams is how many event streams (GET /v1/events) one
	// token may hold open at once.
	DefaultMaxStreams = 8
)

// checkDepth refuses a JSON body that nests arrays and objects deeper than
// max, before a decoder recurses into it. It scans the bytes once and
// allocates nothing; brackets inside strings do not count. It does not
// validate the JSON: the decoder does that next.
func checkDepth(body []byte, max int) error {
	depth := 0
	inString, escaped := false, false
	for i, b := range body {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > max {
				return logbook.Invalid("", "the JSON nests deeper than %d levels (at byte %d); send flatter objects", max, i)
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return nil
}

// limiter enforces the per-token limits: a token bucket of requests and a
// count of open event streams. Tokens are known by their SHA-256, never by
// their value. Buckets that have filled up again are forgotten, so memory
// follows the tokens active in the last few seconds.
type limiter struct {
	rate       float64 // tokens added a second; <= 0: no rate limit
	burst      float64
	maxStreams int // <= 0: no limit
	now        func() time.Time

	mu        sync.Mutex
	buckets   map[tokenKey]*bucket
	streams   map[tokenKey]int
	lastSweep time.Time
}

// tokenKey is the SHA-256 of a bearer token.
type tokenKey [sha256.Size]byte

// bucket is one token's request allowance: tokens left at a time.
type bucket struct {
	tokens float64
	at     time.Time
}

// newLimiter applies the defaults to opts: zero means the default,
// negative means no limit.
func newLimiter(opts Options) *limiter {
	l := &limiter{rate: opts.RateLimit, burst: float64(opts.RateBurst), maxStreams: opts.MaxStreams, now: time.Now,
		buckets: map[tokenKey]*bucket{}, streams: map[tokenKey]int{}}
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

// allow takes one request from key's bucket. When it is empty it answers
// false and how long until the next request would be allowed.
func (l *limiter) allow(key tokenKey) (ok bool, wait time.Duration) {
	if l.rate <= 0 {
		return true, 0
	}
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
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
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

// openStream counts an event stream of key. When key already holds the
// maximum it answers false; otherwise release must be called when the
// stream ends.
func (l *limiter) openStream(key tokenKey) (release func(), ok bool) {
	if l.maxStreams <= 0 {
		return func() {}, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streams[key] >= l.maxStreams {
		return nil, false
	}
	l.streams[key]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.streams[key]--; l.streams[key] <= 0 {
			delete(l.streams, key)
		}
	}, true
}

// rateLimited answers 429 with Retry-After in whole seconds (at least 1).
func (h *handler) rateLimited(w http.ResponseWriter, wait time.Duration) {
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeProblem(w, http.StatusTooManyRequests, "Too many requests",
		fmt.Sprintf("this token made more than %g requests a second (bursts of %g); slow down and retry after %d s", h.limits.rate, h.limits.burst, secs), "")
}

// streamLimited wraps an event-stream handler so that one token holds at
// most the configured number of streams open at once; one more is 429.
func (h *handler) streamLimited(fn func(http.ResponseWriter, *http.Request, service.Caller)) func(http.ResponseWriter, *http.Request, service.Caller) {
	return func(w http.ResponseWriter, r *http.Request, c service.Caller) {
		release, ok := h.limits.openStream(sha256.Sum256([]byte(bearerToken(r))))
		if !ok {
			w.Header().Set("Retry-After", "30")
			writeProblem(w, http.StatusTooManyRequests, "Too many event streams",
				fmt.Sprintf("this token already holds %d event streams open; close one (a browser tab, a follower) before opening another", h.limits.maxStreams), "")
			return
		}
		defer release()
		fn(w, r, c)
	}
}
