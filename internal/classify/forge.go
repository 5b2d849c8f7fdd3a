package classify

import "strings"

// Forge CLIs: GitHub's gh, GitLab's glab, Gitea's tea. They change the
// forge's state (repositories, issues, releases, settings), which is
// config_mutation; deleting a repository, a gist, a release, a key, a
// secret or a workflow run is destructive; listing and viewing read. Their
// api commands send HTTP requests, judged by method, path and body.

// forgePrograms registers the forge CLIs.
func forgePrograms(r *registry) {
	r.handle(forgeCmd, "gh", "glab", "tea")
}

// forgeVerbs are what the forge CLIs' own words mean where the general
// verbs say otherwise or nothing: gh workflow run starts a workflow, gh pr
// checkout switches branches, glab ci trace reads a job's log.
var forgeVerbs = verbTable{
	"run": ServiceControl, "checkout": WorkspaceWrite, "co": WorkspaceWrite, "comment": ConfigMutation,
	"review": ConfigMutation, "ready": ConfigMutation, "develop": ConfigMutation, "fork": ConfigMutation,
	"trace": ReadOnly, "checks": ReadOnly, "note": ConfigMutation, "subscribe": ConfigMutation,
	"unsubscribe": ConfigMutation, "switch": ConfigMutation, "refresh": ConfigMutation,
	"setup-git": ConfigMutation, "token": SecretRead, "archive": ConfigMutation,
}

// forgeCmd judges gh, glab and tea.
func forgeCmd(st *state, c command) judgement {
	const global = "-R --repo -h --hostname"
	verb, rest := subcommand(c.args, global)
	switch verb {
	case "":
		return is(ReadOnly, c.name+" without a command prints its usage")
	case "api":
		return forgeAPI(c.name, rest)
	case "auth":
		sub, subRest := subcommand(rest, global)
		o := scanOptions(subRest, scanSpec{valued: global})
		switch {
		case sub == "token" || o.has("-t", "--show-token"):
			return is(SecretRead, c.name+" auth "+sub+" prints an access token")
		case sub == "status":
			return is(ReadOnly, c.name+" auth status only reads")
		}
		return is(ConfigMutation, c.name+" auth "+sub+" changes the CLI's login")
	case "extension", "extensions", "ext":
		sub, _ := subcommand(rest, "")
		switch sub {
		case "install", "remove", "upgrade":
			return is(PackageInstall, c.name+" extension "+sub+" installs or removes software")
		case "list", "ls", "browse", "search":
			return is(ReadOnly, c.name+" extension "+sub+" only reads")
		case "create":
			return is(WorkspaceWrite, c.name+" extension create writes a new extension")
		}
		return is(Unknown, c.name+" extension "+sub+" runs an extension, which logbook cannot read")
	case "alias", "config":
		sub, _ := subcommand(rest, "")
		if sub == "list" || sub == "ls" || sub == "get" || sub == "" {
			return is(ReadOnly, c.name+" "+verb+" "+sub+" only reads")
		}
		return is(ConfigMutation, c.name+" "+verb+" "+sub+" changes the CLI's own configuration")
	case "variable":
		if sub, _ := subcommand(rest, ""); sub == "export" {
			return is(SecretRead, c.name+" variable export prints CI variables, secrets included")
		}
	case "pr", "mr":
		if sub, _ := subcommand(rest, global); sub == "merge" {
			return is(ConfigMutation, c.name+" "+verb+" merge merges the request on the forge (a merged branch keeps its commits)")
		}
	}
	word := func(w string) (Class, bool, bool) {
		if cl, ok := forgeVerbs[strings.ToLower(w)]; ok {
			return cl, cl == ReadOnly, true
		}
		return wordVerb(w)
	}
	if v, ok := leadingVerbWith(c.args, word); ok {
		if v.class == SecretRead {
			return is(SecretRead, c.name+" "+v.word+" prints a secret")
		}
		j := verbJudgement(c.name, v)
		if j.class == Network {
			j = is(ConfigMutation, c.name+" "+v.word+" changes the forge")
		}
		return j
	}
	if helpOnly(c.args) {
		return is(ReadOnly, c.name+" only prints help")
	}
	return is(Unknown, "logbook does not know what "+c.name+" "+verb+" does (an extension, an alias or a command it has not learnt)")
}

// forgeAPI: gh api / glab api [options] ENDPOINT. -X or --method sets the
// method; fields (-f, -F, --field, --raw-field) or --input make it a POST.
// A write changes the forge: config_mutation, or destructive.
func forgeAPI(prog string, args []arg) judgement {
	o := scanOptions(args, scanSpec{valued: "-X --method -f --raw-field -F --field -H --header --input -q --jq -t --template --hostname -p --preview --cache"})
	req := httpRequest{prog: prog, urls: texts(o.operands)}
	for _, op := range o.opts {
		switch op.name {
		case "-f", "--raw-field", "-F", "--field":
			req.write("POST", prog+" api "+op.name+" sends fields")
			req.bodies = append(req.bodies, op.value)
		case "--input":
			req.write("POST", prog+" api --input sends a body")
		}
	}
	if m, ok := o.value("-X", "--method"); ok {
		req.method, req.how = strings.ToUpper(m), prog+" api -X "+m
	}
	if j, ok := req.judge(ConfigMutation); ok {
		return j
	}
	if o.has("-h", "--help") && len(o.operands) == 0 {
		return is(ReadOnly, prog+" api only prints help")
	}
	return is(ReadOnly, prog+" api sends a GET request and prints the answer")
}
