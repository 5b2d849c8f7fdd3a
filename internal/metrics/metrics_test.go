package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/metrics"
)

// TestCountsByRoute: requests are counted by the pattern that served them
// and their status, not by path; streams still flush through the counter;
// ledger events are counted by type, what retention removed by what, and
// the posts of alerts by their result;
// the Go runtime's figures are served too.
func TestCountsByRoute(t *testing.T) {
	m := metrics.New()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/things/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "missing" {
			http.Error(w, "no such thing", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusCreated)
	})
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		f, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "cannot stream", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, "data: 1\n\n")
		f.Flush()
	})
	mux.Handle("GET /metrics", m.Handler())
	server := httptest.NewServer(m.Wrap(mux))
	defer server.Close()

	for _, id := range []string{"a", "b", "missing"} {
		res, err := http.Post(server.URL+"/v1/things/"+id, "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	m.Event("session.started")
	m.Event("session.started")
	m.Event("claim.taken")
	m.Removed("sessions", 2)
	m.Removed("payloads", 40)
	m.Removed("payloads", 2)
	m.AlertAttempt("retrying")
	m.AlertAttempt("delivered")
	m.AlertAttempt("delivered")
	m.Cost(1234)
	m.Cost(5)
	for _, path := range []string{"/stream", "/nowhere"} {
		res, err := http.Get(server.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}

	res, err := http.Get(server.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	text := string(body)
	for _, want := range []string{
		`logbook_http_requests_total{code="201",route="POST /v1/things/{id}"} 2`,
		`logbook_http_requests_total{code="404",route="POST /v1/things/{id}"} 1`,
		`logbook_http_requests_total{code="200",route="GET /stream"} 1`,
		`logbook_http_requests_total{code="404",route="unmatched"} 1`,
		`logbook_http_request_duration_seconds_count{route="POST /v1/things/{id}"} 3`,
		`logbook_events_total{type="session.started"} 2`,
		`logbook_events_total{type="claim.taken"} 1`,
		`logbook_retention_removed_total{what="sessions"} 2`,
		`logbook_retention_removed_total{what="payloads"} 42`,
		`logbook_alert_attempts_total{result="delivered"} 2`,
		`logbook_alert_attempts_total{result="retrying"} 1`,
		"logbook_cost_micros_total 1239\n",
		`go_goroutines `,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the metrics:\n%.3000s", want, text)
		}
	}
	if strings.Contains(text, "/v1/things/a") {
		t.Error("a path, not its route, labels a series: one series a session")
	}
}
