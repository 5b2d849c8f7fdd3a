package classify

import "strings"

// Remote execution and configuration management: Ansible ad-hoc commands,
// Salt, pdsh and parallel-ssh run commands on many machines at once. The
// command or module they are given decides, read as if it ran here (in
// the remote user's home directory); what logbook cannot read (a
// playbook, a state file) is unknown.

// remotePrograms registers the remote execution tools.
func remotePrograms(r *registry) {
	r.handle(ansibleCmd, "ansible")
	r.handle(saltCmd, "salt", "salt-call", "salt-ssh")
	r.handle(pdshCmd, "pdsh", "clush", "pssh", "parallel-ssh")
	r.handle(herokuCmd, "heroku")
}

// ansibleCmd: ansible PATTERN [-m MODULE] [-a ARGS]. The command, shell
// and raw modules run ARGS as a command; file with state=absent deletes;
// package modules install or remove software; service modules start and
// stop; check mode (-C) changes nothing and skips command modules.
func ansibleCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-m --module-name -a --args -i --inventory -u --user --become-user --become-method -f --forks -e --extra-vars -l --limit -c --connection -T --timeout -B --background -P --poll -t --tree -M --module-path --vault-password-file --vault-id --private-key --key-file --ssh-common-args --ssh-extra-args --scp-extra-args --sftp-extra-args"})
	if helpOnly(c.args) || o.has("--list-hosts") {
		return is(ReadOnly, "ansible only lists hosts or prints help")
	}
	module, ok := o.value("-m", "--module-name")
	if !ok {
		module = "command"
	}
	module = strings.TrimPrefix(strings.TrimPrefix(module, "ansible.builtin."), "ansible.windows.")
	args, _ := o.value("-a", "--args")
	if o.has("-C", "--check") {
		return is(ReadOnly, "ansible --check only says what the module would change (command modules are skipped)")
	}
	return ansibleModule(st, module, args)
}

// ansibleModule judges one Ansible module run with its arguments.
func ansibleModule(st *state, module, args string) judgement {
	kv := moduleArgs(args)
	absent := kv["state"] == "absent" || kv["state"] == "removed"
	switch module {
	case "command", "shell", "raw", "win_shell", "win_command":
		return remoteScript(st, "ansible -m "+module, args)
	case "script":
		return is(Unknown, "ansible -m script runs a local script, which logbook cannot read, on other machines")
	case "file":
		target := kv["path"]
		if target == "" {
			target = kv["dest"]
		}
		if absent && !isTempPath(target, false) {
			return is(Destructive, "ansible -m file state=absent deletes "+target+" on every host")
		}
		return is(ConfigMutation, "ansible -m file changes files on other machines")
	case "apt", "yum", "dnf", "package", "pip", "npm", "homebrew", "apk", "pacman", "zypper", "snap", "gem":
		return is(PackageInstall, "ansible -m "+module+" installs or removes software on other machines")
	case "service", "systemd", "systemd_service", "win_service", "reboot", "win_reboot":
		return is(ServiceControl, "ansible -m "+module+" starts, stops or reboots on other machines")
	case "user", "group", "authorized_key", "win_user":
		if absent && kv["remove"] == "yes" {
			return is(Destructive, "ansible -m "+module+" state=absent remove=yes deletes the user's files")
		}
		return is(Privilege, "ansible -m "+module+" changes users or keys on other machines")
	case "ping", "setup", "gather_facts", "debug", "stat", "find", "command_info", "package_facts", "service_facts", "win_ping":
		return is(ReadOnly, "ansible -m "+module+" only reads")
	case "slurp", "fetch":
		return is(Network, "ansible -m "+module+" copies files from other machines")
	case "copy", "template", "lineinfile", "blockinfile", "replace", "cron", "mount", "sysctl", "git", "unarchive", "get_url", "uri":
		return is(ConfigMutation, "ansible -m "+module+" changes other machines")
	}
	return is(Unknown, "ansible runs the module "+module+" on other machines, which logbook does not know")
}

// moduleArgs splits key=value module arguments.
func moduleArgs(args string) map[string]string {
	kv := map[string]string{}
	for _, f := range strings.Fields(args) {
		if k, v, ok := strings.Cut(f, "="); ok {
			kv[strings.ToLower(k)] = strings.Trim(v, `"'`)
		}
	}
	return kv
}

// remoteScript judges a command run on other machines: it is read as a
// script, from the remote user's home directory.
func remoteScript(st *state, what, script string) judgement {
	if strings.TrimSpace(script) == "" {
		return is(Unknown, what+" without a command")
	}
	saved := st.dir
	st.dir = workDir{}
	st.script(script, input{})
	st.dir = saved
	return judgement{wrapper: true}
}

// saltCmd: salt TARGET FUNCTION [ARGS] (salt-call FUNCTION [ARGS]).
// cmd.run and its kin run a command; file.remove and file.absent delete;
// pkg.* installs or removes; service.* starts and stops; test.*, grains.*
// and the like read; pillar.* prints pillar data, secrets included.
func saltCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-t --timeout -c --config-dir --out --output -L -E -G -N -C -I -S --batch-size -b --return --log-level -l --saltenv --pillarenv", stopAtOperand: false})
	ops := o.operands
	if c.name != "salt-call" && len(ops) > 0 {
		ops = ops[1:] // the target
	}
	if len(ops) == 0 {
		return is(ReadOnly, c.name+" without a function prints its usage")
	}
	fn := strings.ToLower(ops[0].text)
	args := ops[1:]
	module, function, _ := strings.Cut(fn, ".")
	switch {
	case module == "cmd" && (function == "run" || function == "shell" || function == "run_all" || function == "run_stdout" || function == "exec_code"):
		if len(args) == 0 {
			return is(Unknown, c.name+" "+fn+" without a command")
		}
		return remoteScript(st, c.name+" "+fn, args[0].text)
	case module == "cmd":
		return is(Unknown, c.name+" "+fn+" runs something logbook cannot read")
	case module == "file" && (function == "remove" || function == "absent" || function == "delete"):
		return is(Destructive, c.name+" "+fn+" deletes files on every minion")
	case module == "pkg":
		if function == "list_pkgs" || function == "version" || function == "latest_version" || function == "info_installed" {
			return is(ReadOnly, c.name+" "+fn+" only reads")
		}
		return is(PackageInstall, c.name+" "+fn+" installs or removes software")
	case module == "service" || module == "system":
		if function == "status" || function == "available" || function == "get_all" {
			return is(ReadOnly, c.name+" "+fn+" only reads")
		}
		return is(ServiceControl, c.name+" "+fn+" starts, stops or reboots")
	case module == "pillar":
		return is(SecretRead, c.name+" "+fn+" prints pillar data, secrets included")
	case module == "test" || module == "grains" || module == "sys" || module == "network" || module == "disk" || module == "status" || module == "manage" || module == "jobs":
		return is(ReadOnly, c.name+" "+fn+" only reads")
	case module == "state":
		return is(ConfigMutation, c.name+" "+fn+" applies states to every minion")
	}
	if j, ok := generalVerb(c.name+" "+module, []arg{lit(function)}); ok {
		return j
	}
	return is(Unknown, c.name+" runs "+fn+", which logbook does not know")
}

// pdshCmd: pdsh -w HOSTS COMMAND... runs the command on every host.
func pdshCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-w -x -g -X -l -t -u -f -R -h -H --hosts -O --options -p -P -e -o", stopAtOperand: true})
	rest := c.args[o.rest:]
	if len(rest) == 0 {
		return is(Unknown, c.name+" without a command opens an interactive session")
	}
	return remoteScript(st, c.name, strings.Join(texts(rest), " "))
}

// herokuCmd: heroku config and config:get print the app's config vars,
// secrets included; heroku run runs a command on a dyno; the rest follows
// the general verbs (apps:destroy, pg:reset).
func herokuCmd(st *state, c command) judgement {
	verb, _ := subcommand(c.args, "-a --app -r --remote")
	switch {
	case verb == "config" || strings.HasPrefix(verb, "config:get"):
		return is(SecretRead, "heroku "+verb+" prints the app's config vars, secrets included")
	case verb == "run" || strings.HasPrefix(verb, "run:"):
		return is(Unknown, "heroku run runs a command on a dyno, which logbook cannot read")
	}
	return subcommandCLI(Unknown, "runs a command logbook does not know", nil)(st, c)
}
