package classify

import "strings"

// General rules for programs no table names. Most command-line tools are
// built from subcommands (vault kv delete, velero backup create, nats
// stream rm), and the verb among their leading words says what they do:
// a verb that deletes or destroys makes the command destructive, a verb
// that changes something makes it at least config_mutation (or the class
// the verb names: start is service_control, install package_install, push
// network). The same goes for options spelled as such verbs
// (kafka-topics --delete, rdiff-backup --remove-older-than) and for a
// program whose very name says it destroys (kafka-delete-records). What
// the rules cannot read stays unknown: a program logbook does not know is
// never read_only, whatever its verb says.

// verbWords gives the class of a verb, by the word it is spelled with.
// Kin of the destroying verbs are listed with them: what the issue names
// (delete, destroy, remove, rm, purge, drop, prune, forget, revoke,
// disable, unregister, deregister, wipe, truncate, terminate, uninstall)
// and how tools spell the same thing (del, rmr, deleteall, rb, erase,
// nuke, flush, reset, expire).
var verbWords = map[string]Class{
	// destroying
	"delete": Destructive, "del": Destructive, "deleteall": Destructive, "deletion": Destructive,
	"destroy": Destructive, "remove": Destructive, "removeall": Destructive, "removal": Destructive,
	"rm": Destructive, "rmr": Destructive, "rb": Destructive, "purge": Destructive,
	"drop": Destructive, "dropall": Destructive, "prune": Destructive, "forget": Destructive,
	"revoke": Destructive, "disable": Destructive, "unregister": Destructive, "deregister": Destructive,
	"wipe": Destructive, "truncate": Destructive, "terminate": Destructive, "uninstall": Destructive,
	"undeploy": Destructive, "erase": Destructive, "nuke": Destructive, "shred": Destructive,
	"obliterate": Destructive, "expire": Destructive, "flush": Destructive, "flushall": Destructive,
	"reset": Destructive, "unpublish": Destructive, "decommission": Destructive, "fresh": Destructive,

	// running something logbook cannot see
	"run": Unknown, "exec": Unknown, "execute": Unknown, "invoke": Unknown, "eval": Unknown,
	"shell": Unknown, "ssh": Unknown, "console": Unknown, "repl": Unknown, "script": Unknown,

	// starting and stopping
	"start": ServiceControl, "stop": ServiceControl, "restart": ServiceControl, "reload": ServiceControl,
	"kill": ServiceControl, "pause": ServiceControl, "unpause": ServiceControl, "resume": ServiceControl,
	"suspend": ServiceControl, "reboot": ServiceControl, "shutdown": ServiceControl, "halt": ServiceControl,
	"poweroff": ServiceControl, "scale": ServiceControl, "cancel": ServiceControl, "abort": ServiceControl,
	"rerun": ServiceControl, "retry": ServiceControl, "trigger": ServiceControl, "up": ServiceControl,
	"down": ServiceControl, "failover": ServiceControl,

	// installing software
	"install": PackageInstall, "reinstall": PackageInstall,

	// granting rights
	"grant": Privilege, "chmod": Privilege, "chown": Privilege, "passwd": Privilege,

	// sending and fetching
	"push": Network, "publish": Network, "upload": Network, "send": Network, "produce": Network,
	"pub": Network, "post": Network, "sync": Network, "transfer": Network, "mirror": Network,
	"pull": Network, "fetch": Network, "download": Network, "clone": Network, "copy": Network,
	"cp": Network,

	// changing
	"create": ConfigMutation, "add": ConfigMutation, "set": ConfigMutation, "put": ConfigMutation,
	"update": ConfigMutation, "upsert": ConfigMutation, "edit": ConfigMutation, "modify": ConfigMutation,
	"write": ConfigMutation, "insert": ConfigMutation, "apply": ConfigMutation, "deploy": ConfigMutation,
	"register": ConfigMutation, "enable": ConfigMutation, "rename": ConfigMutation, "move": ConfigMutation,
	"mv": ConfigMutation, "tag": ConfigMutation, "untag": ConfigMutation, "attach": ConfigMutation,
	"detach": ConfigMutation, "assign": ConfigMutation, "unassign": ConfigMutation, "init": ConfigMutation,
	"initialize": ConfigMutation, "configure": ConfigMutation, "link": ConfigMutation, "unlink": ConfigMutation,
	"mount": ConfigMutation, "unmount": ConfigMutation, "umount": ConfigMutation, "login": ConfigMutation,
	"logout": ConfigMutation, "save": ConfigMutation, "load": ConfigMutation, "promote": ConfigMutation,
	"demote": ConfigMutation, "rollback": ConfigMutation, "revert": ConfigMutation, "upgrade": ConfigMutation,
	"downgrade": ConfigMutation, "resize": ConfigMutation, "backup": ConfigMutation, "snapshot": ConfigMutation,
	"store": ConfigMutation, "declare": ConfigMutation, "bind": ConfigMutation, "unbind": ConfigMutation,
	"undelete": ConfigMutation, "recover": ConfigMutation, "restore": ConfigMutation, "rotate": ConfigMutation,
	"archive": ConfigMutation, "unarchive": ConfigMutation, "lock": ConfigMutation, "unlock": ConfigMutation,
	"approve": ConfigMutation, "merge": ConfigMutation, "close": ConfigMutation, "reopen": ConfigMutation,
	"submit": ConfigMutation, "commit": ConfigMutation, "change": ConfigMutation, "patch": ConfigMutation,
	"replace": ConfigMutation, "import": ConfigMutation, "invite": ConfigMutation, "accept": ConfigMutation,
	"reject": ConfigMutation, "mark": ConfigMutation, "label": ConfigMutation, "annotate": ConfigMutation,
	"cordon": ConfigMutation, "uncordon": ConfigMutation, "drain": ConfigMutation, "taint": ConfigMutation,
	"untaint": ConfigMutation, "schedule": ConfigMutation, "unschedule": ConfigMutation, "enroll": ConfigMutation,
	"provision": ConfigMutation, "migrate": ConfigMutation, "seed": ConfigMutation, "generate": ConfigMutation,
	"new": ConfigMutation, "renew": ConfigMutation, "refresh": ConfigMutation, "reindex": ConfigMutation,
	"compact": ConfigMutation, "repair": ConfigMutation, "rebuild": ConfigMutation, "unset": ConfigMutation,
	"setup": ConfigMutation, "encrypt": ConfigMutation, "sign": ConfigMutation,
	"activate": ConfigMutation, "deactivate": ConfigMutation,
	"exclude": ConfigMutation, "include": ConfigMutation, "release": ConfigMutation, "hold": ConfigMutation,
	"freeze": ConfigMutation, "unfreeze": ConfigMutation, "cleanup": ConfigMutation, "clean": WorkspaceWrite,
	"build": WorkspaceWrite, "test": WorkspaceWrite, "lint": WorkspaceWrite, "fmt": WorkspaceWrite,
	"format": WorkspaceWrite, "compile": WorkspaceWrite,
}

// readVerbs are verbs that only read. They never make a program logbook
// does not know read_only, but they let a family that registers a
// subcommand-style tool (see subcommandCLI) say so.
var readVerbs = map[string]bool{
	"list": true, "ls": true, "get": true, "show": true, "describe": true, "view": true,
	"status": true, "info": true, "inspect": true, "cat": true, "read": true, "print": true,
	"search": true, "find": true, "query": true, "lookup": true, "logs": true, "log": true,
	"history": true, "diff": true, "check": true, "validate": true, "verify": true, "version": true,
	"help": true, "whoami": true, "top": true, "stats": true, "watch": true, "tail": true,
	"explain": true, "doctor": true, "report": true, "ping": true, "health": true,
	"count": true, "exists": true, "usage": true, "audit": true, "preview": true, "plan": true,
	"events": true, "metrics": true, "browse": true, "completion": true,
}

// optionVerbs are the destroying verbs that count when a program spells
// them as an option (--delete, --remove-older-than, -purge). Fewer than
// verbWords: --disable-cache, --reset-timer and --expire-after change
// settings, not data.
var optionVerbs = map[string]bool{
	"delete": true, "del": true, "deletion": true, "remove": true, "removal": true, "purge": true,
	"drop": true, "destroy": true, "prune": true, "forget": true, "wipe": true, "truncate": true,
	"erase": true, "nuke": true, "uninstall": true, "deregister": true, "unregister": true,
	"deleteall": true, "removeall": true, "reset": true, "empty": true,
}

// nameVerbs are the destroying verbs a program's name may start with when
// it is one word (deleteall, removeorphans): the short ones (rm, del,
// drop) are left out, as rmate, delta and dropbox destroy nothing.
var nameVerbs = []string{"delete", "remove", "purge", "destroy", "wipe", "nuke", "erase", "uninstall", "truncate", "obliterate"}

// negations are the first parts of option names that turn a verb around:
// --no-delete, --keep-removed, --skip-prune.
var negations = map[string]bool{
	"no": true, "not": true, "skip": true, "keep": true, "without": true, "dont": true,
	"never": true, "ignore": true, "dry": true, "allow": true, "prevent": true, "protect": true,
}

// splitWords splits a word into lower-case parts at -, _, ., : and at
// the lower-to-upper case changes of camelCase: "delete-secret" gives
// delete, secret; "doDelete" gives do, delete; "db:drop" gives db, drop.
func splitWords(s string) []string {
	var parts []string
	start := 0
	flush := func(end int) {
		if end > start {
			parts = append(parts, strings.ToLower(s[start:end]))
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' || c == '_' || c == '.' || c == ':' || c == '/':
			flush(i)
			start = i + 1
		case 'A' <= c && c <= 'Z' && i > start && 'a' <= s[i-1] && s[i-1] <= 'z':
			flush(i)
			start = i
		}
	}
	flush(len(s))
	return parts
}

// wordVerb says what the verb spelled by one word does: the class of its
// first part when that is a verb ("list-deleted-secrets" lists), otherwise
// destructive when any part destroys ("schedule-key-deletion"). It returns
// ok false for a word that names no verb, and read true for a reading
// verb.
func wordVerb(word string) (c Class, read, ok bool) {
	if i := strings.LastIndexByte(word, ':'); i >= 0 && i+1 < len(word) {
		word = word[i+1:] // db:drop, migrate:fresh: the task after the namespace
	}
	parts := splitWords(word)
	if len(parts) == 0 {
		return "", false, false
	}
	if readVerbs[parts[0]] {
		return ReadOnly, true, true
	}
	if c, ok := verbWords[parts[0]]; ok {
		return c, false, true
	}
	for _, p := range parts[1:] {
		if verbWords[p] == Destructive {
			return Destructive, false, true
		}
	}
	// cluster_status, safe-restart: the verb comes last.
	last := parts[len(parts)-1]
	if readVerbs[last] {
		return ReadOnly, true, true
	}
	if c, ok := verbWords[last]; ok && len(parts) > 1 {
		return c, false, true
	}
	return "", false, false
}

// isCommandWord reports whether a word can be a subcommand: letters,
// digits, - _ and : only (db:drop), starting with a letter. Paths, URLs,
// key=value pairs and quoted sentences are not.
func isCommandWord(s string) bool {
	if s == "" || len(s) > 48 || !('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == ':') {
			return false
		}
	}
	return true
}

// maxLeadingWords is how many operands from the start of a command the
// general rules read for a verb: enough for
// `confluent kafka topic delete` and `zookeeper-shell HOST deleteall`.
const maxLeadingWords = 4

// verbFound is the verb the general rules found in a command.
type verbFound struct {
	class Class
	word  string // the word as written: "delete", "--delete", "delete-job"
	read  bool   // the verb only reads
	// dry reports that the command only asks for help or a dry run, so a
	// destroying verb destroys nothing.
	dry bool
}

// nounVerbs are verbs that subcommand-style tools mostly use as the name
// of a group of subcommands (velero backup get, gh run list, kopia
// snapshot create): when another verb follows, that one is the verb.
var nounVerbs = map[string]bool{
	"backup": true, "snapshot": true, "tag": true, "label": true, "archive": true, "release": true,
	"lock": true, "log": true, "logs": true, "build": true, "test": true, "store": true,
	"link": true, "mount": true, "schedule": true, "mirror": true, "shell": true, "script": true,
	"console": true, "run": true, "exec": true, "merge": true, "commit": true, "hold": true,
	"restore": true, "sync": true, "copy": true, "transfer": true, "history": true, "events": true,
	"metrics": true, "stats": true, "report": true, "audit": true, "plan": true, "deploy": true,
	"search": true, "watch": true, "top": true, "health": true, "usage": true, "import": true,
	"export": true, "signing": true, "login": true, "setup": true, "upload": true, "download": true,
	"format": true, "lint": true, "completion": true, "patch": true, "cleanup": true, "secret": true,
	"secrets": true, "projects": true, "configs": true, "environments": true, "migrate": true,
}

// weakVerb reports a verb that is more often the name of a group of
// subcommands (backup-location, run, ssh-key) than the verb itself, so
// that a later verb wins.
func weakVerb(v verbFound) bool {
	parts := splitWords(v.word)
	return len(parts) > 0 && nounVerbs[parts[0]] || v.class == Unknown
}

// leadingVerb finds the verb of a subcommand-style command among its
// first maxLeadingWords operands: a destroying verb anywhere among them,
// or a destroying verb spelled as an option, or else the first verb that
// is not the name of a group of subcommands (weakVerb), or else the
// first verb.
func leadingVerb(args []arg) (verbFound, bool) { return leadingVerbWith(args, wordVerb) }

// leadingVerbWith is leadingVerb with the verbs a program's family
// defines: word says what one word means, as wordVerb does.
func leadingVerbWith(args []arg, word func(string) (Class, bool, bool)) (verbFound, bool) {
	var verbs []verbFound
	var option verbFound
	haveOption, dry := false, false
	words := 0
	for _, a := range args {
		t := a.text
		if t == "--" && a.literal {
			break
		}
		if len(t) > 1 && t[0] == '-' && a.literal {
			name, value, _ := strings.Cut(strings.TrimLeft(t, "-"), "=")
			switch strings.ToLower(name) {
			case "help", "h", "dry-run", "dryrun", "what-if", "whatif", "simulate", "noop", "no-op":
				dry = true
			}
			if !haveOption && len(name) > 2 && optionVerb(name, value) {
				option, haveOption = verbFound{class: Destructive, word: t}, true
			}
			continue
		}
		if words >= maxLeadingWords {
			continue
		}
		words++
		if !a.literal || !isCommandWord(t) {
			continue
		}
		if c, read, ok := word(t); ok {
			verbs = append(verbs, verbFound{class: c, word: t, read: read})
		}
	}
	var v verbFound
	found := false
	for _, w := range verbs {
		if w.class == Destructive && !w.read {
			v, found = w, true
			break
		}
	}
	if !found && haveOption {
		v, found = option, true
	}
	if !found {
		for _, w := range verbs {
			if !weakVerb(w) {
				v, found = w, true
				break
			}
		}
	}
	if !found && len(verbs) > 0 {
		v, found = verbs[0], true
	}
	v.dry = dry
	return v, found
}

// optionVerb reports an option whose name destroys (--delete,
// --remove-older-than) and whose value does not turn it off.
func optionVerb(name, value string) bool {
	parts := splitWords(name)
	if len(parts) == 0 || negations[parts[0]] {
		return false
	}
	switch strings.ToLower(value) {
	case "false", "no", "0", "off", "none", "never":
		return false
	}
	for _, p := range parts {
		if optionVerbs[p] {
			return true
		}
	}
	return false
}

// nameDestroys reports whether a program's name says it destroys: a part
// of it is a destroying verb (kafka-delete-records, drop_tables.sh), or
// it starts with one of the longer ones (deleteall).
func nameDestroys(name string) (string, bool) {
	for _, p := range splitWords(name) {
		if verbWords[p] == Destructive {
			return p, true
		}
	}
	lower := strings.ToLower(name)
	for _, v := range nameVerbs {
		if strings.HasPrefix(lower, v) {
			return v, true
		}
	}
	return "", false
}

// generalVerb judges a command by its verb for a program whose table does
// not say. It never answers read_only: a reading verb is not enough to
// vouch for a program logbook does not know.
func generalVerb(prog string, args []arg) (judgement, bool) {
	v, ok := leadingVerb(args)
	if !ok || v.read {
		return judgement{}, false
	}
	return verbJudgement(prog, v), true
}

// verbJudgement turns the verb found in a command into a judgement.
func verbJudgement(prog string, v verbFound) judgement {
	switch {
	case v.read:
		return is(ReadOnly, prog+" "+v.word+" only reads")
	case v.class == Destructive && v.dry:
		return is(Unknown, prog+" "+v.word+" with help or a dry run should only say what it would delete")
	case v.class == Destructive:
		return is(Destructive, prog+" "+v.word+": the verb says it deletes or destroys")
	case v.class == Unknown:
		return is(Unknown, prog+" "+v.word+" runs something logbook cannot read")
	case v.class == SecretRead:
		return is(SecretRead, prog+" "+v.word+" reads or prints secrets")
	}
	return is(v.class, prog+" "+v.word+" "+verbRule(v.class)+" (by its verb)")
}

// subcommandCLI returns a handler for a subcommand-style program a family
// knows only by name: its verbs decide, reading verbs included, and a
// command whose verb says nothing gets class otherwise with the rule
// "NAME WHAT". overrides gives the verbs that mean something else for
// this program (virsh destroy only stops a machine).
func subcommandCLI(otherwise Class, what string, overrides verbTable) handler {
	word := func(w string) (Class, bool, bool) {
		if c, ok := overrides[strings.ToLower(w)]; ok {
			return c, c == ReadOnly, true
		}
		return wordVerb(w)
	}
	return func(_ *state, c command) judgement {
		if helpOnly(c.args) {
			return is(ReadOnly, c.name+" only prints its help or version")
		}
		if v, ok := leadingVerbWith(c.args, word); ok {
			return verbJudgement(c.name, v)
		}
		return is(otherwise, c.name+" "+what)
	}
}
