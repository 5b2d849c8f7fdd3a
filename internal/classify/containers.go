package classify

import "strings"

// Containers and virtual machines: Docker and its kin, Compose, libvirt,
// Vagrant, LXC.

// containerPrograms registers the container and VM tools.
func containerPrograms(r *registry) {
	// virsh destroy only pulls the plug; undefine forgets the machine (and
	// with --remove-all-storage deletes its disks).
	r.handle(subcommandCLI(ServiceControl, "controls virtual machines", verbTable{
		"destroy": ServiceControl, "undefine": Destructive, "vol-wipe": Destructive, "console": Unknown,
		"dominfo": ReadOnly, "dumpxml": ReadOnly, "domstate": ReadOnly, "domblklist": ReadOnly, "net-list": ReadOnly,
		"pool-list": ReadOnly, "vol-list": ReadOnly, "snapshot-list": ReadOnly, "nodeinfo": ReadOnly,
	}), "virsh")
	r.handle(subcommandCLI(ServiceControl, "controls virtual machines", verbTable{"ssh": Unknown, "provision": ConfigMutation}), "vagrant", "multipass")
	r.handle(subcommandCLI(ServiceControl, "controls containers", verbTable{"exec": Unknown, "shell": Unknown, "console": Unknown}), "lxc", "incus")
	r.handle(dockerCmd, "docker", "podman", "nerdctl")
	r.handle(composeCmd, "docker-compose", "podman-compose")
	r.fixed(ServiceControl, map[string]string{})
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
		if object == "system" && verb == "reset" {
			return is(Destructive, c.name+" system reset deletes every container, image and volume")
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
