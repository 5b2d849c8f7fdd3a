package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// Why is `logbook why FILE[:LINE]`: the recorded sessions behind the commit
// that last changed a line (git blame) or a file (git log), with the
// prompts, assistant reasoning and tool calls that led to it, newest
// session first.
func Why(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("why", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := addServerFlags(fs, env)
	asJSON := fs.Bool("json", false, "print JSON for tools: the commit, and each session with its entries")
	limit := fs.Int("entries", 40, "show at most this many entries of each session: the last ones up to the commit")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: logbook why FILE[:LINE] [flags]

Finds the commit that last changed LINE of FILE (git blame), or FILE itself
(git log), and the recorded sessions behind it: those whose entries carry
the commit (a hook or an import saw it made) or that ran at it (head
commit). For each, newest first, it prints the prompts, the assistant's
text and reasoning, and the tool calls, up to where the commit was made.

Flags:
`)
		fs.PrintDefaults()
	}
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return parseExit(err)
	}
	if len(positional) != 1 {
		fs.Usage()
		return 2
	}
	file, line := splitFileLine(positional[0])

	commit, err := blame(ctx, file, line)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	l := srv.ledger()
	found, err := l.SessionsByCommit(ctx, *srv.project, commit.SHA)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	report := whyReport{File: file, Line: line, Commit: commit, Sessions: []whySession{}}
	for _, s := range found {
		ws, err := sessionBehind(ctx, l, s, commit.SHA, max(*limit, 1))
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
		report.Sessions = append(report.Sessions, ws)
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
		return 0
	}
	report.print(env.Stdout)
	return 0
}

// whyReport is what `logbook why --json` prints.
type whyReport struct {
	File     string       `json:"file"`
	Line     int          `json:"line,omitempty"`
	Commit   gitCommit    `json:"commit"`
	Sessions []whySession `json:"sessions"`
}

// gitCommit is what git says of a commit.
type gitCommit struct {
	SHA     string    `json:"sha"`
	Author  string    `json:"author"`
	Date    time.Time `json:"date"`
	Subject string    `json:"subject"`
}

// whySession is a session behind a commit.
type whySession struct {
	Session logbook.Session `json:"session"`
	// Matched says how the session carries the commit: "entry" (an entry
	// records it; Entries end there) or "head_commit".
	Matched string `json:"matched"`
	// Entries are the prompts, messages and tool calls shown, and the entry
	// that records the commit; Omitted how many earlier ones were left out.
	Entries []logbook.Entry `json:"entries"`
	Omitted int             `json:"omitted"`
}

// splitFileLine splits "FILE:LINE"; a path that exists as given, or
// whose suffix is not a number, is a file without a line.
func splitFileLine(arg string) (string, int) {
	if _, err := os.Stat(arg); err == nil {
		return arg, 0
	}
	i := strings.LastIndexByte(arg, ':')
	if i < 0 {
		return arg, 0
	}
	n, err := strconv.Atoi(arg[i+1:])
	if err != nil || n <= 0 {
		return arg, 0
	}
	return arg[:i], n
}

// blame finds the commit that last changed line of file, or the file
// when line is 0, and what git says of it.
func blame(ctx context.Context, file string, line int) (gitCommit, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return gitCommit{}, err
	}
	if _, err := os.Stat(abs); err != nil {
		return gitCommit{}, fmt.Errorf("cannot read %s: %w", file, err)
	}
	dir, base := filepath.Dir(abs), filepath.Base(abs)
	var sha string
	if line > 0 {
		out, err := git(ctx, dir, "blame", "--porcelain", "-L", fmt.Sprintf("%d,%d", line, line), "--", base)
		if err != nil {
			return gitCommit{}, err
		}
		sha, _, _ = strings.Cut(out, " ")
		if strings.Trim(sha, "0") == "" {
			return gitCommit{}, fmt.Errorf("line %d of %s is not committed yet: commit it, or ask about a committed line", line, file)
		}
	} else {
		out, err := git(ctx, dir, "log", "-1", "--format=%H", "--", base)
		if err != nil {
			return gitCommit{}, err
		}
		if sha = strings.TrimSpace(out); sha == "" {
			return gitCommit{}, fmt.Errorf("%s has no commit yet: commit it, or ask about a file git knows", file)
		}
	}
	out, err := git(ctx, dir, "show", "-s", "--format=%H%x1f%an%x1f%aI%x1f%s", sha)
	if err != nil {
		return gitCommit{}, err
	}
	parts := strings.SplitN(strings.TrimSpace(out), "\x1f", 4)
	if len(parts) != 4 {
		return gitCommit{}, fmt.Errorf("git show %s answered %q, which logbook cannot read", sha, out)
	}
	date, _ := time.Parse(time.RFC3339, parts[2])
	return gitCommit{SHA: parts[0], Author: parts[1], Date: date, Subject: parts[3]}, nil
}

// git runs git in dir and returns its output; a failure carries what git
// said.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var notFound *exec.Error
		if errors.As(err, &notFound) {
			return "", fmt.Errorf("logbook why needs git on the PATH: %w", err)
		}
		return "", fmt.Errorf("git %s: %s", args[0], strings.TrimSpace(firstNonBlank(stderr.String(), err.Error())))
	}
	return stdout.String(), nil
}

func firstNonBlank(values ...string) string {
	for _, v := range values {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// commitMatches reports whether an entry's commit is sha, abbreviated or
// not (as the server matches them).
func commitMatches(entryCommit, sha string) bool {
	return entryCommit != "" && (strings.HasPrefix(entryCommit, sha) || (len(entryCommit) >= 7 && strings.HasPrefix(sha, entryCommit)))
}

// sessionBehind reads a session's entries page by page and keeps the last
// limit ones worth showing, up to the last entry that records the commit
// when there is one.
func sessionBehind(ctx context.Context, l ledger.Ledger, s logbook.Session, sha string, limit int) (whySession, error) {
	ws := whySession{Session: s, Matched: "head_commit"}
	var shown ring // the entries worth showing so far
	var upTo *ring // shown as it was at the last entry recording the commit
	for after := int64(0); ; {
		page, err := l.GetSession(ctx, s.ID, ledger.GetParams{AfterSeq: after})
		if err != nil {
			return ws, fmt.Errorf("reading session %s: %w", s.ID, err)
		}
		for _, e := range page.Entries {
			recordsCommit := commitMatches(e.Commit, sha)
			if recordsCommit || worthShowing(e) {
				e.Text = logbook.Clip(e.Text, 2000) // what a reader takes in; the session keeps it whole
				shown.add(e, limit)
			}
			if recordsCommit {
				snapshot := shown.copy()
				upTo = &snapshot
			}
		}
		if len(page.Entries) == 0 || page.NextAfterSeq <= after {
			break
		}
		after = page.NextAfterSeq
	}
	if upTo != nil {
		ws.Matched, shown = "entry", *upTo
	}
	ws.Entries, ws.Omitted = shown.entries, shown.dropped
	return ws, nil
}

// worthShowing is what explains a change: what was asked, what the
// assistant said and thought, what it did.
func worthShowing(e logbook.Entry) bool {
	switch e.Kind {
	case logbook.KindPrompt, logbook.KindToolCall, logbook.KindSummary:
		return true
	case logbook.KindMessage:
		return e.Role != logbook.RoleSystem && e.Text != ""
	}
	return false
}

// ring keeps the last entries added, at most a limit, and counts the rest.
type ring struct {
	entries []logbook.Entry
	dropped int
}

func (r *ring) add(e logbook.Entry, limit int) {
	if len(r.entries) == limit {
		copy(r.entries, r.entries[1:])
		r.entries = r.entries[:limit-1]
		r.dropped++
	}
	r.entries = append(r.entries, e)
}

func (r *ring) copy() ring {
	return ring{entries: append([]logbook.Entry(nil), r.entries...), dropped: r.dropped}
}

// print writes the report for a person.
func (r whyReport) print(w io.Writer) {
	where := r.File
	if r.Line > 0 {
		where += ":" + strconv.Itoa(r.Line)
	}
	fmt.Fprintf(w, "%s  %s  %s  (%s, %s)\n", where, short(r.Commit.SHA), r.Commit.Subject, r.Commit.Author, r.Commit.Date.Format("2006-01-02"))
	if len(r.Sessions) == 0 {
		fmt.Fprintf(w, "No recorded session carries commit %s.\n", short(r.Commit.SHA))
		return
	}
	for _, ws := range r.Sessions {
		s := ws.Session
		state := string(s.State)
		if s.Outcome != "" {
			state += " " + string(s.Outcome)
		}
		fmt.Fprintf(w, "\n== %s  %s by %s, %s, %s: %s\n", s.ID, dash(s.Harness), s.Actor,
			s.StartedAt.Local().Format("2006-01-02 15:04"), state, dash(s.Title))
		if ws.Matched == "entry" {
			fmt.Fprintln(w, "   the commit was made in this session; what led to it:")
		} else {
			fmt.Fprintln(w, "   this session ran at the commit (its head commit):")
		}
		if ws.Omitted > 0 {
			fmt.Fprintf(w, "   … %d earlier entries (logbook sessions show %s)\n", ws.Omitted, s.ID)
		}
		for _, e := range ws.Entries {
			fmt.Fprintf(w, "   %s  %-9s  %s\n", e.At.Local().Format("15:04:05"), entryLabel(e), entryLine(e))
		}
	}
}

func short(sha string) string { return sha[:min(len(sha), 10)] }

// entryLabel names an entry's part in the story.
func entryLabel(e logbook.Entry) string {
	switch {
	case e.Kind == logbook.KindToolCall:
		return "tool"
	case e.Kind == logbook.KindMessage && bytes.Contains(e.Payload, []byte(`"thinking":true`)):
		return "thinking"
	case e.Kind == logbook.KindMessage:
		return e.Role
	case e.Kind == logbook.KindToolResult && e.Commit != "":
		return "commit"
	}
	return string(e.Kind)
}

// entryLine is an entry on one line: its text, or for a tool call the
// tool and the gist of its input.
func entryLine(e logbook.Entry) string {
	text := e.Text
	switch {
	case e.Kind == logbook.KindToolCall:
		text = e.Tool + " " + toolGist(e.Payload)
	case e.Kind == logbook.KindToolResult && e.Commit != "":
		text = e.Commit + ": " + text
	}
	return logbook.Clip(strings.Join(strings.Fields(text), " "), 160)
}

// toolGist is the part of a tool's input a reader needs: the command, the
// file, else the input as JSON.
func toolGist(payload json.RawMessage) string {
	var input map[string]json.RawMessage
	if json.Unmarshal(payload, &input) == nil {
		for _, field := range []string{"command", "file_path", "notebook_path", "path", "pattern", "url", "description"} {
			var s string
			if json.Unmarshal(input[field], &s) == nil && s != "" {
				return s
			}
		}
	}
	return string(payload)
}
