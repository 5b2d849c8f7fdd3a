package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/cli"
)

const serveAdmin = "serve-test-admin-token"

// serveFor runs `logbook serve` with args (and a fresh SQLite database,
// admin token serveAdmin) until the test ends, and returns its URL.
func serveFor(t *testing.T, args ...string) string {
	t.Helper()
	out, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	db := filepath.Join(t.TempDir(), "logbook.db")
	go func() {
		done <- cli.Run(ctx, env(outW, io.Discard, map[string]string{"LOGBOOK_ADMIN_TOKEN": serveAdmin}),
			append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db}, args...))
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatal("serve printed nothing")
	}
	url := strings.TrimSuffix(strings.Fields(strings.SplitAfter(lines.Text(), "listening on ")[1])[0], ",")
	go io.Copy(io.Discard, out)
	return url
}

// request makes a request with a bearer token (or, for the web UI's paths,
// the sign-in cookie) and returns the response with its body read.
func request(t *testing.T, method, url, token, contentType, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if strings.Contains(url, "/v1/") || strings.HasSuffix(url, "/mcp") {
		req.Header.Set("Authorization", "Bearer "+token)
	} else {
		req.AddCookie(&http.Cookie{Name: "logbook_token", Value: token})
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res, string(raw)
}

// makeToken makes a token for actor in project demo through the API.
func makeToken(t *testing.T, url, actor string) string {
	t.Helper()
	res, body := request(t, "POST", url+"/v1/tokens", serveAdmin, "application/json", `{"project":"demo","actor":"`+actor+`"}`)
	var made struct{ Token string }
	if res.StatusCode != 201 || json.Unmarshal([]byte(body), &made) != nil {
		t.Fatalf("making a token: %d %s", res.StatusCode, body)
	}
	return made.Token
}

// TestServeLimitsEverySurface: one token's requests count against one
// allowance on every surface that takes a token (the API, /mcp, OTLP at
// /v1/traces and the web UI), and its event streams against one cap on
// /v1/events and /ui/events together; past either, each surface answers
// 429 with Retry-After.
func TestServeLimitsEverySurface(t *testing.T) {
	t.Parallel()
	url := serveFor(t, "--rate-limit", "0.001", "--rate-burst", "6", "--max-streams", "2")
	alice, bob := makeToken(t, url, "alice"), makeToken(t, url, "bob")

	surfaces := []struct{ name, method, path, contentType, body string }{
		{"API", "GET", "/v1/sessions", "", ""},
		{"MCP", "POST", "/mcp", "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{"OTLP", "POST", "/v1/traces", "application/json", `{}`},
		{"web UI", "GET", "/sessions", "", ""},
	}
	// Six requests (the burst) spread over the surfaces pass…
	for i := range 6 {
		s := surfaces[i%len(surfaces)]
		if res, body := request(t, s.method, url+s.path, alice, s.contentType, s.body); res.StatusCode != 200 {
			t.Fatalf("request %d (%s): %d %.300s", i+1, s.name, res.StatusCode, body)
		}
	}
	// …and then every surface refuses the token.
	for _, s := range surfaces {
		res, body := request(t, s.method, url+s.path, alice, s.contentType, s.body)
		if res.StatusCode != 429 || res.Header.Get("Retry-After") == "" {
			t.Errorf("%s past the allowance: %d, Retry-After %q; %.300s", s.name, res.StatusCode, res.Header.Get("Retry-After"), body)
		}
	}
	// Another token has its own allowance.
	if res, body := request(t, "GET", url+"/v1/sessions", bob, "", ""); res.StatusCode != 200 {
		t.Fatalf("bob: %d %s", res.StatusCode, body)
	}

	// Event streams: one on the API and one in the web UI fill bob's two
	// places; a third on either is refused.
	open := func(path string) (status int, retryAfter string, closeIt func()) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", url+path, nil)
		req.Header.Set("Authorization", "Bearer "+bob)
		req.AddCookie(&http.Cookie{Name: "logbook_token", Value: bob})
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if res.StatusCode == 200 {
			// The first line says the server counts the stream.
			if _, err := bufio.NewReader(res.Body).ReadString('\n'); err != nil {
				t.Fatalf("reading %s: %v", path, err)
			}
		}
		return res.StatusCode, res.Header.Get("Retry-After"), func() { cancel(); res.Body.Close() }
	}
	for _, path := range []string{"/v1/events?project=demo", "/ui/events"} {
		status, _, closeIt := open(path)
		defer closeIt()
		if status != 200 {
			t.Fatalf("%s: %d", path, status)
		}
	}
	for _, path := range []string{"/v1/events?project=demo", "/ui/events"} {
		status, retry, closeIt := open(path)
		closeIt()
		if status != 429 || retry == "" {
			t.Errorf("a third stream at %s: %d, Retry-After %q; want 429 with Retry-After", path, status, retry)
		}
	}
}
