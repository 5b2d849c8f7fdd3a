package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
	"github.com/logbookhq/logbook/internal/testshared"
)

const (
	testAdminToken = "x"
	testProject    = "demo"
)

// testServer is a real logbook server (the HTTP API on a SQLite store)
// that a test can stop and start again on the same store.
type testServer struct {
	t     testing.TB
	mux   *http.ServeMux
	srv   *httptest.Server
	token string // alice's token in project demo

	mu       sync.Mutex
	extra    *http.ServeMux // routes the server does not have yet (the policy), when a test serves them
	failWith int            // when set, every /v1 request gets this status
	requests map[string]int // requests by "METHOD /path"
}

func newTestServer(t testing.TB) *testServer {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(testdb.SQLite(t), service.Options{Logger: logger})
	if _, err := svc.EnsureAdminToken(context.Background(), testAdminToken); err != nil {
		t.Fatal(err)
	}
	s := &testServer{t: t, mux: http.NewServeMux(), requests: map[string]int{}}
	httpapi.New(s.mux, svc, logger, httpapi.Options{})
	s.start()
	var tok struct {
		Token string `json:"token"`
	}
	s.call("POST", "/v1/tokens", testAdminToken, map[string]string{"project": testProject, "actor": "alice"}, &tok)
	s.token = tok.Token
	return s
}

// start serves the store at a new URL.
func (s *testServer) start() {
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.t.Cleanup(s.srv.Close)
}

// stop closes the server: connections are refused until start.
func (s *testServer) stop() { s.srv.Close() }

func (s *testServer) url() string { return s.srv.URL }

func (s *testServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests[r.Method+" "+r.URL.Path]++
	fail, extra := s.failWith, s.extra
	s.mu.Unlock()
	if fail != 0 && strings.HasPrefix(r.URL.Path, "/v1/") {
		http.Error(w, http.StatusText(fail), fail)
		return
	}
	if extra != nil {
		if _, pattern := extra.Handler(r); pattern != "" {
			extra.ServeHTTP(w, r)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// config is a hook configuration for this server, with its own spool.
func (s *testServer) config(t testing.TB) Config {
	return Config{URL: s.url(), Token: s.token, Project: testProject, SpoolDir: t.TempDir()}
}

// call sends a request to the server and decodes its JSON answer.
func (s *testServer) call(method, path, token string, body, out any) int {
	s.t.Helper()
	var reader io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		reader = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, s.url()+path, reader)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		s.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			s.t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	return res.StatusCode
}

// sessionView is GET /v1/sessions/{id} as the tests read it.
type sessionView struct {
	Session   logbook.Session   `json:"session"`
	Entries   []logbook.Entry   `json:"entries"`
	Subagents []logbook.Session `json:"subagents"`
	Touched   []logbook.Touch   `json:"touched"`
}

// session returns the stored session of a harness session id with all its
// entries, failing the test when there is none.
func (s *testServer) session(harnessID string) sessionView {
	s.t.Helper()
	v, ok := s.findSession(harnessID)
	if !ok {
		s.t.Fatalf("no session with harness_session_id %q was stored", harnessID)
	}
	return v
}

func (s *testServer) findSession(harnessID string) (sessionView, bool) {
	s.t.Helper()
	var page struct {
		Sessions []logbook.Session `json:"sessions"`
	}
	s.call("GET", "/v1/sessions?project="+testProject+"&limit=200", s.token, nil, &page)
	// The list holds top-level sessions; subagents are in their parent's view.
	for _, sess := range page.Sessions {
		var v sessionView
		s.call("GET", "/v1/sessions/"+url.PathEscape(sess.ID)+"?all=true", s.token, nil, &v)
		if sess.HarnessSessionID == harnessID {
			return v, true
		}
		for _, sub := range v.Subagents {
			if sub.HarnessSessionID == harnessID {
				s.call("GET", "/v1/sessions/"+url.PathEscape(sub.ID)+"?all=true", s.token, nil, &v)
				return v, true
			}
		}
	}
	return sessionView{}, false
}

// runClaude runs one Claude Code hook call in-process and returns what it
// printed on stdout and stderr.
func runClaude(t *testing.T, cfg Config, payload []byte) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	New(cfg, &errOut).Claude(context.Background(), bytes.NewReader(payload), &out)
	return out.String(), errOut.String()
}

// payload builds a hook payload from fields.
func payload(t *testing.T, fields map[string]any) []byte {
	t.Helper()
	raw, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// fixturesDir is shared/fixtures/claude-code-hooks (see package testshared).
func fixturesDir(t *testing.T) string {
	return filepath.Join(testshared.Dir(t, "fixtures"), "claude-code-hooks")
}

// entriesOf returns the entries of kind in v.
func entriesOf(v sessionView, kind logbook.Kind) []logbook.Entry {
	var out []logbook.Entry
	for _, e := range v.Entries {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}
