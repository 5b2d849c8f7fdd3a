package classify

import (
	"path"
	"strings"
)

// Interpreters and editors that take code on the command line. Inline code
// is at least unknown: logbook does not read Python or JavaScript. It does
// look for plain evidence of harm inside the code argument, which the
// shell parser has already extracted as one word (this is never a pattern
// match over the raw command line):
//
//   - calls that delete files (shutil.rmtree, os.remove, fs.rmSync,
//     FileUtils.rm_rf, unlink) make it destructive;
//   - when the code spawns processes (os.system, subprocess, execSync,
//     system, backquotes), each string literal in it is classified as a
//     shell command line, and a destructive one makes the code destructive;
//   - code that is itself a valid shell command line (ruby -e "rm -rf /")
//     is classified as one too: interpreters such as ruby and perl run
//     backquoted shell, and a confused agent still meant what it wrote.

// interpreterPrograms registers the interpreters and the editors and text
// languages that run commands from their command line.
func interpreterPrograms(r *registry) {
	r.prefix("python", interpreterRun)
	r.prefix("perl", interpreterRun)
	r.handle(interpreterRun, "pypy", "pypy3", "node", "nodejs", "deno", "ruby", "irb", "jruby", "php",
		"lua", "luajit", "rscript", "r", "osascript", "pwsh", "powershell", "powershell.exe", "tclsh", "wish", "expect")
	r.handle(vimCmd, "vim", "vi", "nvim", "view", "ex", "gvim")
	r.handle(awkCmd, "awk", "gawk", "mawk", "nawk")
	r.handle(javaCmd, "java")
}

// interpreterRun judges an interpreter by its language.
func interpreterRun(st *state, c command) judgement {
	return interpreterCmd(st, c, interpreterFor(c.name))
}

// interpreterFor returns the language of an interpreter program, or "".
func interpreterFor(name string) string {
	switch {
	case strings.HasPrefix(name, "python") || name == "pypy" || name == "pypy3":
		return "python"
	case name == "node" || name == "nodejs" || name == "deno":
		return "javascript"
	case strings.HasPrefix(name, "perl"):
		return "perl"
	case name == "ruby" || name == "irb" || name == "jruby":
		return "ruby"
	case name == "php":
		return "php"
	case name == "lua" || name == "luajit":
		return "lua"
	case name == "rscript" || name == "r":
		return "r"
	case name == "osascript":
		return "applescript"
	case name == "pwsh" || name == "powershell" || name == "powershell.exe":
		return "powershell"
	case name == "tclsh" || name == "wish" || name == "expect":
		return "tcl"
	}
	return ""
}

// inlineFlags maps each language to its options that take inline code.
var inlineFlags = map[string]string{
	"python":      "-c",
	"javascript":  "-e --eval -p --print",
	"perl":        "-e -E",
	"ruby":        "-e",
	"php":         "-r",
	"lua":         "-e",
	"r":           "-e",
	"applescript": "-e",
	"powershell":  "-c -command -Command -encodedcommand -EncodedCommand -e -ec",
	"tcl":         "-c",
}

// interpreterValued are each language's other options that take a value.
var interpreterValued = map[string]string{
	"python":     "-m -W -X -Q",
	"javascript": "-r --require --import --loader --env-file --inspect-port -C --conditions",
	"perl":       "-M -m -I -x -i -0 -l",
	"ruby":       "-r -I -C -E -F -K -i -x",
	"php":        "-d -c -f -z -t -S",
	"lua":        "-l",
	"powershell": "-File -f -ExecutionPolicy -ep -WorkingDirectory -wd",
}

// pythonModules are python -m modules with a known effect.
var pythonModules = map[string]judgement{
	"pytest":      is(WorkspaceWrite, "python -m pytest runs the project's tests"),
	"unittest":    is(WorkspaceWrite, "python -m unittest runs the project's tests"),
	"venv":        is(WorkspaceWrite, "python -m venv creates a virtual environment"),
	"virtualenv":  is(WorkspaceWrite, "python -m virtualenv creates a virtual environment"),
	"mypy":        is(WorkspaceWrite, "python -m mypy checks types"),
	"black":       is(WorkspaceWrite, "python -m black formats code"),
	"ruff":        is(WorkspaceWrite, "python -m ruff lints code"),
	"flake8":      is(WorkspaceWrite, "python -m flake8 lints code"),
	"pylint":      is(WorkspaceWrite, "python -m pylint lints code"),
	"build":       is(WorkspaceWrite, "python -m build builds the project"),
	"compileall":  is(WorkspaceWrite, "python -m compileall compiles the project"),
	"json.tool":   is(ReadOnly, "python -m json.tool formats JSON"),
	"http.server": is(Network, "python -m http.server serves files over HTTP"),
	"timeit":      is(ReadOnly, "python -m timeit times code"),
}

// interpreterCmd judges an interpreter run.
func interpreterCmd(st *state, c command, lang string) judgement {
	valued := inlineFlags[lang] + " " + interpreterValued[lang]
	o := scanOptions(c.args, scanSpec{valued: valued, stopAtOperand: true, longSingleDash: lang == "powershell"})
	var code []string
	for _, op := range o.opts {
		if hasWord(inlineFlags[lang], op.name) {
			code = append(code, op.value)
		}
	}
	if lang == "javascript" && c.name == "deno" && len(c.args) > 1 && c.args[0].text == "eval" {
		code = append(code, c.args[1].text)
	}
	if len(code) > 0 {
		return inlineCode(st, lang, strings.Join(code, "\n"))
	}
	if mod, ok := o.value("-m"); ok && lang == "python" {
		switch mod {
		case "pip", "pip3":
			return pipCmd(st, command{name: "pip", args: c.args[o.rest:], all: c.all, in: c.in})
		}
		if j, ok := pythonModules[mod]; ok {
			return j
		}
		return is(Unknown, "python -m "+mod+" runs a module logbook does not know")
	}
	if o.has("-V", "--version", "-v", "-h", "--help") && len(c.args[o.rest:]) == 0 {
		return is(ReadOnly, c.name+" only prints its version or help")
	}
	rest := c.args[o.rest:]
	if len(rest) > 0 && rest[0].text != "-" {
		return scriptFile(c.name, rest)
	}
	switch c.in.kind {
	case fromText:
		return inlineCode(st, lang, c.in.text)
	case fromStream:
		return is(Destructive, c.name+" runs code read from a pipe, which nobody has read: anything can happen")
	case fromFile:
		return is(Unknown, c.name+" runs code read from a file, which logbook cannot read")
	}
	return is(Unknown, c.name+" starts an interactive interpreter")
}

// scriptFile judges an interpreter running a program file logbook cannot
// read: unknown, unless the file's name or the verb among its arguments
// says it destroys (python manage.py flush, node scripts/drop-db.js).
func scriptFile(prog string, rest []arg) judgement {
	if v, ok := nameDestroys(path.Base(rest[0].text)); ok && rest[0].literal {
		return is(Destructive, prog+" runs "+quoteText(rest[0])+", whose name says it is made to "+v)
	}
	if j, ok := generalVerb(prog+" "+rest[0].text, rest[1:]); ok && j.class == Destructive {
		return j
	}
	return is(Unknown, prog+" runs the program file "+quoteText(rest[0])+", which logbook cannot read")
}

// deletingCalls are names of calls that delete files or trees, in the
// languages agents use on the command line.
var deletingCalls = []string{
	"shutil.rmtree", "rmtree(", "os.remove(", "os.unlink(", "os.rmdir(", "os.removedirs(", ".unlink(",
	"rmSync(", "rmdirSync(", "unlinkSync(", "fs.rm(", "fs.rmdir(", "fs.unlink(", "rimraf",
	"rm_rf", "rm_r(", "FileUtils.rm", "File.delete(", "Dir.rmdir", "remove_tree(", "unlink(", "unlink ",
	"Remove-Item", "rmdir(",
}

// spawningCalls are names of calls that run other programs.
var spawningCalls = []string{
	"system(", "system ", "exec(", "execSync", "execFileSync", "spawn", "popen", "Popen", "subprocess",
	"check_output", "check_call", "os.exec", "`", "qx", "%x", "shell_exec", "passthru", "proc_open",
	"do shell script", "Invoke-Expression", "iex ", "Start-Process", "child_process", "run(",
}

// inlineCode judges code given to an interpreter (see the file comment).
func inlineCode(st *state, lang, code string) judgement {
	for _, call := range deletingCalls {
		if strings.Contains(code, call) {
			return is(Destructive, "the inline "+lang+" code calls "+strings.TrimSpace(strings.TrimSuffix(call, "("))+", which deletes files")
		}
	}
	spawns := false
	for _, call := range spawningCalls {
		if strings.Contains(code, call) {
			spawns = true
			break
		}
	}
	if spawns {
		for _, s := range stringLiterals(code) {
			if j := st.probe(s); j.class == Destructive {
				return is(Destructive, "the inline "+lang+" code runs the shell command "+clip(s)+": "+j.rule)
			}
		}
	}
	if j := st.probe(code); j.class == Destructive {
		return is(Destructive, "the inline "+lang+" code reads as the shell command "+clip(code)+": "+j.rule)
	}
	for _, s := range stringLiterals(code) {
		if p, what, ok := st.secretIn(s); ok {
			return is(SecretRead, "the inline "+lang+" code names "+p+", "+what)
		}
	}
	return is(Unknown, "the "+lang+" interpreter runs inline code, which logbook does not read")
}

// probe classifies text as a shell command line on the side, without
// adding its reasons to the verdict, and returns the decisive reason.
func (st *state) probe(text string) judgement {
	if strings.TrimSpace(text) == "" {
		return judgement{class: ReadOnly}
	}
	sub := &state{parser: st.parser, class: ReadOnly, depth: st.depth, nest: st.nest, work: st.work, tmpdirSet: st.tmpdirSet, dir: st.dir}
	sub.script(text, input{})
	if sub.spent {
		st.spent = true
		st.add("…", Unknown, "too many commands to read them all")
	}
	for _, r := range sub.reasons {
		if r.Class == sub.class {
			return is(sub.class, r.Rule)
		}
	}
	return judgement{class: sub.class}
}

// stringLiterals returns the quoted strings in code: '...', "..." and
// `...`, with backslash escapes kept as written.
func stringLiterals(code string) []string {
	var out []string
	for i := 0; i < len(code); i++ {
		q := code[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		j := i + 1
		for j < len(code) && code[j] != q {
			if code[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(code) {
			break
		}
		out = append(out, code[i+1:j])
		i = j
		if len(out) >= maxInputItems {
			break
		}
	}
	return out
}

// vimCmd: an editor writes files; -c/+/--cmd commands that start with !
// run shell commands.
func vimCmd(st *state, c command) judgement {
	var cmds []string
	for i := 0; i < len(c.args); i++ {
		t := c.args[i].text
		switch {
		case (t == "-c" || t == "--cmd" || t == "-S") && i+1 < len(c.args):
			cmds = append(cmds, c.args[i+1].text)
			i++
		case strings.HasPrefix(t, "+") && len(t) > 1:
			cmds = append(cmds, t[1:])
		}
	}
	for _, cmd := range cmds {
		cmd = strings.TrimLeft(cmd, ": ")
		if i := strings.Index(cmd, "!"); i >= 0 {
			if j := st.probe(cmd[i+1:]); j.class == Destructive {
				return is(Destructive, c.name+" runs the shell command "+clip(cmd[i+1:])+": "+j.rule)
			}
			return is(Unknown, c.name+" runs a shell command from its command line")
		}
		if strings.HasPrefix(cmd, "py") || strings.HasPrefix(cmd, "lua") || strings.HasPrefix(cmd, "perl") || strings.HasPrefix(cmd, "ruby") || strings.HasPrefix(cmd, "call system") {
			return is(Unknown, c.name+" runs script code from its command line")
		}
	}
	return is(WorkspaceWrite, c.name+" opens files in an editor")
}

// awkCmd: awk programs only print, unless they call system(), pipe to or
// from a command, or redirect print into a file.
func awkCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-f --file -v --assign -F --field-separator -i --include -l --load -E --exec", stopAtOperand: true})
	if o.has("-f", "--file", "-E", "--exec") {
		return is(Unknown, c.name+" runs a program file logbook cannot read")
	}
	rest := c.args[o.rest:]
	if len(rest) == 0 {
		return is(ReadOnly, c.name+" without a program runs nothing")
	}
	program := rest[0].text
	if inplace, _ := o.value("-i", "--include"); inplace == "inplace" {
		return is(WorkspaceWrite, c.name+" -i inplace edits files")
	}
	if strings.Contains(program, "system") || strings.Contains(program, "|") {
		for _, s := range stringLiterals(program) {
			if j := st.probe(s); j.class == Destructive {
				return is(Destructive, c.name+" runs the shell command "+clip(s)+": "+j.rule)
			}
		}
		return is(Unknown, c.name+" runs shell commands from its program (system or a pipe)")
	}
	if strings.Contains(program, "print") && strings.Contains(program, ">") {
		return is(Unknown, c.name+" may redirect output into files")
	}
	return is(ReadOnly, c.name+" processes text and prints it")
}

// javaCmd: java -jar FILE.jar ARGS runs the program the jar is named for
// (java -jar jenkins-cli.jar delete-job x is jenkins-cli delete-job x);
// java -version and java -help print; anything else runs Java code
// logbook cannot read.
func javaCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-cp -classpath --class-path -p --module-path -m --module -jar --add-modules -d", stopAtOperand: true, longSingleDash: true})
	jar, ok := o.value("-jar")
	if !ok {
		if o.has("-version", "--version", "-help", "--help", "-h", "-?", "-showversion") && o.rest == len(c.args) {
			return is(ReadOnly, c.name+" only prints its version or help")
		}
		return is(Unknown, c.name+" runs Java code, which logbook cannot read")
	}
	name := strings.TrimSuffix(path.Base(jar), ".jar")
	// jenkins-cli-2.426.jar is jenkins-cli
	if i := strings.LastIndexByte(name, '-'); i > 0 && i+1 < len(name) && '0' <= name[i+1] && name[i+1] <= '9' {
		name = name[:i]
	}
	inner := command{name: strings.ToLower(name), args: c.args[o.rest:], all: append([]arg{lit(name)}, c.args[o.rest:]...), in: c.in}
	if h := knownPrograms().lookup(inner.name); h != nil {
		return h(st, inner)
	}
	j := unknownProgram(st, inner)
	if j.class == Unknown {
		return is(Unknown, c.name+" -jar "+jar+" runs Java code, which logbook cannot read")
	}
	return j
}
