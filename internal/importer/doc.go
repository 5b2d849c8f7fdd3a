// Package importer brings transcripts that agent harnesses wrote on disk —
// Claude Code session files (~/.claude/projects) and Codex CLI rollouts
// (~/.codex/sessions) — into logbook.
//
// An Importer walks the paths it is given (files, or folders searched for
// *.jsonl), streams each file through package transcript's parser and writes
// what comes out into a ledger (package ledger): the service straight into
// a database, or a logbook server through the typed client, which paces
// itself under the server's rate limit and halves a batch the server finds
// too large. Nothing but ids and the current
// batch is held in memory, so memory stays flat whatever the size of a file
// or of the whole import.
//
// # What a user gets
//
//   - One logbook session per harness session (harness "claude-code" or
//     "codex", harness_session_id the transcript's own id), subagents as
//     sessions under the session that started them. Parents are started
//     before their subagents; when a subagent's parent is in no file of the
//     import, an empty parent session is started under the same harness id,
//     so importing the parent later fills it in. A session starts at the
//     time of its first line (a placeholder parent at its subagent's), so
//     that lists, statistics and retention see history at its own time.
//   - Entries keep the parser's keys, so importing the same files again adds
//     nothing and a transcript that grew since is topped up with its new
//     lines only. Each entry keeps the time of its line.
//   - The files Edit, Write, MultiEdit, NotebookEdit and Codex apply_patch
//     changed are recorded as touches (relative to the git work tree above
//     the session's cwd when it exists on this machine, else to the cwd), and
//     a tool result of a `git commit` carries the commit it made, which is
//     what `logbook why` looks for. A Codex rollout's recorded HEAD becomes
//     the session's head commit.
//   - The project is Options.Project when set; else, with
//     Options.ProjectFromCwd, the name of the git work tree above the
//     session's cwd, or the cwd's last folder; else the sink's own default
//     (the token's project). A subagent always lives in its parent's project.
//
// # How imported sessions end
//
// A transcript does not say how its session ended, and a session left
// active would read "active", then "idle", then be timed out hours later.
// So a session whose last line is older than Options.LiveWindow (default 2
// hours, the server's session timeout) is ended, at the time of its last
// line, with outcome success and end reason "imported": the outcome
// logbook's own Claude Code hook records when a session ends normally, and
// one that neither skews goal memory (which looks at partial and failed
// sessions) nor invents a blocker. A session
// whose last line is more recent may still be running, and is left active,
// so a later import tops it up; the server's sweeper times it out if nothing
// follows. Importing a grown top-level transcript reopens its session, adds
// the new lines and ends it again, at its new last line. A subagent that
// was ended stays ended, as logbook's rules say; new lines of it are counted
// as refused rather than stored.
package importer
