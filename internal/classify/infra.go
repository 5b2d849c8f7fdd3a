package classify

import "strings"

// Infrastructure: Proxmox, ZFS, systemd, containers, clusters, clouds,
// firewalls and databases. Most are judged by their subcommand with a
// verbTable; read the tables as "verb: class".

// pctVerbs are Proxmox container subcommands (pct exec is a wrapper).
var pctVerbs = verbTable{
	"list": ReadOnly, "config": ReadOnly, "status": ReadOnly, "pending": ReadOnly,
	"listsnapshot": ReadOnly, "df": ReadOnly, "cpusets": ReadOnly, "help": ReadOnly,
	"pull": WorkspaceWrite,
	"set":  ConfigMutation, "create": ConfigMutation, "clone": ConfigMutation, "resize": ConfigMutation,
	"snapshot": ConfigMutation, "template": ConfigMutation, "mount": ConfigMutation, "unmount": ConfigMutation,
	"move-volume": ConfigMutation, "move_volume": ConfigMutation, "unlock": ConfigMutation,
	"rescan": ConfigMutation, "fstrim": ConfigMutation, "push": ConfigMutation, "restore": ConfigMutation,
	"start": ServiceControl, "stop": ServiceControl, "shutdown": ServiceControl, "reboot": ServiceControl,
	"suspend": ServiceControl, "resume": ServiceControl, "migrate": ServiceControl, "remote-migrate": ServiceControl,
	"destroy": Destructive, "delsnapshot": Destructive, "rollback": Destructive,
	"enter": Unknown, "console": Unknown,
}

// qmVerbs are Proxmox VM subcommands (qm guest exec is a wrapper).
var qmVerbs = verbTable{
	"list": ReadOnly, "config": ReadOnly, "status": ReadOnly, "pending": ReadOnly,
	"listsnapshot": ReadOnly, "showcmd": ReadOnly, "help": ReadOnly, "cloudinit": ReadOnly,
	"set": ConfigMutation, "create": ConfigMutation, "clone": ConfigMutation, "resize": ConfigMutation,
	"snapshot": ConfigMutation, "template": ConfigMutation, "importdisk": ConfigMutation, "disk": ConfigMutation,
	"move-disk": ConfigMutation, "move_disk": ConfigMutation, "unlock": ConfigMutation, "rescan": ConfigMutation,
	"importovf": ConfigMutation, "sendkey": ConfigMutation,
	"start": ServiceControl, "stop": ServiceControl, "shutdown": ServiceControl, "reboot": ServiceControl,
	"reset": ServiceControl, "suspend": ServiceControl, "resume": ServiceControl, "migrate": ServiceControl,
	"remote-migrate": ServiceControl, "wait": ReadOnly,
	"destroy": Destructive, "delsnapshot": Destructive, "rollback": Destructive, "unlink": Destructive,
	"terminal": Unknown, "monitor": Unknown, "vncproxy": Unknown, "mtunnel": Unknown,
}

// pctCmd: pct VERB ID ...; pct exec ID [--] COMMAND runs COMMAND in the
// container, as root there.
func pctCmd(st *state, c command) judgement {
	verb, rest := subcommand(c.args, "")
	if verb == "exec" {
		return guestExec(st, "pct exec", rest, "")
	}
	j := lookupVerb("pct", verb, pctVerbs)
	if verb == "restore" && scanOptions(rest, scanSpec{}).has("--force") {
		return is(Destructive, "pct restore --force overwrites an existing container")
	}
	return j
}

// qmCmd: qm VERB ID ...; qm guest exec ID [--] COMMAND runs COMMAND in the
// VM through its guest agent.
func qmCmd(st *state, c command) judgement {
	verb, rest := subcommand(c.args, "")
	if verb == "guest" {
		gverb, grest := subcommand(rest, "")
		switch gverb {
		case "exec":
			return guestExec(st, "qm guest exec", grest, "--timeout --pass-stdin --synchronous")
		case "passwd":
			return is(Privilege, "qm guest passwd changes a password inside the VM")
		case "cmd":
			if len(grest) > 1 && (grest[1].text == "shutdown" || grest[1].text == "suspend-disk" || grest[1].text == "suspend-ram" || grest[1].text == "suspend-hybrid") {
				return is(ServiceControl, "qm guest cmd "+grest[1].text+" stops or suspends the VM")
			}
			return is(ReadOnly, "qm guest cmd queries the guest agent")
		case "exec-status":
			return is(ReadOnly, "qm guest exec-status reads a command's result")
		}
		return is(Unknown, "logbook does not know what qm guest "+gverb+" does")
	}
	return lookupVerb("qm", verb, qmVerbs)
}

// guestExec unwraps pct exec / qm guest exec: ID, options, optional --,
// then the command.
func guestExec(st *state, what string, args []arg, valued string) judgement {
	if len(args) == 0 {
		return is(ReadOnly, what+" without a guest runs nothing")
	}
	o := scanOptions(args[1:], scanSpec{valued: valued, stopAtOperand: true})
	inner := args[1+o.rest:]
	if len(inner) == 0 {
		return is(Unknown, what+" without a command")
	}
	st.call(inner, input{})
	return judgement{wrapper: true}
}

// pveshCmd: pvesh VERB PATH. Starting or stopping through the API path
// (…/status/start) is service control.
func pveshCmd(_ *state, c command) judgement {
	verb, rest := subcommand(c.args, "")
	p := ""
	if len(rest) > 0 {
		p = rest[0].text
	}
	switch verb {
	case "get", "ls", "usage", "help":
		return is(ReadOnly, "pvesh "+verb+" reads the Proxmox API")
	case "create", "set":
		if i := strings.LastIndex(p, "/status/"); i >= 0 {
			return is(ServiceControl, "pvesh "+verb+" "+p+" starts, stops or restarts a guest")
		}
		return is(ConfigMutation, "pvesh "+verb+" changes Proxmox configuration")
	case "delete":
		return is(Destructive, "pvesh delete deletes a Proxmox object")
	}
	return lookupVerb("pvesh", verb, nil)
}

var pvesmVerbs = verbTable{
	"status": ReadOnly, "list": ReadOnly, "path": ReadOnly, "scan": ReadOnly, "help": ReadOnly,
	"nfsscan": ReadOnly, "cifsscan": ReadOnly, "iscsiscan": ReadOnly, "lvmscan": ReadOnly, "zfsscan": ReadOnly,
	"export": ReadOnly, "extractconfig": ReadOnly, "prune-backups": Destructive,
	"add": ConfigMutation, "set": ConfigMutation, "alloc": ConfigMutation, "import": ConfigMutation,
	"remove": ConfigMutation, "free": Destructive,
}

func pvesmCmd(_ *state, c command) judgement {
	verb, _ := subcommand(c.args, "")
	return lookupVerb("pvesm", verb, pvesmVerbs)
}

var pveamVerbs = verbTable{
	"available": ReadOnly, "list": ReadOnly, "help": ReadOnly,
	"update": Network, "download": Network, "remove": Destructive,
}

func pveamCmd(_ *state, c command) judgement {
	verb, _ := subcommand(c.args, "")
	return lookupVerb("pveam", verb, pveamVerbs)
}

var zfsVerbs = verbTable{
	"list": ReadOnly, "get": ReadOnly, "holds": ReadOnly, "diff": ReadOnly, "userspace": ReadOnly,
	"groupspace": ReadOnly, "projectspace": ReadOnly, "help": ReadOnly, "send": ReadOnly, "version": ReadOnly,
	"set": ConfigMutation, "create": ConfigMutation, "snapshot": ConfigMutation, "snap": ConfigMutation,
	"clone": ConfigMutation, "rename": ConfigMutation, "mount": ConfigMutation, "unmount": ConfigMutation,
	"umount": ConfigMutation, "promote": ConfigMutation, "inherit": ConfigMutation, "hold": ConfigMutation,
	"release": ConfigMutation, "allow": ConfigMutation, "unallow": ConfigMutation, "share": ConfigMutation,
	"unshare": ConfigMutation, "bookmark": ConfigMutation, "receive": ConfigMutation, "recv": ConfigMutation,
	"load-key": ConfigMutation, "unload-key": ConfigMutation, "change-key": ConfigMutation,
	"destroy": Destructive, "rollback": Destructive,
}

func zfsCmd(_ *state, c command) judgement {
	verb, rest := subcommand(c.args, "")
	if (verb == "receive" || verb == "recv") && scanOptions(rest, scanSpec{}).has("-F") {
		return is(Destructive, "zfs receive -F rolls the dataset back, destroying newer data")
	}
	return lookupVerb("zfs", verb, zfsVerbs)
}

var zpoolVerbs = verbTable{
	"list": ReadOnly, "status": ReadOnly, "get": ReadOnly, "iostat": ReadOnly, "history": ReadOnly,
	"events": ReadOnly, "help": ReadOnly, "version": ReadOnly, "wait": ReadOnly,
	"set": ConfigMutation, "create": ConfigMutation, "add": ConfigMutation, "attach": ConfigMutation,
	"detach": ConfigMutation, "replace": ConfigMutation, "online": ConfigMutation, "offline": ConfigMutation,
	"import": ConfigMutation, "export": ConfigMutation, "scrub": ConfigMutation, "trim": ConfigMutation,
	"upgrade": ConfigMutation, "clear": ConfigMutation, "remove": ConfigMutation, "split": ConfigMutation,
	"reguid": ConfigMutation, "resilver": ConfigMutation, "initialize": ConfigMutation, "checkpoint": ConfigMutation,
	"destroy": Destructive, "labelclear": Destructive,
}

func zpoolCmd(_ *state, c command) judgement {
	verb, _ := subcommand(c.args, "")
	return lookupVerb("zpool", verb, zpoolVerbs)
}

var systemctlVerbs = verbTable{
	"status": ReadOnly, "show": ReadOnly, "cat": ReadOnly, "is-active": ReadOnly, "is-enabled": ReadOnly,
	"is-failed": ReadOnly, "is-system-running": ReadOnly, "list-units": ReadOnly, "list-unit-files": ReadOnly,
	"list-timers": ReadOnly, "list-sockets": ReadOnly, "list-dependencies": ReadOnly, "list-jobs": ReadOnly,
	"list-machines": ReadOnly, "get-default": ReadOnly, "help": ReadOnly, "show-environment": ReadOnly,
	"start": ServiceControl, "stop": ServiceControl, "restart": ServiceControl, "reload": ServiceControl,
	"try-restart": ServiceControl, "reload-or-restart": ServiceControl, "try-reload-or-restart": ServiceControl,
	"condrestart": ServiceControl, "force-reload": ServiceControl, "kill": ServiceControl, "isolate": ServiceControl,
	"daemon-reload": ServiceControl, "daemon-reexec": ServiceControl, "reset-failed": ServiceControl,
	"reboot": ServiceControl, "poweroff": ServiceControl, "halt": ServiceControl, "suspend": ServiceControl,
	"hibernate": ServiceControl, "kexec": ServiceControl, "rescue": ServiceControl, "emergency": ServiceControl,
	"soft-reboot": ServiceControl, "hybrid-sleep": ServiceControl, "clean": ServiceControl,
	"enable": ConfigMutation, "disable": ConfigMutation, "mask": ConfigMutation, "unmask": ConfigMutation,
	"set-default": ConfigMutation, "edit": ConfigMutation, "set-property": ConfigMutation, "preset": ConfigMutation,
	"preset-all": ConfigMutation, "link": ConfigMutation, "revert": ConfigMutation, "set-environment": ConfigMutation,
	"unset-environment": ConfigMutation, "import-environment": ConfigMutation, "add-wants": ConfigMutation,
	"add-requires": ConfigMutation, "reenable": ConfigMutation,
}

// systemctlCmd: no verb lists units.
func systemctlCmd(_ *state, c command) judgement {
	verb, _ := subcommand(c.args, "-t --type -p --property -H --host -M --machine -n --lines -o --output --state --signal -s --kill-whom --root")
	if verb == "" {
		return is(ReadOnly, "systemctl lists units")
	}
	return lookupVerb("systemctl", verb, systemctlVerbs)
}

// serviceCmd: service NAME ACTION.
func serviceCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{})
	if o.has("--status-all") || len(o.operands) < 2 || helpOnly(c.args) {
		return is(ReadOnly, "service lists services")
	}
	action := strings.ToLower(o.operands[1].text)
	if action == "status" {
		return is(ReadOnly, "service status shows a service")
	}
	return is(ServiceControl, "service "+o.operands[0].text+" "+action+" controls a service")
}

// journalctlCmd reads logs, unless it rotates or vacuums them.
func journalctlCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-u --unit -n --lines -p --priority -S --since -U --until -o --output -b --boot -t --identifier -g --grep -D --directory --file -M --machine"})
	if o.hasPrefix("--vacuum") || o.has("--rotate", "--flush", "--relinquish-var", "--smart-relinquish-var", "--setup-keys") {
		return is(ConfigMutation, "journalctl rotates, moves or deletes logs")
	}
	return is(ReadOnly, "journalctl reads logs")
}

var dockerVerbs = verbTable{
	"ps": ReadOnly, "images": ReadOnly, "inspect": ReadOnly, "logs": ReadOnly, "version": ReadOnly,
	"info": ReadOnly, "stats": ReadOnly, "top": ReadOnly, "history": ReadOnly, "port": ReadOnly,
	"diff": ReadOnly, "events": ReadOnly, "search": ReadOnly, "help": ReadOnly, "ls": ReadOnly,
	"list": ReadOnly, "show": ReadOnly, "df": ReadOnly, "config": ReadOnly, "wait": ReadOnly,
	"build": WorkspaceWrite, "buildx": WorkspaceWrite, "cp": WorkspaceWrite, "tag": WorkspaceWrite,
	"commit": WorkspaceWrite, "save": WorkspaceWrite, "export": WorkspaceWrite, "load": WorkspaceWrite,
	"import": WorkspaceWrite,
	"pull":   Network, "push": Network, "login": ConfigMutation, "logout": ConfigMutation,
	"create": ConfigMutation, "update": ConfigMutation, "rename": ConfigMutation, "connect": ConfigMutation,
	"disconnect": ConfigMutation, "rmi": ConfigMutation, "context": ConfigMutation,
	"run": ServiceControl, "start": ServiceControl, "stop": ServiceControl, "restart": ServiceControl,
	"kill": ServiceControl, "pause": ServiceControl, "unpause": ServiceControl, "up": ServiceControl,
	"down": ServiceControl, "attach": Unknown, "scale": ServiceControl,
	"rm": Destructive, "prune": Destructive,
}

// dockerObjects are the management groups (docker container ls): the
// verb follows the object.
var dockerObjects = map[string]bool{
	"container": true, "image": true, "volume": true, "network": true, "system": true,
	"builder": true, "plugin": true, "node": true, "service": true, "stack": true,
	"secret": true, "config": true, "swarm": true, "context": true, "manifest": true, "trust": true,
}

// dockerCmd judges docker and podman. docker exec unwraps; docker run with
// host-level access (--privileged, the host's root or the docker socket
// mounted, host namespaces) is privilege; removing images is recoverable
// (pull again), removing containers and volumes is not.
func dockerCmd(st *state, c command) judgement {
	const global = "-H --host -c --context --config -l --log-level --tlscacert --tlscert --tlskey"
	verb, rest := subcommand(c.args, global)
	object := ""
	if dockerObjects[verb] {
		object = verb
		verb, rest = subcommand(rest, "")
		if object == "image" && (verb == "rm" || verb == "prune") {
			return is(ConfigMutation, c.name+" image "+verb+" removes images, which can be pulled again")
		}
		if object == "network" && (verb == "rm" || verb == "prune") {
			return is(ConfigMutation, c.name+" network "+verb+" removes networks")
		}
		if object == "builder" && verb == "prune" {
			return is(ConfigMutation, c.name+" builder prune removes the build cache")
		}
	}
	if verb == "compose" {
		return composeCmd(st, command{name: c.name + " compose", args: rest, all: c.all, in: c.in})
	}
	if verb == "exec" {
		o := scanOptions(rest, scanSpec{valued: "-e --env --env-file -u --user -w --workdir --detach-keys", stopAtOperand: true})
		inner := rest[o.rest:]
		if len(inner) < 2 {
			return is(Unknown, c.name+" exec without a command")
		}
		st.call(inner[1:], input{})
		return judgement{wrapper: true}
	}
	if verb == "run" || verb == "create" {
		if why := dockerHostAccess(rest); why != "" {
			return is(Privilege, c.name+" "+verb+" "+why+", which gives the container root on the host")
		}
	}
	full := c.name + " " + strings.TrimSpace(object+" "+verb)
	if cl, ok := dockerVerbs[verb]; ok {
		return is(cl, full+" "+verbRule(cl))
	}
	return lookupVerb(c.name, strings.TrimSpace(object+" "+verb), nil)
}

// dockerHostAccess says how a docker run gets at the host, or "".
func dockerHostAccess(args []arg) string {
	o := scanOptions(args, scanSpec{valued: "-v --volume --mount --pid --net --network --ipc --uts --userns --cap-add --device -e --env --name -p --publish -w --workdir -u --user --entrypoint -l --label --env-file --platform --restart -m --memory --cpus --security-opt", stopAtOperand: true})
	if o.has("--privileged") {
		return "--privileged"
	}
	for _, op := range o.opts {
		switch op.name {
		case "-v", "--volume", "--mount":
			src := strings.TrimPrefix(op.value, "source=")
			src, _, _ = strings.Cut(src, ":")
			if src == "/" || strings.Contains(op.value, "docker.sock") || isSystemPath(src) && src != "/dev/null" {
				return "mounts " + src + " from the host"
			}
		case "--pid", "--net", "--network", "--ipc", "--uts", "--userns":
			if op.value == "host" {
				return op.name + "=host"
			}
		case "--cap-add":
			if strings.EqualFold(op.value, "ALL") || strings.EqualFold(op.value, "SYS_ADMIN") {
				return "--cap-add " + op.value
			}
		}
	}
	return ""
}

// composeCmd judges docker compose.
func composeCmd(_ *state, c command) judgement {
	verb, rest := subcommand(c.args, "-f --file -p --project-name --profile --env-file --project-directory")
	o := scanOptions(rest, scanSpec{})
	switch verb {
	case "down":
		if o.has("-v", "--volumes") {
			return is(Destructive, c.name+" down --volumes deletes the project's volumes and their data")
		}
		return is(ServiceControl, c.name+" down stops and removes the project's containers")
	case "rm":
		return is(Destructive, c.name+" rm removes stopped containers")
	case "ps", "logs", "config", "ls", "top", "images", "port", "version":
		return is(ReadOnly, c.name+" "+verb+" only reads")
	case "build":
		return is(WorkspaceWrite, c.name+" build builds images")
	case "pull", "push":
		return is(Network, c.name+" "+verb+" transfers images")
	case "exec", "run":
		return is(Unknown, c.name+" "+verb+" runs a command inside a container")
	}
	return is(ServiceControl, c.name+" "+verb+" starts, stops or changes the project's containers")
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
	case "config":
		sub, _ := subcommand(rest, "")
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
}

// awsCmd: aws SERVICE OPERATION; aws s3 cp from a bucket to a local file
// is a download, the rest of s3 transfers are network.
func awsCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "--region --profile --output --query --endpoint-url --cli-input-json --color --ca-bundle"})
	if len(o.operands) == 0 {
		return is(ReadOnly, "aws without a command prints its usage")
	}
	if o.operands[0].text == "sts" || o.operands[0].text == "configure" && len(o.operands) > 1 && strings.HasPrefix(o.operands[1].text, "get") {
		return is(ReadOnly, "aws "+o.operands[0].text+" only reads")
	}
	return cloudVerb("aws", o.operands)
}

// cloudVerbCmd: gcloud, az and friends, judged by their first verb word.
func cloudVerbCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "--project --region --zone --format --filter --subscription -g --resource-group -n --name --account --configuration -o --output --query --location"})
	return cloudVerb(c.name, o.operands)
}

func cloudVerb(prog string, operands []arg) judgement {
	for _, op := range operands {
		w := strings.ToLower(op.text)
		for _, v := range cloudVerbPrefixes {
			if w == v.prefix || strings.HasPrefix(w, v.prefix+"-") {
				return is(v.class, prog+" "+w+" "+verbRule(v.class))
			}
		}
	}
	if len(operands) == 0 || helpOnly(operands[len(operands)-1:]) {
		return is(ReadOnly, prog+" only prints help")
	}
	return is(Unknown, "logbook does not know what this "+prog+" command does")
}

// iptablesCmd: listing rules reads; any other command changes the firewall.
func iptablesCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-t --table -A --append -I --insert -D --delete -R --replace -P --policy -N --new-chain -X --delete-chain -F --flush -Z --zero -E --rename-chain -j -p -s -d -i -o --dport --sport -m -w --wait"})
	if o.has("-A", "--append", "-I", "--insert", "-D", "--delete", "-R", "--replace", "-P", "--policy", "-N", "--new-chain", "-X", "--delete-chain", "-F", "--flush", "-Z", "--zero", "-E", "--rename-chain") {
		return is(ConfigMutation, c.name+" changes firewall rules")
	}
	return is(ReadOnly, c.name+" lists firewall rules")
}

// nftCmd: nft list reads; everything else changes the rule set.
func nftCmd(_ *state, c command) judgement {
	verb, _ := subcommand(c.args, "-f --file -I --includepath")
	if verb == "list" || verb == "describe" || helpOnly(c.args) || verb == "" && !scanOptions(c.args, scanSpec{valued: "-f --file"}).has("-f", "--file") {
		return is(ReadOnly, "nft lists the firewall rules")
	}
	return is(ConfigMutation, "nft changes firewall rules")
}

// ipCmd: ip OBJECT [show|list] reads; add, del, change, set, flush...
// change networking. ip netns exec NAME COMMAND unwraps.
func ipCmd(st *state, c command) judgement {
	object, rest := subcommand(c.args, "-n -netns -b -batch -rc -rcvbuf -l -loops -f -family")
	action := ""
	if len(rest) > 0 {
		action = strings.ToLower(rest[0].text)
	}
	if object == "netns" && action == "exec" && len(rest) > 2 {
		st.call(rest[2:], input{})
		return judgement{class: Privilege, rule: "ip netns exec runs the command in a network namespace, as root", wrapper: true}
	}
	switch action {
	case "", "show", "list", "ls", "get", "lst", "sh", "s", "l", "help", "monitor":
		return is(ReadOnly, "ip "+object+" shows network settings")
	}
	if !strings.HasPrefix(action, "-") && (action == "add" || action == "del" || action == "delete" || action == "change" || action == "replace" || action == "set" || action == "flush" || action == "append" || action == "prepend" || action == "save" || action == "restore" || action == "a" || action == "d") {
		return is(ConfigMutation, "ip "+object+" "+action+" changes network settings")
	}
	return is(ReadOnly, "ip "+object+" shows network settings")
}

// ifconfigCmd: with no arguments or one interface it shows settings.
func ifconfigCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{})
	if len(o.operands) <= 1 {
		return is(ReadOnly, c.name+" shows network settings")
	}
	return is(ConfigMutation, c.name+" changes network settings")
}

// sqlClientCmd: psql -c, mysql -e, sqlite3 DB 'SQL': the statements decide.
// Without statements the client is interactive or reads a file: unknown.
func sqlClientCmd(_ *state, c command) judgement {
	valued := "-c --command -e --execute -f --file -h --host -p --port -U --username -u --user -d --dbname -D --database -P --password -S --socket -o --output -v --set -cmd -init -separator"
	o := scanOptions(c.args, scanSpec{valued: valued})
	var sql []string
	for _, op := range o.opts {
		switch op.name {
		case "-c", "--command", "-cmd":
			sql = append(sql, op.value)
		case "-e", "--execute":
			if c.name != "sqlite3" {
				sql = append(sql, op.value)
			}
		}
	}
	if (c.name == "sqlite3" || c.name == "sqlite" || c.name == "duckdb") && len(o.operands) > 1 {
		for _, op := range o.operands[1:] {
			sql = append(sql, op.text)
		}
	}
	if len(sql) == 0 {
		if o.has("-l", "--list", "--version", "-V", "--help") {
			return is(ReadOnly, c.name+" lists databases or prints its version")
		}
		if c.in.kind == fromText {
			sql = append(sql, c.in.text)
		} else {
			return is(Unknown, c.name+" runs statements logbook cannot see (interactive, from a file or from input)")
		}
	}
	j := is(ReadOnly, c.name+" runs read-only statements")
	for _, s := range sql {
		if k := judgeSQL(c.name, s); k.class.Rank() > j.class.Rank() {
			j = k
		}
	}
	return j
}

// judgeSQL classifies SQL statements by their first keyword. A DELETE or
// UPDATE without WHERE touches every row, so it is destructive.
func judgeSQL(prog, sql string) judgement {
	j := is(ReadOnly, prog+" runs read-only statements")
	for _, stmt := range strings.Split(sql, ";") {
		words := strings.Fields(strings.ToUpper(stmt))
		if len(words) == 0 {
			continue
		}
		k := is(ReadOnly, "")
		first := words[0]
		hasWhere := false
		for _, w := range words {
			if w == "WHERE" {
				hasWhere = true
			}
		}
		switch {
		case first == "DROP" || first == "TRUNCATE":
			k = is(Destructive, prog+" runs "+first+", which deletes data")
		case (first == "DELETE" || first == "UPDATE") && !hasWhere:
			k = is(Destructive, prog+" runs "+first+" without WHERE, which changes every row")
		case first == "DELETE" || first == "UPDATE" || first == "INSERT" || first == "REPLACE" || first == "MERGE" || first == "UPSERT" || first == "COPY" || first == "LOAD":
			k = is(ConfigMutation, prog+" runs "+first+", which changes data")
		case first == "CREATE" || first == "ALTER" || first == "RENAME" || first == "COMMENT" || first == "VACUUM" || first == "REINDEX" || first == "CLUSTER" || first == "ATTACH" || first == "DETACH" || first == "PRAGMA" && strings.Contains(stmt, "="):
			k = is(ConfigMutation, prog+" runs "+first+", which changes the schema or storage")
		case first == "GRANT" || first == "REVOKE" || strings.HasPrefix(first, "ALTER") && len(words) > 1 && (words[1] == "USER" || words[1] == "ROLE"):
			k = is(Privilege, prog+" runs "+first+", which changes database permissions")
		case strings.HasPrefix(first, `\!`) || first == ".SHELL" || first == ".SYSTEM":
			k = is(Unknown, prog+" runs a shell command from its prompt")
		case first == "SELECT" || first == "SHOW" || first == "EXPLAIN" || first == "WITH" || first == "VALUES" || first == "TABLE" || first == "DESCRIBE" || first == "DESC" || first == "PRAGMA" || first == "BEGIN" || first == "COMMIT" || first == "ROLLBACK" || first == "SET" || first == "USE" || strings.HasPrefix(first, `\`) || strings.HasPrefix(first, "."):
			k = is(ReadOnly, "")
		default:
			k = is(Unknown, prog+" runs "+first+", which logbook does not know")
		}
		if k.class.Rank() > j.class.Rank() {
			j = k
		}
	}
	return j
}

// redisCommands classifies redis-cli commands.
var redisCommands = map[string]Class{
	"FLUSHALL": Destructive, "FLUSHDB": Destructive, "SHUTDOWN": ServiceControl, "DEBUG": Unknown,
	"EVAL": Unknown, "EVALSHA": Unknown, "FCALL": Unknown, "MODULE": PackageInstall, "SCRIPT": Unknown,
	"CONFIG": ConfigMutation, "ACL": Privilege, "REPLICAOF": ConfigMutation, "SLAVEOF": ConfigMutation,
	"CLUSTER": ConfigMutation, "BGREWRITEAOF": ConfigMutation, "SAVE": ConfigMutation, "BGSAVE": ConfigMutation,
	"MIGRATE": ConfigMutation, "SWAPDB": Destructive, "CLIENT": ServiceControl, "FAILOVER": ServiceControl,
}

// redisCmd: redis-cli [options] COMMAND ARGS. Read commands (GET, KEYS,
// INFO...) read; other data commands change data.
func redisCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-h -p -s -a --user --pass -u -n -r -i -d -D --tls --cacert --cert --key --sni --eval --pattern --count --rdb --functions-rdb"})
	if o.has("--eval") {
		return is(Unknown, "redis-cli --eval runs a Lua script")
	}
	if len(o.operands) == 0 {
		if o.has("--scan", "--bigkeys", "--memkeys", "--hotkeys", "--stat", "--latency", "--version", "--help") {
			return is(ReadOnly, "redis-cli only reads")
		}
		return is(Unknown, "redis-cli without a command is interactive or reads commands from input")
	}
	cmd := strings.ToUpper(o.operands[0].text)
	if cl, ok := redisCommands[cmd]; ok {
		if cmd == "CONFIG" && len(o.operands) > 1 && strings.EqualFold(o.operands[1].text, "GET") {
			return is(ReadOnly, "redis-cli CONFIG GET only reads")
		}
		return is(cl, "redis-cli "+cmd+" "+verbRule(cl))
	}
	switch {
	case strings.HasPrefix(cmd, "GET") || strings.HasPrefix(cmd, "H") && (strings.HasSuffix(cmd, "GET") || strings.HasSuffix(cmd, "GETALL") || cmd == "HKEYS" || cmd == "HLEN" || cmd == "HEXISTS" || cmd == "HSCAN" || cmd == "HVALS") ||
		cmd == "KEYS" || cmd == "SCAN" || cmd == "INFO" || cmd == "TTL" || cmd == "PTTL" || cmd == "TYPE" || cmd == "EXISTS" ||
		cmd == "PING" || cmd == "DBSIZE" || cmd == "MGET" || cmd == "STRLEN" || cmd == "LRANGE" || cmd == "LLEN" ||
		cmd == "SMEMBERS" || cmd == "SCARD" || cmd == "ZRANGE" || cmd == "ZCARD" || cmd == "ZSCORE" || cmd == "MONITOR" ||
		cmd == "SLOWLOG" || cmd == "MEMORY" || cmd == "OBJECT" || cmd == "TIME" || cmd == "ECHO" || cmd == "LASTSAVE" ||
		cmd == "ROLE" || cmd == "XRANGE" || cmd == "XLEN" || cmd == "XINFO" || cmd == "SISMEMBER" || cmd == "COMMAND":
		return is(ReadOnly, "redis-cli "+cmd+" only reads")
	}
	return is(ConfigMutation, "redis-cli "+cmd+" changes data")
}

// mongoCmd: mongosh --eval CODE; dropping or mass-deleting is destructive.
func mongoCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "--eval --host --port -u --username -p --password --authenticationDatabase -f --file"})
	code, ok := o.value("--eval")
	if !ok {
		return is(Unknown, c.name+" runs statements logbook cannot see")
	}
	for _, bad := range []string{"dropDatabase", ".drop(", "deleteMany", ".remove(", "dropIndexes", "dropUser", "dropAllUsers"} {
		if strings.Contains(code, bad) {
			return is(Destructive, c.name+" --eval calls "+strings.Trim(bad, ".(")+", which deletes data")
		}
	}
	return is(Unknown, c.name+" --eval runs JavaScript logbook does not read")
}
