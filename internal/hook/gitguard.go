package hook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// The git guard: a pre-commit hook that puts the staged files to the
// claims gate, so that a commit (by a person, or by an agent that went
// around its harness's hooks) does not carry a file another live session
// claimed. `logbook hook install git` writes it; it chains a pre-commit
// hook that was there before.

// Environment variables of the git guard.
const (
	// AllowClaimedEnv set to 1 lets one commit through the guard.
	AllowClaimedEnv = "LOGBOOK_ALLOW_CLAIMED"
	// SessionEnv names the logbook session that commits: its own claims,
	// its parent's and its subagents' pass.
	SessionEnv = "LOGBOOK_SESSION_ID"
	// HarnessSessionEnv and HarnessEnv name the committing session as its
	// harness knows it; the Claude Code hook exports them at SessionStart
	// (through CLAUDE_ENV_FILE) to the shell commands of the session.
	HarnessSessionEnv = "LOGBOOK_HARNESS_SESSION_ID"
	HarnessEnv        = "LOGBOOK_HARNESS"
	// CodexThreadEnv is set by Codex CLI (0.125 and later) in the
	// environment of each shell command of a session: the thread id, which
	// its hooks report as the session id. Codex has no CLAUDE_ENV_FILE.
	CodexThreadEnv = "CODEX_THREAD_ID"
)

// preCommitDeadline bounds the guard's questions to the server: a person
// waits for a commit longer than an agent for a tool call, but a server
// that does not answer must not hold the commit up.
const preCommitDeadline = 5 * time.Second

// guardMarker marks a pre-commit hook as logbook's.
const guardMarker = "# logbook-git-guard"

// chainedSuffix is appended to the name of the pre-commit hook that was
// there before logbook's, which logbook's runs first.
const chainedSuffix = ".before-logbook"

// PreCommit checks the staged paths (NUL-separated, as `git diff --cached
// --name-only -z` prints them, relative to the work tree's top folder)
// against the claims of the project of the working folder, and returns the
// exit status of the pre-commit hook: 1 when another live session holds
// one of them (deny or ask: a commit cannot ask), naming each holder and
// how to override, else 0. getenv reads the environment. When the server
// cannot answer it says so and lets the commit through: the guard never
// refuses on a guess.
func (h *Hook) PreCommit(ctx context.Context, dir string, staged io.Reader, getenv func(string) string) int {
	if getenv(AllowClaimedEnv) == "1" {
		return 0
	}
	raw, err := io.ReadAll(io.LimitReader(staged, maxPayloadBytes))
	if err != nil {
		h.report("git guard skipped: cannot read the staged paths: %v", err)
		return 0
	}
	var paths []string
	for _, p := range bytes.Split(raw, []byte{0}) {
		if p := strings.TrimSpace(string(p)); p != "" {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, preCommitDeadline)
	defer cancel()
	project := projectName(h.cfg.Project, gitLookup(ctx, dir))
	sessionID, err := h.committer(ctx, project, getenv)
	if err != nil {
		h.report("git guard: cannot learn the committing session's logbook id (%v); checking against every session's claims", err)
	}
	var held []ledger.HeldPath
	for len(paths) > 0 {
		n := min(len(paths), ledger.MaxGatePaths)
		ans, err := h.api.Ledger().Gate(ctx, ledger.GateParams{Project: project, SessionID: sessionID, Paths: paths[:n]})
		if sessionID != "" && errors.Is(err, logbook.ErrNotFound) {
			// A session the server does not know commits as a person:
			// every live claim counts.
			h.report("git guard: the server knows no session %s; checking against every session's claims", sessionID)
			sessionID = ""
			continue
		}
		if err != nil {
			h.report("git guard skipped: cannot ask the server about the staged files (%v); the commit goes ahead", err)
			return 0
		}
		if ans.Decision == classify.Deny || ans.Decision == classify.Ask {
			held = append(held, ans.Held...)
		}
		paths = paths[n:]
	}
	if len(held) == 0 {
		return 0
	}
	var b strings.Builder
	fmt.Fprintf(&b, "logbook: this commit touches %d file(s) another live session has claimed:\n", len(held))
	for _, hp := range held {
		who := hp.Holder.Actor
		if hp.Holder.Agent != "" {
			who += ", agent " + hp.Holder.Agent
		}
		fmt.Fprintf(&b, "  %s: session %s (%s)", hp.Path, hp.Holder.SessionID, who)
		if goal := firstNonEmpty(hp.Holder.Goal, hp.Holder.Title); goal != "" {
			fmt.Fprintf(&b, ", working on %q,", goal)
		}
		if hp.Claim.Subject != hp.Path {
			fmt.Fprintf(&b, " through its claim on %s", hp.Claim.Subject)
		}
		fmt.Fprintf(&b, " until %s\n", hp.Claim.ExpiresAt.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(&b, "Wait for the holder to finish or release the claim (logbook claims), unstage those files, or commit anyway with\n"+
		"  %s=1 git commit ...   (or git commit --no-verify, which skips every pre-commit hook)\n", AllowClaimedEnv)
	fmt.Fprint(h.stderr, b.String())
	return 1
}

// committer returns the logbook id of the session that commits, "" for a
// person: LOGBOOK_SESSION_ID, else the session the harness's variables
// name (Claude Code's, which the hook exports, or Codex's own thread id),
// from the id cache, else asked of the server.
func (h *Hook) committer(ctx context.Context, project string, getenv func(string) string) (string, error) {
	if id := getenv(SessionEnv); id != "" {
		return id, nil
	}
	harness, harnessID := firstNonEmpty(getenv(HarnessEnv), HarnessClaude), getenv(HarnessSessionEnv)
	if harnessID == "" {
		harness, harnessID = HarnessCodex, getenv(CodexThreadEnv)
	}
	if harnessID == "" {
		return "", nil
	}
	return h.sessionID(ctx, h.spool(), SessionSpec{Project: project, Harness: harness, HarnessSessionID: harnessID})
}

// exportSession writes the session's harness variables into Claude Code's
// CLAUDE_ENV_FILE, which Claude Code sources before each shell command of
// the session, so that the git guard knows which session commits.
func exportSession(envFile, harness, sessionID string) error {
	if envFile == "" || sessionID == "" {
		return nil
	}
	f, err := os.OpenFile(envFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("cannot name the session in CLAUDE_ENV_FILE for the git guard: %w", err)
	}
	_, err = fmt.Fprintf(f, "export %s=%s %s=%s\n", HarnessEnv, shellQuote(harness), HarnessSessionEnv, shellQuote(sessionID))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// GitHooksDir returns the folder of the git hooks of the repository at dir
// (core.hooksPath when set, else .git/hooks of the repository, also from a
// linked work tree).
func GitHooksDir(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--git-path", "hooks").Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", fmt.Errorf("%s is not in a git repository: %s", dir, strings.TrimSpace(string(exit.Stderr)))
		}
		return "", fmt.Errorf("cannot run git: %w", err)
	}
	hooks := strings.TrimSpace(string(out))
	if !filepath.IsAbs(hooks) {
		hooks = filepath.Join(dir, hooks)
	}
	return filepath.Abs(hooks)
}

// preCommitScript is logbook's pre-commit hook for the logbook binary at
// binary.
func preCommitScript(binary string) string {
	return `#!/bin/sh
` + guardMarker + `: written by 'logbook hook install git'; 'logbook hook uninstall git' removes it.
# Refuses a commit of files another live agent session has claimed, naming
# the holder. Override once: ` + AllowClaimedEnv + `=1 git commit ...
# (git commit --no-verify skips every pre-commit hook).
# The pre-commit hook that was here before runs first, as pre-commit` + chainedSuffix + `.
chained="$(dirname "$0")/pre-commit` + chainedSuffix + `"
if [ -x "$chained" ]; then
	"$chained" "$@" || exit $?
fi
git diff --cached --name-only --no-renames -z | ` + shellQuote(binary) + ` hook git pre-commit
`
}

// InstallGit writes logbook's pre-commit hook into the hooks folder, for
// the logbook binary at binary. A pre-commit hook of someone else's that
// is there is kept as pre-commit.before-logbook and run first; installing
// again rewrites logbook's hook only (changed is false when it was
// already so).
func InstallGit(hooksDir, binary string) (changed bool, err error) {
	path := filepath.Join(hooksDir, "pre-commit")
	want := preCommitScript(binary)
	have, err := os.ReadFile(path)
	switch {
	case err == nil && string(have) == want:
		return false, nil
	case err == nil && !bytes.Contains(have, []byte(guardMarker)):
		chained := path + chainedSuffix
		if _, err := os.Lstat(chained); err == nil {
			return false, fmt.Errorf("%s is someone else's hook and %s exists too; move one of them away first", path, chained)
		}
		if err := os.Rename(path, chained); err != nil {
			return false, fmt.Errorf("keeping the existing pre-commit hook: %w", err)
		}
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return false, err
	}
	if err := os.MkdirAll(hooksDir, 0o755); err != nil {
		return false, err
	}
	if err := os.WriteFile(path, []byte(want), 0o755); err != nil {
		return false, err
	}
	return true, os.Chmod(path, 0o755) // WriteFile keeps an existing file's mode
}

// UninstallGit removes logbook's pre-commit hook from the hooks folder and
// puts back the one it chained; someone else's hook is left alone
// (changed false).
func UninstallGit(hooksDir string) (changed bool, err error) {
	path := filepath.Join(hooksDir, "pre-commit")
	have, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || err == nil && !bytes.Contains(have, []byte(guardMarker)) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := os.Remove(path); err != nil {
		return false, err
	}
	if _, err := os.Lstat(path + chainedSuffix); err == nil {
		return true, os.Rename(path+chainedSuffix, path)
	}
	return true, nil
}
