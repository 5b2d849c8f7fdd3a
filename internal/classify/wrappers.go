package classify

import "strings"

// Wrappers are programs that run another command: sudo, env, bash -c, ssh,
// xargs and the like. Each one finds the inner command, classifies it with
// st.call or st.script (one level deeper, so that nesting is bounded), and
// returns what the wrapper itself adds: privilege for sudo, nothing for
// nice. A judgement with an empty rule adds no reason of its own.

// wrapperPrograms registers the wrappers and the shells.
func wrapperPrograms(r *registry) {
	r.handle(sudoCmd, "sudo")
	r.handle(doasCmd, "doas")
	r.handle(envCmd, "env")
	r.handle(sshCmd, "ssh", "autossh", "mosh")
	r.handle(suCmd, "su")
	r.handle(simpleWrapper("", 0), "nohup", "setsid", "unbuffer", "caffeinate", "chronic", "catchsegv", "proxychains", "proxychains4", "torsocks", "builtin")
	r.handle(simpleWrapper("-n --adjustment", 0), "nice")
	r.handle(simpleWrapper("-i -o -e --input --output --error", 0), "stdbuf")
	r.handle(simpleWrapper("", 1), "taskset")
	r.handle(timeCmd, "time")
	r.handle(commandCmd, "command")
	r.handle(execCmd, "exec")
	r.handle(timeoutCmd, "timeout", "gtimeout")
	r.handle(watchCmd, "watch")
	r.handle(flockCmd, "flock")
	r.handle(ioniceCmd, "ionice")
	r.handle(chrootCmd, "chroot")
	r.handle(nsenterCmd, "nsenter", "unshare")
	r.handle(busyboxCmd, "busybox", "toybox")
	r.handle(evalCmd, "eval")
	r.handle(sourceCmd, "source", ".")
	r.handle(trapCmd, "trap")
	r.handle(xargsCmd, "xargs")
	r.handle(parallelCmd, "parallel")
	r.handle(shellCmd, "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "fish", "rbash", "busybox-sh")
}

// runInner classifies the inner command of a wrapper, or says what happens
// when there is none.
func runInner(st *state, inner []arg, in input, none judgement) judgement {
	if len(inner) == 0 {
		return none
	}
	st.call(inner, in)
	return judgement{wrapper: true}
}

// sudoCmd: sudo [options] [--] [command]. The command decides the class:
// sudo apt install is package_install, sudo ls reads. What sudo adds on its
// own is a root shell (sudo -i, sudo -s without a command), which is
// privilege, as is sudoedit.
func sudoCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{
		valued:        "-u --user -g --group -h --host -p --prompt -C --close-from -D --chdir -r --role -t --type -U --other-user -T --command-timeout -R --chroot",
		stopAtOperand: true,
	})
	inner := c.args[o.rest:]
	user := "root"
	if u, ok := o.value("-u", "--user"); ok {
		user = u
	}
	switch {
	case len(inner) == 0 && o.has("-i", "--login", "-s", "--shell"):
		return is(Privilege, c.name+" opens a shell as "+user)
	case o.has("-e", "--edit"):
		return is(Privilege, c.name+" -e edits files as "+user)
	case len(inner) == 0 && o.has("-l", "--list", "-v", "--validate", "-k", "-K", "--reset-timestamp", "--remove-timestamp", "-V", "--version", "-h", "--help"):
		return is(ReadOnly, c.name+" only lists or refreshes the caller's rights")
	case len(inner) == 0:
		return is(ReadOnly, c.name+" without a command runs nothing")
	}
	st.call(inner, c.in)
	return escalates(c.name, user)
}

// escalates is the judgement on a wrapper that runs its command as another
// user: the command is judged on its own, and running it as root (or
// anyone) is privilege escalation, which the default policy asks about.
func escalates(prog, user string) judgement {
	return judgement{class: Privilege, rule: prog + " runs the command as " + user + " (privilege escalation)", wrapper: true}
}

// doasCmd: doas [-nSs] [-C config] [-u user] command.
func doasCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-u -C", stopAtOperand: true})
	inner := c.args[o.rest:]
	user := "root"
	if u, ok := o.value("-u"); ok {
		user = u
	}
	if len(inner) == 0 {
		if o.has("-s") {
			return is(Privilege, "doas -s opens a shell as "+user)
		}
		return is(ReadOnly, "doas without a command runs nothing")
	}
	st.call(inner, c.in)
	return escalates("doas", user)
}

// envCmd: env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE...] [command].
func envCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{
		valued:        "-u --unset -C --chdir -P -S --split-string -a --argv0",
		stopAtOperand: true,
	})
	inner := c.args[o.rest:]
	if len(inner) > 0 && inner[0].text == "-" { // "env -" is env -i
		inner = inner[1:]
	}
	for len(inner) > 0 && strings.Contains(inner[0].text, "=") {
		if strings.HasPrefix(inner[0].text, "TMPDIR=") {
			st.tmpdirSet = true
		}
		inner = inner[1:]
	}
	if s, ok := o.value("-S", "--split-string"); ok {
		// -S splits its string into words that come before the rest.
		split := splitFields(s)
		for len(split) > 0 && strings.Contains(split[0].text, "=") {
			split = split[1:]
		}
		inner = append(split, inner...)
	}
	if dir, ok := o.value("-C", "--chdir"); ok && len(inner) > 0 {
		saved := st.dir
		st.chdir(lit(dir))
		st.dir.unsure = false // env runs the command only if it could change directory
		defer func() { st.dir = saved }()
	}
	return runInner(st, inner, c.in, is(SecretRead, "env without a command prints the whole environment, secrets included"))
}

// shellCmd: bash [options] [-c SCRIPT [name [args]] | -s | FILE].
func shellCmd(st *state, c command) judgement {
	args := c.args
	hasC, fromStdin := false, false
	i := 0
scan:
	for ; i < len(args); i++ {
		t := args[i].text
		switch {
		case !args[i].literal || len(t) < 2 || t[0] != '-' && t[0] != '+':
			break scan
		case t == "--":
			i++
			break scan
		case t == "--rcfile" || t == "--init-file":
			i++
		case strings.HasPrefix(t, "--"):
		default:
			for _, ch := range t[1:] {
				switch ch {
				case 'c':
					hasC = true
				case 's':
					fromStdin = true
				case 'o', 'O':
					i++ // -o OPTION
				}
			}
		}
	}
	if i > len(args) {
		i = len(args)
	}
	operands := args[i:]
	switch {
	case hasC && len(operands) == 0:
		return is(ReadOnly, c.name+" -c without a script refuses to run")
	case hasC:
		return runScriptArg(st, c.name, operands[0], c.in)
	case len(operands) > 0 && !fromStdin:
		return is(Unknown, c.name+" runs the script file "+quoteText(operands[0])+", which logbook cannot read")
	}
	return runStdinScript(st, c.name, c.in)
}

// runScriptArg classifies the script given to a shell as one argument.
func runScriptArg(st *state, prog string, script arg, in input) judgement {
	switch {
	case script.fromInput:
		return is(Destructive, prog+" runs commands taken from its input as a script, which nobody has read: anything can happen")
	case script.subst:
		return is(Destructive, prog+" runs another command's output as a script ("+clip(script.text)+"), which nobody has read: anything can happen")
	case !script.literal:
		return is(Unknown, prog+" runs a script that is only known at run time ("+clip(script.text)+")")
	}
	st.script(script.text, in)
	return judgement{wrapper: true}
}

// runStdinScript classifies a shell that reads its script from standard
// input: a here-document is read like any script; a pipe from a command
// whose output is unknown (curl, base64 -d) runs what nobody has read.
func runStdinScript(st *state, prog string, in input) judgement {
	switch in.kind {
	case fromText:
		st.script(in.text, input{})
		return judgement{wrapper: true}
	case fromStream:
		return is(Destructive, prog+" runs commands read from a pipe, which nobody has read: anything can happen")
	case fromFile:
		return is(Unknown, prog+" runs a script read from a file, which logbook cannot read")
	}
	return is(Unknown, prog+" starts an interactive shell")
}

// sshCmd: ssh [options] HOST [COMMAND...]. ssh joins the command words with
// spaces and the remote shell parses the result, so that is what is read.
func sshCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{
		valued:        "-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B -P",
		stopAtOperand: true,
	})
	rest := c.args[o.rest:]
	forwards := o.has("-L", "-R", "-D", "-W")
	switch {
	case o.has("-G", "-V", "-Q"):
		return is(ReadOnly, "ssh only prints its configuration or version")
	case len(rest) == 0:
		return is(ReadOnly, "ssh without a host runs nothing")
	case (len(rest) == 1 || len(rest) == 2 && rest[1].text == "--") && (forwards || o.has("-N")):
		return is(Network, "ssh opens a tunnel to "+rest[0].text)
	case len(rest) == 1 || len(rest) == 2 && rest[1].text == "--":
		return is(Unknown, "ssh opens an interactive shell on "+rest[0].text)
	}
	remote := rest[1:]
	if remote[0].text == "--" {
		remote = remote[1:]
	}
	st.script(strings.Join(texts(remote), " "), c.in)
	if forwards {
		return judgement{class: Network, rule: "ssh also forwards ports", wrapper: true}
	}
	return judgement{wrapper: true}
}

// suCmd: su [options] [-] [user] [-c COMMAND]. Like sudo, the command
// decides; without one su opens a shell as the user, which is privilege.
func suCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-c --command -s --shell -g --group -G --supp-group -w --whitelist-environment"})
	user := "root"
	for _, op := range o.operands {
		if op.text != "-" {
			user = op.text
			break
		}
	}
	script, ok := o.value("-c", "--command")
	if !ok {
		return is(Privilege, "su opens a shell as "+user)
	}
	st.script(script, c.in)
	return escalates("su", user)
}

// simpleWrapper handles wrappers whose options all come first and whose
// first operand is the command: nohup, nice, stdbuf, setsid...
func simpleWrapper(valued string, skip int) func(*state, command) judgement {
	return func(st *state, c command) judgement {
		o := scanOptions(c.args, scanSpec{valued: valued, stopAtOperand: true})
		inner := c.args[o.rest:]
		if len(inner) < skip {
			inner = nil
		} else {
			inner = inner[skip:]
		}
		return runInner(st, inner, c.in, is(ReadOnly, c.name+" without a command runs nothing"))
	}
}

// timeCmd is the time program (not the shell keyword): -o FILE writes.
func timeCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-f --format -o --output", stopAtOperand: true})
	if f, ok := o.value("-o", "--output"); ok {
		st.redirectWrite(lit(f))
	}
	return runInner(st, c.args[o.rest:], c.in, is(ReadOnly, "time without a command runs nothing"))
}

// commandCmd: command [-pvV] NAME [ARGS]. With -v or -V and one name it
// only says where the program is. With more words, read them as the
// command they spell: a lookup would not need them.
func commandCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{stopAtOperand: true})
	inner := c.args[o.rest:]
	if o.has("-v", "-V") && len(inner) <= 1 {
		return is(ReadOnly, "command -v only says what a name refers to")
	}
	return runInner(st, inner, c.in, is(ReadOnly, "command without a name runs nothing"))
}

// execCmd: exec [-cl] [-a NAME] [command]. Without a command it only
// applies its redirections, which are judged on their own.
func execCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-a", stopAtOperand: true})
	return runInner(st, c.args[o.rest:], c.in, judgement{wrapper: true})
}

// timeoutCmd: timeout [options] DURATION command.
func timeoutCmd(st *state, c command) judgement {
	return simpleWrapper("-s --signal -k --kill-after", 1)(st, c)
}

// watchCmd: watch [options] COMMAND... runs the words joined with spaces
// through sh -c, or exactly as given with -x.
func watchCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-n --interval -q --equexit", stopAtOperand: true})
	inner := c.args[o.rest:]
	switch {
	case len(inner) == 0:
		return is(ReadOnly, "watch without a command runs nothing")
	case o.has("-x", "--exec"):
		st.call(inner, input{})
	default:
		st.script(strings.Join(texts(inner), " "), input{})
	}
	return judgement{wrapper: true}
}

// flockCmd: flock [options] FILE COMMAND... or flock FILE -c SCRIPT.
func flockCmd(st *state, c command) judgement {
	const valued = "-w --wait --timeout -E --conflict-exit-code -c --command"
	o := scanOptions(c.args, scanSpec{valued: valued, stopAtOperand: true})
	rest := c.args[o.rest:]
	if len(rest) > 0 {
		rest = rest[1:] // the lock file or descriptor
	}
	o2 := scanOptions(rest, scanSpec{valued: valued, stopAtOperand: true})
	script, ok := o.value("-c", "--command")
	if s2, ok2 := o2.value("-c", "--command"); ok2 {
		script, ok = s2, true
	}
	if ok {
		st.script(script, c.in)
		return judgement{wrapper: true}
	}
	return runInner(st, rest[o2.rest:], c.in, is(ReadOnly, "flock on a descriptor only takes a lock"))
}

// ioniceCmd: ionice [-c class] [-n level] [-t] command, or -p PID.
func ioniceCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-c --class -n --classdata -p --pid -P --pgid -u --uid", stopAtOperand: true})
	if o.has("-p", "--pid", "-P", "--pgid", "-u", "--uid") {
		if o.has("-c", "--class", "-n", "--classdata") {
			return is(ServiceControl, "ionice changes the I/O priority of running processes")
		}
		return is(ReadOnly, "ionice shows the I/O priority of running processes")
	}
	return runInner(st, c.args[o.rest:], c.in, is(ReadOnly, "ionice without a command shows its own priority"))
}

// chrootCmd: chroot [options] NEWROOT [command]. Needs root.
func chrootCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "--userspec --groups", stopAtOperand: true})
	rest := c.args[o.rest:]
	if len(rest) == 0 {
		return is(ReadOnly, "chroot without a directory runs nothing")
	}
	if len(rest) == 1 {
		return is(Privilege, "chroot opens a root shell inside "+rest[0].text)
	}
	st.call(rest[1:], c.in)
	return judgement{class: Privilege, rule: "runs the command as root inside " + rest[0].text, wrapper: true}
}

// nsenterCmd: nsenter [options] [command]. Entering another process's
// namespaces needs root.
func nsenterCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-t --target -S --setuid -G --setgid -r --root -w --wd", stopAtOperand: true})
	inner := c.args[o.rest:]
	if len(inner) == 0 {
		return is(Privilege, "nsenter opens a shell in another process's namespaces")
	}
	st.call(inner, c.in)
	return judgement{class: Privilege, rule: "runs the command in another process's namespaces", wrapper: true}
}

// busyboxCmd: busybox APPLET args runs the applet.
func busyboxCmd(st *state, c command) judgement {
	return runInner(st, c.args, c.in, is(ReadOnly, "busybox without an applet lists its applets"))
}

// evalCmd: eval joins its words and runs them as shell code. Even when the
// words are known it stays at least unknown, as the issue of trust is the
// construct itself.
func evalCmd(st *state, c command) judgement {
	if len(c.args) == 0 {
		return is(ReadOnly, "eval without words runs nothing")
	}
	st.script(strings.Join(texts(c.args), " "), c.in)
	return is(Unknown, "eval runs its words as shell code")
}

// sourceCmd: source FILE / . FILE runs a file in the current shell.
func sourceCmd(st *state, c command) judgement {
	if len(c.args) == 0 {
		return is(ReadOnly, c.name+" without a file runs nothing")
	}
	return is(Unknown, c.name+" runs the shell file "+quoteText(c.args[0])+" in this shell, which logbook cannot read")
}

// trapCmd: trap 'COMMANDS' SIGNALS runs COMMANDS later.
func trapCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{stopAtOperand: true})
	rest := c.args[o.rest:]
	if len(rest) < 2 || o.has("-l", "-p") {
		return is(ReadOnly, "trap lists or resets signal handlers")
	}
	return runScriptArg(st, "trap", rest[0], input{})
}

// xargsCmd: xargs [options] [command [initial-arguments]] runs the command
// with words read from its input appended, or put in place of the -I
// string. The input's words stay marked as input even when the text piped
// in is known: what xargs is for is running commands on data.
func xargsCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{
		valued:        "-a --arg-file -d --delimiter -E -I -L -n --max-args -P --max-procs -s --max-chars --process-slot-var -J -R -S --max-lines",
		stopAtOperand: true,
	})
	inner := c.args[o.rest:]
	if len(inner) == 0 {
		inner = []arg{lit("echo")}
	}
	replace := ""
	if r, ok := o.value("-I", "-J"); ok {
		replace = r
	} else if r, ok := o.value("--replace"); ok && r != "" {
		replace = r
	} else if o.has("-i", "--replace") {
		replace = "{}"
	}
	in := c.in
	if o.has("-a", "--arg-file") {
		in = input{kind: fromFile}
	}
	runWithItems(st, inner, replace, inputItems(in, replace != "" || o.has("-L", "--max-lines")))
	return judgement{wrapper: true}
}

// inputItems splits known input into words (or lines), marked as input.
// Unknown input is one placeholder word.
func inputItems(in input, lines bool) []arg {
	if in.kind != fromText {
		return []arg{inputArg()}
	}
	var parts []string
	if lines {
		parts = strings.Split(strings.TrimRight(in.text, "\n"), "\n")
	} else {
		parts = strings.Fields(in.text)
	}
	if len(parts) > maxInputItems {
		parts = parts[:maxInputItems]
	}
	items := make([]arg, 0, len(parts))
	for _, p := range parts {
		items = append(items, arg{text: p, fromInput: true})
	}
	if len(items) == 0 {
		return []arg{inputArg()}
	}
	return items
}

// runWithItems classifies cmd run on input items: once per item with
// replace put in place of the string, or once with all items appended.
func runWithItems(st *state, cmd []arg, replace string, items []arg) {
	if replace == "" {
		argv := append(append([]arg(nil), cmd...), items...)
		st.call(argv, input{})
		return
	}
	for _, item := range items {
		argv := make([]arg, len(cmd))
		for i, a := range cmd {
			argv[i] = a
			if strings.Contains(a.text, replace) {
				argv[i] = arg{text: strings.ReplaceAll(a.text, replace, item.text), fromInput: true, literal: item.literal && a.literal}
			}
		}
		st.call(argv, input{})
	}
}

// parallelCmd: GNU parallel [options] [command] [::: values...]. With no
// command each value is itself a command line; with no ::: the values come
// from standard input, as with xargs.
func parallelCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{
		valued:        "-j --jobs -N -n --max-args -P -S --sshlogin -d --delimiter -a --arg-file -I --colsep -E --tmpdir --results --joblog --timeout --delay --memfree --load -L --max-lines --halt --retries --env --workdir --tag-string -C --basefile",
		stopAtOperand: true,
	})
	rest := c.args[o.rest:]
	cmd, values, sep := rest, []arg(nil), ""
	for i, a := range rest {
		if strings.HasPrefix(a.text, ":::") {
			cmd, values, sep = rest[:i], rest[i+1:], a.text
			break
		}
	}
	// Only ::: lists values; :::: and friends name files of values.
	var items []arg
	switch {
	case sep == ":::" || sep == ":::+":
		items = values
		if len(items) > maxInputItems {
			items = items[:maxInputItems]
		}
	case sep != "" || o.has("-a", "--arg-file"):
		items = []arg{inputArg()}
	default:
		items = inputItems(c.in, true)
	}
	if len(cmd) == 0 {
		// Each value is a command line. Known text is read as such;
		// unknown input is commands nobody has read.
		for _, item := range items {
			if item.fromInput && c.in.kind == fromText {
				item = lit(item.text)
			}
			j := runScriptArg(st, "parallel", item, input{})
			if j.rule != "" {
				st.add(c.line(), j.class, j.rule)
			}
		}
		return judgement{wrapper: true}
	}
	replace := ""
	for _, a := range cmd {
		if strings.Contains(a.text, "{}") {
			replace = "{}"
		}
	}
	if replace == "" {
		for _, item := range items {
			runWithItems(st, cmd, "", []arg{item})
		}
	} else {
		runWithItems(st, cmd, replace, items)
	}
	return judgement{wrapper: true}
}
