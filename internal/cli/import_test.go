package cli_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/cli"
	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
)

// ownTranscripts is the importer's own test transcript: one Claude Code
// session with 7 entries and one malformed line, in /repo/demo.
var ownTranscripts = filepath.Join("..", "importer", "testdata", "claude")

func TestImportIntoDatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), "logbook.db")
	for i, want := range []string{
		"imported 1 file (0.0 MB): 1 session (1 new), 0 subagents, 7 entries recorded, 0 already there, 1 malformed line skipped",
		"imported 1 file (0.0 MB): 1 session (0 new), 0 subagents, 0 entries recorded, 7 already there, 1 malformed line skipped",
	} {
		var stdout, stderr bytes.Buffer
		// Flags after the path work too.
		code := cli.Import(context.Background(), env(&stdout, &stderr, nil), []string{"claude", ownTranscripts, "--db", db})
		if code != 0 || strings.TrimSpace(stdout.String()) != want {
			t.Fatalf("import %d: exit %d\nstdout %q\nwant   %q\nstderr %s", i+1, code, stdout.String(), want, stderr.String())
		}
	}
	st, err := sqlitestore.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	page, err := service.New(st, service.Options{}).ListSessions(context.Background(),
		service.Caller{Actor: "admin", Admin: true}, service.ListParams{Project: "demo"})
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].Actor != "import" || page.Sessions[0].EntryCount != 7 {
		t.Fatalf("sessions in project demo: %+v, %v", page.Sessions, err)
	}
}

func TestImportToServer(t *testing.T) {
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "logbook.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := service.New(st, service.Options{})
	mux := http.NewServeMux()
	httpapi.New(mux, svc, slog.New(slog.NewTextHandler(io.Discard, nil)), httpapi.Options{})
	server := httptest.NewServer(mux)
	defer server.Close()
	token, err := svc.CreateToken(context.Background(), service.Caller{Actor: "admin", Admin: true}, "history", "alice")
	if err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	vars := map[string]string{"LOGBOOK_URL": server.URL, "LOGBOOK_TOKEN": token}
	if code := cli.Import(context.Background(), env(&stdout, &stderr, vars), []string{"claude", ownTranscripts}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "7 entries recorded") {
		t.Errorf("summary: %q", stdout.String())
	}
	page, err := svc.ListSessions(context.Background(), service.Caller{Actor: "alice", Project: "history"}, service.ListParams{})
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].Actor != "alice" {
		t.Fatalf("sessions in the token's project: %+v, %v", page.Sessions, err)
	}

	// A wrong token is said so before anything is read.
	stdout.Reset()
	stderr.Reset()
	vars["LOGBOOK_TOKEN"] = "wrong"
	if code := cli.Import(context.Background(), env(&stdout, &stderr, vars), []string{"claude", ownTranscripts}); code != 1 ||
		!strings.Contains(stderr.String(), "LOGBOOK_TOKEN") {
		t.Errorf("wrong token: exit %d, stderr %q", code, stderr.String())
	}
}

func TestImportUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := cli.Import(context.Background(), env(&stdout, &stderr, nil), []string{"cursor"}); code != 2 ||
		!strings.Contains(stderr.String(), "claude or codex") {
		t.Errorf("unknown format: exit %d, stderr %q", code, stderr.String())
	}
}
