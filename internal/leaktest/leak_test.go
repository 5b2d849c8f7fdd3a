package leaktest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/logbookhq/logbook/internal/client"
	"github.com/logbookhq/logbook/internal/hook"
	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/importer"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/mcp"
	"github.com/logbookhq/logbook/internal/otlp"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
	"github.com/logbookhq/logbook/internal/testdb"
)

// secret is one secret as it is sent (carrier) and the part of it that must
// never be stored (core).
type secret struct {
	kind, carrier, core string
}

// name is the secret as a name may hold it (a harness session id, an
// agent, a project): on one line, as names refuse line breaks.
func (s secret) name() string { return strings.ReplaceAll(s.carrier, "\n", " ") }

// secrets are the issue's seven kinds and a command exporting an API key.
// They are assembled at run time so that the source holds no token-shaped
// literal; none is a real credential.
func secrets() []secret {
	awsID := "AKIA" + "Q7ZP2R8VX4M1N6KW"
	awsSecret := "Zx8Qw2Er4Ty6Ui8Op0As" + "Df2Gh4Jk6Lz8Xc0Vb2Nm"
	ghp := "gh" + "p_" + "Lk9Jh8Gf7Ds6Aq5Wz4Ex3Rc2Tv1Yb0Nu9Mi8Ko"
	pemBody := "MIIEpQIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi" + "Z1BjP5CE8Wm3xHj4K7d9sQ2Lf6Rn1Ug0Vb5Nc8Xy"
	pem := "-----BEGIN RSA " + "PRIVATE KEY-----\n" + pemBody + "\n-----END RSA " + "PRIVATE KEY-----"
	pgPassword := "Wq7Rt9Yp2" + "Zk4Hs6Dm"
	jwt := "eyJhbGciOiJIUzI1NiJ9" + "." + "eyJzdWIiOiJsZWFrdGVzdCIsImlhdCI6MTcwMDAwMDAwMH0" + "." + "q3Vt7Xk9Lm2Np4Rs6Tu8Wy0Za1Bc3De5Fg7Hi9Jk"
	skProj := "sk-" + "proj-" + "Rt5Yu7Io9Pa1Sd3Fg5Hj7Kl9Zx1Cv3Bn5Mq7We9Rt1Yu3Io5"
	exported := "sk-" + "proj-" + "Ee2Rr4Tt6Yy8Uu0Ii2Oo4Pp6Aa8Ss0Dd2Ff4Gg6Hh8Jj0Kk2"
	return []secret{
		{"aws_access_key_id", awsID, awsID},
		{"aws_secret_access_key", "aws_secret_access_key=" + awsSecret, awsSecret},
		{"github_token", ghp, ghp},
		{"private_key", pem, pemBody},
		{"postgres_password", "postgres://app:" + pgPassword + "@db.internal:5432/prod", pgPassword},
		{"jwt", jwt, jwt},
		{"openai_key", skProj, skProj},
		{"command", "export OPENAI_API_KEY=" + exported, exported},
	}
}

// leak is free text holding every secret.
func leak(all []secret) string {
	var b strings.Builder
	b.WriteString("deploy notes:")
	for _, s := range all {
		b.WriteString("\n" + s.kind + ": " + s.carrier + " ;")
	}
	return b.String()
}

// world is a logbook server as `logbook serve` runs it (the API, MCP at
// /mcp, OTLP at /v1/traces, group commit on) on a fresh database.
type world struct {
	st     store.Store // the engine's store itself, behind no redaction
	file   string      // the SQLite file; "" on PostgreSQL
	svc    *service.Service
	url    string
	admin  string
	token  string // alice's, in project demo
	client *http.Client
}

const project = "demo"

var quiet = slog.New(slog.DiscardHandler)

func newWorld(t *testing.T, e testdb.Engine) *world {
	t.Helper()
	w := &world{client: &http.Client{Timeout: time.Minute}}
	if e.Name == "sqlite" {
		w.file = testdb.SQLitePath(t)
		st, err := sqlitestore.Open(context.Background(), w.file)
		if err != nil {
			t.Fatal(err)
		}
		st.CheckSessionCache()
		t.Cleanup(func() { st.Close() })
		w.st = st
	} else {
		w.st = e.Open(t)
	}
	w.svc = service.New(w.st, service.Options{Logger: quiet, RateLimit: -1})
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); w.svc.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })

	mux := http.NewServeMux()
	httpapi.New(mux, w.svc, quiet, httpapi.Options{})
	mux.Handle("POST /v1/traces", otlp.Handler(w.svc, quiet))
	mux.Handle("POST /v1/logs", otlp.LogsHandler(w.svc, quiet))
	mux.Handle("/mcp", mcp.Handler(w.svc, quiet, mcp.Options{}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	w.url = srv.URL

	w.admin = "leaktest-admin-token"
	if _, err := w.svc.EnsureAdminToken(context.Background(), w.admin); err != nil {
		t.Fatal(err)
	}
	var tok struct {
		Token string `json:"token"`
	}
	w.call(t, w.admin, "POST", "/v1/tokens", map[string]string{"project": project, "actor": "alice"}, &tok, http.StatusCreated)
	w.token = tok.Token
	return w
}

// call sends a JSON request and decodes the answer, failing unless its
// status is one of want (any 2xx when none is given).
func (w *world) call(t *testing.T, token, method, path string, body, out any, want ...int) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, w.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := w.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	ok := res.StatusCode/100 == 2
	if len(want) > 0 {
		ok = false
		for _, s := range want {
			ok = ok || res.StatusCode == s
		}
	}
	if !ok {
		t.Fatalf("%s %s: status %d, want %v: %s", method, path, res.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	return res.StatusCode
}

// TestNoSecretIsStored sends the secrets through every write route, checks
// along the way that identifiers holding them still behave (a repeated
// start or batch is idempotent, claims, notes and tasks find their rows),
// and then looks for them in every column of every table.
func TestNoSecretIsStored(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		w := newWorld(t, e)
		all := secrets()
		text := leak(all)

		t.Run("REST", func(t *testing.T) { sendREST(t, w, all, text) })
		t.Run("MCP", func(t *testing.T) { sendMCP(t, w, all, text) })
		t.Run("ClaudeHook", func(t *testing.T) { sendClaudeHook(t, w, all, text) })
		t.Run("CodexHook", func(t *testing.T) { sendCodexHook(t, w, all, text) })
		t.Run("Importers", func(t *testing.T) { sendImports(t, w, all, text) })
		t.Run("OTLP", func(t *testing.T) { sendOTLP(t, w, all, text) })
		t.Run("OTLPLogs", func(t *testing.T) { sendOTLPLogs(t, w, all, text) })
		if t.Failed() {
			return
		}

		db := w.st.(interface{ DB() *sql.DB }).DB()
		tables, found := scanColumns(t, db, e.Name, all)
		for _, f := range found {
			t.Errorf("stored: %s", f)
		}
		if len(tables) < 15 {
			t.Errorf("the catalogue listed only %d tables: %v", len(tables), tables)
		}
		if w.file != "" {
			for _, f := range scanFiles(t, w.file, all) {
				t.Errorf("stored: %s", f)
			}
		}
		// Each kind reached the database, redacted.
		for _, s := range all {
			if s.kind == "postgres_password" || s.kind == "command" {
				continue // stored as password / openai_key placeholders
			}
			if n := countLike(t, db, "entries", "text", "%[REDACTED:"+s.kind+"%"); n == 0 {
				t.Errorf("no entry text holds a %s placeholder: the secrets did not reach the database", s.kind)
			}
		}

		// The scan finds a secret stored past the redaction (the engine's
		// store written to directly), naming where.
		if err := w.st.ProjectEnsure(context.Background(), "control "+all[2].core, time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, found := scanColumns(t, db, e.Name, all); !containsPrefix(found, "projects.name: github_token") {
			t.Errorf("a secret written behind the boundary was not found; the scan found %v", found)
		}
	})
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

func countLike(t *testing.T, db *sql.DB, table, column, pattern string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM `+table+` WHERE `+column+` LIKE $1`, pattern).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// sendREST writes through every /v1 route that stores something, with a
// session per secret whose identifiers hold that secret.
func sendREST(t *testing.T, w *world, all []secret, text string) {
	// A token whose project and actor hold a secret.
	w.call(t, w.admin, "POST", "/v1/tokens", map[string]string{"project": "p " + all[0].name(), "actor": "a " + all[1].name()}, nil, http.StatusCreated)
	// A policy of a project whose name holds one.
	w.call(t, w.admin, "PUT", "/v1/projects/"+url.PathEscape("q "+all[2].name())+"/policy", map[string]string{"network": "ask"}, nil)

	var bob struct {
		Token string `json:"token"`
	}
	w.call(t, w.admin, "POST", "/v1/tokens", map[string]string{"project": project, "actor": "bob"}, &bob, http.StatusCreated)

	for i, s := range all {
		id := "rest " + s.name()
		start := map[string]any{
			"harness": "rest", "harness_session_id": id, "title": text, "goal": text, "task": text, "prompt": text,
			"model": s.carrier, "agent_type": s.carrier, "agent": s.name(), "issue": s.carrier, "pull": s.carrier,
			"branch": s.carrier, "head_commit": s.carrier, "subject": "subject " + s.carrier,
		}
		var sess, again struct {
			ID string `json:"id"`
		}
		w.call(t, w.token, "POST", "/v1/sessions", start, &sess, http.StatusCreated)
		w.call(t, w.token, "POST", "/v1/sessions", start, &again, http.StatusOK)
		if again.ID != sess.ID {
			t.Errorf("%s: starting again with the same harness session id gave session %s, not %s", s.kind, again.ID, sess.ID)
		}
		base := "/v1/sessions/" + sess.ID
		w.call(t, w.token, "PATCH", base, map[string]any{"title": text, "branch": s.carrier, "model": s.carrier}, nil)

		batch := map[string]any{
			"entries": []map[string]any{
				{"kind": "prompt", "text": text, "key": "prompt " + s.carrier},
				{"kind": "tool_call", "tool": "tool " + s.carrier, "tool_call_id": "call " + s.carrier, "key": "call " + s.carrier,
					"payload": map[string]any{"command": s.carrier, "env": map[string]string{"SECRET": s.carrier}}, "commit": s.carrier},
				{"kind": "tool_result", "tool_call_id": "call " + s.carrier, "text": text, "key": "result " + s.carrier,
					"payload": map[string]any{"stdout": text}},
				{"kind": "message", "role": "assistant", "text": text, "key": "message " + s.carrier},
			},
			"touched": []map[string]string{
				{"kind": "file", "value": "src/" + s.carrier + "/main.go"},
				{"kind": "command", "value": all[len(all)-1].carrier},
				{"kind": "command", "value": s.carrier},
			},
		}
		var first, repeat service.AppendResult
		w.call(t, w.token, "POST", base+"/entries", batch, &first)
		w.call(t, w.token, "POST", base+"/entries", batch, &repeat)
		if first.Recorded != 4 || repeat.Recorded != 0 || repeat.Duplicates != 4 {
			t.Errorf("%s: a batch sent twice recorded %d then %d (duplicates %d), want 4 then 0 (4)", s.kind, first.Recorded, repeat.Recorded, repeat.Duplicates)
		}

		// Lists filtered by a name or a touched folder holding the secret.
		for _, filter := range []string{"agent=" + url.QueryEscape(s.name()), "path=" + url.QueryEscape("src/"+s.carrier+"/")} {
			var page struct {
				Sessions []struct {
					ID string `json:"id"`
				} `json:"sessions"`
			}
			w.call(t, w.token, "GET", "/v1/sessions?subagents=true&"+filter, nil, &page)
			if len(page.Sessions) != 1 || page.Sessions[0].ID != sess.ID {
				t.Errorf("%s: sessions listed by %s: %+v, want %s", s.kind, strings.Split(filter, "=")[0], page.Sessions, sess.ID)
			}
		}

		w.call(t, w.token, "PUT", base+"/plan", map[string]any{"steps": []map[string]string{{"text": text}, {"text": s.carrier, "status": "running"}}}, nil)
		w.call(t, w.token, "PATCH", base+"/plan/1", map[string]string{"status": "done"}, nil)
		w.call(t, w.token, "POST", base+"/goal", map[string]string{"goal": text}, nil)

		// Claims on subjects holding the secret: renewing, refusing
		// another session, listing by subject, releasing.
		subject := "src/" + s.carrier + "/"
		var claim struct {
			ID string `json:"id"`
		}
		w.call(t, w.token, "POST", "/v1/claims", map[string]any{"session_id": sess.ID, "subject": subject}, &claim, http.StatusCreated)
		w.call(t, w.token, "POST", "/v1/claims", map[string]any{"session_id": sess.ID, "subject": subject}, nil, http.StatusOK)
		var other struct {
			ID string `json:"id"`
		}
		w.call(t, bob.Token, "POST", "/v1/sessions", map[string]any{"harness": "rest", "harness_session_id": "bob " + s.name()}, &other, http.StatusCreated)
		w.call(t, bob.Token, "POST", "/v1/claims", map[string]any{"session_id": other.ID, "subject": subject + "file.go"}, nil, http.StatusConflict)
		var held struct {
			Claims []struct {
				SessionID string `json:"session_id"`
			} `json:"claims"`
		}
		w.call(t, w.token, "GET", "/v1/claims?subject="+url.QueryEscape(subject+"file.go"), nil, &held)
		if len(held.Claims) != 1 || held.Claims[0].SessionID != sess.ID {
			t.Errorf("%s: who holds a subject under the claimed folder: %+v, want session %s", s.kind, held.Claims, sess.ID)
		}
		var issueClaim struct {
			ID string `json:"id"`
		}
		w.call(t, w.token, "POST", "/v1/claims", map[string]any{"session_id": sess.ID, "subject": "issue:" + s.carrier}, &issueClaim, http.StatusCreated)
		w.call(t, w.token, "DELETE", "/v1/claims/"+issueClaim.ID, nil, nil)

		// A note to the sessions on the subject, sent twice with one key.
		var told, toldAgain service.NoteResult
		note := map[string]any{"subject": "subject " + s.carrier, "text": text, "key": "note " + s.carrier}
		w.call(t, bob.Token, "POST", "/v1/notes", note, &told)
		w.call(t, bob.Token, "POST", "/v1/notes", note, &toldAgain)
		if told.Told != 1 || toldAgain.Told != 0 || toldAgain.Duplicates != 1 {
			t.Errorf("%s: a note by subject told %d then %d (duplicates %d), want 1 then 0 (1)", s.kind, told.Told, toldAgain.Told, toldAgain.Duplicates)
		}
		w.call(t, bob.Token, "POST", "/v1/notes", map[string]any{"issue": s.carrier, "text": text}, nil)

		// A message carrying the secret, to bob's session, taken into it
		// (recorded in its transcript) and answered in its thread.
		var msg struct {
			ID string `json:"id"`
		}
		w.call(t, w.token, "POST", "/v1/messages", map[string]any{"to_session": other.ID, "from_session": sess.ID, "text": text}, &msg, http.StatusCreated)
		var given struct {
			Messages []json.RawMessage `json:"messages"`
		}
		w.call(t, bob.Token, "POST", "/v1/sessions/"+other.ID+"/inbox", nil, &given)
		if len(given.Messages) != 1 {
			t.Errorf("%s: bob's session was given %d messages, want 1", s.kind, len(given.Messages))
		}
		w.call(t, bob.Token, "POST", "/v1/messages", map[string]any{"reply_to": msg.ID, "text": text}, nil, http.StatusCreated)

		// An agent named with the secret, its tasks, its rotation.
		agent := "/v1/agents/" + url.PathEscape("agent "+s.name())
		w.call(t, w.token, "POST", agent+"/session", nil, nil)
		task := map[string]string{"task_id": "task " + s.name(), "title": text, "text": text}
		var added, addedAgain service.TaskResult
		w.call(t, w.token, "POST", agent+"/tasks", task, &added)
		w.call(t, w.token, "POST", agent+"/tasks", task, &addedAgain)
		if !added.Added || addedAgain.Added {
			t.Errorf("%s: a task handed over twice was added %v then %v, want true then false", s.kind, added.Added, addedAgain.Added)
		}
		w.call(t, w.token, "GET", "/v1/tasks/"+url.PathEscape("task "+s.name()), nil, nil)
		w.call(t, w.token, "PUT", agent+"/rotation_policy", map[string]any{"max_age": "24h"}, nil)
		w.call(t, w.token, "POST", agent+"/rotate", map[string]string{"reason": text}, nil)

		// A compaction, then the end; every other session ends too.
		w.call(t, w.token, "POST", base+"/compact", map[string]any{"entries": []map[string]any{{"kind": "summary", "text": text, "key": "summary " + s.carrier}}}, nil)
		outcome := []string{"success", "partial", "failed"}[i%3]
		w.call(t, w.token, "POST", base+"/end", map[string]string{"outcome": outcome, "result": text, "reason": text}, nil)
		w.call(t, bob.Token, "POST", "/v1/sessions/"+other.ID+"/end", map[string]string{"outcome": "failed", "result": text}, nil)
	}
}

// sendMCP calls every MCP tool that writes, over /mcp.
func sendMCP(t *testing.T, w *world, all []secret, text string) {
	ctx := context.Background()
	transport := &sdk.StreamableClientTransport{Endpoint: w.url + "/mcp", HTTPClient: &http.Client{Transport: bearer(w.token)}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "leaktest"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tool := func(name string, args map[string]any, out any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		content, _ := res.Content[0].(*sdk.TextContent)
		if res.IsError || content == nil {
			t.Fatalf("%s: tool error %+v", name, res.Content)
		}
		if out != nil {
			if err := json.Unmarshal([]byte(content.Text), out); err != nil {
				t.Fatalf("%s: %v in %s", name, err, content.Text)
			}
		}
	}
	for _, s := range all {
		start := map[string]any{
			"harness": "mcp", "harness_session_id": "mcp " + s.name(), "title": text, "goal": text, "task": text, "prompt": text,
			"model": s.carrier, "agent_type": s.carrier, "agent": s.name(), "issue": s.carrier, "pull": s.carrier,
			"branch": s.carrier, "head_commit": s.carrier, "subject": s.carrier,
		}
		var sess, again struct {
			ID string `json:"id"`
		}
		tool("start_session", start, &sess)
		tool("start_session", start, &again)
		if again.ID != sess.ID {
			t.Errorf("%s: start_session again gave %s, not %s", s.kind, again.ID, sess.ID)
		}
		tool("set_goal", map[string]any{"session_id": sess.ID, "goal": text}, nil)
		tool("record", map[string]any{"session_id": sess.ID,
			"entries": []map[string]any{
				{"kind": "prompt", "text": text, "key": "mcp prompt " + s.carrier},
				{"kind": "tool_call", "tool": s.carrier, "tool_call_id": s.carrier, "payload": map[string]string{"arg": s.carrier}, "key": "mcp call " + s.carrier, "commit": s.carrier},
				{"kind": "tool_result", "tool_call_id": s.carrier, "text": text},
			},
			"touched": []map[string]string{{"value": "lib/" + s.carrier}, {"kind": "command", "value": all[len(all)-1].carrier}},
		}, nil)
		tool("plan", map[string]any{"session_id": sess.ID, "steps": []map[string]string{{"text": text}}}, nil)
		tool("plan", map[string]any{"session_id": sess.ID, "step": 1, "status": "running"}, nil)
		var claim struct {
			ID string `json:"id"`
		}
		tool("claim", map[string]any{"session_id": sess.ID, "subject": "branch:" + s.carrier}, &claim)
		tool("release", map[string]any{"claim_id": claim.ID}, nil)
		tool("claim", map[string]any{"session_id": sess.ID, "subject": "mcp/" + s.carrier}, nil)
		tool("complete_task", map[string]any{"session_id": sess.ID, "outcome": "partial", "result": text}, nil)
	}
}

// bearer is an http.RoundTripper that sends a bearer token.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// hookConfig is a hook's configuration for w, with its own spool.
func (w *world) hookConfig(t *testing.T) hook.Config {
	return hook.Config{URL: w.url, Token: w.token, Project: project, SpoolDir: t.TempDir(), Deadline: time.Minute}
}

// flush delivers what a hook left in its spool and fails the test if the
// server refused any of it or some is left.
func flush(t *testing.T, h *hook.Hook) {
	t.Helper()
	rep, err := h.Flush(context.Background())
	if err != nil || len(rep.Rejected) > 0 || rep.Remaining > 0 || rep.Bad > 0 {
		t.Fatalf("flushing the hook's spool: %v; rejected %+v, remaining %d, bad %d", err, rep.Rejected, rep.Remaining, rep.Bad)
	}
}

// sendClaudeHook runs `logbook hook claude` in process for a session's
// events: start, prompt, a Bash call and its result, an edit, a subagent,
// the stop and the end.
func sendClaudeHook(t *testing.T, w *world, all []secret, text string) {
	var stderr bytes.Buffer
	h := hook.New(w.hookConfig(t), &stderr)
	cwd := t.TempDir()
	for _, s := range all {
		base := map[string]any{"session_id": "cc " + s.name(), "transcript_path": filepath.Join(cwd, s.kind+".jsonl"), "cwd": cwd}
		event := func(name string, fields map[string]any) {
			t.Helper()
			p := map[string]any{"hook_event_name": name}
			for k, v := range base {
				p[k] = v
			}
			for k, v := range fields {
				p[k] = v
			}
			raw, _ := json.Marshal(p)
			var stdout bytes.Buffer
			h.Claude(context.Background(), bytes.NewReader(raw), &stdout)
		}
		event("SessionStart", map[string]any{"source": "startup", "model": s.carrier})
		event("UserPromptSubmit", map[string]any{"prompt": text})
		bash := map[string]any{"command": all[len(all)-1].carrier + " && deploy " + s.carrier}
		event("PreToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": "toolu " + s.carrier, "tool_input": bash})
		event("PostToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": "toolu " + s.carrier, "tool_input": bash,
			"tool_response": map[string]any{"stdout": text, "stderr": s.carrier}})
		// A file path cannot hold a URL: the hook cleans the path as the file
		// system would ("//" becomes "/"), and what is left of the URL is no
		// longer recognised as one. Every other kind goes into a path.
		if s.kind != "postgres_password" {
			edit := map[string]any{"file_path": cwd + "/" + s.kind + "/" + s.carrier + ".go", "old_string": s.carrier, "new_string": text}
			event("PostToolUse", map[string]any{"tool_name": "Edit", "tool_use_id": "edit " + s.carrier, "tool_input": edit, "tool_response": map[string]any{"filePath": edit["file_path"]}})
		}
		event("SubagentStart", map[string]any{"agent_id": "agent " + s.name(), "agent_type": s.carrier})
		event("SubagentStop", map[string]any{"agent_id": "agent " + s.name(), "agent_type": s.carrier, "last_assistant_message": text})
		event("Stop", map[string]any{"last_assistant_message": text})
		event("SessionEnd", map[string]any{"reason": text})
	}
	flush(t, h)
	if strings.Contains(stderr.String(), "refused") {
		t.Errorf("the hook reported: %s", stderr.String())
	}
}

// sendCodexHook runs `logbook hook codex` in process for a turn per secret.
func sendCodexHook(t *testing.T, w *world, all []secret, text string) {
	var stderr bytes.Buffer
	h := hook.New(w.hookConfig(t), &stderr)
	for _, s := range all {
		n, _ := json.Marshal(map[string]any{
			"type": "agent-turn-complete", "thread-id": "codex " + s.name(), "turn-id": "turn " + s.carrier,
			"cwd": t.TempDir(), "input-messages": []string{text, s.carrier}, "last-assistant-message": text,
		})
		if err := h.Codex(context.Background(), string(n)); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, h)
	if strings.Contains(stderr.String(), "refused") {
		t.Errorf("the hook reported: %s", stderr.String())
	}
}

// sendImports imports a Claude Code transcript and a Codex rollout per
// secret, the first through the service (import --db), the second over the
// API (import --url).
func sendImports(t *testing.T, w *world, all []secret, text string) {
	dir := t.TempDir()
	at := func(sec int) string { return time.Date(2025, 10, 1, 10, 0, sec, 0, time.UTC).Format(time.RFC3339) }
	var claude, codex []string
	for i, s := range all {
		sid := "imported " + s.name()
		lines := []map[string]any{
			{"type": "user", "sessionId": sid, "uuid": "u " + s.carrier, "cwd": "/repo/" + s.carrier, "gitBranch": s.carrier, "timestamp": at(0),
				"message": map[string]any{"role": "user", "content": text}},
			{"type": "assistant", "sessionId": sid, "uuid": "a " + s.carrier, "parentUuid": "u " + s.carrier, "timestamp": at(1),
				"message": map[string]any{"id": "msg " + s.carrier, "model": s.carrier, "role": "assistant", "content": []map[string]any{
					{"type": "thinking", "thinking": text},
					{"type": "text", "text": text},
					{"type": "tool_use", "id": "toolu " + s.carrier, "name": "Bash", "input": map[string]string{"command": all[len(all)-1].carrier + "; " + s.carrier}},
					{"type": "tool_use", "id": "edit " + s.carrier, "name": "Edit", "input": map[string]string{"file_path": "/repo/" + s.carrier + "/f.go"}},
				}}},
			{"type": "user", "sessionId": sid, "uuid": "r " + s.carrier, "parentUuid": "a " + s.carrier, "timestamp": at(2),
				"message": map[string]any{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": "toolu " + s.carrier, "content": text}}}},
		}
		claude = append(claude, writeJSONL(t, filepath.Join(dir, "claude", "p", fmt.Sprintf("s%d.jsonl", i)), lines))

		call := fmt.Sprintf(`{"command":["bash","-lc",%q]}`, all[len(all)-1].carrier+"; "+s.carrier)
		rollout := []map[string]any{
			{"timestamp": at(0), "type": "session_meta", "payload": map[string]any{"id": "rollout " + s.name(), "timestamp": at(0), "cwd": "/srv/" + s.carrier,
				"git": map[string]string{"commit_hash": s.carrier, "branch": s.carrier, "repository_url": s.carrier}}},
			{"timestamp": at(1), "type": "turn_context", "payload": map[string]any{"cwd": "/srv/app", "model": s.carrier}},
			{"timestamp": at(2), "type": "response_item", "payload": map[string]any{"type": "message", "role": "user", "content": []map[string]string{{"type": "input_text", "text": text}}}},
			{"timestamp": at(3), "type": "response_item", "payload": map[string]any{"type": "function_call", "name": "shell", "arguments": call, "call_id": "call " + s.carrier}},
			{"timestamp": at(4), "type": "response_item", "payload": map[string]any{"type": "function_call_output", "call_id": "call " + s.carrier, "output": text}},
			{"timestamp": at(5), "type": "response_item", "payload": map[string]any{"type": "message", "role": "assistant", "content": []map[string]string{{"type": "output_text", "text": text}}}},
		}
		codex = append(codex, writeJSONL(t, filepath.Join(dir, "codex", fmt.Sprintf("rollout-%d.jsonl", i)), rollout))
	}
	run := func(sink ledger.Ledger, format importer.Format, paths []string) {
		t.Helper()
		var warned []error
		im, err := importer.New(sink, importer.Options{Format: format, Project: project, Warn: func(err error) { warned = append(warned, err) }})
		if err != nil {
			t.Fatal(err)
		}
		counts, err := im.Run(context.Background(), paths)
		if err != nil || len(warned) > 0 {
			t.Fatalf("importing %s: %v %v", format, err, warned)
		}
		if counts.Sessions != len(all) {
			t.Errorf("importing %s made %d sessions, want %d: %+v", format, counts.Sessions, len(all), counts)
		}
	}
	run(w.svc.For(service.Caller{Actor: importer.ImportActor, Admin: true}), importer.Claude, claude)
	run(client.New(w.url, w.token).Ledger(), importer.Codex, codex)
}

func writeJSONL(t *testing.T, path string, lines []map[string]any) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, l := range lines {
		raw, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sendOTLP exports, per secret, a trace of an agent, its model call and a
// tool it ran, as OTLP/JSON to /v1/traces.
func sendOTLP(t *testing.T, w *world, all []secret, text string) {
	attrs := func(m map[string]string) []any {
		var out []any
		for k, v := range m {
			out = append(out, map[string]any{"key": k, "value": map[string]any{"stringValue": v}})
		}
		return out
	}
	start := time.Now().Add(-time.Minute).UnixNano()
	span := func(id, parent, name string, offset int64, a map[string]string) map[string]any {
		s := map[string]any{"traceId": "", "spanId": id, "name": name, "kind": 1,
			"startTimeUnixNano": fmt.Sprint(start + offset*1e9), "endTimeUnixNano": fmt.Sprint(start + (offset+1)*1e9), "attributes": attrs(a)}
		if parent != "" {
			s["parentSpanId"] = parent
		}
		return s
	}
	messages := func(role, content string) string {
		raw, _ := json.Marshal([]map[string]any{{"role": role, "parts": []map[string]string{{"type": "text", "content": content}}}})
		return string(raw)
	}
	for i, s := range all {
		spans := []map[string]any{
			span("b000000000000001", "", "invoke_agent", 0, map[string]string{
				"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": s.name(), "gen_ai.conversation.id": "conversation " + s.name(),
				"gen_ai.provider.name": s.carrier}),
			span("b000000000000002", "b000000000000001", "chat", 1, map[string]string{
				"gen_ai.operation.name": "chat", "gen_ai.request.model": s.carrier,
				"gen_ai.input.messages": messages("user", text), "gen_ai.output.messages": messages("assistant", text)}),
			span("b000000000000003", "b000000000000001", "execute_tool", 2, map[string]string{
				"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": s.carrier, "gen_ai.tool.call.id": "call " + s.carrier,
				"gen_ai.tool.call.arguments": fmt.Sprintf(`{"command":%q}`, s.carrier), "gen_ai.tool.call.result": text}),
		}
		for _, sp := range spans {
			sp["traceId"] = fmt.Sprintf("%032x", i+1)
		}
		body := map[string]any{"resourceSpans": []any{map[string]any{
			"resource":   map[string]any{"attributes": attrs(map[string]string{"service.name": "otel " + s.name(), "logbook.project": project})},
			"scopeSpans": []any{map[string]any{"scope": map[string]any{"name": "leaktest"}, "spans": spans}},
		}}}
		var answer struct {
			PartialSuccess *struct {
				RejectedSpans json.Number `json:"rejectedSpans"`
				ErrorMessage  string      `json:"errorMessage"`
			} `json:"partialSuccess"`
		}
		w.call(t, w.token, "POST", "/v1/traces", body, &answer, http.StatusOK)
		if p := answer.PartialSuccess; p != nil && (p.ErrorMessage != "" || (p.RejectedSpans != "" && p.RejectedSpans != "0")) {
			t.Errorf("%s: OTLP export partly refused: %+v", s.kind, *p)
		}
	}
}

// sendOTLPLogs exports, per secret, Claude Code's and Codex's events of a
// session (a prompt, a model call, a tool call that failed) as OTLP/JSON
// to /v1/logs, the secret in the session id, the model, the tool's input
// and the texts.
func sendOTLPLogs(t *testing.T, w *world, all []secret, text string) {
	attrs := func(m map[string]string) []any {
		var out []any
		for k, v := range m {
			out = append(out, map[string]any{"key": k, "value": map[string]any{"stringValue": v}})
		}
		return out
	}
	for _, s := range all {
		record := func(body string, a map[string]string) map[string]any {
			return map[string]any{"timeUnixNano": fmt.Sprint(time.Now().UnixNano()), "body": map[string]any{"stringValue": body}, "attributes": attrs(a)}
		}
		args := fmt.Sprintf(`{"command":%q}`, s.carrier)
		records := []any{
			record("claude_code.user_prompt", map[string]string{"event.name": "user_prompt", "event.sequence": "1", "session.id": "logs " + s.name(), "prompt.id": s.name(), "prompt": text}),
			record("claude_code.api_request", map[string]string{"event.name": "api_request", "event.sequence": "2", "session.id": "logs " + s.name(), "model": s.carrier, "input_tokens": "5"}),
			record("claude_code.tool_result", map[string]string{"event.name": "tool_result", "event.sequence": "3", "session.id": "logs " + s.name(),
				"tool_name": s.carrier, "tool_use_id": "toolu " + s.carrier, "success": "false", "error": text, "tool_parameters": args}),
			record("codex.tool_result", map[string]string{"event.name": "codex.tool_result", "conversation.id": "logs " + s.name(),
				"tool_name": s.carrier, "call_id": "call " + s.carrier, "arguments": args, "success": "true", "output": text}),
			record("claude_code.api_error", map[string]string{"event.name": "api_error", "event.sequence": "4", "session.id": "logs " + s.name(), "error": text, "status_code": "500"}),
		}
		body := map[string]any{"resourceLogs": []any{map[string]any{
			"resource":  map[string]any{"attributes": attrs(map[string]string{"service.name": "claude-code", "logbook.project": project})},
			"scopeLogs": []any{map[string]any{"scope": map[string]any{"name": "leaktest"}, "logRecords": records}},
		}}}
		var answer struct {
			PartialSuccess *struct {
				RejectedLogRecords json.Number `json:"rejectedLogRecords"`
				ErrorMessage       string      `json:"errorMessage"`
			} `json:"partialSuccess"`
		}
		w.call(t, w.token, "POST", "/v1/logs", body, &answer, http.StatusOK)
		if p := answer.PartialSuccess; p != nil && (p.ErrorMessage != "" || (p.RejectedLogRecords != "" && p.RejectedLogRecords != "0")) {
			t.Errorf("%s: OTLP logs export partly refused: %+v", s.kind, *p)
		}
	}
}

// scanColumns reads every column of every table the database's catalogue
// lists and returns the tables it read and, for each secret found, where
// ("table.column: kind").
func scanColumns(t *testing.T, db *sql.DB, engine string, all []secret) (tables, found []string) {
	t.Helper()
	listing := `SELECT m.name, c.name FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table' ORDER BY 1, 2`
	cast := `SELECT CAST(%q AS BLOB) FROM %q`
	if engine == "postgres" {
		listing = `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY 1, 2`
		cast = `SELECT %q::text FROM %q`
	}
	rows, err := db.Query(listing)
	if err != nil {
		t.Fatal(err)
	}
	type column struct{ table, name string }
	var columns []column
	seen := map[string]bool{}
	for rows.Next() {
		var c column
		if err := rows.Scan(&c.table, &c.name); err != nil {
			t.Fatal(err)
		}
		columns = append(columns, c)
		if !seen[c.table] {
			seen[c.table] = true
			tables = append(tables, c.table)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	for _, c := range columns {
		values, err := db.Query(fmt.Sprintf(cast, c.name, c.table))
		if err != nil {
			t.Fatalf("reading %s.%s: %v", c.table, c.name, err)
		}
		hit := map[string]bool{}
		for values.Next() {
			var v []byte
			if err := values.Scan(&v); err != nil {
				t.Fatalf("reading %s.%s: %v", c.table, c.name, err)
			}
			for _, s := range all {
				if !hit[s.kind] && bytes.Contains(v, []byte(s.core)) {
					hit[s.kind] = true
					found = append(found, c.table+"."+c.name+": "+s.kind)
				}
			}
		}
		if err := values.Err(); err != nil {
			t.Fatal(err)
		}
		values.Close()
	}
	return tables, found
}

// scanFiles looks for the secrets in the bytes of a SQLite database file
// and of its write-ahead log (which holds the latest writes until a
// checkpoint copies them into the file).
func scanFiles(t *testing.T, file string, all []secret) (found []string) {
	t.Helper()
	for _, name := range []string{file, file + "-wal"} {
		data, err := os.ReadFile(name)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if name == file+"-wal" && len(data) == 0 {
			t.Errorf("the write-ahead log is empty: nothing to look at")
		}
		for _, s := range all {
			if bytes.Contains(data, []byte(s.core)) {
				found = append(found, filepath.Base(name)+": "+s.kind)
			}
		}
	}
	return found
}
