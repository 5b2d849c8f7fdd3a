package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// hookClients is how many clients report through `logbook hook claude`,
// as Claude Code does, beside the HTTP clients; each sends hookPrompts
// prompts, one hook process each.
const (
	hookClients = 5
	hookPrompts = 20
	hookProject = "crash-hooks" // apart from the HTTP clients' sessions
)

// hookLoad drives `logbook hook claude` processes while the server is
// killed and restarted: a hook that finds the server down spools its
// record and exits 0 (acknowledged, as far as Claude Code knows).
type hookLoad struct {
	srv    *server
	token  string
	spools []string
	errs   chan error
}

func newHookLoad(t *testing.T, srv *server) *hookLoad {
	h := &hookLoad{srv: srv, token: srv.token(hookProject, "hooks"), errs: make(chan error, hookClients*hookPrompts)}
	for range hookClients {
		h.spools = append(h.spools, t.TempDir())
	}
	return h
}

// run sends every client's prompts, one hook process each, in order.
func (h *hookLoad) run(ctx context.Context) {
	var wg sync.WaitGroup
	for c := range hookClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range hookPrompts {
				if ctx.Err() != nil {
					return
				}
				payload := fmt.Sprintf(`{"session_id":"hook-%d","hook_event_name":"UserPromptSubmit","cwd":"/tmp","prompt":"prompt %d of client %d"}`, c, p, c)
				if err := h.hook(ctx, c, payload, "claude"); err != nil {
					h.errs <- err
				}
			}
		}()
	}
	wg.Wait()
}

// hook runs one `logbook hook` process for client c; it must exit 0.
func (h *hookLoad) hook(ctx context.Context, c int, stdin string, args ...string) error {
	cmd := exec.CommandContext(ctx, binary, append([]string{"hook"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "LOGBOOK_URL="+h.srv.url(), "LOGBOOK_TOKEN="+h.token,
		"LOGBOOK_PROJECT="+hookProject, "LOGBOOK_SPOOL_DIR="+h.spools[c])
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("logbook hook %s (client %d): %v: %s", strings.Join(args, " "), c, err, out)
	}
	return nil
}

// verify flushes every spool, then checks that each client's prompts are
// in its session exactly once and in the order they were sent.
func (h *hookLoad) verify(t *testing.T) {
	spooled := 0 // records waiting in the spools: hooks that found the server down
	for _, dir := range h.spools {
		if data, err := os.ReadFile(filepath.Join(dir, "spool.jsonl")); err == nil {
			spooled += strings.Count(string(data), "\n")
		}
	}
	for c := range hookClients {
		if err := h.hook(context.Background(), c, "", "flush"); err != nil {
			t.Error(err)
		}
	}
	close(h.errs)
	for err := range h.errs {
		t.Error(err)
	}
	var page struct {
		Sessions []struct {
			ID               string `json:"id"`
			HarnessSessionID string `json:"harness_session_id"`
		} `json:"sessions"`
	}
	r := h.srv.must("GET", "/v1/sessions?"+url.Values{"project": {hookProject}, "harness": {"claude-code"}, "limit": {"200"}}.Encode(), h.token, nil, 200)
	if err := json.Unmarshal(r.body, &page); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, s := range page.Sessions {
		var c int
		if _, err := fmt.Sscanf(s.HarnessSessionID, "hook-%d", &c); err != nil {
			continue
		}
		found++
		var view struct {
			Entries []struct {
				Kind string `json:"kind"`
				Text string `json:"text"`
			} `json:"entries"`
		}
		r := h.srv.must("GET", "/v1/sessions/"+s.ID, h.token, nil, 200)
		if err := json.Unmarshal(r.body, &view); err != nil {
			t.Fatal(err)
		}
		var prompts []string
		for _, e := range view.Entries {
			if e.Kind == "prompt" {
				prompts = append(prompts, e.Text)
			}
		}
		if len(prompts) != hookPrompts {
			t.Errorf("hook client %d: %d prompts stored, want %d exactly once: %q", c, len(prompts), hookPrompts, prompts)
			continue
		}
		for p, text := range prompts {
			if want := fmt.Sprintf("prompt %d of client %d", p, c); text != want {
				t.Errorf("hook client %d: prompt %d is %q, want %q (in order)", c, p, text, want)
			}
		}
	}
	if found != hookClients {
		t.Errorf("%d hook sessions stored, want %d", found, hookClients)
	}
	if !t.Failed() {
		t.Logf("verified: %d prompts through %d hook clients, each once, in order (%d records were still spooled before the final flush)",
			hookClients*hookPrompts, hookClients, spooled)
	}
}
