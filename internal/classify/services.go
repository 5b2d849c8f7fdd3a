package classify

import "strings"

// Services and init systems: systemd, SysV service, launchd, supervisors.

// servicePrograms registers the service managers.
func servicePrograms(r *registry) {
	// pm2 delete and supervisorctl remove only take a process out of the
	// manager's list.
	r.handle(subcommandCLI(ServiceControl, "controls services", verbTable{"delete": ServiceControl, "del": ServiceControl, "remove": ServiceControl, "flush": ConfigMutation}), "pm2", "supervisorctl")
	r.handle(systemctlCmd, "systemctl")
	r.handle(serviceCmd, "service")
	r.handle(journalctlCmd, "journalctl")
	r.fixed(ServiceControl, map[string]string{
		"rc-service": "controls a service", "launchctl": "controls macOS services",
		"nginx":     "controls the web server",
		"apachectl": "controls the web server",
	})
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
