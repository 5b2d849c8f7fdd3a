// Command logbook-hook is the hook alone: the process Claude Code and
// Codex start before and after every tool call (`logbook-hook claude`,
// `logbook-hook codex`). It is `logbook hook claude|codex` built without
// the server, the engines and the rest, so it starts in a fraction of the
// time; `logbook hook install` wires it in when it sits beside logbook.
package main

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/logbookhq/logbook/internal/hook"
)

// main runs one hook call. Like `logbook hook claude`, it exits 0 whatever
// happens (exit 2 would block the tool) and says what went wrong on
// stderr; only a call it cannot read as a hook call at all is a usage
// error.
func main() {
	if len(os.Args) < 2 || (os.Args[1] != "claude" && os.Args[1] != "codex") {
		fmt.Fprintln(os.Stderr, "usage: logbook-hook claude [--guard-claims] | logbook-hook codex   (the hook's event as JSON on stdin); see logbook hook --help")
		os.Exit(2)
	}
	cfg := hook.ConfigFromEnv(os.Getenv)
	cfg.GuardClaims = slices.Contains(os.Args[2:], "--guard-claims")
	h := hook.New(cfg, os.Stderr)
	if os.Args[1] == "codex" {
		h.CodexHook(context.Background(), os.Stdin, os.Stdout)
		return
	}
	h.Claude(context.Background(), os.Stdin, os.Stdout)
}
