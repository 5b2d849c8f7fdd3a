// Package testshared finds the project's shared test material (real agent
// transcripts, hook payloads, an outside corpus of labelled shell commands)
// in the shared/ folder beside the checkout. It is read from there, never
// copied into the repository.
package testshared

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns shared/<name> (e.g. "fixtures", "eval"), found by walking up
// from the working directory. Without it the test is skipped, unless
// CI=true, where it fails: CI always has shared/.
func Dir(tb testing.TB, name string) string {
	tb.Helper()
	if dir := Find(name); dir != "" {
		return dir
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("shared/%s not found above the working directory (required when CI=true)", name)
	}
	tb.Skipf("shared/%s not found above the working directory", name)
	return ""
}

// Find returns shared/<name> above the working directory, or "".
func Find(name string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		candidate := filepath.Join(dir, "shared", name)
		if info, err := os.Stat(candidate); err == nil && info.IsDir() {
			return candidate
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
