// Command logbook-hook is the hook alone: the process Claude Code and
// Codex start before and after every tool call (`logbook-hook claude`,
// `logbook-hook codex`). It is `logbook hook claude|codex` built without
// the server, the engines and the rest, so it starts in a fraction of the
// time; `logbook hook install` wires it in when it sits beside logbook.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/logbookhq/logbook/internal/hook"
)

// main runs one hook call. Like `logbook hook claude`, it exits 0 whatever
// happens (exit 2 would block the tool) and says what went wrong on
// stderr; only a call it cannot read as a hook call at all is a usage
// error.
func main() {
	if len(os.Args) == 2 && os.Args[1] == "flush" {
		flush()
		return
	}
	if len(os.Args) < 2 || (os.Args[1] != "claude" && os.Args[1] != "codex") {
		fmt.Fprintln(os.Stderr, "usage: logbook-hook claude [--guard-claims=false] | logbook-hook codex   (the hook's event as JSON on stdin); see logbook hook --help")
		os.Exit(2)
	}
	cfg := hook.ConfigFromEnv(os.Getenv)
	cfg.IgnoreClaims = slices.Contains(os.Args[2:], "--guard-claims=false") // the claims gate is on by default
	cfg.FlushCommand = hook.BackgroundFlushCommand("flush")
	h := hook.New(cfg, os.Stderr)
	if os.Args[1] == "codex" {
		h.CodexHook(context.Background(), os.Stdin, os.Stdout)
		return
	}
	h.Claude(context.Background(), os.Stdin, os.Stdout)
}

// flushTimeout bounds the background delivery a PreToolUse starts.
const flushTimeout = 30 * time.Second

// flush delivers the spool, as `logbook hook flush --background` does:
// what PreToolUse starts in a process of its own, so its record is sent
// without waiting for the next hook call. It says nothing: nobody reads
// its output, and what the server refuses is set aside for the next
// session's start to tell.
func flush() {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	_, _ = hook.New(hook.ConfigFromEnv(os.Getenv), io.Discard).Flush(ctx)
}
