package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/logbookhq/logbook/internal/hook"
)

// flushTimeout bounds `logbook hook flush`, which a person runs and may
// wait for, unlike the hooks themselves.
const flushTimeout = 60 * time.Second

const hookUsage = `Usage:
  logbook hook claude [--guard-claims=false]
                                            one Claude Code hook call: the event's JSON on stdin
  logbook hook codex                        one Codex CLI hook call: the event's JSON on stdin
  logbook hook codex JSON                   one Codex CLI notify call: the JSON argument Codex passes
  logbook hook flush                        deliver the records waiting in the spool now
  logbook hook status                       the project and server this folder's hooks report to,
                                            the records waiting in the spool, and those set aside and why
  logbook hook install claude [--dir D] [--user] [--guard-claims]
                                            add logbook's hooks to Claude Code's settings.json
  logbook hook uninstall claude [--dir D] [--user]
                                            remove logbook's hooks from it, and only those
  logbook hook install git [--dir D]        add the git guard: a pre-commit hook that refuses a commit
                                            of files another live session claimed (keeps, and runs
                                            first, a pre-commit hook that was there)
  logbook hook uninstall git [--dir D]      remove it, putting back the hook it kept
  logbook hook git pre-commit               the git guard's check: staged paths, NUL-separated, on stdin

The hooks report sessions to the logbook server and answer PreToolUse with
the project's command policy: deny and ask are said; defer (the default for
most commands) says nothing, leaving the call to the harness's own
permission settings; allow only where the project's policy chose it. Codex
hooks cannot ask: there an ask is a deny that says a person must approve. They never stop the agent:
when the server is down or slow, records wait in the spool and go with the
next hook call or 'logbook hook flush'. A record the server refuses for good
(a token for another project than the folder's, say) is set aside; the next
session's start tells the user, and 'logbook hook status' lists them.

A tool call that writes files (Edit, Write, MultiEdit, NotebookEdit, Codex's
apply_patch, a shell command the classifier sees writing) is put to the
server's claims gate: a file another live session claimed is denied (or
asked, by the project's policy), naming the holder, its goal and when its
claim expires. --guard-claims=false turns the gate off for one hook.

The project: LOGBOOK_PROJECT when set, else the name of the git top-level
folder of the session's working folder, else the token's project. The token
must be for that project.

Environment:
  LOGBOOK_URL           the server (default http://127.0.0.1:7474)
  LOGBOOK_TOKEN         a token for an actor in the project ('logbook token create')
  LOGBOOK_PROJECT       the project (default: the git top-level folder's name)
  LOGBOOK_SPOOL_DIR     the spool folder (default $XDG_DATA_HOME/logbook/spool
                        or ~/.local/share/logbook/spool)
`

// Hook runs `logbook hook ...`: the Claude Code and Codex hooks, the
// spool flush, and installing the hooks into Claude Code's settings.
func Hook(ctx context.Context, env Env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(env.Stdout, hookUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "claude":
		return hookClaude(ctx, env, args[1:])
	case "codex":
		return hookCodex(ctx, env, args[1:])
	case "flush":
		return hookFlush(ctx, env, args[1:])
	case "status":
		return hookStatus(ctx, env, args[1:])
	case "install", "uninstall":
		if len(args) > 1 && args[1] == "git" {
			return hookInstallGit(ctx, env, args[0], args[2:])
		}
		return hookInstall(env, args[0], args[1:])
	case "git":
		return hookGit(ctx, env, args[1:])
	}
	fmt.Fprintf(env.Stderr, "logbook hook: unknown subcommand %q\n\n%s", args[0], hookUsage)
	return 2
}

// hookClaude exits 0 whatever happens, flag mistakes included: Claude Code
// takes exit 2 as "block the tool", and a broken hook must not do that.
func hookClaude(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("logbook hook claude", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	guard := fs.Bool("guard-claims", true, "put writes to files another live session claimed to the project's claims guard (the default; =false turns it off)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		fmt.Fprintln(env.Stderr, "logbook hook claude: the hook runs without its flags; fix the command in .claude/settings.json ('logbook hook install claude' writes it)")
		*guard = true
	}
	cfg := hook.ConfigFromEnv(env.Getenv)
	cfg.IgnoreClaims = !*guard
	cfg.FlushCommand = hook.BackgroundFlushCommand("hook", "flush", "--background")
	stdin := env.Stdin
	if stdin == nil {
		stdin = eofReader{}
	}
	hook.New(cfg, env.Stderr).Claude(ctx, stdin, env.Stdout)
	return 0
}

// hookCodex records one Codex hook event (JSON on stdin, no argument) or
// one notify call (the JSON argument). A hook call exits 0 whatever
// happens, as for Claude Code: exit 2 would block the tool. Codex ignores
// notify's exit status; problems go to stderr.
func hookCodex(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("logbook hook codex", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, codexHookUsage)
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() == 0 {
		stdin := env.Stdin
		if stdin == nil {
			stdin = eofReader{}
		}
		cfg := hook.ConfigFromEnv(env.Getenv)
		cfg.FlushCommand = hook.BackgroundFlushCommand("hook", "flush", "--background")
		hook.New(cfg, env.Stderr).CodexHook(ctx, stdin, env.Stdout)
		return 0
	}
	// Codex appends its JSON as the last argument.
	if err := hook.New(hook.ConfigFromEnv(env.Getenv), env.Stderr).Codex(ctx, fs.Arg(fs.NArg()-1)); err != nil {
		fmt.Fprintf(env.Stderr, "logbook hook codex: %v\n", err)
		return 1
	}
	return 0
}

const codexHookUsage = `Usage:
  logbook hook codex          one Codex hook event, its JSON on stdin
  logbook hook codex JSON     one Codex notify call

In ~/.codex/hooks.json (Codex 0.114 or later):
  {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "logbook hook codex"}]}],
             "PreToolUse": [{"matcher": "Bash|apply_patch", "hooks": [{"type": "command", "command": "logbook hook codex"}]}],
             "PostToolUse": [{"hooks": [{"type": "command", "command": "logbook hook codex"}]}],
             "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "logbook hook codex"}]}],
             "Stop": [{"hooks": [{"type": "command", "command": "logbook hook codex"}]}]}}
In ~/.codex/config.toml, for turns without hooks:
  notify = ["/path/to/logbook", "hook", "codex"]
`

func hookFlush(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("logbook hook flush", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	timeout := fs.Duration("timeout", flushTimeout, "give up after this long")
	background := fs.Bool("background", false, "say nothing (the hooks start it after PreToolUse; what the server refuses is set aside as ever)")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	h := hook.New(hook.ConfigFromEnv(env.Getenv), env.Stderr)
	rep, err := h.Flush(ctx)
	if *background {
		return 0
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook hook flush: %v\n", err)
		return 1
	}
	fmt.Fprintf(env.Stdout, "delivered %d records, %d refused, %d unreadable lines set aside, %d waiting (spool: %s)\n",
		rep.Delivered, len(rep.Rejected), rep.Bad, rep.Remaining, h.SpoolDir())
	for _, r := range rep.Rejected {
		fmt.Fprintf(env.Stderr, "refused %s record %s: %s (kept in %s)\n", r.Record.Event, r.Record.ID, r.Error,
			filepath.Join(h.SpoolDir(), "rejected.jsonl"))
	}
	if rep.Busy {
		fmt.Fprintln(env.Stderr, "another logbook hook was delivering the spool the whole time; run this again")
	}
	if rep.Remaining > 0 {
		if rep.Err != nil {
			fmt.Fprintf(env.Stderr, "logbook hook flush: %v\n", rep.Err)
		}
		return 1
	}
	return 0
}

// hookStatus prints where the hooks of the current folder report to and
// what the spool holds; it exits 1 when something needs the user.
func hookStatus(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("logbook hook status", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	dir := fs.String("dir", ".", "the folder the agent works in")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook hook status: %v\n", err)
		return 1
	}
	st := hook.New(hook.ConfigFromEnv(env.Getenv), env.Stderr).Status(ctx, abs)
	st.Print(env.Stdout)
	if !st.OK() {
		return 1
	}
	return 0
}

// hookInstallUsage is the help of logbook hook install and uninstall (the
// command's name, then what it does).
const hookInstallUsage = `Usage: %s claude [flags]

Claude Code: %s logbook's hooks in .claude/settings.json of the project
folder (--dir) or, with --user, of the user's (~/.claude/settings.json),
leaving every other setting as it is. Codex CLI: see 'logbook hook codex
--help'.

Flags:
`

func hookInstall(env Env, verb string, args []string) int {
	name := "logbook hook " + verb
	fs := flag.NewFlagSet(name+" claude", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	dir := fs.String("dir", ".", "the project folder whose .claude/settings.json to edit")
	user := fs.Bool("user", false, "edit the user's ~/.claude/settings.json instead")
	guard := new(bool)
	if verb == "install" {
		guard = fs.Bool("guard-claims", false, "write --guard-claims into the hook command (the claims gate is on without it now; accepted for settings written before)")
	}
	usage := func(w io.Writer) {
		does := map[string]string{"install": "sets", "uninstall": "removes"}[verb]
		fmt.Fprintf(w, hookInstallUsage, name, does)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(env.Stderr)
	}
	fs.Usage = func() { usage(env.Stderr) }
	switch {
	case len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help"):
		usage(env.Stdout) // asked for: the answer, on standard output
		return 0
	case len(args) == 0 || args[0] != "claude":
		fmt.Fprintf(env.Stderr, "%s: say which harness: '%s claude' (Codex: see 'logbook hook codex --help')\n\n", name, name)
		fs.Usage()
		return 2
	}
	if err := fs.Parse(args[1:]); err != nil {
		return parseExit(err)
	}
	binary, err := logbookBinary()
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return 1
	}
	absDir, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return 1
	}
	path := hook.SettingsPath(absDir, *user, env.Getenv("HOME"))
	var changed bool
	if verb == "install" {
		changed, err = hook.Install(path, hook.ClaudeCommand(binary, *guard), binary)
	} else {
		changed, err = hook.Uninstall(path, binary)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return 1
	}
	switch {
	case !changed && verb == "install":
		fmt.Fprintf(env.Stdout, "logbook's hooks were already in %s\n", path)
	case !changed:
		fmt.Fprintf(env.Stdout, "no logbook hooks in %s\n", path)
	case verb == "install":
		fmt.Fprintf(env.Stdout, "added logbook's hooks to %s (the old file is in settings.json.bak)\n", path)
		if env.Getenv("LOGBOOK_TOKEN") == "" {
			fmt.Fprintln(env.Stdout, "Claude Code's hooks need LOGBOOK_TOKEN (and LOGBOOK_URL unless the server is local) in their environment.")
		}
	default:
		fmt.Fprintf(env.Stdout, "removed logbook's hooks from %s (the old file is in settings.json.bak)\n", path)
	}
	return 0
}

// eofReader is an empty stdin.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// hookInstallGit runs `logbook hook install git` and `logbook hook
// uninstall git`: the git guard's pre-commit hook in the repository at
// --dir.
func hookInstallGit(ctx context.Context, env Env, verb string, args []string) int {
	name := "logbook hook " + verb + " git"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	dir := fs.String("dir", ".", "a folder of the git repository whose pre-commit hook to "+verb)
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	hooksDir, err := hook.GitHooksDir(ctx, *dir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return 1
	}
	if verb == "uninstall" {
		changed, err := hook.UninstallGit(hooksDir)
		switch {
		case err != nil:
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return 1
		case changed:
			fmt.Fprintf(env.Stdout, "removed logbook's pre-commit hook from %s\n", hooksDir)
		default:
			fmt.Fprintf(env.Stdout, "no logbook pre-commit hook in %s\n", hooksDir)
		}
		return 0
	}
	binary, err := logbookBinary()
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return 1
	}
	changed, err := hook.InstallGit(hooksDir, binary)
	switch {
	case err != nil:
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return 1
	case changed:
		fmt.Fprintf(env.Stdout, "added logbook's pre-commit hook to %s: a commit of files another live session claimed is refused (override once: %s=1 git commit)\n",
			hooksDir, hook.AllowClaimedEnv)
	default:
		fmt.Fprintf(env.Stdout, "logbook's pre-commit hook was already in %s\n", hooksDir)
	}
	return 0
}

// hookGit runs `logbook hook git pre-commit`, the git guard's check, in
// the work tree git runs its hooks in.
func hookGit(ctx context.Context, env Env, args []string) int {
	if len(args) != 1 || args[0] != "pre-commit" {
		fmt.Fprintf(env.Stderr, "logbook hook git: the only git hook is pre-commit ('logbook hook install git' writes it)\n")
		return 2
	}
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook hook git pre-commit: %v\n", err)
		return 0 // never refuse a commit on a guess
	}
	stdin := env.Stdin
	if stdin == nil {
		stdin = eofReader{}
	}
	return hook.New(hook.ConfigFromEnv(env.Getenv), env.Stderr).PreCommit(ctx, dir, stdin, env.Getenv)
}

// logbookBinary is the path of the running logbook binary, links
// resolved: what the hooks it installs run.
func logbookBinary() (string, error) {
	binary, err := os.Executable()
	if err == nil {
		binary, err = filepath.EvalSymlinks(binary)
	}
	if err != nil {
		return "", fmt.Errorf("cannot find the logbook binary's path: %w", err)
	}
	return binary, nil
}
