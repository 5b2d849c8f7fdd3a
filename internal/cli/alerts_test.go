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
	"sync/atomic"
	"testing"

	"github.com/logbookhq/logbook/internal/cli"
	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestAlertsCommands: the admin adds a rule and tests it, a project's
// token lists the rules and reads the delivery log of an alert the
// server posted, and the admin deletes the rule.
func TestAlertsCommands(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(testdb.SQLite(t), service.Options{Logger: quiet})
	mux := http.NewServeMux()
	httpapi.New(mux, svc, quiet, httpapi.Options{})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var posts atomic.Int64
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hook.Close()

	if _, err := svc.EnsureAdminToken(ctx, "cli-alerts-admin-token"); err != nil {
		t.Fatal(err)
	}
	token, err := svc.CreateToken(ctx, service.Caller{Actor: "admin", Admin: true}, "demo", "alice")
	if err != nil {
		t.Fatal(err)
	}
	admin := map[string]string{"LOGBOOK_URL": srv.URL, "LOGBOOK_TOKEN": "cli-alerts-admin-token", "LOGBOOK_PROJECT": "demo"}
	alice := map[string]string{"LOGBOOK_URL": srv.URL, "LOGBOOK_TOKEN": token, "LOGBOOK_PROJECT": "demo"}
	run := func(vars map[string]string, wantCode int, args ...string) (string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := cli.Run(ctx, env(&stdout, &stderr, vars), args); code != wantCode {
			t.Fatalf("logbook %s: exit %d, want %d; %s%s", strings.Join(args, " "), code, wantCode, stdout.String(), stderr.String())
		}
		return stdout.String(), stderr.String()
	}

	_, errOut := run(alice, 1, "alerts", "add", "--kind", "session_failed", "--webhook", hook.URL+"/secret-path")
	if !strings.Contains(errOut, "only the admin") {
		t.Errorf("alerts add by alice: %s", errOut)
	}
	_, errOut = run(admin, 1, "alerts", "add", "--kind", "session_failed", "--webhook", "ftp://example.com/x")
	if !strings.Contains(errOut, "webhook_url") || !strings.Contains(errOut, "http or https") {
		t.Errorf("alerts add with an ftp URL: %s", errOut)
	}
	out, _ := run(admin, 0, "alerts", "add", "--kind", "session_failed", "--name", "failures", "--webhook", hook.URL+"/secret-path")
	id := regexp.MustCompile(`added alert rule (\S+) \(failures, session_failed\)`).FindStringSubmatch(out)
	if id == nil || !regexp.MustCompile(`secret: whsec_[0-9a-f]{48}\n`).MatchString(out) {
		t.Fatalf("alerts add:\n%s", out)
	}
	out, _ = run(alice, 0, "alerts", "list")
	if !strings.Contains(out, id[1]) || !strings.Contains(out, "failures") || !strings.Contains(out, hook.URL+"/…") || strings.Contains(out, "secret-path") {
		t.Errorf("alerts list:\n%s", out)
	}
	out, _ = run(admin, 0, "alerts", "test", id[1])
	if !strings.Contains(out, "the webhook answered 204") || posts.Load() != 1 {
		t.Errorf("alerts test: %s (%d posts)", out, posts.Load())
	}
	run(alice, 2, "alerts", "test") // no rule named

	_, errOut = run(admin, 1, "alerts", "add", "--kind", "cost_over_budget", "--budget-usd", "2.5", "--webhook", hook.URL+"/budget")
	if !strings.Contains(errOut, "scope") || !strings.Contains(errOut, "agent_day") {
		t.Errorf("alerts add of a budget without a scope: %s", errOut)
	}
	out, _ = run(admin, 0, "alerts", "add", "--kind", "cost_over_budget", "--budget-usd", "2.5", "--scope", "agent_day", "--name", "agents", "--webhook", hook.URL+"/budget")
	budget := regexp.MustCompile(`added alert rule (\S+) \(agents, cost_over_budget\)`).FindStringSubmatch(out)
	if budget == nil {
		t.Fatalf("alerts add of a budget:\n%s", out)
	}
	out, _ = run(alice, 0, "alerts", "list")
	if !strings.Contains(out, "$2.50 an agent a day") {
		t.Errorf("alerts list with a budget:\n%s", out)
	}
	out, _ = run(admin, 0, "alerts", "test", budget[1])
	if !strings.Contains(out, "the webhook answered 204") || posts.Load() != 2 {
		t.Errorf("alerts test of the budget: %s (%d posts)", out, posts.Load())
	}
	run(admin, 0, "alerts", "rm", budget[1])

	s, _, err := svc.StartSession(ctx, service.Caller{Actor: "alice", Project: "demo"}, service.StartParams{Harness: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.EndSession(ctx, service.Caller{Actor: "alice", Project: "demo"}, s.ID, service.EndParams{Outcome: logbook.OutcomeFailed, Result: "gave up"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DeliverDue(ctx); err != nil {
		t.Fatal(err)
	}
	out, _ = run(alice, 0, "alerts", "log")
	for _, want := range []string{"session_failed  delivered", s.ID, "ended failed", "gave up", "attempt 1 at ", ": 204 ("} {
		if !strings.Contains(out, want) {
			t.Errorf("alerts log lacks %q:\n%s", want, out)
		}
	}
	out, _ = run(admin, 0, "alerts", "rm", id[1])
	if !strings.Contains(out, "deleted alert rule "+id[1]) {
		t.Errorf("alerts rm: %s", out)
	}
	out, _ = run(alice, 0, "alerts", "list")
	if !strings.Contains(out, "no alert rules") {
		t.Errorf("alerts list after rm: %s", out)
	}
}
