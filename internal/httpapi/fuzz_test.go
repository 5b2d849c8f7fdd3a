package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// fuzzRoute is a route that decodes a JSON body. In the body, SESSION
// stands for a live session of the caller, so fuzzed bodies also reach
// the code past the lookup.
type fuzzRoute struct {
	method, path string
	asAdmin      bool
	seed         string // a valid body
}

var fuzzRoutes = []fuzzRoute{
	{"POST", "/v1/tokens", true, `{"project":"demo","actor":"bob"}`},
	{"POST", "/v1/sessions", false, `{"project":"demo","harness":"claude-code","harness_session_id":"h1","parent_id":"SESSION","title":"t","goal":"Fix #12","issue":12,"pull":"7","branch":"b","head_commit":"abc","subject":"src/"}`},
	{"PATCH", "/v1/sessions/SESSION", false, `{"goal":"g","issue":"#3","model":"m","agent_type":"a"}`},
	{"POST", "/v1/sessions/SESSION/entries", false, `{"entries":[{"kind":"message","role":"assistant","text":"hi","key":"k","usage":{"input_tokens":1,"output_tokens":2}},{"kind":"tool_call","tool":"Bash","tool_call_id":"t","payload":{"command":"ls"}}],"touched":[{"kind":"file","value":"a.go"}]}`},
	{"POST", "/v1/sessions/SESSION/end", false, `{"outcome":"partial","result":"r","blocker":"tool_error","reason":"done"}`},
	{"POST", "/v1/sessions/SESSION/compact", false, `{"entries":[{"kind":"summary","text":"so far"}]}`},
	{"PUT", "/v1/sessions/SESSION/plan", false, `{"steps":[{"text":"one","status":"running"},{"text":"two"}]}`},
	{"PATCH", "/v1/sessions/SESSION/plan/1", false, `{"status":"done"}`},
	{"POST", "/v1/sessions/SESSION/goal", false, `{"goal":"rebuild the index"}`},
	{"POST", "/v1/claims", false, `{"session_id":"SESSION","subject":"src/api/","ttl_minutes":5}`},
	{"POST", "/v1/classify", false, `{"project":"demo","command":"sudo rm -rf / | tee x"}`},
	{"PUT", "/v1/projects/demo/policy", true, `{"policy":{"destructive":"deny","network":"ask"}}`},
	{"POST", "/v1/agents/ceo/rotate", false, `{"project":"demo","reason":"context full"}`},
	{"PUT", "/v1/agents/ceo/rotation_policy?project=demo", false, `{"max_age":"7d","max_input_tokens":100000}`},
	{"POST", "/v1/agents/ceo/tasks?project=demo", false, `{"task_id":"T-1","title":"t","text":"do it"}`},
	{"POST", "/v1/notes", false, `{"project":"demo","issue":12,"pull":"#7","subject":"s","text":"review","key":"n1"}`},
}

// FuzzJSONRoutes sends fuzzed bodies to every route that decodes JSON, on
// a real service on SQLite (LOGBOOK_FUZZ_ENGINE=postgres: on PostgreSQL).
// Whatever the body, the answer is never a 5xx and never a panic, and
// every 4xx is a problem document.
func FuzzJSONRoutes(f *testing.F) {
	for i, r := range fuzzRoutes {
		f.Add(uint8(i), []byte(r.seed))
		f.Add(uint8(i), []byte(`{}`))
	}

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	open := testdb.SQLite
	if os.Getenv("LOGBOOK_FUZZ_ENGINE") == "postgres" {
		open = testdb.Postgres
	}
	svc := service.New(open(f), service.Options{Logger: quiet, RateLimit: -1})
	if _, err := svc.EnsureAdminToken(context.Background(), adminToken); err != nil {
		f.Fatal(err)
	}
	mux := http.NewServeMux()
	httpapi.New(mux, svc, quiet, httpapi.Options{})

	// serve answers one request straight from the handler, so a panic
	// fails the fuzz run instead of being recovered by net/http.
	serve := func(method, path, token, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	rec := serve("POST", "/v1/tokens", adminToken, `{"project":"demo","actor":"alice"}`)
	var created struct{ Token string }
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || created.Token == "" {
		f.Fatalf("making a token: %d %s", rec.Code, rec.Body)
	}
	alice := created.Token
	sessions := 0
	newSession := func() string {
		sessions++
		rec := serve("POST", "/v1/sessions", alice, `{"project":"demo","harness_session_id":"fuzz-`+strconv.Itoa(sessions)+`"}`)
		var s struct{ ID string }
		if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil || s.ID == "" {
			f.Fatalf("starting a session: %d %s", rec.Code, rec.Body)
		}
		return s.ID
	}
	session := newSession()

	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		r := fuzzRoutes[int(route)%len(fuzzRoutes)]
		token := alice
		if r.asAdmin {
			token = adminToken
		}
		path := strings.ReplaceAll(r.path, "SESSION", session)
		rec := serve(r.method, path, token, strings.ReplaceAll(string(body), "SESSION", session))
		if strings.HasSuffix(r.path, "/end") && rec.Code == 200 {
			session = newSession() // the next inputs need a session that takes writes
		}
		if rec.Code >= 500 {
			t.Fatalf("%s %s answered %d: %s", r.method, r.path, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var p struct {
				Title, Detail string
				Status        int
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("%s %s answered %d as %q: %s", r.method, r.path, rec.Code, ct, rec.Body)
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Status != rec.Code || p.Title == "" || p.Detail == "" {
				t.Fatalf("%s %s answered %d with a broken problem document: %s", r.method, r.path, rec.Code, rec.Body)
			}
		}
	})
}
