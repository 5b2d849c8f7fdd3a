// Package metrics counts the server's requests and ledger events for
// Prometheus and serves them at /metrics, beside the Go runtime's and the
// process's own figures.
//
// Requests are labelled by the route pattern that served them
// ("POST /v1/sessions/{id}/entries"), never by their path, so a million
// sessions make one series, not a million.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the server's counters in a registry of its own.
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	events   *prometheus.CounterVec
	removed  *prometheus.CounterVec
	alerts   *prometheus.CounterVec
	cost     prometheus.Counter
}

// New makes the counters.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "logbook_http_requests_total",
			Help: "HTTP requests answered, by route pattern and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "logbook_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern (event streams count until they close).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"route"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "logbook_events_total",
			Help: "Ledger events committed by this server, by type: session.started, session.ended, claim.taken, claim.expired, ….",
		}, []string{"type"}),
	}
	m.removed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "logbook_retention_removed_total",
		Help: "What the projects' retention removed on this server: sessions (subagents too), their entries, payloads (entries whose tool output or large payload was removed), and messages between agents.",
	}, []string{"what"})
	m.cost = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "logbook_cost_micros_total",
		Help: "What the model calls this server recorded cost, in millionths of a US dollar: the harness's figure, else the tokens at the project's prices.",
	})

	m.alerts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "logbook_alert_attempts_total",
		Help: "Posts of alerts to their webhooks by this server, by what came of them: delivered (2xx), retrying (tried again later) or failed (given up).",
	}, []string{"result"})
	m.registry.MustRegister(m.requests, m.duration, m.events, m.removed, m.alerts, m.cost,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Event counts one committed ledger event of the given type (wired to
// service.Options.Committed).
func (m *Metrics) Event(eventType string) { m.events.WithLabelValues(eventType).Inc() }

// Removed counts what retention removed (wired to service.Options.Removed).
func (m *Metrics) Removed(what string, n int64) { m.removed.WithLabelValues(what).Add(float64(n)) }

// AlertAttempt counts one post of an alert by its result (wired to
// service.Options.AlertAttempted).
func (m *Metrics) AlertAttempt(result string) { m.alerts.WithLabelValues(result).Inc() }

// Cost counts what recorded model calls cost, in micro-dollars (wired to
// service.Options.Costed).
func (m *Metrics) Cost(micros int64) { m.cost.Add(float64(micros)) }

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// Wrap counts every request mux serves. It must wrap the ServeMux itself:
// the mux writes the pattern it matched into the request, which Wrap reads
// once the request is answered.
func (m *Metrics) Wrap(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		mux.ServeHTTP(sw, r)
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		m.requests.WithLabelValues(route, strconv.Itoa(sw.status)).Inc()
		m.duration.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

// statusWriter remembers the status code a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets handlers that check for http.Flusher stream through it; Unwrap
// lets http.ResponseController reach the connection.
func (w *statusWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
