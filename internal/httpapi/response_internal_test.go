package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestClientGoneIsNotAnError: a request its client closed (a hook past its
// deadline) is logged as such, not as a failure of the server; the same
// error with the client still waiting is one.
func TestClientGoneIsNotAnError(t *testing.T) {
	var logged bytes.Buffer
	h := &handler{log: slog.New(slog.NewTextHandler(&logged, nil))}
	err := fmt.Errorf("error appending entries: %w", context.Canceled)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	gone := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/sessions/s/entries", nil)
	h.writeError(httptest.NewRecorder(), gone, err)
	if out := logged.String(); strings.Contains(out, "level=ERROR") || !strings.Contains(out, "client went away") {
		t.Errorf("a request its client closed logged %q, want an INFO line saying the client went away", out)
	}

	logged.Reset()
	waiting := httptest.NewRequest(http.MethodPost, "/v1/sessions/s/entries", nil)
	answer := httptest.NewRecorder()
	h.writeError(answer, waiting, err)
	if !strings.Contains(logged.String(), "level=ERROR") || answer.Code != http.StatusInternalServerError {
		t.Errorf("a cancelled operation with the client waiting: status %d, logged %q; want 500 and an ERROR line", answer.Code, logged.String())
	}
}
