package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkHookProcess measures the hook as Claude Code runs it: a fresh
// `logbook hook claude` process per event, payload on stdin, timed from
// process start to exit (its answer is complete when it exits). It runs
// against a real server in this process (the HTTP API on SQLite), and
// against an address where nothing listens. Run it with:
//
//	go test ./internal/hook -run '^$' -bench HookProcess -benchtime 300x
//
// Each case reports p50, p99 and max in milliseconds.
func BenchmarkHookProcess(b *testing.B) {
	bin := hookBinary(b)
	srv := newTestServer(b)
	cwd, _ := os.Getwd() // inside the repository: git lookups are part of the cost
	cases := []struct {
		name, event string
		up          bool
	}{
		{"PreToolUse/server-up", EventPreToolUse, true},
		{"PreToolUse/server-down", EventPreToolUse, false},
		{"PostToolUse/server-up", EventPostToolUse, true},
		{"PostToolUse/server-down", EventPostToolUse, false},
		{"UserPromptSubmit/server-up", EventUserPromptSubmit, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			url := srv.url()
			if !c.up {
				url = "http://127.0.0.1:1" // nothing listens there
			}
			env := append(os.Environ(), "LOGBOOK_URL="+url, "LOGBOOK_TOKEN="+srv.token,
				"LOGBOOK_PROJECT="+testProject, "LOGBOOK_SPOOL_DIR="+b.TempDir())
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				fields := map[string]any{"session_id": "bench-" + c.name, "hook_event_name": c.event, "cwd": cwd,
					"tool_name": "Bash", "tool_use_id": fmt.Sprintf("toolu_%d", i),
					"tool_input": map[string]any{"command": "git status && useradd deploy"}}
				switch c.event {
				case EventPostToolUse:
					fields["tool_response"] = map[string]any{"stdout": strings.Repeat("ok  \tpkg\t0.01s\n", 20), "stderr": ""}
				case EventUserPromptSubmit:
					fields["prompt"] = fmt.Sprintf("prompt %d: fix the flaky login test", i)
				}
				raw, _ := json.Marshal(fields)
				cmd := exec.Command(bin, "hook", "claude")
				cmd.Env = env
				cmd.Stdin = bytes.NewReader(raw)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				start := time.Now()
				err := cmd.Run()
				times = append(times, time.Since(start))
				if err != nil {
					b.Fatalf("the hook failed: %v, stderr %s", err, stderr.Bytes())
				}
				if c.event == EventPreToolUse && !strings.Contains(stdout.String(), `"permissionDecision":"ask"`) {
					b.Fatalf("PreToolUse answer %q", stdout.String())
				}
				if c.up && stderr.Len() > 0 {
					b.Fatalf("stderr with the server up: %s", stderr.Bytes())
				}
			}
			b.StopTimer()
			slices.Sort(times)
			pct := func(p float64) float64 {
				return float64(times[min(len(times)-1, int(p*float64(len(times))))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(float64(times[len(times)-1].Microseconds())/1000, "max-ms")
			b.ReportMetric(0, "ns/op") // process wall time is in the percentiles
		})
	}
}

var (
	buildOnce sync.Once
	buildDir  string // removed by TestMain
	builtBin  string
	buildErr  error
)

// TestMain removes the binary the benchmark built.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// hookBinary builds the logbook binary once per test run. When
// cmd/logbook does not route `hook` yet, it builds a stand-in main that
// calls cli.Hook the same way (through a build overlay, so nothing is
// written into the repository).
func hookBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "logbook-hook-bench")
		if err != nil {
			buildErr = err
			return
		}
		buildDir = dir
		root, err := moduleRoot()
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "logbook")
		build := exec.Command("go", "build", "-o", builtBin, "./cmd/logbook")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/logbook: %v\n%s", err, out)
			return
		}
		if exec.Command(builtBin, "hook", "--help").Run() == nil {
			return // the real command is wired
		}
		main := filepath.Join(dir, "main.go")
		os.WriteFile(main, []byte(standInMain), 0o600)
		overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{
			filepath.Join(root, "cmd", "logbook-hookbench", "main.go"): main}})
		os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o600)
		build = exec.Command("go", "build", "-overlay", filepath.Join(dir, "overlay.json"), "-o", builtBin, "./cmd/logbook-hookbench")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build of the stand-in main: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return builtBin
}

// standInMain is cmd/logbook's main with `hook` routed to cli.Hook.
const standInMain = `package main

import (
	"context"
	"os"

	"github.com/logbookhq/logbook/internal/cli"
)

func main() {
	env := cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	if len(os.Args) > 1 && os.Args[1] == "hook" {
		os.Exit(cli.Hook(context.Background(), env, os.Args[2:]))
	}
	os.Exit(cli.Run(context.Background(), env, os.Args[1:]))
}
`

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}
