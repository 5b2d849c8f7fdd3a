package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/logbookhq/logbook/internal/testdb"
)

// TestOpenAPIDocument: /openapi.json is a valid OpenAPI document, served
// without a token; every operation it names is a route that asks for one;
// and request bodies are described field by field from their Go types.
func TestOpenAPIDocument(t *testing.T) {
	c := newServer(t, testdb.Engines()[0]) // the document does not depend on the engine
	res, err := http.Get(c.url + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatalf("the document does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}

	operations := 0
	param := regexp.MustCompile(`\{[a-z_]+\}`)
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			operations++
			if !strings.HasPrefix(path, "/v1/") {
				continue
			}
			req, _ := http.NewRequest(method, c.url+param.ReplaceAllString(path, "x"), nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s %s without a token: %d, want 401 (a route behind a token)", method, path, res.StatusCode)
			}
		}
	}
	if operations < 30 {
		t.Errorf("the document names %d operations, want every route (over 30)", operations)
	}

	list := doc.Paths.Value("/v1/sessions").Get
	if limit := list.Parameters.GetByInAndName("query", "limit"); limit == nil || !limit.Schema.Value.Type.Is("integer") {
		t.Errorf("GET /v1/sessions: limit is %+v, want an integer", limit)
	}
	if since := list.Parameters.GetByInAndName("query", "since"); since == nil || !strings.Contains(since.Description, "RFC 3339") {
		t.Errorf("GET /v1/sessions: since is %+v, want its formats described", since)
	}

	var generic struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct{ Schema json.RawMessage }
			}
		}
	}
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	body := func(method, path string) string {
		return string(generic.Paths[path][method].RequestBody.Content["application/json"].Schema)
	}
	entries := body("post", "/v1/sessions/{id}/entries")
	for _, field := range []string{`"entries"`, `"kind"`, `"tool_call_id"`, `"touched"`} {
		if !strings.Contains(entries, field) {
			t.Errorf("the entries body does not describe %s: %s", field, entries)
		}
	}
	var rule struct {
		Properties map[string]struct {
			Type string
			Enum []string
		}
	}
	if err := json.Unmarshal([]byte(body("post", "/v1/projects/{project}/alert_rules")), &rule); err != nil {
		t.Fatal(err)
	}
	budget, scope, kind := rule.Properties["budget_usd"], rule.Properties["scope"], rule.Properties["kind"]
	if budget.Type != "number" || scope.Type != "string" || strings.Join(scope.Enum, " ") != "session agent_day project_day" ||
		!slices.Contains(kind.Enum, "cost_over_budget") {
		t.Errorf("the alert rule body: budget_usd %+v, scope %+v, kind %+v", budget, scope, kind)
	}
	var start struct {
		Properties map[string]map[string]any
	}
	if err := json.Unmarshal([]byte(body("post", "/v1/sessions")), &start); err != nil {
		t.Fatal(err)
	}
	if _, ok := start.Properties["issue"]["anyOf"]; !ok || start.Properties["harness_session_id"]["type"] != "string" {
		t.Errorf("start body: issue %v (want a string or a number), harness_session_id %v", start.Properties["issue"], start.Properties["harness_session_id"])
	}
}
