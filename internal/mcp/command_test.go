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

	"github.com/logbookhq/logbook/internal/cli"
	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

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

	vars := map[string]string{"LOGBOOK_URL": srv.URL, "LOGBOOK_TOKEN": token}
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	var stderr bytes.Buffer
	env := cli.Env{Stdin: toServer, Stdout: fromServer, Stderr: &stderr, Getenv: func(k string) string { return vars[k] }}
	exit := make(chan int, 1)
	go func() { exit <- cli.MCP(ctx, env, nil) }()

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, &sdk.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		t.Fatal(err)
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
