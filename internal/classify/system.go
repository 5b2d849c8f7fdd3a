package classify

import "strings"

// The system: what describes the machine (read_only), what changes how it
// boots, mounts and loads modules (config_mutation), and what stops it or
// signals processes (service_control).

// systemPrograms registers the system tools.
func systemPrograms(r *registry) {
	r.handle(crontabCmd, "crontab")
	r.handle(psCmd, "ps")
	r.handle(optionWrites("-s --smart -o --offlineauto -S --saveauto -t --test -X --abort --set", ConfigMutation, "changes the disk's settings or starts a self-test", "reads disk health"), "smartctl")
	r.handle(optionWrites("-r --gpu-reset -pm --persistence-mode -pl --power-limit -c --compute-mode -e --ecc-config -ac --applications-clocks -rac --reset-applications-clocks -lgc --lock-gpu-clocks -rgc --reset-gpu-clocks -mig --multi-instance-gpu", ConfigMutation, "changes the GPU's settings", "shows GPUs"), "nvidia-smi")
	r.handle(optionWrites("-C --clear -c --read-clear -n --console-level -D --console-off -E --console-on", ConfigMutation, "clears or configures the kernel log", "prints kernel messages"), "dmesg")
	r.handle(subcommandCLI(ReadOnly, "lists sessions", verbTable{"terminate-session": ServiceControl, "terminate-user": ServiceControl, "kill-session": ServiceControl, "kill-user": ServiceControl, "lock-session": ServiceControl, "unlock-session": ServiceControl, "enable-linger": ConfigMutation, "disable-linger": ConfigMutation, "attach": ConfigMutation, "flush-devices": ConfigMutation}), "loginctl")
	r.fixed(ConfigMutation, map[string]string{"env-update": "regenerates the system's environment files"})
	r.handle(sysctlCmd, "sysctl")
	r.handle(hostnameCmd, "hostname")
	r.handle(settingsCtlCmd, "hostnamectl", "timedatectl", "localectl")
	r.fixed(ReadOnly, map[string]string{
		"whoami": "prints the user name", "id": "prints user ids", "groups": "prints groups",
		"uname": "prints system information", "uptime": "prints uptime",
		"w": "lists logged-in users", "who": "lists logged-in users", "last": "lists logins",
		"users": "lists logged-in users", "locale": "prints locale settings", "free": "prints memory use",
		"vmstat": "prints system statistics", "iostat": "prints I/O statistics", "mpstat": "prints CPU statistics",
		"nproc": "counts CPUs", "lscpu": "describes CPUs", "lspci": "lists PCI devices",
		"lsusb": "lists USB devices", "lsmod": "lists kernel modules",
		"pgrep": "finds processes", "pidof": "finds processes", "top": "shows processes",
		"htop": "shows processes", "btop": "shows processes", "lsof": "lists open files",
		"getent": "looks up users and hosts", "logname": "prints the login name",
		"pstree":          "lists processes",
		"systemd-analyze": "analyses boot time", "hostid": "prints the host id",
		"sensors": "reads sensors",
	})
	r.fixed(ConfigMutation, map[string]string{
		"mount": "mounts file systems", "umount": "unmounts file systems", "swapon": "enables swap",
		"swapoff": "disables swap", "modprobe": "loads kernel modules", "insmod": "loads kernel modules",
		"rmmod": "unloads kernel modules", "ldconfig": "rebuilds the library cache",
		"update-alternatives": "changes default programs", "update-grub": "rewrites the boot loader configuration",
		"grub-install": "installs the boot loader", "update-initramfs": "rebuilds the initramfs",
		"dracut": "rebuilds the initramfs", "locale-gen": "generates locales", "tzdata": "sets the time zone",
		"certbot": "requests and installs certificates",
	})
	r.fixed(ServiceControl, map[string]string{
		"shutdown": "shuts the machine down", "reboot": "reboots the machine",
		"poweroff": "powers the machine off", "halt": "halts the machine", "init": "changes the run level",
		"telinit": "changes the run level", "kill": "signals a process", "pkill": "signals processes",
		"killall": "signals processes",
	})
}

// crontabCmd: -l reads; -r removes every job; anything else replaces the
// table.
func crontabCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-u"})
	switch {
	case o.has("-l"):
		return is(ReadOnly, "crontab -l lists scheduled jobs")
	case o.has("-r"):
		return is(Destructive, "crontab -r deletes every scheduled job without asking")
	}
	return is(ConfigMutation, "crontab replaces or edits scheduled jobs")
}

// sysctlCmd: reading kernel settings is fine, writing them is not.
func sysctlCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-p --load"})
	if o.has("-w", "--write", "-p", "--load", "--system") {
		return is(ConfigMutation, "sysctl changes kernel settings")
	}
	for _, op := range o.operands {
		if strings.Contains(op.text, "=") {
			return is(ConfigMutation, "sysctl changes kernel settings")
		}
	}
	return is(ReadOnly, "sysctl reads kernel settings")
}

// hostnameCmd: hostname prints the name; with an operand it sets it.
func hostnameCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-F --file"})
	if len(o.operands) > 0 || o.has("-F", "--file") {
		return is(ConfigMutation, "hostname changes the host name")
	}
	return is(ReadOnly, "hostname prints the host name")
}

// settingsCtlCmd: hostnamectl, timedatectl and localectl show settings,
// and change them with set-* subcommands.
func settingsCtlCmd(_ *state, c command) judgement {
	verb, _ := subcommand(c.args, "-H --host -M --machine")
	if verb == "" || verb == "status" || strings.HasPrefix(verb, "list") || strings.HasPrefix(verb, "show") || helpOnly(c.args) {
		return is(ReadOnly, c.name+" shows settings")
	}
	return is(ConfigMutation, c.name+" "+verb+" changes system settings")
}

// psCmd lists processes; the BSD e option (ps e, ps auxe, ps eww) adds
// each process's environment, secrets included.
func psCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-o -O -p -q -u -U -g -G -t -C -s -k --sort --format --pid --ppid --user --group --cols --columns --rows --width"})
	for _, op := range o.operands {
		if t := op.text; strings.Trim(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" && strings.Contains(t, "e") {
			return is(SecretRead, "ps "+t+" shows each process's environment, secrets included")
		}
	}
	return is(ReadOnly, "ps lists processes")
}

// optionWrites returns the handler of a program that only reads unless
// one of the options listed (space-separated) is given, which makes it
// class c.
func optionWrites(options string, c Class, changes, reads string) handler {
	return func(_ *state, cmd command) judgement {
		for _, a := range cmd.args { // as written: nvidia-smi spells -pl with one dash
			if name, _, _ := strings.Cut(a.text, "="); strings.HasPrefix(name, "-") && hasWord(options, name) {
				return is(c, cmd.name+" "+name+" "+changes)
			}
		}
		o := scanOptions(cmd.args, scanSpec{})
		for _, op := range o.opts {
			if hasWord(options, op.name) {
				return is(c, cmd.name+" "+op.name+" "+changes)
			}
		}
		return is(ReadOnly, cmd.name+" "+reads)
	}
}
