package cli_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/cli"
	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestSendAndInbox runs `logbook send` and `logbook inbox` against a real
// server: alice writes to bob, bob's session takes the message, bob lists
// it and acknowledges it, and mistakes get a usage error.
func TestSendAndInbox(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(testdb.SQLite(t), service.Options{Logger: quiet})
	mux := http.NewServeMux()
	httpapi.New(mux, svc, quiet, httpapi.Options{})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	admin := service.Caller{Actor: "admin", Admin: true}
	tokens := map[string]string{}
	for _, actor := range []string{"alice", "bob"} {
		tok, err := svc.CreateToken(ctx, admin, "demo", actor)
		if err != nil {
			t.Fatal(err)
		}
		tokens[actor] = tok
	}
	run := func(actor string, want int, args ...string) (string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		vars := map[string]string{"LOGBOOK_URL": srv.URL, "LOGBOOK_TOKEN": tokens[actor], "LOGBOOK_PROJECT": "demo"}
		if code := cli.Run(ctx, env(&stdout, &stderr, vars), args); code != want {
			t.Fatalf("logbook %s: exit %d, want %d; %s", strings.Join(args, " "), code, want, stderr.String())
		}
		return stdout.String(), stderr.String()
	}

	out, _ := run("alice", 0, "send", "--to-actor", "bob", "the", "login", "test", "is", "mine")
	id := regexp.MustCompile(`sent message (\S+) to actor bob`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("send printed %q", out)
	}
	list, _ := run("bob", 0, "inbox")
	if !strings.Contains(list, id[1]) || !strings.Contains(list, "waiting") || !strings.Contains(list, "the login test is mine") {
		t.Errorf("bob's inbox:\n%s", list)
	}
	bobs, _, err := svc.StartSession(ctx, service.Caller{Actor: "bob", Project: "demo"}, service.StartParams{Harness: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.ReadInbox(ctx, service.Caller{Actor: "bob", Project: "demo"}, bobs.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ = run("bob", 0, "inbox", "--session", bobs.ID); !strings.Contains(list, id[1]) || !strings.Contains(list, "read") {
		t.Errorf("the session's inbox once given:\n%s", list)
	}
	if _, stderr := run("alice", 1, "inbox", "ack", id[1]); !strings.Contains(stderr, "only its recipient") {
		t.Errorf("alice acking: %s", stderr)
	}
	if out, _ = run("bob", 0, "inbox", "ack", id[1]); !strings.Contains(out, "acked") {
		t.Errorf("ack printed %q", out)
	}
	if out, _ = run("bob", 0, "send", "--reply-to", id[1], "ok"); !strings.Contains(out, "to actor alice") {
		t.Errorf("a reply goes back to its sender: %q", out)
	}
	if _, stderr := run("alice", 2, "send", "--to-actor", "bob"); !strings.Contains(stderr, "say something") {
		t.Errorf("send without text: %s", stderr)
	}
	if _, stderr := run("alice", 2, "inbox", "ack"); !strings.Contains(stderr, "name one message") {
		t.Errorf("ack without id: %s", stderr)
	}
}
