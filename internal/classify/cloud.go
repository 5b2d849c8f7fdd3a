package classify

import "strings"

// Clouds and infrastructure as code: Terraform, the AWS, Google Cloud and
// Azure CLIs and their kin, judged by the words their operations are built
// from.

// cloudPrograms registers the cloud CLIs.
func cloudPrograms(r *registry) {
	r.handle(terraformCmd, "terraform", "tofu", "terragrunt")
	r.handle(awsCmd, "aws")
	r.handle(cloudVerbCmd, "gcloud", "az", "doctl", "hcloud", "flyctl", "fly")
}

var terraformVerbs = verbTable{
	"plan": ReadOnly, "show": ReadOnly, "validate": ReadOnly, "output": ReadOnly, "version": ReadOnly,
	"providers": ReadOnly, "graph": ReadOnly, "console": ReadOnly, "help": ReadOnly, "test": ReadOnly,
	"init": Network, "get": Network, "login": ConfigMutation, "logout": ConfigMutation,
	"fmt": WorkspaceWrite, "workspace": ConfigMutation, "force-unlock": ConfigMutation,
	"apply": ConfigMutation, "import": ConfigMutation, "taint": ConfigMutation, "untaint": ConfigMutation,
	"refresh": ConfigMutation, "state": ConfigMutation,
	"destroy": Destructive,
}

// terraformCmd: apply -destroy and destroy tear down infrastructure; plan
// -out writes a plan file.
func terraformCmd(st *state, c command) judgement {
	verb, rest := subcommand(c.args, "-chdir")
	o := scanOptions(rest, scanSpec{valued: "-var -var-file -target -out -state -backup -lock-timeout -parallelism", longSingleDash: true})
	switch verb {
	case "apply", "plan":
		if o.has("-destroy") && verb == "apply" {
			return is(Destructive, c.name+" apply -destroy destroys the managed infrastructure")
		}
		if out, ok := o.value("-out"); ok && verb == "plan" {
			return writeTargets(st, c.name+" plan -out writes", []arg{lit(out)})
		}
	case "workspace":
		switch sub, _ := subcommand(rest, ""); sub {
		case "delete":
			return is(Destructive, c.name+" workspace delete deletes a workspace and the state it tracks")
		case "list", "show":
			return is(ReadOnly, c.name+" workspace "+sub+" only reads")
		}
	case "state":
		if sub, _ := subcommand(rest, ""); sub == "list" || sub == "show" || sub == "pull" {
			return is(ReadOnly, c.name+" state "+sub+" only reads")
		} else if sub == "rm" {
			return is(Destructive, c.name+" state rm makes Terraform forget resources")
		}
	}
	return lookupVerb(c.name, verb, terraformVerbs)
}

// cloudVerbPrefixes classify cloud CLI operations by the words they are
// built from: aws ec2 describe-instances, gcloud compute instances delete,
// az vm start.
var cloudVerbPrefixes = []struct {
	prefix string
	class  Class
}{
	{"describe", ReadOnly}, {"list", ReadOnly}, {"get", ReadOnly}, {"show", ReadOnly}, {"ls", ReadOnly},
	{"head", ReadOnly}, {"read", ReadOnly}, {"search", ReadOnly}, {"lookup", ReadOnly}, {"query", ReadOnly},
	{"wait", ReadOnly}, {"filter", ReadOnly}, {"validate", ReadOnly}, {"whoami", ReadOnly}, {"info", ReadOnly},
	{"delete", Destructive}, {"terminate", Destructive}, {"destroy", Destructive}, {"purge", Destructive},
	{"remove", Destructive}, {"deregister", Destructive}, {"rm", Destructive}, {"rb", Destructive},
	{"start", ServiceControl}, {"stop", ServiceControl}, {"reboot", ServiceControl}, {"restart", ServiceControl},
	{"reset", ServiceControl}, {"deallocate", ServiceControl}, {"run-instances", ServiceControl},
	{"suspend", ServiceControl}, {"resume", ServiceControl}, {"failover", ServiceControl}, {"ssh", Unknown},
	{"create", ConfigMutation}, {"put", ConfigMutation}, {"update", ConfigMutation}, {"modify", ConfigMutation},
	{"attach", ConfigMutation}, {"detach", ConfigMutation}, {"tag", ConfigMutation}, {"untag", ConfigMutation},
	{"set", ConfigMutation}, {"add", ConfigMutation}, {"enable", ConfigMutation}, {"disable", ConfigMutation},
	{"associate", ConfigMutation}, {"disassociate", ConfigMutation}, {"deploy", ConfigMutation},
	{"import", ConfigMutation}, {"register", ConfigMutation}, {"authorize", ConfigMutation},
	{"revoke", ConfigMutation}, {"configure", ConfigMutation}, {"login", ConfigMutation}, {"resize", ConfigMutation},
	{"scale", ServiceControl}, {"invoke", Unknown}, {"cp", Network}, {"sync", Network}, {"mv", Network},
	{"send", Network}, {"publish", Network}, {"receive", Network}, {"change", ConfigMutation},
	{"restore", ConfigMutation}, {"rotate", ConfigMutation}, {"copy", Network}, {"cancel", ServiceControl},
}

// awsCmd: aws SERVICE OPERATION; aws s3 cp from a bucket to a local file
// is a download, the rest of s3 transfers are network.
func awsCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "--region --profile --output --query --endpoint-url --cli-input-json --color --ca-bundle"})
	if len(o.operands) == 0 {
		return is(ReadOnly, "aws without a command prints its usage")
	}
	if what, ok := cloudSecret("aws", o.operands); ok {
		return is(SecretRead, "aws "+what)
	}
	if len(o.operands) > 1 && strings.HasPrefix(o.operands[1].text, "get-parameter") && o.has("--with-decryption") {
		return is(SecretRead, "aws ssm "+o.operands[1].text+" --with-decryption prints secret parameters")
	}
	if o.operands[0].text == "sts" || o.operands[0].text == "configure" && len(o.operands) > 1 && strings.HasPrefix(o.operands[1].text, "list") {
		return is(ReadOnly, "aws "+o.operands[0].text+" only reads")
	}
	if o.operands[0].text == "s3" && len(o.operands) > 1 && (o.operands[1].text == "sync" || o.operands[1].text == "mv") && o.has("--delete") {
		return is(Destructive, "aws s3 sync --delete deletes files at the destination that the source lacks")
	}
	return cloudVerb("aws", o.operands)
}

// cloudVerbCmd: gcloud, az and friends, judged by their first verb word.
func cloudVerbCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "--project --region --zone --format --filter --subscription -g --resource-group -n --name --account --configuration -o --output --query --location"})
	return cloudVerb(c.name, o.operands)
}

// cloudSecret says what a cloud CLI operation reveals when it prints a
// secret: a Secrets Manager or Key Vault value, a decrypted parameter, a
// temporary credential or access token, decrypted data.
func cloudSecret(prog string, operands []arg) (string, bool) {
	words := make(map[string]bool, len(operands))
	for _, op := range operands {
		words[strings.ToLower(op.text)] = true
	}
	for _, op := range operands {
		switch w := strings.ToLower(op.text); w {
		case "get-secret-value", "batch-get-secret-value", "get-login-password", "get-authorization-token",
			"get-session-token", "assume-role", "assume-role-with-saml", "assume-role-with-web-identity",
			"get-federation-token", "export-credentials", "decrypt", "print-access-token",
			"print-identity-token", "print-refresh-token", "get-access-token", "get-secret":
			return w + " prints a secret or a credential", true
		case "access":
			if words["secrets"] {
				return "secrets versions access prints a secret's value", true
			}
		case "show", "download":
			if words["keyvault"] && words["secret"] || words["credential"] && words["acr"] {
				return "prints a secret's value", true
			}
		case "keys":
			if words["list"] && words["storage"] {
				return "storage account keys list prints access keys", true
			}
		case "get":
			if prog == "aws" && words["configure"] {
				return "configure get prints a configured credential", true
			}
		}
	}
	return "", false
}

func cloudVerb(prog string, operands []arg) judgement {
	if what, ok := cloudSecret(prog, operands); ok {
		return is(SecretRead, prog+" "+what)
	}
	for _, op := range operands {
		w := strings.ToLower(op.text)
		for _, v := range cloudVerbPrefixes {
			if w == v.prefix || strings.HasPrefix(w, v.prefix+"-") {
				return is(v.class, prog+" "+w+" "+verbRule(v.class))
			}
		}
		for _, p := range splitWords(w) {
			if verbWords[p] == Destructive && isCommandWord(w) {
				return is(Destructive, prog+" "+w+": the operation's name says it deletes")
			}
		}
	}
	if len(operands) == 0 || helpOnly(operands[len(operands)-1:]) {
		return is(ReadOnly, prog+" only prints help")
	}
	return is(Unknown, "logbook does not know what this "+prog+" command does")
}
