package web

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

// TestBrowserGoneIsNotAnError: a page the browser left before it was ready
// (a slow stats page, a tab closed) is logged as such, not as a failure;
// the same error with the browser still waiting is one.
func TestBrowserGoneIsNotAnError(t *testing.T) {
	var logged bytes.Buffer
	h := &handler{log: slog.New(slog.NewTextHandler(&logged, nil))}
	err := fmt.Errorf("error counting sessions: %w", context.Canceled)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// ?part= asks for a fragment, answered without the page templates.
	gone := httptest.NewRequestWithContext(ctx, http.MethodGet, "/?part=stats", nil)
	h.renderError(httptest.NewRecorder(), gone, viewer{}, err)
	if out := logged.String(); strings.Contains(out, "level=ERROR") || !strings.Contains(out, "client went away") {
		t.Errorf("a page its browser left logged %q, want an INFO line saying the client went away", out)
	}

	logged.Reset()
	waiting := httptest.NewRequest(http.MethodGet, "/?part=stats", nil)
	answer := httptest.NewRecorder()
	h.renderError(answer, waiting, viewer{}, err)
	if !strings.Contains(logged.String(), "level=ERROR") || answer.Code != http.StatusInternalServerError {
		t.Errorf("a cancelled query with the browser waiting: status %d, logged %q; want 500 and an ERROR line", answer.Code, logged.String())
	}
}
