package classify

// Shell builtins and small utilities that print, test or change only the
// shell's own state. Those that print every variable (env, printenv, set,
// export -p, declare -p without names) or the shell's history print
// secrets: they are secret_read.

// shellPrograms registers the shell builtins and utilities.
func shellPrograms(r *registry) {
	r.handle(cdCmd, "cd", "pushd", "popd")
	r.handle(optionWrites("-s --set", ConfigMutation, "sets the system clock", "prints the date"), "date")
	r.handle(echoCmd, "echo", "printf")
	r.handle(printenvCmd, "printenv")
	r.handle(exportCmd, "export")
	r.handle(setCmd, "set")
	r.handle(declareCmd, "declare", "typeset")
	r.handle(historyCmd, "history", "fc")
	r.fixed(ReadOnly, map[string]string{
		"true":  "does nothing",
		"false": "does nothing", ":": "does nothing", "pwd": "prints the working directory",
		"which": "says where a program is", "whereis": "says where a program is",
		"type": "says what a name refers to", "hash": "lists remembered program paths",
		"test": "tests a condition", "[": "tests a condition", "[[": "tests a condition", "sleep": "waits",
		"seq": "prints numbers", "yes": "prints a word forever", "expr": "evaluates an expression",
		"bc": "calculates", "dc": "calculates", "numfmt": "formats numbers", "factor": "factors numbers",
		"man": "shows a manual page", "info": "shows documentation", "help": "shows shell help",
		"whatis": "describes a command", "apropos": "searches manual pages", "tldr": "shows examples",

		"dirs":  "lists the directory stack",
		"unset": "unsets shell variables",
		"shopt": "sets shell options", "alias": "defines a shell alias", "unalias": "removes a shell alias",
		"local":    "declares variables",
		"readonly": "declares variables", "let": "evaluates arithmetic", "return": "returns from a function",
		"exit": "exits the shell", "break": "leaves a loop", "continue": "continues a loop",
		"shift": "shifts arguments", "wait": "waits for jobs", "jobs": "lists jobs", "fg": "resumes a job",
		"bg": "resumes a job", "disown": "detaches a job", "umask": "sets the file mode mask",
		"ulimit": "sets shell limits", "getopts": "parses options",
		"read": "reads a line", "mapfile": "reads lines", "readarray": "reads lines",
		"times": "prints process times", "cal": "prints a calendar",
		"tty": "prints the terminal name", "stty": "shows terminal settings", "tput": "queries the terminal",
		"clear": "clears the screen", "reset": "resets the terminal",
	})
}

// echoCmd prints its arguments; a variable whose name says it holds a
// secret ($GITHUB_TOKEN) prints the secret, unless the output goes into a
// pipe or a file (echo "$TOKEN" | docker login --password-stdin).
func echoCmd(st *state, c command) judgement {
	for _, a := range c.args {
		if st.unseen > 0 {
			break
		}
		if a.literal {
			continue
		}
		if name, ok := secretVarIn(a.text); ok {
			return is(SecretRead, c.name+" prints $"+name+", which holds a secret")
		}
	}
	if c.name == "echo" {
		return is(ReadOnly, "echo prints its arguments")
	}
	return is(ReadOnly, "printf prints its arguments")
}

// printenvCmd prints the variables named, or the whole environment.
func printenvCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{})
	if len(o.operands) == 0 && !helpOnly(c.args) {
		return is(SecretRead, "printenv without a name prints the whole environment, secrets included")
	}
	for _, op := range o.operands {
		if secretVarName(op.text) {
			return is(SecretRead, "printenv "+op.text+" prints a secret")
		}
	}
	return is(ReadOnly, "printenv prints the variables named")
}

// exportCmd sets variables; without names (or with -p alone) it prints
// every exported variable.
func exportCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{})
	if len(o.operands) == 0 && !o.has("-n", "-f") {
		return is(SecretRead, "export without names prints every exported variable, secrets included")
	}
	return is(ReadOnly, "export sets variables in this shell")
}

// setCmd without arguments prints every shell variable; with arguments it
// sets options or the positional parameters (set -o alone prints only
// options).
func setCmd(_ *state, c command) judgement {
	if len(c.args) == 0 {
		return is(SecretRead, "set without arguments prints every shell variable, secrets included")
	}
	return is(ReadOnly, "set sets shell options")
}

// declareCmd: declare and typeset without names print variables (with
// -f or -F, functions); with names they declare them, or print them with
// -p.
func declareCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{})
	switch {
	case o.has("-f", "-F"):
		return is(ReadOnly, c.name+" lists functions")
	case len(o.operands) == 0:
		return is(SecretRead, c.name+" without names prints every variable, secrets included")
	case o.has("-p"):
		for _, op := range o.operands {
			if secretVarName(op.text) {
				return is(SecretRead, c.name+" -p "+op.text+" prints a secret")
			}
		}
	}
	return is(ReadOnly, c.name+" declares variables")
}

// historyCmd: history and fc -l print the commands typed before, which
// hold the passwords and tokens people type; history -c, -d, -w, -a, -r,
// -n and -s change the history; fc without -l runs commands again.
func historyCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-d -e"})
	switch {
	case c.name == "fc" && !o.has("-l"):
		return is(Unknown, "fc runs commands from the shell's history again")
	case o.has("-c", "-d", "-w", "-a", "-r", "-n", "-s"):
		return is(ConfigMutation, c.name+" changes the shell's history")
	}
	return is(SecretRead, c.name+" prints shell history, which holds what people typed, passwords included")
}
