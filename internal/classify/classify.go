package classify

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Limits that keep classification quick and the stack shallow whatever the
// input. Past any of them the classifier says unknown, never read_only.
const (
	// maxCommandBytes is the longest command line read at all.
	maxCommandBytes = 64 << 10
	// maxDepth bounds unwrapping: each wrapper (sudo, env, xargs...) and
	// each re-parsed string (bash -c, ssh, eval) is one level.
	maxDepth = 16
	// maxNesting bounds how deep the walker follows nested syntax
	// (subshells in substitutions in subshells...).
	maxNesting = 200
	// maxReasons bounds the reasons and commands kept in a verdict; the
	// class still counts every command.
	maxReasons = 100
	// maxWork bounds the parses and commands one classification reads in
	// all, so that branching (xargs items, string literals in inline code)
	// cannot multiply into exponential work within the depth limit.
	maxWork = 4000
	// maxInputItems bounds how many known input items (xargs, parallel)
	// are tried one by one.
	maxInputItems = 16
)

// Classify returns the verdict on a shell command line under policy p (nil
// means DefaultPolicy). It never runs or expands anything and never panics;
// an empty line is read_only with no reasons. It is safe for concurrent use.
func Classify(command string, p Policy) Verdict {
	work := maxWork
	st := &state{class: ReadOnly, work: &work, policy: p}
	if len(command) > maxCommandBytes {
		st.add(clip(command), Unknown, fmt.Sprintf("command too long to read (%d bytes; the limit is %d)", len(command), maxCommandBytes))
	} else {
		st.script(command, input{})
	}
	v := Verdict{Class: st.class, Reasons: st.reasons, Commands: st.commands, Writes: st.writes}
	if v.Reasons == nil {
		v.Reasons = []Reason{}
	}
	if v.Commands == nil {
		v.Commands = [][]string{}
	}
	if st.dropped > 0 {
		v.Reasons = append(v.Reasons, Reason{Command: "…", Class: st.droppedClass, Rule: fmt.Sprintf("%d more commands not listed", st.dropped)})
	}
	v.Decision = p.Decide(v.Class)
	for i := range v.Reasons {
		v.Reasons[i].Decision = p.Decide(v.Reasons[i].Class)
		v.Decision = v.Decision.Stricter(v.Reasons[i].Decision)
	}
	return v
}

// inputKind says where a command's standard input comes from, which matters
// for programs that run what they read (sh, python, xargs).
type inputKind int

const (
	fromTerminal inputKind = iota // nothing redirected: a person, or nothing
	fromText                      // known text: a here-document, here-string or echo
	fromStream                    // a pipe from a command whose output is not known
	fromFile                      // < FILE
)

// input is a command's standard input.
type input struct {
	kind inputKind
	text string // for fromText
}

// state is one classification in progress. Each Classify call has its own.
type state struct {
	parser *syntax.Parser
	reader strings.Reader // reused for every parse of this classification

	class        Class
	reasons      []Reason
	commands     [][]string
	argv         []string // backing array of commands' argvs (see record)
	writes       []string // the files the line writes (see noteWrite)
	dropped      int
	droppedClass Class

	depth int  // wrappers and re-parsed strings entered
	nest  int  // syntax nesting entered
	work  *int // parses and commands left to read, shared with probes
	spent bool // the work budget ran out and that was reported

	// funcs names the shell functions the line defines; calling one runs
	// a body that is judged where it is defined.
	funcs map[string]bool

	// policy carries the project's own rules (see Rule).
	policy Policy

	// tmpdirSet records an assignment to TMPDIR anywhere in the line, so
	// that $TMPDIR is no longer trusted to be a temporary directory.
	tmpdirSet bool

	// dir is the working directory as far as it is known (see cwd.go).
	dir workDir

	// unseen counts the enclosing commands whose output goes into a pipe
	// or a file rather than to the terminal, so that `echo $TOKEN |
	// docker login --password-stdin` does not print the token.
	unseen int
}

// spend takes one unit of work from the budget, reporting once, as
// unknown, when it has run out.
func (st *state) spend() bool {
	if *st.work > 0 {
		*st.work--
		return true
	}
	if !st.spent {
		st.spent = true
		st.add("…", Unknown, "too many commands to read them all")
	}
	return false
}

// add records the class of one command with the rule that gave it.
func (st *state) add(command string, c Class, rule string) {
	st.class = st.class.Worse(c)
	if len(st.reasons) >= maxReasons {
		st.dropped++
		st.droppedClass = st.droppedClass.Worse(c)
		return
	}
	st.reasons = append(st.reasons, Reason{Command: command, Class: c, Rule: rule})
}

// record lists an inner command's argv in the verdict.
func (st *state) record(args []arg) {
	if len(st.commands) >= maxReasons {
		return
	}
	// The argvs share one backing array per classification: most lines
	// list a few short commands, and one allocation serves them all.
	if cap(st.argv)-len(st.argv) < len(args) {
		st.argv = make([]string, 0, max(8, 2*len(args)))
	}
	start := len(st.argv)
	for _, a := range args {
		st.argv = append(st.argv, a.text)
	}
	st.commands = append(st.commands, st.argv[start:len(st.argv):len(st.argv)])
}

// script parses src as a bash script and classifies every command in it.
// in is the standard input of its top-level commands.
func (st *state) script(src string, in input) {
	if st.depth >= maxDepth {
		st.add(clip(src), Unknown, "nested too deeply to read")
		return
	}
	if !st.spend() {
		return
	}
	st.depth++
	dir := st.dir
	defer func() { st.depth--; st.dir = dir }() // a nested shell keeps its cd to itself
	if st.parser == nil {
		st.parser = newParser()
	}
	st.reader.Reset(src)
	f, err := st.parser.Parse(&st.reader, "")
	if err != nil {
		st.unparsable(src, err, in)
		return
	}
	st.stmts(f.Stmts, in, src)
}

// newParser returns a bash parser. Parsers are not safe for concurrent use,
// so each classification makes its own and reuses it for nested scripts.
func newParser() *syntax.Parser { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }

// unparsable handles a line the parser rejects. The line is unknown, but a
// person reading it would still see what it tries to do, and so should the
// classifier: a fragment that starts with an operator (&& rm -rf /) is read
// without it, and a line cut short inside quotes or brackets is read as if
// they were closed. Whatever is found counts on top of unknown.
func (st *state) unparsable(src string, err error, in input) {
	msg := err.Error()
	if pe, ok := err.(syntax.ParseError); ok {
		msg = pe.Text
	}
	st.add(clip(src), Unknown, "the shell cannot parse it: "+msg)

	trimmed := strings.TrimLeft(src, " \t\n")
	for _, op := range []string{"&&", "||", "|&", "|", "&", ";"} {
		if rest, ok := strings.CutPrefix(trimmed, op); ok {
			st.script(rest, in)
			return
		}
	}
	if !syntax.IsIncomplete(err) {
		return
	}
	for _, closer := range []string{"'", `"`, "`", ")", "}", "\n}", ")\"", "'\"", "\"'", "\nEOF"} {
		if _, err := st.parser.Parse(strings.NewReader(src+closer), ""); err == nil {
			st.script(src+closer, in)
			return
		}
	}
}

// stmts classifies a list of statements.
func (st *state) stmts(list []*syntax.Stmt, in input, src string) {
	for _, s := range list {
		st.stmt(s, in, src)
	}
}

// stmt classifies one statement: its redirections, then its command.
func (st *state) stmt(s *syntax.Stmt, in input, src string) {
	if s == nil {
		return
	}
	if st.nest >= maxNesting {
		st.add(clip(sourceOf(s, src)), Unknown, "nested too deeply to read")
		return
	}
	st.nest++
	defer func() { st.nest-- }()

	for _, r := range s.Redirs {
		st.wordSubs(r.Word, src)
		st.wordSubs(r.Hdoc, src)
		switch r.Op {
		case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll:
			if printsNothing(s, src) {
				st.redirectEmpty(renderWord(r.Word, src))
			} else {
				st.redirectWrite(renderWord(r.Word, src))
			}
		case syntax.AppOut, syntax.AppAll, syntax.RdrInOut:
			st.redirectWrite(renderWord(r.Word, src))
		case syntax.DplOut:
			// 2>&1 and >&- duplicate descriptors; >&file writes a file.
			if t := renderWord(r.Word, src); !isFD(t.text) {
				st.redirectWrite(t)
			}
		case syntax.RdrIn:
			in = input{kind: fromFile}
			st.redirectRead(renderWord(r.Word, src))
		case syntax.Hdoc, syntax.DashHdoc:
			in = input{kind: fromText, text: renderWord(r.Hdoc, src).text}
		case syntax.WordHdoc:
			in = input{kind: fromText, text: renderWord(r.Word, src).text + "\n"}
		}
	}
	if s.Background {
		dir := st.dir // a background job runs in a subshell
		defer func() { st.dir = dir }()
	}
	if outputToFile(s, src) {
		st.unseen++
		defer func() { st.unseen-- }()
	}
	st.command(s.Cmd, in, src)
}

// command classifies the command of a statement, descending into every
// compound command's parts.
func (st *state) command(cmd syntax.Command, in input, src string) {
	switch c := cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		st.assigns(c.Assigns, src)
		args := make([]arg, len(c.Args))
		for i, w := range c.Args {
			st.wordSubs(w, src)
			args[i] = renderWord(w, src)
		}
		st.call(args, in)
	case *syntax.BinaryCmd:
		st.binary(c, in, src)
	case *syntax.Subshell:
		dir := st.dir
		st.stmts(c.Stmts, in, src)
		st.dir = dir
	case *syntax.Block:
		st.stmts(c.Stmts, in, src)
	case *syntax.IfClause:
		dir := st.dir
		for ; c != nil; c = c.Else {
			st.stmts(c.Cond, in, src)
			st.stmts(c.Then, in, src)
		}
		st.maybeMoved(dir)
	case *syntax.WhileClause:
		dir := st.dir
		st.stmts(c.Cond, in, src)
		st.stmts(c.Do, in, src)
		st.maybeMoved(dir)
	case *syntax.ForClause:
		dir := st.dir
		st.nodeSubs(c.Loop, src)
		st.stmts(c.Do, in, src)
		st.maybeMoved(dir)
	case *syntax.CaseClause:
		dir := st.dir
		st.wordSubs(c.Word, src)
		for _, item := range c.Items {
			for _, p := range item.Patterns {
				st.wordSubs(p, src)
			}
			st.stmts(item.Stmts, in, src)
		}
		st.maybeMoved(dir)
	case *syntax.FuncDecl:
		// Defining a function runs nothing, but the body is what the
		// line is about to call: judge it as if it ran.
		if st.funcs == nil {
			st.funcs = map[string]bool{}
		}
		if c.Name != nil {
			st.funcs[c.Name.Value] = true
		}
		dir := st.dir
		st.stmt(c.Body, in, src)
		st.dir = dir
	case *syntax.DeclClause:
		st.assigns(c.Args, src)
		st.declaration(c, in, src)
	case *syntax.TimeClause:
		st.stmt(c.Stmt, in, src)
	case *syntax.CoprocClause:
		st.stmt(c.Stmt, in, src)
	default: // arithmetic, [[ tests ]], let, zsh test declarations
		st.nodeSubs(c, src)
	}
}

// declaration judges export, declare, typeset, local and readonly when
// they assign nothing: with options and names only they may print
// variables (export -p, declare -p), which the handlers judge.
func (st *state) declaration(c *syntax.DeclClause, in input, src string) {
	if c.Variant == nil {
		return
	}
	args := []arg{lit(c.Variant.Value)}
	for _, a := range c.Args {
		switch {
		case !a.Naked:
			return // an assignment: nothing is printed
		case a.Name != nil:
			args = append(args, lit(a.Name.Value))
		case a.Value != nil:
			args = append(args, renderWord(a.Value, src))
		}
	}
	st.call(args, in)
}

// assigns walks the substitutions in variable assignments and notes an
// assignment to TMPDIR.
func (st *state) assigns(list []*syntax.Assign, src string) {
	for _, a := range list {
		if a.Name != nil && a.Name.Value == "TMPDIR" {
			st.tmpdirSet = true
		}
		st.wordSubs(a.Value, src)
		if a.Array != nil {
			st.nodeSubs(a.Array, src)
		}
	}
}

// wordSubs classifies the command and process substitutions inside a word:
// they run before the command the word belongs to.
func (st *state) wordSubs(w *syntax.Word, src string) {
	if w == nil {
		return
	}
	plain := true
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		default:
			plain = false
		}
	}
	if !plain {
		st.nodeSubs(w, src)
	}
}

// nodeSubs finds the substitutions anywhere under n and classifies the
// statements inside them.
func (st *state) nodeSubs(n syntax.Node, src string) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch s := n.(type) {
		case *syntax.CmdSubst:
			st.nested(s.Stmts, src)
			return false
		case *syntax.ProcSubst:
			st.nested(s.Stmts, src)
			return false
		}
		return true
	})
}

func (st *state) nested(list []*syntax.Stmt, src string) {
	if st.nest >= maxNesting {
		st.add("…", Unknown, "nested too deeply to read")
		return
	}
	st.nest++
	dir := st.dir // a substitution runs in a subshell, its output is captured
	st.unseen++
	st.stmts(list, input{}, src)
	st.unseen--
	st.dir = dir
	st.nest--
}

// outputToFile reports a statement whose standard output is redirected
// into a file (not the terminal).
func outputToFile(s *syntax.Stmt, src string) bool {
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
			if r.N == nil || r.N.Value == "1" {
				t := renderWord(r.Word, src).text
				return t != "/dev/stdout" && t != "/dev/tty" && t != "/dev/stderr"
			}
		}
	}
	return false
}

// binary classifies `X && Y`, `X || Y` and pipelines. Each part of a
// pipeline runs in a subshell, so a cd there changes nothing after it. Y of
// `X && Y` runs only if X worked, so a cd in X is sure there; Y of
// `X || Y` runs only if X failed, so in the directory before X, and when
// Y exits, what follows runs only if X worked.
func (st *state) binary(c *syntax.BinaryCmd, in input, src string) {
	before := st.dir
	switch c.Op {
	case syntax.Pipe, syntax.PipeAll:
		st.unseen++
		st.stmt(c.X, in, src)
		st.unseen--
		st.dir = before
		st.stmt(c.Y, pipeInput(c.X, src), src)
		st.dir = before
	case syntax.AndStmt:
		st.stmt(c.X, in, src)
		if !st.dir.same(before) && succeedsOnlyIfAllRan(c.X) {
			st.dir.unsure = false
		}
		st.stmt(c.Y, in, src)
		if !st.dir.same(before) {
			st.dir.unsure = true // the whole list may have stopped before the cd
		}
	default: // OrStmt
		st.stmt(c.X, in, src)
		afterX := st.dir
		st.dir = before
		st.stmt(c.Y, in, src)
		switch {
		case !afterX.same(before):
			st.dir = afterX
			st.dir.unsure = !st.terminates(c.Y, src)
		case !st.dir.same(before):
			st.dir.unsure = true // Y's cd happened only if X failed
		}
	}
}

// succeedsOnlyIfAllRan reports a statement that succeeds only if every
// command in it ran and worked: a simple command (cd DIR) or a chain of
// them with &&. A conditional succeeds whether or not its body ran.
func succeedsOnlyIfAllRan(s *syntax.Stmt) bool {
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		return true
	case *syntax.BinaryCmd:
		return c.Op == syntax.AndStmt && succeedsOnlyIfAllRan(c.X) && succeedsOnlyIfAllRan(c.Y)
	}
	return false
}

// maybeMoved marks the working directory unsure after a conditional or a
// loop that changed it: its body may not have run.
func (st *state) maybeMoved(before workDir) {
	if !st.dir.same(before) {
		st.dir.unsure = true
	}
}

// pipeInput returns what the right side of a pipe reads: the known output
// of a plain echo or printf of literal words, or an unknown stream.
func pipeInput(left *syntax.Stmt, src string) input {
	call, ok := left.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) < 2 || len(left.Redirs) > 0 {
		return input{kind: fromStream}
	}
	args := make([]arg, len(call.Args))
	for i, w := range call.Args {
		args[i] = renderWord(w, src)
		if !args[i].literal {
			return input{kind: fromStream}
		}
	}
	switch args[0].text {
	case "echo":
		words := args[1:]
		for len(words) > 0 && (words[0].text == "-n" || words[0].text == "-e" || words[0].text == "-E") {
			words = words[1:]
		}
		return input{kind: fromText, text: strings.Join(texts(words), " ") + "\n"}
	case "printf":
		if len(args) == 2 && !strings.Contains(args[1].text, "%") {
			var b strings.Builder
			unescapePrintf(&b, args[1].text)
			return input{kind: fromText, text: b.String()}
		}
	}
	return input{kind: fromStream}
}

// unescapePrintf resolves the backslash escapes of a printf format.
func unescapePrintf(b *strings.Builder, s string) { decodeANSIC(b, s) }

// call classifies one simple command, given its words after expansion as
// far as they are known.
func (st *state) call(args []arg, in input) {
	if len(args) == 0 {
		return // only assignments: nothing runs
	}
	line := quoteArgs(args)
	if st.depth >= maxDepth {
		st.add(clip(line), Unknown, "nested too deeply to read")
		return
	}
	if !st.spend() {
		return
	}
	st.depth++
	defer func() { st.depth-- }()

	name := args[0]
	if !name.literal || name.glob {
		st.record(args)
		st.add(line, Unknown, "the program to run is only known at run time ("+name.text+")")
		return
	}
	if strings.Contains(name.text, "=") && !strings.HasPrefix(name.text, "/") {
		// 1A=2 cmd and =2 cmd are not assignments, so the shell would try
		// to run a program called "1A=2". What was meant is plain: the
		// command after it. Read it, and stay unknown.
		st.add(line, Unknown, "looks like an assignment but is not one; reading what follows as the command")
		st.call(args[1:], in)
		return
	}
	if st.funcs[name.text] {
		st.add(line, ReadOnly, "calls the function "+name.text+", whose body is judged where it is defined")
		return
	}
	cmd := command{name: programName(name.text), args: args[1:], all: args, in: in}
	j := judge(st, cmd)
	if !j.wrapper {
		j = st.secretRead(cmd, j)
		j = st.projectRule(cmd, j)
	}
	if j.rule == "" {
		return // a wrapper that said nothing of its own
	}
	if !j.wrapper {
		st.record(args)
	}
	st.add(line, j.class, j.rule)
}

// secretRead raises the judgement of a command that reads a file of
// credentials to secret_read, naming the secret; a riskier judgement
// keeps its class and says what is read too.
func (st *state) secretRead(cmd command, j judgement) judgement {
	p, what, ok := st.secretArgs(cmd)
	if !ok {
		return j
	}
	if j.class.Rank() < SecretRead.Rank() {
		return is(SecretRead, cmd.name+" reads "+p+", "+what)
	}
	j.rule += "; it also reads " + p + ", " + what
	return j
}

// redirectRead judges input redirected from a file: a file of
// credentials is a secret read.
func (st *state) redirectRead(source arg) {
	if p, what, ok := st.secretIn(source.text); ok {
		st.add("<"+quoteText(source), SecretRead, "reads "+p+", "+what+", as input")
		return
	}
	if source.param == "HISTFILE" {
		st.add("<"+quoteText(source), SecretRead, "reads shell history as input")
	}
}

// projectRule applies the first of the project's rules that matches cmd
// to the classifier's own judgement j. A rule sets the class of a command
// the classifier cannot read and raises any other, but never lowers a
// class the classifier knows.
func (st *state) projectRule(cmd command, j judgement) judgement {
	if len(st.policy.Rules) == 0 {
		return j
	}
	r := st.policy.ruleFor(cmd.name, texts(cmd.args))
	if r == nil {
		return j
	}
	rule := "project rule: " + r.Reason
	switch {
	case j.class == Unknown || j.rule == "":
		return is(r.Class, rule)
	case r.Class.Rank() > j.class.Rank():
		return is(r.Class, rule+" (logbook alone says: "+j.rule+")")
	}
	j.rule += " (a project rule says " + string(r.Class) + ", which does not lower what logbook knows)"
	return j
}

// command is one simple command being judged.
type command struct {
	name string // program name: base name, lower case
	args []arg  // arguments after the program name
	all  []arg  // program name and arguments
	in   input  // standard input
}

// line returns the command shell-quoted, for rules that cite it.
func (c command) line() string { return quoteArgs(c.all) }

// judgement is what a rule says of one command.
type judgement struct {
	class Class
	rule  string
	// wrapper marks a command that runs another (sudo, env, xargs): its
	// own argv is not listed in the verdict's commands, the inner one is.
	wrapper bool
}

func is(c Class, rule string) judgement { return judgement{class: c, rule: rule} }

// programName returns the name a command is looked up by: its base name
// (/usr/bin/git, ./rm and \rm are all git and rm), in lower case, because on
// case-insensitive file systems (macOS by default) GIT runs git.
func programName(s string) string {
	s = path.Base(s)
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// isFD reports whether a redirection target is a file descriptor or "-".
func isFD(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// redirectWrite judges output redirected to a file.
func (st *state) redirectWrite(target arg) {
	if isDiscard(target.text) {
		return
	}
	c, why := writeTarget(target, st)
	st.add(">"+quoteText(target), c, "redirects output into "+why)
}

// redirectEmpty judges `> FILE` from a command that prints nothing
// (`> f`, `: > f`, `cat /dev/null > f`): it empties FILE. Emptying a
// file that must never be removed (a system path, a home dotfile, a disk)
// is as bad as removing it.
func (st *state) redirectEmpty(target arg) {
	if isDiscard(target.text) {
		return
	}
	if what := st.criticalTarget(target); what != "" {
		st.add(">"+quoteText(target), Destructive, "empties "+what+", destroying what it held")
		return
	}
	st.redirectWrite(target)
}

// printsNothing reports a statement whose command prints nothing, so that
// redirecting its output only empties the file: no command at all, :,
// true, cat /dev/null, echo -n, printf ”.
func printsNothing(s *syntax.Stmt, src string) bool {
	if s.Cmd == nil {
		return true
	}
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || len(call.Args) > 2 {
		return false
	}
	args := make([]string, len(call.Args))
	for i, w := range call.Args {
		a := renderWord(w, src)
		if !a.literal {
			return false
		}
		args[i] = a.text
	}
	switch {
	case len(args) == 1 && (args[0] == ":" || args[0] == "true" || args[0] == "false"):
		return true
	case len(args) == 2 && args[0] == "cat" && args[1] == "/dev/null":
		return true
	case len(args) == 2 && args[0] == "echo" && args[1] == "-n":
		return true
	case len(args) == 2 && args[0] == "printf" && args[1] == "":
		return true
	}
	return false
}

// clip shortens long text for a reason.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
