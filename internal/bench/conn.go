package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/logbookhq/logbook/internal/client"
)

// conn is one agent's HTTP/1.1 connection to the server, on which the
// agent's own goroutine writes a request and reads its answer. net/http's
// Transport hands each request to two goroutines of its own and back;
// with 200 agents that cost the generator about 47 µs of CPU a request
// against 25 µs here, CPU the server under test, on the same two cores,
// then lacked. (A real hook is a process of its own on the agent's side.)
type conn struct {
	host, token string
	nc          net.Conn
	r           *bufio.Reader
	w           bytes.Buffer
	// closing is set when the server said it closes the connection after
	// its last answer.
	closing bool
}

// dial connects to the server at base, an http:// or https:// URL. An
// https server's certificate is checked with tlsConfig, or against the
// system's roots when it is nil.
func dial(base, token string, tlsConfig *tls.Config) (*conn, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q is not a server URL; give one like http://127.0.0.1:7474", base)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	var nc net.Conn
	if u.Scheme == "https" {
		cfg := &tls.Config{ServerName: u.Hostname()}
		if tlsConfig != nil {
			cfg = tlsConfig.Clone()
		}
		nc, err = tls.Dial("tcp", addr, cfg)
	} else {
		nc, err = net.Dial("tcp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot reach the logbook server at %s: %w", base, err)
	}
	return &conn{host: u.Host, token: token, nc: nc, r: bufio.NewReader(nc)}, nil
}

// Do sends one request and decodes its JSON answer into out (unless nil),
// as client.Client.Do does: a 4xx or 5xx answer is a *client.Problem. It
// gives up when ctx's deadline passes.
func (c *conn) Do(ctx context.Context, method, path string, body, out any) (int, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return 0, fmt.Errorf("encoding the request: %w", err)
		}
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(30 * time.Second)
	}
	if err := c.nc.SetDeadline(deadline); err != nil {
		return 0, err
	}
	c.w.Reset()
	fmt.Fprintf(&c.w, "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n", method, path, c.host, c.token)
	if payload != nil {
		c.w.WriteString("Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(payload)) + "\r\n")
	}
	c.w.WriteString("\r\n")
	c.w.Write(payload)
	if _, err := c.nc.Write(c.w.Bytes()); err != nil {
		return 0, fmt.Errorf("sending %s %s: %w", method, path, err)
	}
	res, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return 0, fmt.Errorf("reading the answer to %s %s: %w", method, path, err)
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	c.closing = res.Close
	if err != nil {
		return res.StatusCode, fmt.Errorf("reading the answer to %s %s: %w", method, path, err)
	}
	if res.StatusCode >= 400 {
		return res.StatusCode, client.ProblemFrom(res.StatusCode, raw)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return res.StatusCode, fmt.Errorf("decoding the answer to %s %s: %w", method, path, err)
		}
	}
	return res.StatusCode, nil
}

func (c *conn) Close() error { return c.nc.Close() }
