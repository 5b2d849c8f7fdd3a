package logbook

import (
	"bytes"
	"regexp"
	"strings"
)

// A session's commits are found by `logbook why` through its head commit
// and through the commit an entry carries. A tool result of a shell
// command that ran `git commit` carries the commit it made, read from the
// summary line git prints; the importers and the hooks both use the two
// functions below, so a commit is found the same way whichever recorded it.

// RunsGitCommit reports whether a tool call's input (its JSON payload)
// looks like a shell command that runs git commit, so its output is worth
// reading for the commit it made. It errs on the side of yes: the output is
// the proof (see CommitInOutput).
func RunsGitCommit(input []byte) bool {
	return bytes.Contains(input, []byte("git")) && bytes.Contains(input, []byte("commit"))
}

// commitSummary is the summary git commit prints: "[branch 1a2b3c4] subject",
// "[main (root-commit) 1a2b3c4] subject", "[detached HEAD 1a2b3c4] …".
var commitSummary = regexp.MustCompile(`(?m)^\[[^\]\n]*?([0-9a-f]{7,64})\] `)

// CommitInOutput returns the commit a git commit's output reports, as
// abbreviated as git printed it (stored short, it still matches the full
// sha a reader asks about), or "" when the output holds no summary line.
func CommitInOutput(output string) string {
	if m := commitSummary.FindStringSubmatch(output); m != nil {
		return m[1]
	}
	return ""
}

// FullCommit returns head when it is the commit short abbreviates (a
// commit just made is the work tree's HEAD), else short as it is.
func FullCommit(short, head string) string {
	if short != "" && len(head) > len(short) && strings.HasPrefix(head, short) {
		return head
	}
	return short
}
