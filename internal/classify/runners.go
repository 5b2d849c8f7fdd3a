package classify

import "strings"

// Runners: programs that run another command after setting something up —
// a CPU or memory policy (chrt, numactl, prlimit), a sandbox or a tracer
// (firejail, strace, valgrind), an architecture (arch -x86_64), another
// user (runuser, pkexec, gosu), a language environment (poetry run, uv
// run, bundle exec, nix-shell --run), a file watcher (entr, watchexec) or
// a benchmark (hyperfine). Like the wrappers, they never hide the command:
// it is judged as it is, and running it as another user adds privilege.

// runnerPrograms registers the runners.
func runnerPrograms(r *registry) {
	r.handle(simpleWrapper("", 1), "chrt", "setarch")
	r.handle(simpleWrapper("-N --cpunodebind -C --physcpubind -m --membind -p --preferred -i --interleave", 0), "numactl")
	r.handle(simpleWrapper("-p --pid -o --output", 0), "prlimit")
	r.handle(simpleWrapper("--reuid --regid --groups --inh-caps --ambient-caps --bounding-set --securebits --selinux-label --apparmor-profile", 0), "setpriv")
	r.handle(simpleWrapper("-u --unit -p --property -E --setenv --uid --gid -M --machine --description --slice --on-active --on-calendar --on-boot --on-unit-active --working-directory -H --host", 0), "systemd-run")
	r.handle(simpleWrapper("--profile --private --net --ip --dns --whitelist --blacklist --read-only --name", 0), "firejail")
	r.handle(simpleWrapper("-o -e -p -s -u -E -P -a -b -S -O -X", 0), "strace", "ltrace")
	r.handle(simpleWrapper("", 0), "valgrind", "xvfb-run", "dbus-run-session", "tini", "dumb-init", "linux32", "linux64", "i386", "x86_64", "nocache", "eatmydata", "fakeroot", "faketime")
	r.handle(archCmd, "arch")
	r.handle(userRunner(1), "gosu", "su-exec", "setuidgid")
	r.handle(runuserCmd, "runuser")
	r.handle(pkexecCmd, "pkexec")
	r.handle(sgCmd, "sg")
	r.handle(hyperfineCmd, "hyperfine")
	r.handle(entrCmd, "entr")
	r.handle(watchexecCmd, "watchexec")
	r.handle(envRunner("exec", 1), "direnv")
	r.handle(envRunner("exec", 0), "bundle", "rbenv", "pyenv", "asdf", "mise", "rtx", "nodenv", "goenv", "jenv")
	r.handle(envRunner("run", 0), "pipenv", "hatch")
	r.handle(nixShellCmd, "nix-shell", "nix")
}

// archCmd: arch prints the architecture; on macOS `arch -x86_64 CMD` runs
// CMD under that architecture.
func archCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-d", stopAtOperand: true})
	return runInner(st, c.args[o.rest:], c.in, is(ReadOnly, "arch prints the architecture"))
}

// userRunner: gosu USER CMD, su-exec USER CMD: the command runs as USER.
func userRunner(skip int) handler {
	return func(st *state, c command) judgement {
		o := scanOptions(c.args, scanSpec{stopAtOperand: true})
		rest := c.args[o.rest:]
		if len(rest) <= skip {
			return is(ReadOnly, c.name+" without a command runs nothing")
		}
		st.call(rest[skip:], c.in)
		return escalates(c.name, rest[0].text)
	}
}

// runuserCmd: runuser [-u USER] [--] CMD, or runuser -l USER -c 'CMD';
// without a command it opens a shell as the user.
func runuserCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-u --user -g --group -G --supp-group -c --command -s --shell -w --whitelist-environment", stopAtOperand: true})
	user, _ := o.value("-u", "--user")
	rest := c.args[o.rest:]
	if script, ok := o.value("-c", "--command"); ok {
		if user == "" && len(rest) > 0 {
			user = rest[0].text
		}
		st.script(script, c.in)
		return escalates("runuser", user)
	}
	if user == "" && len(rest) > 0 {
		user, rest = rest[0].text, rest[1:]
		if len(rest) > 0 && rest[0].text == "-c" && len(rest) > 1 {
			st.script(rest[1].text, c.in)
			return escalates("runuser", user)
		}
	}
	if len(rest) == 0 {
		return is(Privilege, "runuser opens a shell as "+user)
	}
	st.call(rest, c.in)
	return escalates("runuser", user)
}

// pkexecCmd: pkexec [--user USER] CMD runs CMD as root (or USER).
func pkexecCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "--user", stopAtOperand: true})
	user := "root"
	if u, ok := o.value("--user"); ok {
		user = u
	}
	rest := c.args[o.rest:]
	if len(rest) == 0 {
		return is(Privilege, "pkexec opens a shell as "+user)
	}
	st.call(rest, c.in)
	return escalates("pkexec", user)
}

// sgCmd: sg GROUP [-c] CMD runs CMD with GROUP as its group.
func sgCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{stopAtOperand: true})
	rest := c.args[o.rest:]
	if len(rest) < 2 {
		return is(Privilege, "sg opens a shell in another group")
	}
	group, rest := rest[0].text, rest[1:]
	if rest[0].text == "-c" && len(rest) > 1 {
		st.script(rest[1].text, c.in)
	} else {
		st.script(strings.Join(texts(rest), " "), c.in)
	}
	return escalates("sg", "group "+group)
}

// hyperfineCmd: hyperfine runs each operand, and its --prepare, --setup,
// --cleanup and --conclude commands, through a shell.
func hyperfineCmd(st *state, c command) judgement {
	const commands = "-p --prepare -s --setup -c --cleanup --conclude --reference"
	o := scanOptions(c.args, scanSpec{valued: commands + " -w --warmup -r --runs -m --min-runs -M --max-runs -L --parameter-list -P --parameter-scan -D --parameter-step-size -N -S --shell --export-json --export-csv --export-markdown --export-asciidoc --export-orgmode --time-unit -n --command-name --output --input --style --sort"})
	scripts := texts(o.operands)
	for _, op := range o.opts {
		if hasWord(commands, op.name) {
			scripts = append(scripts, op.value)
		}
	}
	if len(scripts) == 0 {
		return is(ReadOnly, "hyperfine without a command runs nothing")
	}
	for _, s := range scripts {
		st.script(s, input{})
	}
	return judgement{wrapper: true}
}

// entrCmd: entr [-s] CMD runs CMD (or, with -s, a shell script) each time
// a file it watches changes.
func entrCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{stopAtOperand: true})
	rest := c.args[o.rest:]
	if len(rest) == 0 {
		return is(ReadOnly, "entr without a command runs nothing")
	}
	if o.has("-s") {
		st.script(rest[0].text, input{})
		return judgement{wrapper: true}
	}
	st.call(rest, input{})
	return judgement{wrapper: true}
}

// watchexecCmd: watchexec [options] [--] CMD runs CMD on every change; a
// single operand is a shell command line.
func watchexecCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-e --exts -w --watch -W --watch-non-recursive -i --ignore -f --filter -d --debounce --delay-run -s --signal --stop-signal --stop-timeout --shell --project-origin --workdir -E --env --emit-events-to --on-busy-update --filter-file --ignore-file --wrap-process --color"})
	rest := o.operands
	if len(rest) == 0 {
		return is(ReadOnly, "watchexec without a command runs nothing")
	}
	if len(rest) == 1 {
		st.script(rest[0].text, input{})
		return judgement{wrapper: true}
	}
	st.call(rest, input{})
	return judgement{wrapper: true}
}

// envRunner returns the handler of a tool whose VERB runs a command in a
// language environment (bundle exec CMD, pipenv run CMD, direnv exec DIR
// CMD, mise exec TOOL@VERSION -- CMD): the command is judged; the tool's
// other subcommands follow the general verbs.
func envRunner(verb string, skip int) handler {
	return func(st *state, c command) judgement {
		v, rest := subcommand(c.args, "")
		if v != verb {
			return subcommandCLI(Unknown, "runs a command logbook does not know", nil)(st, c)
		}
		for i, a := range rest {
			if a.text == "--" && a.literal {
				return runInner(st, rest[i+1:], c.in, is(ReadOnly, c.name+" "+verb+" without a command runs nothing"))
			}
		}
		o := scanOptions(rest, scanSpec{valued: "-n --name -e --env", stopAtOperand: true})
		rest = rest[o.rest:]
		if len(rest) <= skip {
			return is(ReadOnly, c.name+" "+verb+" without a command runs nothing")
		}
		return runInner(st, rest[skip:], c.in, judgement{})
	}
}

// nixShellCmd: nix-shell --run CMD and --command CMD run a command line;
// nix develop -c CMD and nix shell ... -c CMD run a command; anything else
// opens a shell or builds, which logbook cannot read.
func nixShellCmd(st *state, c command) judgement {
	args := c.args
	if c.name == "nix" {
		verb, rest := subcommand(args, "")
		switch verb {
		case "develop", "shell":
			args = rest
		case "search", "eval", "flake", "log", "path-info", "why-depends", "show-config", "doctor":
			if verb == "flake" {
				if sub, _ := subcommand(rest, ""); sub != "show" && sub != "metadata" && sub != "info" && sub != "check" {
					return is(ConfigMutation, "nix flake "+sub+" changes the flake")
				}
			}
			return is(ReadOnly, "nix "+verb+" only reads")
		case "build":
			return is(WorkspaceWrite, "nix build builds into the store and ./result")
		case "profile":
			return is(PackageInstall, "nix profile installs or removes software")
		case "store":
			if sub, _ := subcommand(rest, ""); sub == "gc" || sub == "delete" {
				return is(ConfigMutation, "nix store "+sub+" deletes unused store paths, which can be built again")
			}
			return is(ReadOnly, "nix store only reads")
		default:
			return is(Unknown, "nix "+verb+" runs or builds something logbook cannot read")
		}
	}
	for i, a := range args {
		switch a.text {
		case "--run", "--command":
			if i+1 < len(args) {
				st.script(args[i+1].text, input{})
				return judgement{wrapper: true}
			}
		case "-c":
			if i+1 < len(args) {
				if c.name == "nix" {
					st.call(args[i+1:], input{})
				} else {
					st.script(args[i+1].text, input{})
				}
				return judgement{wrapper: true}
			}
		}
	}
	return is(Unknown, c.name+" opens a shell with packages logbook cannot see")
}
