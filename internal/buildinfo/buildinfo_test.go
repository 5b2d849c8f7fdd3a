package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-12-02T03:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	got := parse(bi).String()
	if want := "v1.2.0 (commit 0123456789abcdef, 2026-12-02T03:00:00Z, modified, go1.26.8)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := parse(&debug.BuildInfo{}).String(); got != "(devel)" {
		t.Errorf("a build with nothing stamped: %q, want (devel)", got)
	}
}

// TestBuiltBinary builds logbook from this checkout, as a person does, and
// checks that `logbook version` names the commit it was built from.
func TestBuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil && os.Getenv("CI") == "true" {
		t.Fatalf("CI runs in a git checkout, but git rev-parse HEAD failed: %v", err)
	}
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	// The toolchain stamps a commit only in a checkout whose .git is a
	// folder, not in a linked work tree (git worktree), whose .git is a file.
	if info, err := os.Stat("../../.git"); (err != nil || !info.IsDir()) && os.Getenv("CI") != "true" {
		t.Skip("in a git worktree, which go build does not stamp with its commit")
	}
	bin := filepath.Join(t.TempDir(), "logbook")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/logbook")
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=true")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("logbook %s: %v\n%s", args[0], err, out)
		}
		if !strings.HasPrefix(string(out), "logbook v") || !strings.Contains(string(out), "commit "+strings.TrimSpace(string(head))) {
			t.Errorf("logbook %s printed %q; want the module version and commit %s", args[0], out, head)
		}
	}
}
