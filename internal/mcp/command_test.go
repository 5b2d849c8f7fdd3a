package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/logbookhq/logbook/internal/buildinfo"
	"github.com/logbookhq/logbook/internal/cli"
	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// runMCP runs 'logbook mcp args...' with the environment vars on pipes, as
// a harness does, and connects an MCP client to it. exit gives the
// command's exit code once the client has closed.
func runMCP(t *testing.T, vars map[string]string, args ...string) (cs *sdk.ClientSession, exit chan int, stderr *bytes.Buffer) {
	t.Helper()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	stderr = &bytes.Buffer{}
	env := cli.Env{Stdin: toServer, Stdout: fromServer, Stderr: stderr, Getenv: func(k string) string { return vars[k] }}
	exit = make(chan int, 1)
	go func() { exit <- cli.MCP(context.Background(), env, args) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(context.Background(), &sdk.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, exit, stderr
}

// TestLogbookMCPCommand runs 'logbook mcp' as a harness would: on pipes,
// with LOGBOOK_URL and LOGBOOK_TOKEN naming a real server.
func TestLogbookMCPCommand(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	svc := service.New(testdb.SQLite(t), service.Options{Logger: quiet})
	if _, err := svc.EnsureAdminToken(ctx, "admin-token"); err != nil {
		t.Fatal(err)
	}
	admin, _ := svc.Authenticate(ctx, "admin-token")
	token, err := svc.CreateToken(ctx, admin, "demo", "alice")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	httpapi.New(mux, svc, quiet, httpapi.Options{})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	cs, exit, stderr := runMCP(t, map[string]string{"LOGBOOK_URL": srv.URL, "LOGBOOK_TOKEN": token})
	if got, want := cs.InitializeResult().ServerInfo.Version, buildinfo.Read().Version; got == "" || got != want {
		t.Errorf("serverInfo.version = %q, want the module version %q", got, want)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "start_session", Arguments: map[string]any{"harness": "test", "harness_session_id": "cli"}})
	if err != nil || res.IsError {
		t.Fatalf("start_session: %v %+v", err, res)
	}
	var sess struct {
		Project string `json:"project"`
		Actor   string `json:"actor"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &sess); err != nil || sess.Project != "demo" || sess.Actor != "alice" {
		t.Errorf("started %+v (%v), want a session of alice in demo: the token's", sess, err)
	}
	cs.Close()
	if code := <-exit; code != 0 {
		t.Errorf("exit %d after the client closed, want 0; stderr: %s", code, stderr.String())
	}
}

// TestLogbookMCPProject: 'logbook mcp' takes LOGBOOK_PROJECT, or
// --project over it, as the project of tools the agent names none in: an
// admin token, which has no project, lists that project's sessions.
func TestLogbookMCPProject(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	svc := service.New(testdb.SQLite(t), service.Options{Logger: quiet})
	if _, err := svc.EnsureAdminToken(ctx, "admin-token"); err != nil {
		t.Fatal(err)
	}
	for _, project := range []string{"demo", "other"} {
		if _, _, err := svc.StartSession(ctx, service.Caller{Actor: "alice", Project: project}, service.StartParams{Harness: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	mux := http.NewServeMux()
	httpapi.New(mux, svc, quiet, httpapi.Options{})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// listed runs logbook mcp with args and LOGBOOK_PROJECT=demo, and
	// answers the project of the sessions list_sessions finds without one.
	listed := func(args ...string) (string, bool) {
		t.Helper()
		cs, exit, _ := runMCP(t, map[string]string{"LOGBOOK_URL": srv.URL, "LOGBOOK_TOKEN": "admin-token", "LOGBOOK_PROJECT": "demo"}, args...)
		defer func() { cs.Close(); <-exit }()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_sessions", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			return "", false
		}
		var page struct {
			Sessions []struct {
				Project string `json:"project"`
			} `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &page); err != nil || len(page.Sessions) != 1 {
			t.Fatalf("list_sessions: %v %s", err, res.Content[0].(*sdk.TextContent).Text)
		}
		return page.Sessions[0].Project, true
	}
	if project, ok := listed(); !ok || project != "demo" {
		t.Errorf("with LOGBOOK_PROJECT=demo: listed %q (ok %v), want demo's session", project, ok)
	}
	if project, ok := listed("--project", "other"); !ok || project != "other" {
		t.Errorf("with --project other: listed %q (ok %v), want other's session", project, ok)
	}
	if _, ok := listed("--project", ""); ok {
		t.Error("an admin token with no project listed sessions; want a tool error asking for the project")
	}
}

func TestLogbookMCPWithoutToken(t *testing.T) {
	var stderr bytes.Buffer
	env := cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }}
	if code := cli.MCP(context.Background(), env, nil); code != 2 {
		t.Errorf("exit %d without a token, want 2", code)
	}
	if !strings.Contains(stderr.String(), "set LOGBOOK_TOKEN") {
		t.Errorf("stderr %q, want it to say to set LOGBOOK_TOKEN", stderr.String())
	}
}
