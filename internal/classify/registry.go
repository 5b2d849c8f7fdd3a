package classify

import (
	"path"
	"strings"
	"sync"
)

// Program knowledge lives in a registry. Each family of programs (files,
// git, containers, secrets managers...) has its own file with a function
// that registers its programs beside their tables and handlers; families
// lists those functions, and the registry is built from them once, the
// first time a command is judged. To teach the classifier a program, add it
// to its family's file (and rows to the tests); nothing else changes.
//
// Program names are looked up exactly (base name, lower case), then by the
// registered prefixes (python3.12 is python, mkfs.ext4 is mkfs). A program
// the registry does not hold is judged by the general rules of
// unknownProgram.

// handler judges one command of a program.
type handler func(*state, command) judgement

// registry holds what the classifier knows of each program.
type registry struct {
	byName   map[string]handler
	prefixes []prefixHandler
	// dups lists names registered twice, which a test reports: the first
	// registration wins.
	dups []string
}

// prefixHandler judges every program whose name starts with prefix.
type prefixHandler struct {
	prefix string
	judge  handler
}

// handle registers h for each of names.
func (r *registry) handle(h handler, names ...string) {
	for _, n := range names {
		if _, ok := r.byName[n]; ok {
			r.dups = append(r.dups, n)
			continue
		}
		r.byName[n] = h
	}
}

// fixed registers programs that always get class c, whatever their
// arguments, from a table of name -> what the program does. The rule reads
// "NAME WHAT" ("cat prints files").
func (r *registry) fixed(c Class, table map[string]string) {
	for name, what := range table {
		rule := name + " " + what // built once, not at every command
		r.handle(func(_ *state, _ command) judgement { return is(c, rule) }, name)
	}
}

// prefix registers h for every program whose name starts with p and that
// has no handler of its own.
func (r *registry) prefix(p string, h handler) {
	r.prefixes = append(r.prefixes, prefixHandler{prefix: p, judge: h})
}

// lookup returns the handler for a program name, or nil.
func (r *registry) lookup(name string) handler {
	if h, ok := r.byName[name]; ok {
		return h
	}
	for _, p := range r.prefixes {
		if strings.HasPrefix(name, p.prefix) {
			return p.judge
		}
	}
	return nil
}

// families lists the functions that register each family of programs.
// It is a function, not a variable: handlers reach the registry through
// judge, and a variable initialised with them would be an initialisation
// cycle.
func families() []func(*registry) {
	return []func(*registry){
		wrapperPrograms,
		shellPrograms,
		textPrograms,
		filePrograms,
		systemPrograms,
		userPrograms,
		diskPrograms,
		buildPrograms,
		interpreterPrograms,
		gitPrograms,
		networkPrograms,
		netconfPrograms,
		packagePrograms,
		servicePrograms,
		containerPrograms,
		kubernetesPrograms,
		proxmoxPrograms,
		cloudPrograms,
		databasePrograms,
		secretsPrograms,
		forgePrograms,
		ciPrograms,
		backupPrograms,
		brokerPrograms,
		remotePrograms,
		runnerPrograms,
	}
}

// The registry is built once, on first use, and only read afterwards, so
// concurrent classifications share it safely.
var (
	registryOnce sync.Once
	programs     *registry
)

// knownPrograms returns the registry, building it on first use.
func knownPrograms() *registry {
	registryOnce.Do(func() { programs = buildRegistry() })
	return programs
}

// buildRegistry runs every family's registration.
func buildRegistry() *registry {
	r := &registry{byName: map[string]handler{}}
	for _, register := range families() {
		register(r)
	}
	return r
}

// judge returns the judgement on one command by its program.
func judge(st *state, c command) judgement {
	if h := knownPrograms().lookup(c.name); h != nil {
		return h(st, c)
	}
	return unknownProgram(st, c)
}

// unknownProgram judges a program the registry does not hold by the
// general rules (see verbs.go): a name that says it destroys, or the verb
// among its leading words. What they cannot read stays unknown.
func unknownProgram(_ *state, c command) judgement {
	if helpOnly(c.args) {
		return is(ReadOnly, c.name+" only prints its help or version")
	}
	if v, ok := nameDestroys(path.Base(c.all[0].text)); ok {
		return is(Destructive, "the name of "+c.name+" says it is made to "+v)
	}
	if j, ok := generalVerb(c.name, c.args); ok {
		return j
	}
	return is(Unknown, "logbook does not know what "+c.name+" does")
}

// fixedRule returns a handler that always gives class c, with the rule
// "NAME WHAT".
func fixedRule(c Class, what string) handler {
	return func(_ *state, cmd command) judgement { return is(c, cmd.name+" "+what) }
}

// helpOnly reports a command line that only asks for help or a version.
func helpOnly(args []arg) bool {
	if len(args) != 1 {
		return false
	}
	switch args[0].text {
	case "--help", "-h", "--version", "-V", "help", "version", "--usage":
		return true
	}
	return false
}

// subcommand returns the first operand of args, lower-cased, after the
// options described by valued, and the arguments after it.
func subcommand(args []arg, valued string) (string, []arg) {
	o := scanOptions(args, scanSpec{valued: valued, stopAtOperand: true})
	rest := args[o.rest:]
	if len(rest) == 0 {
		return "", nil
	}
	return strings.ToLower(rest[0].text), rest[1:]
}

// verbTable maps subcommands to classes; rule phrases come from verbRule.
type verbTable map[string]Class

// lookupVerb judges a subcommand with a table, falling back to unknown.
func lookupVerb(prog, verb string, t verbTable) judgement {
	if verb == "" {
		return is(ReadOnly, prog+" without a subcommand prints its usage")
	}
	if c, ok := t[verb]; ok {
		return is(c, prog+" "+verb+" "+verbRule(c))
	}
	if helpOnly([]arg{lit(verb)}) {
		return is(ReadOnly, prog+" "+verb+" only prints help")
	}
	if c, read, ok := wordVerb(verb); ok && !read && isCommandWord(verb) {
		return verbJudgement(prog, verbFound{class: c, word: verb})
	}
	return is(Unknown, "logbook does not know what "+prog+" "+verb+" does")
}

// verbRule says in words what a class means for a subcommand.
func verbRule(c Class) string {
	switch c {
	case ReadOnly:
		return "only reads"
	case WorkspaceWrite:
		return "changes files in the workspace"
	case Network:
		return "talks to other machines"
	case ConfigMutation:
		return "changes configuration"
	case ServiceControl:
		return "starts, stops or moves services or machines"
	case PackageInstall:
		return "installs or removes software"
	case SecretRead:
		return "reads or prints secrets"
	case Privilege:
		return "changes users or permissions"
	case Destructive:
		return "destroys data that cannot be got back"
	}
	return "cannot be read"
}
