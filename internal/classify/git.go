package classify

import "strings"

// git is judged by subcommand. Reading history is read_only; changing the
// working tree or the repository is workspace_write; talking to remotes is
// network; and the commands that throw away work that exists nowhere else
// (uncommitted changes, unpushed or remote commits, stashes, untracked
// files) are destructive.

// gitPrograms registers git and the other version control systems.
func gitPrograms(r *registry) {
	r.handle(gitCmd, "git")
	// hg strip and hg purge delete commits and untracked files; p4
	// obliterate erases history.
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{
		"strip": Destructive, "purge": Destructive, "obliterate": Destructive, "status": ReadOnly, "st": ReadOnly,
		"summary": ReadOnly, "annotate": ReadOnly, "heads": ReadOnly, "incoming": Network, "outgoing": Network,
		"commit": WorkspaceWrite, "ci": WorkspaceWrite, "update": WorkspaceWrite, "up": WorkspaceWrite,
	}), "hg", "svn", "p4", "fossil", "bzr")
	r.fixed(ReadOnly, map[string]string{
		"gitstats": "prints repository statistics",
	})
}

// gitGlobalValued are git's options before the subcommand that take a value.
const gitGlobalValued = "-C -c --git-dir --work-tree --namespace --exec-path --config-env --super-prefix --list-cmds --attr-source"

// gitSafeConfigPrefixes are -c keys that cannot make git run a program.
// Any other key (core.pager, core.sshCommand, core.fsmonitor, alias.*,
// diff.external...) can, so git -c with it is unknown.
var gitSafeConfigPrefixes = []string{
	"user.", "color.", "advice.", "init.defaultbranch", "commit.gpgsign", "tag.gpgsign",
	"log.", "format.", "pull.rebase", "pull.ff", "push.default", "merge.ff", "safe.directory",
	"core.quotepath", "core.autocrlf", "column.", "i18n.", "status.", "diff.renames", "protocol.version",
}

// gitSubcommands gives the class of subcommands that do not depend on
// their arguments. Others have handlers in gitCmd.
var gitSubcommands = map[string]Class{
	"status": ReadOnly, "log": ReadOnly, "show": ReadOnly, "diff": ReadOnly, "blame": ReadOnly,
	"annotate": ReadOnly, "shortlog": ReadOnly, "describe": ReadOnly, "rev-parse": ReadOnly,
	"rev-list": ReadOnly, "ls-files": ReadOnly, "ls-tree": ReadOnly, "ls-remote": ReadOnly,
	"cat-file": ReadOnly, "grep": ReadOnly, "whatchanged": ReadOnly, "help": ReadOnly,
	"version": ReadOnly, "count-objects": ReadOnly, "show-ref": ReadOnly, "for-each-ref": ReadOnly,
	"name-rev": ReadOnly, "merge-base": ReadOnly, "check-ignore": ReadOnly, "check-attr": ReadOnly,
	"var": ReadOnly, "verify-commit": ReadOnly, "verify-tag": ReadOnly, "cherry": ReadOnly,
	"range-diff": ReadOnly, "diff-tree": ReadOnly, "diff-files": ReadOnly, "diff-index": ReadOnly,
	"show-branch": ReadOnly, "fsck": ReadOnly, "check-ref-format": ReadOnly, "bugreport": ReadOnly,

	"add": WorkspaceWrite, "commit": WorkspaceWrite, "merge": WorkspaceWrite, "rebase": WorkspaceWrite,
	"cherry-pick": WorkspaceWrite, "revert": WorkspaceWrite, "mv": WorkspaceWrite, "rm": WorkspaceWrite,
	"init": WorkspaceWrite, "am": WorkspaceWrite, "apply": WorkspaceWrite, "notes": WorkspaceWrite,
	"bisect": WorkspaceWrite, "gc": WorkspaceWrite, "prune": WorkspaceWrite, "repack": WorkspaceWrite,
	"maintenance": WorkspaceWrite, "mergetool": WorkspaceWrite, "format-patch": WorkspaceWrite,
	"update-index": WorkspaceWrite, "sparse-checkout": WorkspaceWrite, "rerere": WorkspaceWrite,
	"archive": WorkspaceWrite, "bundle": WorkspaceWrite, "lfs": Network, "submodule": Network,

	"fetch": Network, "pull": Network, "clone": Network, "remote": WorkspaceWrite,
	"send-email": Network, "request-pull": ReadOnly,

	"filter-branch": Destructive, "filter-repo": Destructive,
}

// gitCmd judges a git command.
func gitCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: gitGlobalValued, stopAtOperand: true})
	rest := c.args[o.rest:]
	floor := is(ReadOnly, "")
	for _, op := range o.opts {
		switch op.name {
		case "-c":
			if !gitSafeConfig(op.value) {
				floor = is(Unknown, "git -c "+op.value+" sets configuration that can make git run other programs")
			}
		case "--config-env", "--exec-path":
			if op.hasValue {
				floor = is(Unknown, "git "+op.name+" can make git run other programs")
			}
		}
	}
	if len(rest) == 0 {
		return is(ReadOnly, "git without a subcommand prints its usage")
	}
	sub := strings.ToLower(rest[0].text)
	j := gitSubcommand(st, sub, rest[1:])
	if floor.class.Rank() > j.class.Rank() {
		return floor
	}
	return j
}

func gitSafeConfig(kv string) bool {
	key := strings.ToLower(kv)
	if i := strings.IndexByte(key, '='); i >= 0 {
		key = key[:i]
	}
	for _, p := range gitSafeConfigPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

func gitSubcommand(st *state, sub string, args []arg) judgement {
	switch sub {
	case "checkout":
		return gitCheckout(args)
	case "switch":
		return gitSwitch(args)
	case "restore":
		return gitRestore(args)
	case "reset":
		return gitReset(args)
	case "clean":
		return gitClean(args)
	case "push":
		return gitPush(args)
	case "branch":
		return gitBranch(args)
	case "stash":
		return gitStash(args)
	case "tag":
		return gitListOrChange(args, "tag", "-l --list -n --contains --no-contains --merged --no-merged --points-at --sort --format -v --verify")
	case "worktree":
		return gitWorktree(args)
	case "config":
		return gitConfig(args)
	case "gc":
		if o := scanOptions(args, scanSpec{}); o.has("--prune") {
			if v, _ := o.value("--prune"); v == "now" || v == "all" {
				return is(Destructive, "git gc --prune="+v+" deletes unreachable commits at once, which nothing can bring back")
			}
		}
		return is(WorkspaceWrite, "git gc packs the repository, keeping recent unreachable objects")
	case "reflog":
		if verb, _ := subcommand(args, ""); verb == "expire" || verb == "delete" {
			return is(Destructive, "git reflog "+verb+" throws away the record that lets lost commits be found again")
		}
		return is(ReadOnly, "git reflog lists where refs have been")
	case "update-ref":
		if o := scanOptions(args, scanSpec{valued: "-m"}); o.has("-d") {
			return is(Destructive, "git update-ref -d deletes a ref without any safety check")
		}
		return is(WorkspaceWrite, "git update-ref moves a ref")
	case "log", "show", "diff", "whatchanged", "format-patch", "range-diff", "diff-tree", "diff-files", "diff-index":
		return gitReadWithOutput(st, sub, args)
	case "rm", "mv":
		// Their class is the table's; the files they remove and move
		// (both ends) are writes the claims gate checks.
		for _, t := range scanOptions(args, scanSpec{valued: "--pathspec-from-file"}).operands {
			st.noteWrite(t)
		}
	}
	if c, ok := gitSubcommands[sub]; ok {
		return is(c, "git "+sub+" "+verbRule(c))
	}
	if helpOnly([]arg{lit(sub)}) || sub == "--" && (len(args) == 0 || helpOnly(args)) {
		return is(ReadOnly, "git only prints help")
	}
	if sub == "--" && len(args) > 0 {
		return gitSubcommand(st, strings.ToLower(args[0].text), args[1:])
	}
	return is(Unknown, "logbook does not know the git subcommand "+sub+" (an alias or a git-"+sub+" program)")
}

// gitReadWithOutput: log, show and diff read, unless --output writes a file
// or --ext-diff/--textconv run configured programs.
func gitReadWithOutput(st *state, sub string, args []arg) judgement {
	o := scanOptions(args, scanSpec{valued: "--output -n -L -G -S --format --pretty --author --since --until --grep -O"})
	if out, ok := o.value("--output"); ok {
		return writeTargets(st, "git "+sub+" --output writes", []arg{lit(out)})
	}
	if o.has("--ext-diff", "--textconv") {
		return is(Unknown, "git "+sub+" "+"with --ext-diff or --textconv runs configured programs")
	}
	if c, ok := gitSubcommands[sub]; ok {
		return is(c, "git "+sub+" "+verbRule(c))
	}
	return is(ReadOnly, "git "+sub+" only reads")
}

// checkoutEnums are git checkout options whose value may be a separate
// word, with the values they take.
var checkoutEnums = map[string][]string{
	"--track": {"direct", "inherit"}, "-t": {"direct", "inherit"},
	"--recurse-submodules": {"checkout", "on-demand"}, "--conflict": {"merge", "diff3", "zdiff3"},
}

// gitCheckout: switching branches keeps local changes (git refuses to
// overwrite them), but --force, and restoring paths (git checkout -- file,
// git checkout REF file, git checkout .) overwrite uncommitted changes.
func gitCheckout(args []arg) judgement {
	args = dropEnumValues(args, checkoutEnums)
	o := scanOptions(args, scanSpec{valued: "-b -B --orphan -U --unified --inter-hunk-context --pathspec-from-file"})
	operands := o.operands
	switch {
	case o.has("-f", "--force"):
		return is(Destructive, "git checkout --force throws away uncommitted changes")
	case o.has("--pathspec-from-file"):
		return is(Destructive, "git checkout restores the listed files, discarding their uncommitted changes")
	case o.has("-h", "--help"):
		return is(ReadOnly, "git checkout only prints help")
	case o.has("-b", "-B", "--orphan"):
		return is(WorkspaceWrite, "git checkout -b creates a branch and switches to it")
	case o.dashdash && dashdashOperands(args) > 0:
		return is(Destructive, "git checkout -- PATH overwrites the files with the committed version, discarding uncommitted changes")
	case len(operands) >= 2:
		return is(Destructive, "git checkout REF PATH overwrites the files from REF, discarding uncommitted changes")
	case len(operands) == 1 && isPathspec(operands[0].text):
		return is(Destructive, "git checkout "+operands[0].text+" overwrites files, discarding uncommitted changes")
	}
	return is(WorkspaceWrite, "git checkout switches branches, keeping local changes")
}

// dropEnumValues removes the value of an option whose value may follow it
// as a separate word, when the word is one of the option's known values
// (git checkout --track direct main): otherwise it would read as a branch.
func dropEnumValues(args []arg, enums map[string][]string) []arg {
	out := make([]arg, 0, len(args))
	for i := 0; i < len(args); i++ {
		out = append(out, args[i])
		if args[i].text == "--" {
			return append(out, args[i+1:]...)
		}
		if i+1 < len(args) {
			for _, v := range enums[args[i].text] {
				if args[i+1].text == v {
					i++
					break
				}
			}
		}
	}
	return out
}

// dashdashOperands counts the words after "--".
func dashdashOperands(args []arg) int {
	for i, a := range args {
		if a.text == "--" {
			return len(args) - i - 1
		}
	}
	return 0
}

// isPathspec reports an operand that can only be a path, not a branch.
func isPathspec(s string) bool {
	return s == "." || s == ".." || s == "*" || s == ":/" || strings.HasPrefix(s, "./") || strings.HasPrefix(s, ":(")
}

// gitSwitch: switching refuses to lose changes unless forced.
func gitSwitch(args []arg) judgement {
	o := scanOptions(args, scanSpec{valued: "-c -C --create --force-create --orphan --conflict"})
	if o.has("-f", "--force", "--discard-changes") {
		return is(Destructive, "git switch --discard-changes/--force throws away uncommitted changes")
	}
	if o.has("-c", "-C", "--create", "--force-create", "--orphan") {
		return is(WorkspaceWrite, "git switch -c creates a branch and switches to it")
	}
	return is(WorkspaceWrite, "git switch changes branch, keeping local changes")
}

// gitRestore overwrites working-tree files unless it only unstages.
func gitRestore(args []arg) judgement {
	o := scanOptions(args, scanSpec{valued: "-s --source --pathspec-from-file"})
	switch {
	case o.has("-h", "--help"):
		return is(ReadOnly, "git restore only prints help")
	case o.has("-S", "--staged") && !o.has("-W", "--worktree"):
		return is(WorkspaceWrite, "git restore --staged only unstages changes")
	}
	return is(Destructive, "git restore overwrites working-tree files, discarding uncommitted changes")
}

// gitReset: --hard and --merge discard uncommitted changes.
func gitReset(args []arg) judgement {
	o := scanOptions(args, scanSpec{valued: "--pathspec-from-file"})
	if o.has("--hard") {
		return is(Destructive, "git reset --hard discards uncommitted changes")
	}
	if o.has("--merge") {
		return is(Destructive, "git reset --merge can discard uncommitted changes")
	}
	return is(WorkspaceWrite, "git reset moves HEAD and the index, keeping the working tree")
}

// gitClean deletes untracked files, which git cannot bring back, as soon as
// it is forced (-f), even together with -n.
func gitClean(args []arg) judgement {
	o := scanOptions(args, scanSpec{valued: "-e --exclude"})
	switch {
	case o.has("-f", "--force"):
		return is(Destructive, "git clean -f deletes untracked files, which git cannot restore")
	case o.has("-n", "--dry-run"):
		return is(ReadOnly, "git clean -n only lists what it would delete")
	}
	return is(WorkspaceWrite, "git clean without -f refuses to delete unless configured otherwise")
}

// gitPush sends commits. Forcing (--force, -f, +refspec), deleting remote
// branches (--delete, :branch), --mirror and --prune can destroy commits
// others have; --force-with-lease and --force-if-includes refuse to
// overwrite work the pusher has not seen, so they are not destructive.
func gitPush(args []arg) judgement {
	o := scanOptions(args, scanSpec{valued: "--repo --receive-pack --exec -o --push-option"})
	lease := o.hasPrefix("--force-with-lease") || o.has("--force-if-includes")
	switch {
	case (o.has("-f", "--force")) && !lease:
		return is(Destructive, "git push --force overwrites remote history, which can destroy other people's commits")
	case o.has("-d", "--delete"):
		return is(Destructive, "git push --delete deletes remote branches")
	case o.has("--mirror", "--prune"):
		return is(Destructive, "git push "+firstOf(o, "--mirror", "--prune")+" deletes remote refs that are not local")
	}
	for i, op := range o.operands {
		if i == 0 {
			continue // the remote
		}
		if strings.HasPrefix(op.text, "+") && !lease {
			return is(Destructive, "git push "+op.text+" force-pushes that ref, overwriting remote history")
		}
		if strings.HasPrefix(op.text, ":") && len(op.text) > 1 {
			return is(Destructive, "git push "+op.text+" deletes the remote branch")
		}
	}
	if lease {
		return is(Network, "git push --force-with-lease only overwrites what the pusher has seen")
	}
	return is(Network, "git push sends commits to a remote")
}

func firstOf(o options, names ...string) string {
	for _, n := range names {
		if o.has(n) {
			return n
		}
	}
	return ""
}

// gitBranch lists, creates and deletes branches. -D (or -d --force)
// deletes a branch even when its commits are merged nowhere.
func gitBranch(args []arg) judgement {
	o := scanOptions(args, scanSpec{valued: "-u --set-upstream-to --contains --no-contains --merged --no-merged --points-at --sort --format --color"})
	switch {
	case o.has("-D") || o.has("-d", "--delete") && o.has("-f", "--force"):
		return is(Destructive, "git branch -D deletes a branch even if its commits are not merged anywhere")
	case o.has("-d", "--delete"):
		return is(WorkspaceWrite, "git branch -d deletes a branch only if it is merged")
	case o.has("-m", "-M", "--move", "-c", "-C", "--copy", "-u", "--set-upstream-to", "--unset-upstream", "--edit-description"):
		return is(WorkspaceWrite, "git branch renames, copies or configures a branch")
	case len(o.operands) == 0 || o.has("-l", "--list", "--show-current", "-a", "--all", "-r", "--remotes", "--contains", "--merged", "--no-merged", "--points-at") && !o.has("-f", "--force"):
		return is(ReadOnly, "git branch lists branches")
	}
	return is(WorkspaceWrite, "git branch creates a branch")
}

// gitStash: drop and clear destroy stashed work.
func gitStash(args []arg) judgement {
	verb, _ := subcommand(args, "-m --message")
	switch verb {
	case "drop", "clear":
		return is(Destructive, "git stash "+verb+" deletes stashed changes, which exist nowhere else")
	case "list", "show":
		return is(ReadOnly, "git stash "+verb+" only reads")
	}
	return is(WorkspaceWrite, "git stash saves or applies local changes")
}

// gitListOrChange: with no operands or a listing option the subcommand
// lists; otherwise it changes the repository.
func gitListOrChange(args []arg, sub, listing string) judgement {
	o := scanOptions(args, scanSpec{valued: "-m --message -F --file -u --local-user --sort --format --contains --points-at -n"})
	listed := false
	for _, op := range o.opts {
		if hasWord(listing, op.name) {
			listed = true
		}
	}
	if len(o.operands) == 0 || listed && !o.has("-d", "--delete", "-a", "-s", "-f") {
		return is(ReadOnly, "git "+sub+" lists")
	}
	return is(WorkspaceWrite, "git "+sub+" changes the repository")
}

// gitWorktree: removing a worktree by force deletes its uncommitted work.
func gitWorktree(args []arg) judgement {
	verb, rest := subcommand(args, "")
	switch verb {
	case "", "list":
		return is(ReadOnly, "git worktree list only reads")
	case "remove":
		if o := scanOptions(rest, scanSpec{}); o.has("-f", "--force") {
			return is(Destructive, "git worktree remove --force deletes a worktree with its uncommitted changes")
		}
	}
	return is(WorkspaceWrite, "git worktree "+verb+" changes worktrees")
}

// gitConfig reads with --get/--list; writing the user's or system
// configuration is config_mutation; writing the repository's is a
// workspace write.
func gitConfig(args []arg) judgement {
	o := scanOptions(args, scanSpec{valued: "-f --file --blob --type --default"})
	verb := ""
	if len(o.operands) > 0 {
		verb = o.operands[0].text
	}
	reading := o.has("-l", "--list", "--get", "--get-all", "--get-regexp", "--get-urlmatch") ||
		verb == "get" || verb == "list" || len(o.operands) == 1 && !strings.Contains(verb, "=")
	if reading && !o.has("--unset", "--unset-all", "--add", "--replace-all", "--remove-section", "--rename-section") {
		return is(ReadOnly, "git config reads configuration")
	}
	if o.has("--global", "--system") {
		return is(ConfigMutation, "git config --global changes the user's or system's git configuration")
	}
	return is(WorkspaceWrite, "git config changes this repository's configuration")
}
