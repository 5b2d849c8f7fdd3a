package classify

// Shell builtins and small utilities that print, test or change only the
// shell's own state.

// shellPrograms registers the shell builtins and utilities.
func shellPrograms(r *registry) {
	r.fixed(ReadOnly, map[string]string{
		"echo": "prints its arguments", "printf": "prints its arguments", "true": "does nothing",
		"false": "does nothing", ":": "does nothing", "pwd": "prints the working directory",
		"which": "says where a program is", "whereis": "says where a program is",
		"type": "says what a name refers to", "hash": "lists remembered program paths",
		"test": "tests a condition", "[": "tests a condition", "[[": "tests a condition", "sleep": "waits",
		"seq": "prints numbers", "yes": "prints a word forever", "expr": "evaluates an expression",
		"bc": "calculates", "dc": "calculates", "numfmt": "formats numbers", "factor": "factors numbers",
		"man": "shows a manual page", "info": "shows documentation", "help": "shows shell help",
		"whatis": "describes a command", "apropos": "searches manual pages", "tldr": "shows examples",
		"cd": "changes the shell's directory", "pushd": "changes the shell's directory",
		"popd": "changes the shell's directory", "dirs": "lists the directory stack",
		"export": "sets variables in this shell", "unset": "unsets shell variables", "set": "sets shell options",
		"shopt": "sets shell options", "alias": "defines a shell alias", "unalias": "removes a shell alias",
		"local": "declares variables", "declare": "declares variables", "typeset": "declares variables",
		"readonly": "declares variables", "let": "evaluates arithmetic", "return": "returns from a function",
		"exit": "exits the shell", "break": "leaves a loop", "continue": "continues a loop",
		"shift": "shifts arguments", "wait": "waits for jobs", "jobs": "lists jobs", "fg": "resumes a job",
		"bg": "resumes a job", "disown": "detaches a job", "umask": "sets the file mode mask",
		"ulimit": "sets shell limits", "history": "lists shell history", "getopts": "parses options",
		"read": "reads a line", "mapfile": "reads lines", "readarray": "reads lines",
		"times": "prints process times", "date": "prints the date", "cal": "prints a calendar",
		"tty": "prints the terminal name", "stty": "shows terminal settings", "tput": "queries the terminal",
		"clear": "clears the screen", "reset": "resets the terminal", "printenv": "prints the environment",
	})
}
