package cli

import (
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/metrics"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// recordingMux is an http.ServeMux that lists the patterns registered on it.
type recordingMux struct {
	*http.ServeMux
	patterns []string
}

func (m *recordingMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

var (
	routeParam = regexp.MustCompile(`\{[^}$]*\}`)
	httpMethod = regexp.MustCompile(`^(GET|POST|PUT|PATCH|DELETE)$`)
)

// routeKey names a route as "METHOD /path/{}" whatever its parameters are
// called: "*" for any method (a pattern without one), "/static/{}" for a
// folder of files, "/" for "/{$}".
func routeKey(method, path string) string {
	if method == "" {
		method = "*"
	}
	path = strings.TrimSuffix(path, "{$}")
	if strings.HasSuffix(path, "/") && path != "/" {
		path += "{}"
	}
	return strings.ToUpper(method) + " " + routeParam.ReplaceAllString(path, "{}")
}

// servedRoutes lists the routes logbook serve registers (serverRoutes),
// less the catch-all that answers paths under /v1 that are no route, and
// serves them.
func servedRoutes(t *testing.T) (keys []string, url string) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	svc := service.New(testdb.SQLite(t), service.Options{Logger: quiet})
	mux := &recordingMux{ServeMux: http.NewServeMux()}
	serverRoutes(mux, svc, quiet, metrics.New(), nil)
	for _, p := range mux.patterns {
		if p == httpapi.NotFoundPattern {
			continue
		}
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			method, path = "", p
		}
		keys = append(keys, routeKey(method, path))
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	slices.Sort(keys)
	return keys, srv.URL
}

// matches reports whether the served and the listed routes are the same,
// a served route of any method ("*") standing for one of each, and says
// what differs.
func diffRoutes(t *testing.T, served, listed []string, where string) {
	t.Helper()
	byPath := map[string]bool{}
	for _, k := range listed {
		byPath[k] = true
	}
	for _, k := range served {
		if strings.HasPrefix(k, "* ") {
			path := strings.TrimPrefix(k, "* ")
			found := false
			for l := range byPath {
				if strings.HasSuffix(l, " "+path) {
					delete(byPath, l)
					found = true
				}
			}
			if !found {
				t.Errorf("%s lacks %s, which the server answers", where, path)
			}
			continue
		}
		if !byPath[k] {
			t.Errorf("%s lacks %s, which the server answers", where, k)
		}
		delete(byPath, k)
	}
	for _, k := range slices.Sorted(maps.Keys(byPath)) {
		t.Errorf("%s names %s, which the server does not answer", where, k)
	}
}

// TestOpenAPIDescribesEveryRoute: /openapi.json names every route logbook
// serve answers (the API, OTLP traces, /mcp, /metrics, the web UI), and
// nothing else.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	served, url := servedRoutes(t)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(fetchOpenAPI(t, url), &doc); err != nil {
		t.Fatal(err)
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, routeKey(method, path))
		}
	}
	diffRoutes(t, served, documented, "/openapi.json")
}

// TestREADMERouteTable: the README's table of routes lists every route
// logbook serve answers, and nothing else.
func TestREADMERouteTable(t *testing.T) {
	served, _ := servedRoutes(t)
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "\n| route | what it does |\n| --- | --- |\n")
	if !ok {
		t.Fatal("the README has no table headed | route | what it does |")
	}
	var listed []string
	span := regexp.MustCompile("`([^`]*)`")
	for _, row := range strings.Split(table, "\n") {
		if !strings.HasPrefix(row, "|") {
			break
		}
		// The first cell; a \| inside it is text, not a cell's end.
		cell, _, _ := strings.Cut(strings.ReplaceAll(row[1:], `\|`, "¦"), "|")
		var methods []string // a method alone (`GET`/`PUT /path`) goes with the next path
		for _, m := range span.FindAllStringSubmatch(cell, -1) {
			words := strings.Fields(m[1])
			switch {
			case len(words) == 1 && httpMethod.MatchString(words[0]):
				methods = append(methods, words[0])
				continue
			case len(words) >= 2 && httpMethod.MatchString(words[0]):
				methods = append(methods, words[0])
				words = words[1:]
			case len(words) >= 1 && strings.HasPrefix(words[0], "/"):
				methods = append(methods, "")
			default:
				continue
			}
			path, _, _ := strings.Cut(words[0], "?")
			for _, method := range methods {
				listed = append(listed, routeKey(method, path))
			}
			methods = nil
		}
	}
	// A route of any method is one row without a method.
	var anyMethod []string
	for _, k := range listed {
		if strings.HasPrefix(k, "* ") {
			anyMethod = append(anyMethod, k)
		}
	}
	for _, k := range served {
		if strings.HasPrefix(k, "* ") && !slices.Contains(anyMethod, k) {
			t.Errorf("the README's route table lacks %s (any method)", strings.TrimPrefix(k, "* "))
		}
	}
	var exact []string
	for _, k := range served {
		if !strings.HasPrefix(k, "* ") {
			exact = append(exact, k)
		}
	}
	var listedExact []string
	for _, k := range listed {
		if !strings.HasPrefix(k, "* ") {
			listedExact = append(listedExact, k)
		}
	}
	diffRoutes(t, exact, listedExact, "the README's route table")
}

// TestOpenAPILint runs an OpenAPI linter, Redocly CLI with its recommended
// rules (.ci/redocly.yaml), on /openapi.json: no error, and no warning but
// that /healthz, /openapi.json, /metrics and the sign-in page answer no
// 4XX (they have none to give).
// .ci/run installs the linter; elsewhere, without one, it is skipped.
func TestOpenAPILint(t *testing.T) {
	linter := os.Getenv("LOGBOOK_OPENAPI_LINTER")
	if linter == "" {
		linter, _ = exec.LookPath("redocly")
	}
	if linter == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI runs the OpenAPI linter: install it as .ci/run does (npm's @redocly/cli), or name it in LOGBOOK_OPENAPI_LINTER")
		}
		t.Skip("SKIPPING the OpenAPI lint: no redocly on PATH (npm install @redocly/cli), nor LOGBOOK_OPENAPI_LINTER")
	}
	_, url := servedRoutes(t)
	path := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(path, fetchOpenAPI(t, url), 0o600); err != nil {
		t.Fatal(err)
	}
	config, err := filepath.Abs("../../.ci/redocly.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(linter, "lint", "--config", config, "--format=json", path)
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	out, err := cmd.Output()
	var report struct {
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
			} `json:"location"`
		} `json:"problems"`
	}
	if jerr := json.Unmarshal(out, &report); jerr != nil {
		t.Fatalf("the linter's report: %v (exit: %v)\n%s", jerr, err, out)
	}
	noClientErrors := map[string]bool{
		"#/paths/~1healthz/get/responses": true, "#/paths/~1openapi.json/get/responses": true, "#/paths/~1metrics/get/responses": true,
		"#/paths/~1sign-in/get/responses": true,
	}
	for _, p := range report.Problems {
		where := ""
		if len(p.Location) > 0 {
			where = p.Location[0].Pointer
		}
		if p.RuleID == "operation-4xx-response" && noClientErrors[where] {
			continue
		}
		t.Errorf("%s %s at %s: %s", p.Severity, p.RuleID, where, p.Message)
	}
	if err != nil && !t.Failed() {
		t.Errorf("the linter failed: %v", err)
	}
}

func fetchOpenAPI(t *testing.T, url string) []byte {
	t.Helper()
	res, err := http.Get(url + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET /openapi.json: %d %v", res.StatusCode, err)
	}
	return raw
}
