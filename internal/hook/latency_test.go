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
// process per event, payload on stdin, timed from process start to exit
// (its answer is complete when it exits), for `logbook hook claude` and
// for the lean hook `logbook-hook claude` that `logbook hook install`
// prefers. It runs against a real server in this process (the HTTP API on
// SQLite), and against an address where nothing listens. Run it with:
//
//	go test ./internal/hook -run '^$' -bench HookProcess -benchtime 300x
//
// Each case reports p50, p99 and max in milliseconds, and the p50 of the
// CPU time the hook process used (user and system), which the machine's
// load sways less than its wall time.
func BenchmarkHookProcess(b *testing.B) {
	binaries := hookBinaries(b)
	srv := newTestServer(b)
	cwd, _ := os.Getwd() // inside the repository: reading git is part of the cost
	cases := []struct {
		name, event string
		up          bool
	}{
		// A command the policy asks about: the hook also starts the
		// background delivery of its record (no PostToolUse follows soon).
		{"PreToolUse/server-up", EventPreToolUse, true},
		{"PreToolUse/server-down", EventPreToolUse, false},
		// A command the policy leaves to the harness, the common case: the
		// PostToolUse that follows delivers the record.
		{"PreToolUse-defer/server-up", EventPreToolUse, true},
		// An Edit is put to the server's claims gate: a request per call.
		{"PreToolUse-Edit/server-up", EventPreToolUse, true},
		{"PreToolUse-Edit/server-down", EventPreToolUse, false},
		{"PostToolUse/server-up", EventPostToolUse, true},
		{"PostToolUse/server-down", EventPostToolUse, false},
		{"UserPromptSubmit/server-up", EventUserPromptSubmit, true},
	}
	for _, bin := range []string{"logbook", LeanBinary} {
		for _, c := range cases {
			b.Run(bin+"/"+c.name, func(b *testing.B) {
				url := srv.url()
				if !c.up {
					url = "http://127.0.0.1:1" // nothing listens there
				}
				// Not b.TempDir: the background delivery PreToolUse starts may
				// still be writing there when the case ends, which that
				// directory's check on removal takes for a failure.
				spoolDir, err := os.MkdirTemp("", "logbook-hook-bench-spool")
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = os.RemoveAll(spoolDir) })
				env := append(os.Environ(), "LOGBOOK_URL="+url, "LOGBOOK_TOKEN="+srv.token,
					"LOGBOOK_PROJECT="+testProject, "LOGBOOK_SPOOL_DIR="+spoolDir)
				times := make([]time.Duration, 0, b.N)
				cpu := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					took, used := runHookOnce(b, binaries[bin], env, cwd, c.name, c.event, c.up, i)
					times, cpu = append(times, took), append(cpu, used)
				}
				b.StopTimer()
				slices.Sort(times)
				slices.Sort(cpu)
				b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds())/1000, "cpu-p50-ms")
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
}

// runHookOnce runs the hook command once on the i-th event of a case and
// returns its wall time and the CPU time it used.
func runHookOnce(b *testing.B, hook, env []string, cwd, name, event string, up bool, i int) (took, cpu time.Duration) {
	fields := map[string]any{"session_id": "bench-" + name, "hook_event_name": event, "cwd": cwd,
		"tool_name": "Bash", "tool_use_id": fmt.Sprintf("toolu_%d", i),
		"tool_input": map[string]any{"command": "git status && useradd deploy"}}
	edit := strings.HasPrefix(name, "PreToolUse-Edit")
	deferred := strings.HasPrefix(name, "PreToolUse-defer")
	if deferred {
		fields["tool_input"] = map[string]any{"command": "git status && go test ./..."}
	}
	if edit {
		fields["tool_name"] = "Edit"
		fields["tool_input"] = map[string]any{"file_path": fmt.Sprintf("internal/file%d.go", i%50), "old_string": "a", "new_string": "b"}
	}
	switch event {
	case EventPostToolUse:
		fields["tool_response"] = map[string]any{"stdout": strings.Repeat("ok  \tpkg\t0.01s\n", 20), "stderr": ""}
	case EventUserPromptSubmit:
		fields["prompt"] = fmt.Sprintf("prompt %d: fix the flaky login test", i)
	}
	raw, _ := json.Marshal(fields)
	cmd := exec.Command(hook[0], hook[1:]...)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(raw)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	if err != nil {
		b.Fatalf("the hook failed: %v, stderr %s", err, stderr.Bytes())
	}
	if event == EventPreToolUse && !edit && !deferred && !strings.Contains(stdout.String(), `"permissionDecision":"ask"`) {
		b.Fatalf("PreToolUse answer %q", stdout.String())
	}
	if (edit || deferred) && stdout.Len() > 0 {
		b.Fatalf("PreToolUse answer %q to an Edit of a free file or a command left to the harness, want none", stdout.String())
	}
	if up && stderr.Len() > 0 {
		b.Fatalf("stderr with the server up: %s", stderr.Bytes())
	}
	return took, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

var (
	buildOnce sync.Once
	buildDir  string // removed by TestMain
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

// hookBinaries builds, once per test run, the logbook binary and the lean
// hook (cmd/logbook-hook), and returns the command line of the Claude Code
// hook for each, by name.
func hookBinaries(tb testing.TB) map[string][]string {
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
		build := exec.Command("go", "build", "-o", dir, "./cmd/logbook", "./cmd/"+LeanBinary)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return map[string][]string{
		"logbook":  {filepath.Join(buildDir, "logbook"), "hook", "claude"},
		LeanBinary: {filepath.Join(buildDir, LeanBinary), "claude"},
	}
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}
