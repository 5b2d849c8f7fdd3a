// Package hook reports what coding agents do to a logbook server, and
// answers Claude Code's permission questions, without ever getting in the
// agent's way.
//
// Claude Code runs `logbook hook claude` for each hook event with the
// event's JSON on stdin (see Payload). The hook maps the event to records
// (Record: a session to start or refresh, entries to append, files touched,
// an end) and hands them to the spool, a JSON-lines file in the user's data
// directory, before any network call. It then delivers the spool to the
// server in order, within a short deadline; whatever the server does not
// take in time stays in the spool for the next hook call or `logbook hook
// flush`. Every entry carries an idempotency key, so a record delivered
// twice (after a crash, or a hook that fired twice) is stored once. A
// record the server refuses for good (a 4xx answer) is set aside in the
// rejected file and reported, never retried forever; a spool line that
// cannot be read is set aside in spool.bad.
//
// PreToolUse is answered in-process: a Bash command is classified with
// package classify under the project's policy (fetched from the server at
// most every few minutes and cached beside the spool), and the answer is
// Claude Code's hookSpecificOutput JSON with permissionDecision allow, ask
// or deny. With the claims guard on, an edit of a path another session has
// claimed is denied, naming the holder. PreToolUse never delivers the spool
// itself, so its answer does not wait on the server: it starts a process of
// its own that does (Config.FlushCommand).
//
// A refused record is never lost quietly: Claude Code hides the hook's
// stderr, so the next SessionStart tells the user (systemMessage) and the
// model (additionalContext) what was set aside since the last time and why,
// and Hook.Status (`logbook hook status`) lists it all.
//
// The hook's contract with Claude Code: exit status 0 always (exit 2 would
// block the agent), nothing on stdout except the PreToolUse answer and the
// context output of SessionStart, UserPromptSubmit and PostToolUse (see
// Output), and problems reported on stderr. When classification fails the answer is
// "ask" with a reason saying so, never a silent deny.
//
// The package also records Codex CLI turns (Codex's notify program, see
// Hook.Codex) and installs or removes the hook entries in Claude Code's
// settings.json (Install, Uninstall).
package hook
