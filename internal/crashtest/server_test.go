package crashtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	// The tests run the logbook binary, built from source in TestMain. These
	// imports make the test binary (and so go test's cache) depend on that
	// source: a change to the server reruns the crash tests.
	_ "github.com/logbookhq/logbook/internal/cli"
	_ "github.com/logbookhq/logbook/internal/store/pgstore"
	_ "github.com/logbookhq/logbook/internal/store/sqlitestore"
)

// binary is the logbook binary the tests run, built once in TestMain.
var binary string

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashtest:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	if bin := os.Getenv("LOGBOOK_CRASHTEST_BIN"); bin != "" {
		binary = bin
		return m.Run(), nil
	}
	dir, err := os.MkdirTemp("", "logbook-crashtest-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return 0, fmt.Errorf("finding the module: %w", err)
	}
	binary = filepath.Join(dir, "logbook")
	build := exec.Command("go", "build", "-o", binary, "./cmd/logbook")
	build.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if out, err := build.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("building logbook: %v\n%s", err, out)
	}
	return m.Run(), nil
}

// server is a `logbook serve` process that can be killed and restarted on
// the same address and database.
type server struct {
	t      *testing.T
	db     string
	addr   string
	admin  string
	env    []string
	cmd    *exec.Cmd
	exited chan struct{}
	logs   *lockedBuffer
}

// lockedBuffer collects the server's output across restarts.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startServer runs logbook serve on db at a free port and waits until it
// answers. The process is killed when the test ends; its output is shown
// when the test failed.
func startServer(t *testing.T, db string) *server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &server{t: t, db: db, addr: addr, admin: "crash-admin-" + filepath.Base(t.TempDir()), logs: &lockedBuffer{}}
	s.env = append(os.Environ(), "LOGBOOK_ADMIN_TOKEN="+s.admin, "XDG_DATA_HOME="+t.TempDir())
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			t.Logf("server output:\n%s", tail(s.logs.String(), 60))
		}
	})
	s.start()
	return s
}

// start starts the process and waits until /healthz answers.
func (s *server) start() {
	s.t.Helper()
	s.cmd = exec.Command(binary, "serve", "--addr", s.addr, "--db", s.db)
	s.cmd.Env = s.env
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("starting the server: %v", err)
	}
	s.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		close(exited)
	}(s.cmd, s.exited)
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(s.url() + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		select {
		case <-s.exited:
			s.t.Fatalf("the server exited on start:\n%s", tail(s.logs.String(), 30))
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the server did not answer within 30 s:\n%s", tail(s.logs.String(), 30))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill sends SIGKILL, with no chance to clean up, and waits for the exit.
func (s *server) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

func (s *server) url() string { return "http://" + s.addr }

// reply is an HTTP answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// httpClient gives up on a request after 15 s: a request that takes longer
// counts as a hang.
var httpClient = &http.Client{Timeout: 15 * time.Second}

// do sends a JSON request. err is a transport error (refused, reset,
// timed out); any HTTP answer is a reply.
func (s *server) do(ctx context.Context, method, path, token string, body any) (reply, error) {
	var reader io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return reply{}, err
		}
		reader = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.url()+path, reader)
	if err != nil {
		return reply{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := httpClient.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return reply{}, err
	}
	return reply{status: res.StatusCode, header: res.Header, body: raw}, nil
}

// must sends a request that must get want.
func (s *server) must(method, path, token string, body any, want int) reply {
	s.t.Helper()
	r, err := s.do(context.Background(), method, path, token, body)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	if r.status != want {
		s.t.Fatalf("%s %s: %d, want %d: %s", method, path, r.status, want, r.body)
	}
	return r
}

// token makes a token for an actor in a project.
func (s *server) token(project, actor string) string {
	s.t.Helper()
	var out struct{ Token string }
	r := s.must("POST", "/v1/tokens", s.admin, map[string]string{"project": project, "actor": actor}, 201)
	if err := json.Unmarshal(r.body, &out); err != nil || out.Token == "" {
		s.t.Fatalf("no token in %s", r.body)
	}
	return out.Token
}

// isTimeout reports whether a transport error is the client giving up.
func isTimeout(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
