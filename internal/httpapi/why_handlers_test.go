package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestSessionsByCommit serves the route on its own, as api.go mounts it,
// on both engines.
func TestSessionsByCommit(t *testing.T) {
	testdb.Each(t, testSessionsByCommit)
}

func testSessionsByCommit(t *testing.T, e testdb.Engine) {
	ctx := context.Background()
	svc := service.New(e.Open(t), service.Options{})
	h := &handler{svc: svc, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/commits/{sha}/sessions", h.authenticated(h.sessionsByCommit))
	server := httptest.NewServer(mux)
	defer server.Close()

	alice := service.Caller{Actor: "alice", Project: "demo"}
	head := "3f2a9c1d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"
	ran, _, err := svc.StartSession(ctx, alice, service.StartParams{Harness: "h", HarnessSessionID: "ran", Fields: logbook.SessionFields{HeadCommit: &head}})
	if err != nil {
		t.Fatal(err)
	}
	made, _, err := svc.StartSession(ctx, alice, service.StartParams{Harness: "h", HarnessSessionID: "made"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AppendEntries(ctx, alice, made.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindToolResult, ToolCallID: "c", Text: "[main 3f2a9c1] x", Commit: "3f2a9c1"}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.StartSession(ctx, alice, service.StartParams{Harness: "h", HarnessSessionID: "other"}); err != nil {
		t.Fatal(err)
	}
	token, err := svc.CreateToken(ctx, service.Caller{Actor: "admin", Admin: true}, "demo", "bob")
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, []logbook.Session) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, server.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body struct{ Sessions []logbook.Session }
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body.Sessions
	}

	// The full sha finds the session that ran at it and the one whose entry
	// recorded it short; an abbreviation finds both too. Newest first.
	for _, sha := range []string{head, "3F2A9C1D5E"} {
		status, sessions := get("/v1/commits/" + sha + "/sessions")
		if status != http.StatusOK || len(sessions) != 2 || sessions[0].ID != made.ID || sessions[1].ID != ran.ID {
			t.Errorf("%s: %d %+v, want made then ran", sha, status, sessions)
		}
	}
	if status, sessions := get("/v1/commits/3f2a9c2/sessions"); status != http.StatusOK || len(sessions) != 0 {
		t.Errorf("another commit: %d %+v, want none", status, sessions)
	}
	for path, want := range map[string]int{
		"/v1/commits/3f2a/sessions":                  http.StatusBadRequest, // too short to mean one commit
		"/v1/commits/not-a-sha/sessions":             http.StatusBadRequest,
		"/v1/commits/3f2a9c1/sessions?project=other": http.StatusForbidden,
	} {
		if status, _ := get(path); status != want {
			t.Errorf("%s: %d, want %d", path, status, want)
		}
	}
}
