package classify

import "strings"

// Proxmox VE: containers (pct), virtual machines (qm), the API (pvesh),
// storage (pvesm) and templates (pveam). Most are judged by their
// subcommand with a verbTable; read the tables as "verb: class".

// proxmoxPrograms registers the Proxmox tools.
func proxmoxPrograms(r *registry) {
	r.handle(pctCmd, "pct")
	r.handle(qmCmd, "qm")
	r.handle(pveshCmd, "pvesh")
	r.handle(pvesmCmd, "pvesm")
	r.handle(pveamCmd, "pveam")
	r.handle(subcommandCLI(ConfigMutation, "changes the Proxmox cluster", verbTable{"nodes": ReadOnly, "delnode": Destructive, "expected": ConfigMutation, "qdevice": ConfigMutation, "updatecerts": ConfigMutation, "mtunnel": Unknown}), "pvecm")
	r.handle(subcommandCLI(ConfigMutation, "changes Proxmox HA resources", verbTable{"crm-command": ServiceControl, "migrate": ServiceControl, "relocate": ServiceControl}), "ha-manager")
	r.fixed(ReadOnly, map[string]string{
		"pveversion": "prints the Proxmox version",
	})
	r.fixed(ConfigMutation, map[string]string{
		"pvenode": "changes Proxmox node settings", "pveum": "changes Proxmox users and permissions",
		"vzdump": "backs up Proxmox guests",
	})
}

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
