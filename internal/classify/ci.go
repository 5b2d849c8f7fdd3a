package classify

// CI servers' CLIs: Jenkins, CircleCI, Buildkite, Travis CI, Argo
// Workflows and Argo CD, Tekton, GitLab Runner. They are built from
// subcommands, and the general verbs read them (delete-job, context
// delete, pipelinerun delete); the tables here add what their own words
// mean: jenkins-cli build starts a build, groovy runs code, console prints
// a log.

// ciPrograms registers the CI servers' CLIs.
func ciPrograms(r *registry) {
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{
		"build": ServiceControl, "console": ReadOnly, "groovy": Unknown, "groovysh": Unknown,
		"who-am-i": ReadOnly, "quiet-down": ServiceControl, "connect-node": ServiceControl,
		"disconnect-node": ServiceControl, "offline-node": ServiceControl, "online-node": ServiceControl,
		"wait-node-online": ReadOnly, "wait-node-offline": ReadOnly, "clear-queue": ConfigMutation,
		"keep-build": ConfigMutation, "get-job": ReadOnly, "get-node": ReadOnly, "get-view": ReadOnly,
		"list-jobs": ReadOnly, "list-plugins": ReadOnly, "list-changes": ReadOnly, "version": ReadOnly,
	}), "jenkins-cli")
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{
		"follow": ConfigMutation, "open": ReadOnly, "diagnostic": ReadOnly, "local": Unknown,
		"store-secret": ConfigMutation, "pack": WorkspaceWrite, "process": ReadOnly,
	}), "circleci")
	r.handle(buildkiteAgentCmd, "buildkite-agent")
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", nil), "bk", "tkn", "argo", "gitlab-runner", "drone", "woodpecker-cli", "woodpecker", "spin", "codefresh")
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{
		"sync": ConfigMutation, "manifests": ReadOnly, "terminate-op": ServiceControl, "wait": ReadOnly,
	}), "argocd")
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{
		"token": SecretRead, "whoami": ReadOnly, "logs": ReadOnly, "encrypt": WorkspaceWrite,
		"encrypt-file": WorkspaceWrite, "clear": Destructive, "monitor": ReadOnly, "branches": ReadOnly,
	}), "travis")
}

// buildkiteAgentCmd: buildkite-agent secret get and oidc request-token
// print secrets; the rest follows the general verbs.
func buildkiteAgentCmd(st *state, c command) judgement {
	verb, rest := subcommand(c.args, "")
	sub, _ := subcommand(rest, "")
	switch {
	case verb == "secret" && sub == "get", verb == "oidc":
		return is(SecretRead, "buildkite-agent "+verb+" "+sub+" prints a secret")
	case verb == "start":
		return is(ServiceControl, "buildkite-agent start runs the agent")
	}
	return subcommandCLI(Unknown, "runs a command logbook does not know", nil)(st, c)
}
