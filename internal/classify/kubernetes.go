package classify

import "strings"

// Kubernetes: kubectl and Helm.

// kubernetesPrograms registers the Kubernetes tools.
func kubernetesPrograms(r *registry) {
	r.handle(kubectlCmd, "kubectl", "oc", "k")
	r.handle(helmCmd, "helm")
}

var kubectlVerbs = verbTable{
	"get": ReadOnly, "describe": ReadOnly, "logs": ReadOnly, "top": ReadOnly, "explain": ReadOnly,
	"api-resources": ReadOnly, "api-versions": ReadOnly, "version": ReadOnly, "cluster-info": ReadOnly,
	"diff": ReadOnly, "events": ReadOnly, "auth": ReadOnly, "wait": ReadOnly, "help": ReadOnly,
	"apply": ConfigMutation, "create": ConfigMutation, "patch": ConfigMutation, "edit": ConfigMutation,
	"label": ConfigMutation, "annotate": ConfigMutation, "set": ConfigMutation, "replace": ConfigMutation,
	"expose": ConfigMutation, "autoscale": ConfigMutation, "taint": ConfigMutation, "certificate": ConfigMutation,
	"kustomize": ReadOnly, "cp": WorkspaceWrite, "port-forward": Network, "proxy": Network,
	"scale": ServiceControl, "rollout": ServiceControl, "cordon": ServiceControl, "uncordon": ServiceControl,
	"drain": ServiceControl, "run": ServiceControl, "debug": Unknown, "attach": Unknown,
	"delete": Destructive,
}

// kubectlCmd: kubectl exec POD -- COMMAND unwraps; config view reads,
// other config verbs change the local kubeconfig.
func kubectlCmd(st *state, c command) judgement {
	const global = "-n --namespace --context --cluster --kubeconfig -s --server --user --token -l --selector -o --output"
	verb, rest := subcommand(c.args, global)
	switch verb {
	case "exec":
		o := scanOptions(rest, scanSpec{valued: global + " -c --container -f --filename"})
		if !o.dashdash {
			return is(Unknown, "kubectl exec without -- COMMAND")
		}
		for i, a := range rest {
			if a.text == "--" {
				st.call(rest[i+1:], input{})
				break
			}
		}
		return judgement{wrapper: true}
	case "get":
		o := scanOptions(rest, scanSpec{valued: global + " --template -L --label-columns --sort-by --field-selector"})
		out, _ := o.value("-o", "--output")
		shows := o.has("--template") || strings.HasPrefix(out, "yaml") || strings.HasPrefix(out, "json") || strings.Contains(out, "template")
		for _, op := range o.operands {
			kind, _, _ := strings.Cut(strings.ToLower(op.text), "/")
			if (kind == "secret" || kind == "secrets") && shows {
				return is(SecretRead, "kubectl get secret -o "+out+" prints the secret's values")
			}
		}
	case "create":
		if sub, _ := subcommand(rest, global); sub == "token" {
			return is(SecretRead, "kubectl create token prints a service account token")
		}
	case "config":
		sub, subRest := subcommand(rest, "")
		if sub == "view" && scanOptions(subRest, scanSpec{}).has("--raw") {
			return is(SecretRead, "kubectl config view --raw prints the kubeconfig's keys and tokens")
		}
		if sub == "view" || strings.HasPrefix(sub, "get") || sub == "current-context" {
			return is(ReadOnly, "kubectl config "+sub+" reads the kubeconfig")
		}
		return is(ConfigMutation, "kubectl config "+sub+" changes the kubeconfig")
	case "rollout":
		if sub, _ := subcommand(rest, global); sub == "status" || sub == "history" {
			return is(ReadOnly, "kubectl rollout "+sub+" only reads")
		}
	}
	return lookupVerb("kubectl", verb, kubectlVerbs)
}

var helmVerbs = verbTable{
	"list": ReadOnly, "ls": ReadOnly, "status": ReadOnly, "get": ReadOnly, "show": ReadOnly,
	"history": ReadOnly, "search": ReadOnly, "template": ReadOnly, "lint": ReadOnly, "version": ReadOnly,
	"env": ReadOnly, "verify": ReadOnly, "help": ReadOnly,
	"package": WorkspaceWrite, "create": WorkspaceWrite, "dependency": Network, "pull": Network,
	"fetch": Network, "push": Network, "repo": Network, "registry": ConfigMutation, "plugin": PackageInstall,
	"install": ConfigMutation, "upgrade": ConfigMutation, "rollback": ConfigMutation, "test": ServiceControl,
	"uninstall": Destructive, "delete": Destructive, "del": Destructive, "un": Destructive,
}

func helmCmd(_ *state, c command) judgement {
	verb, rest := subcommand(c.args, "-n --namespace --kube-context --kubeconfig")
	if verb == "repo" || verb == "dependency" {
		if sub, _ := subcommand(rest, ""); sub == "list" || sub == "ls" {
			return is(ReadOnly, "helm "+verb+" list only reads")
		}
	}
	return lookupVerb("helm", verb, helmVerbs)
}
