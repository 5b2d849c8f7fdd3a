package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
// /v1/traces, /v1/logs and /v1/metrics, the web UI), and its event streams against one cap on
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
		{"OTLP logs", "POST", "/v1/logs", "application/json", `{}`},
		{"OTLP metrics", "POST", "/v1/metrics", "application/json", `{}`},
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

// closedWithin reports whether the server closes conn within limit: a read
// that ends (EOF, reset) rather than running into the test's own deadline.
// What the server wrote before closing is returned.
func closedWithin(conn net.Conn, limit time.Duration) (closed bool, got string) {
	_ = conn.SetReadDeadline(time.Now().Add(limit))
	var read []byte
	buf := make([]byte, 4096)
	for {
		n, err := conn.Read(buf)
		read = append(read, buf[:n]...)
		if err != nil {
			var netErr net.Error
			return !(errors.As(err, &netErr) && netErr.Timeout()), string(read)
		}
	}
}

// TestServeTimeouts runs serve with short timeouts and real connections: a
// connection that sends no request, a kept-alive one left idle and a body
// sent too slowly are closed (the body answered 408); an event stream stays
// open past every one of them and still delivers.
func TestServeTimeouts(t *testing.T) {
	t.Parallel()
	url := serveFor(t, "--header-timeout", "1s", "--body-timeout", "1s", "--idle-timeout", "1s")
	addr := strings.TrimPrefix(url, "http://")
	alice := makeToken(t, url, "alice")
	// The bound is generous: the server's timeouts are 1 s.
	const generous = 20 * time.Second
	dial := func() net.Conn {
		t.Helper()
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}

	t.Run("NoRequest", func(t *testing.T) {
		t.Parallel()
		if closed, _ := closedWithin(dial(), generous); !closed {
			t.Errorf("a connection that sent nothing was still open after %v", generous)
		}
	})
	t.Run("Idle", func(t *testing.T) {
		t.Parallel()
		conn := dial()
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		closed, got := closedWithin(conn, generous)
		if !strings.HasPrefix(got, "HTTP/1.1 200") {
			t.Fatalf("healthz answered %q", got)
		}
		if !closed {
			t.Errorf("an idle kept-alive connection was still open after %v", generous)
		}
	})
	t.Run("SlowBody", func(t *testing.T) {
		t.Parallel()
		conn := dial()
		fmt.Fprintf(conn, "POST /v1/sessions HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", addr, alice)
		closed, got := closedWithin(conn, generous)
		if !strings.HasPrefix(got, "HTTP/1.1 408") || !strings.Contains(got, "did not arrive in time") {
			t.Errorf("a stalled body got %q, want 408 saying the timeout", got)
		}
		if !closed {
			t.Errorf("the connection of a stalled body was still open after %v", generous)
		}
	})
	t.Run("LargeBodyInTime", func(t *testing.T) {
		t.Parallel()
		// Over the size where bodies wait for room in the budget.
		batch := `{"entries":[{"kind":"note","text":"` + strings.Repeat("x", 60000) + `"}` +
			strings.Repeat(`,{"kind":"note","text":"`+strings.Repeat("y", 60000)+`"}`, 20) + `]}`
		res, body := request(t, "POST", url+"/v1/sessions", alice, "application/json", `{"project":"demo"}`)
		var sess struct{ ID string }
		if res.StatusCode != 201 || json.Unmarshal([]byte(body), &sess) != nil {
			t.Fatalf("start: %d %s", res.StatusCode, body)
		}
		if res, body := request(t, "POST", url+"/v1/sessions/"+sess.ID+"/entries", alice, "application/json", batch); res.StatusCode != 200 {
			t.Errorf("a %d-byte batch: %d %.300s", len(batch), res.StatusCode, body)
		}
	})
	t.Run("EventStreamOutlivesThem", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", url+"/v1/events?project=demo&after=latest", nil)
		req.Header.Set("Authorization", "Bearer "+alice)
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("opening the stream: %v %v", res, err)
		}
		defer res.Body.Close()
		lines := bufio.NewReader(res.Body)
		if _, err := lines.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2500 * time.Millisecond) // past the header, body and idle timeouts
		if res, body := request(t, "POST", url+"/v1/sessions", alice, "application/json", `{"project":"demo","title":"after the timeouts"}`); res.StatusCode != 201 {
			t.Fatalf("start: %d %s", res.StatusCode, body)
		}
		for {
			line, err := lines.ReadString('\n')
			if err != nil {
				t.Fatalf("the stream ended after the timeouts: %v", err)
			}
			if strings.Contains(line, "after the timeouts") {
				return
			}
		}
	})
}
