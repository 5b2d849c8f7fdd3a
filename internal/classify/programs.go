package classify

import "strings"

// Program knowledge. A program is judged either by a fixed class (the
// tables below: name -> what it does) or, when its arguments matter, by a
// handler (see handlerFor). To teach the classifier a program, add a line
// to the right table; to teach it a program whose risk depends on its
// arguments, write a handler and add a case to handlerFor.

// readOnlyPrograms read and print, and change nothing.
var readOnlyPrograms = map[string]string{
	"ls": "lists files", "ll": "lists files", "dir": "lists files", "tree": "lists files",
	"cat": "prints files", "tac": "prints files backwards", "nl": "numbers lines",
	"head": "prints the start of files", "tail": "prints the end of files",
	"less": "pages through files", "more": "pages through files", "most": "pages through files",
	"grep": "searches text", "egrep": "searches text", "fgrep": "searches text",
	"ag": "searches text", "ack": "searches text", "zgrep": "searches compressed text",
	"wc": "counts lines and words", "cut": "cuts columns", "tr": "translates characters",
	"uniq": "filters repeated lines", "paste": "merges lines", "join": "joins lines",
	"column": "formats columns", "fold": "wraps lines", "fmt": "formats text", "pr": "formats text",
	"rev": "reverses lines", "expand": "converts tabs", "unexpand": "converts spaces",
	"echo": "prints its arguments", "printf": "prints its arguments", "true": "does nothing",
	"false": "does nothing", ":": "does nothing", "pwd": "prints the working directory",
	"whoami": "prints the user name", "id": "prints user ids", "groups": "prints groups",
	"uname": "prints system information", "arch": "prints the architecture",
	"uptime": "prints uptime", "w": "lists logged-in users", "who": "lists logged-in users",
	"last": "lists logins", "users": "lists logged-in users",
	"printenv": "prints the environment", "locale": "prints locale settings",
	"which": "says where a program is", "whereis": "says where a program is",
	"type": "says what a name refers to", "hash": "lists remembered program paths",
	"file": "guesses file types", "stat": "prints file metadata", "du": "measures disk usage",
	"df": "prints free disk space", "free": "prints memory use", "vmstat": "prints system statistics",
	"iostat": "prints I/O statistics", "mpstat": "prints CPU statistics", "nproc": "counts CPUs",
	"lscpu": "describes CPUs", "lsblk": "lists block devices", "blkid": "prints device ids",
	"lspci": "lists PCI devices", "lsusb": "lists USB devices", "lsmod": "lists kernel modules",
	"dmesg": "prints kernel messages", "ps": "lists processes", "pgrep": "finds processes",
	"pidof": "finds processes", "top": "shows processes", "htop": "shows processes", "btop": "shows processes",
	"lsof": "lists open files", "ss": "lists sockets", "netstat": "lists sockets",
	"ping": "checks that a host answers", "ping6": "checks that a host answers",
	"traceroute": "traces a network path", "tracepath": "traces a network path", "mtr": "traces a network path",
	"dig": "looks up DNS", "nslookup": "looks up DNS", "host": "looks up DNS", "whois": "looks up domain records",
	"diff": "compares files", "cmp": "compares files", "comm": "compares sorted files",
	"md5sum": "prints checksums", "sha1sum": "prints checksums", "sha256sum": "prints checksums",
	"sha512sum": "prints checksums", "shasum": "prints checksums", "cksum": "prints checksums",
	"b2sum": "prints checksums", "md5": "prints checksums",
	"od": "dumps bytes", "hexdump": "dumps bytes", "strings": "prints text in binaries",
	"realpath": "resolves a path", "readlink": "resolves a link", "basename": "strips directories",
	"dirname": "strips the file name", "test": "tests a condition", "[": "tests a condition",
	"[[": "tests a condition", "sleep": "waits", "seq": "prints numbers", "yes": "prints a word forever",
	"expr": "evaluates an expression", "bc": "calculates", "dc": "calculates", "numfmt": "formats numbers",
	"factor": "factors numbers", "man": "shows a manual page", "info": "shows documentation",
	"help": "shows shell help", "whatis": "describes a command", "apropos": "searches manual pages",
	"tldr": "shows examples", "cd": "changes the shell's directory", "pushd": "changes the shell's directory",
	"popd": "changes the shell's directory", "dirs": "lists the directory stack",
	"export": "sets variables in this shell", "unset": "unsets shell variables", "set": "sets shell options",
	"shopt": "sets shell options", "alias": "defines a shell alias", "unalias": "removes a shell alias",
	"local": "declares variables", "declare": "declares variables", "typeset": "declares variables",
	"readonly": "declares variables", "let": "evaluates arithmetic", "return": "returns from a function",
	"exit": "exits the shell", "break": "leaves a loop", "continue": "continues a loop", "shift": "shifts arguments",
	"wait": "waits for jobs", "jobs": "lists jobs", "fg": "resumes a job", "bg": "resumes a job",
	"disown": "detaches a job", "umask": "sets the file mode mask", "ulimit": "sets shell limits",
	"history": "lists shell history", "getopts": "parses options", "read": "reads a line",
	"mapfile": "reads lines", "readarray": "reads lines", "times": "prints process times",
	"date": "prints the date", "cal": "prints a calendar", "tty": "prints the terminal name",
	"stty": "shows terminal settings", "tput": "queries the terminal", "clear": "clears the screen",
	"reset": "resets the terminal", "getent": "looks up users and hosts", "logname": "prints the login name",
	"jq": "queries JSON", "gron": "flattens JSON", "xmllint": "checks XML", "csvlook": "prints CSV",
	"bat": "prints files", "batcat": "prints files", "fd": "finds files", "fdfind": "finds files",
	"locate": "finds files", "mlocate": "finds files", "zcat": "prints compressed files",
	"bzcat": "prints compressed files", "xzcat": "prints compressed files", "zless": "pages compressed files",
	"lsattr": "lists file attributes", "getfacl": "lists file permissions", "namei": "follows a path",
	"env-update":     "prints the environment",
	"ip6tables-save": "prints firewall rules", "iptables-save": "prints firewall rules",
	"ifstat":     "prints interface statistics",
	"shellcheck": "checks shell scripts", "gofmt": "prints formatted Go", "wdiff": "compares files",
	"xxd": "dumps bytes", "cloc": "counts lines of code", "tokei": "counts lines of code",
	"gitstats": "prints repository statistics", "pstree": "lists processes",
	"systemd-analyze": "analyses boot time", "loginctl": "lists sessions", "hostid": "prints the host id",
	"pvs": "lists LVM volumes", "vgs": "lists LVM volumes", "lvs": "lists LVM volumes",
	"pvdisplay": "describes LVM volumes", "vgdisplay": "describes LVM volumes", "lvdisplay": "describes LVM volumes",
	"pveversion": "prints the Proxmox version", "pvecm": "shows the Proxmox cluster", "ha-manager": "shows Proxmox HA",
	"smartctl": "reads disk health", "sensors": "reads sensors", "nvidia-smi": "shows GPUs",
}

// workspaceWritePrograms change files where they are pointed, normally the
// workspace. Handlers take over where the target matters (cp, mv, tee...).
var workspaceWritePrograms = map[string]string{
	"mkdir": "creates directories", "rmdir": "removes empty directories", "touch": "creates files",
	"patch": "patches files", "gzip": "compresses files", "gunzip": "decompresses files",
	"bzip2": "compresses files", "bunzip2": "decompresses files", "xz": "compresses files",
	"unxz": "decompresses files", "zstd": "compresses files", "unzstd": "decompresses files",
	"zip": "makes an archive", "unzip": "extracts an archive", "7z": "handles archives",
	"make": "builds the project with its Makefile", "gmake": "builds the project with its Makefile",
	"cmake": "builds the project", "ninja": "builds the project", "meson": "builds the project",
	"bazel": "builds the project", "gradle": "builds the project", "gradlew": "builds the project",
	"mvn": "builds the project", "ant": "builds the project", "sbt": "builds the project",
	"just": "runs project recipes", "task": "runs project tasks", "tox": "runs the project's tests",
	"nox": "runs the project's tests", "pytest": "runs the project's tests", "jest": "runs the project's tests",
	"vitest": "runs the project's tests", "mocha": "runs the project's tests", "rspec": "runs the project's tests",
	"phpunit": "runs the project's tests", "ctest": "runs the project's tests",
	"gcc": "compiles code", "g++": "compiles code", "cc": "compiles code", "c++": "compiles code",
	"clang": "compiles code", "clang++": "compiles code", "rustc": "compiles code", "javac": "compiles code",
	"tsc": "compiles TypeScript", "esbuild": "bundles code", "webpack": "bundles code", "vite": "builds the project",
	"rustfmt": "formats code", "prettier": "formats code", "black": "formats code", "ruff": "lints code",
	"eslint": "lints code", "mypy": "checks types", "flake8": "lints code", "pylint": "lints code",
	"golangci-lint": "lints code", "staticcheck": "lints code", "goimports": "formats code",
	"split": "splits a file", "csplit": "splits a file", "mktemp": "creates a temporary file",
	"mkfifo": "creates a pipe", "ar": "handles archives", "cpio": "handles archives",
	"convert": "converts images", "ffmpeg": "converts media", "pandoc": "converts documents",
	"tmux": "manages terminal sessions", "screen": "manages terminal sessions",
	"ssh-keygen": "makes or inspects keys", "gpg": "signs or encrypts", "openssl": "handles certificates and keys",
	"nano": "opens an editor", "emacs": "opens an editor", "code": "opens an editor", "open": "opens a file",
	"xdg-open": "opens a file",
}

// networkPrograms send data to or fetch data from other machines.
var networkPrograms = map[string]string{
	"scp": "copies files over the network", "sftp": "copies files over the network",
	"ftp": "transfers files over the network", "nc": "opens network connections",
	"ncat": "opens network connections", "netcat": "opens network connections",
	"socat": "relays network connections", "telnet": "opens network connections",
	"rclone": "copies files to or from cloud storage", "aria2c": "downloads files",
	"git-lfs": "transfers large files", "gh": "calls the GitHub API", "glab": "calls the GitLab API",
	"nmap": "scans the network", "tcpdump": "captures network traffic", "ngrok": "exposes a local port",
}

// configPrograms change system configuration.
var configPrograms = map[string]string{
	"mount": "mounts file systems", "umount": "unmounts file systems", "swapon": "enables swap",
	"swapoff": "disables swap", "modprobe": "loads kernel modules", "insmod": "loads kernel modules",
	"rmmod": "unloads kernel modules", "ldconfig": "rebuilds the library cache",
	"update-alternatives": "changes default programs", "update-grub": "rewrites the boot loader configuration",
	"grub-install": "installs the boot loader", "update-initramfs": "rebuilds the initramfs",
	"dracut": "rebuilds the initramfs", "locale-gen": "generates locales", "tzdata": "sets the time zone",
	"chattr": "changes file attributes", "setfacl": "changes file permissions",
	"ufw": "changes the firewall", "firewall-cmd": "changes the firewall", "nmcli": "changes network settings",
	"netplan": "changes network settings", "resolvectl": "changes DNS settings", "ethtool": "changes network device settings",
	"lvcreate": "creates LVM volumes", "lvextend": "resizes LVM volumes", "lvresize": "resizes LVM volumes",
	"vgcreate": "creates LVM volume groups", "pvcreate": "initialises LVM disks", "vgextend": "extends LVM volume groups",
	"resize2fs": "resizes a file system", "xfs_growfs": "grows a file system", "tune2fs": "changes file system settings",
	"certbot": "requests and installs certificates", "ssh-copy-id": "installs a key on another machine",
	"pvenode": "changes Proxmox node settings", "pveum": "changes Proxmox users and permissions",
	"vzdump": "backs up Proxmox guests",
}

// serviceControlPrograms start, stop or signal services and machines.
var serviceControlPrograms = map[string]string{
	"shutdown": "shuts the machine down", "reboot": "reboots the machine", "poweroff": "powers the machine off",
	"halt": "halts the machine", "init": "changes the run level", "telinit": "changes the run level",
	"kill": "signals a process", "pkill": "signals processes", "killall": "signals processes",
	"rc-service": "controls a service", "launchctl": "controls macOS services", "supervisorctl": "controls services",
	"pm2": "controls Node services", "nginx": "controls the web server", "apachectl": "controls the web server",
	"virsh": "controls virtual machines", "vagrant": "controls virtual machines", "multipass": "controls virtual machines",
	"lxc": "controls containers", "incus": "controls containers",
}

// privilegePrograms change users, groups, passwords and sudo rights.
var privilegePrograms = map[string]string{
	"useradd": "creates a user", "adduser": "creates a user", "usermod": "changes a user",
	"userdel": "deletes a user", "deluser": "deletes a user", "groupadd": "creates a group",
	"groupmod": "changes a group", "groupdel": "deletes a group", "gpasswd": "changes group members",
	"passwd": "changes a password", "chpasswd": "changes passwords", "chage": "changes password ageing",
	"chsh": "changes a login shell", "chfn": "changes user information", "visudo": "edits sudo rights",
	"vipw": "edits the user database", "vigr": "edits the group database", "newusers": "creates users",
	"setcap": "grants capabilities to a program", "pkexec": "runs a command as root", "runuser": "runs a command as another user",
	"sg": "runs a command as another group", "newgrp": "switches group", "chown": "changes file owners",
	"chgrp": "changes file groups", "setfattr": "changes file attributes",
}

// destructivePrograms destroy data by design.
var destructivePrograms = map[string]string{
	"shred":  "overwrites files so they cannot be recovered",
	"wipefs": "erases file-system signatures from a disk",
	"mkswap": "formats a disk as swap", "mke2fs": "formats a disk", "blkdiscard": "discards every block of a disk",
	"sfdisk": "rewrites a partition table", "cfdisk": "rewrites a partition table", "gdisk": "rewrites a partition table",
	"badblocks": "may overwrite a disk while testing it", "truncate": "cuts files to a size, throwing away their end",
	"zerofree": "overwrites free blocks",
}

// judge returns the judgement on one command by its program.
func judge(st *state, c command) judgement {
	if h := handlerFor(c.name); h != nil {
		return h(st, c)
	}
	if shells[c.name] {
		return shellCmd(st, c)
	}
	if interpreter := interpreterFor(c.name); interpreter != "" {
		return interpreterCmd(st, c, interpreter)
	}
	if strings.HasPrefix(c.name, "mkfs") {
		return is(Destructive, c.name+" formats a disk, erasing what is on it")
	}
	for _, t := range []struct {
		class Class
		table map[string]string
	}{
		{ReadOnly, readOnlyPrograms},
		{WorkspaceWrite, workspaceWritePrograms},
		{Network, networkPrograms},
		{ConfigMutation, configPrograms},
		{ServiceControl, serviceControlPrograms},
		{Privilege, privilegePrograms},
		{Destructive, destructivePrograms},
	} {
		if what, ok := t.table[c.name]; ok {
			return is(t.class, c.name+" "+what)
		}
	}
	if helpOnly(c.args) {
		return is(ReadOnly, c.name+" only prints its help or version")
	}
	return is(Unknown, "logbook does not know what "+c.name+" does")
}

// handlerFor returns the handler of a program whose risk depends on its
// arguments, or nil. A switch rather than a map, because handlers call back
// into the classifier and a map would make an initialisation cycle.
func handlerFor(name string) func(*state, command) judgement {
	switch name {
	// wrappers: wrappers.go
	case "sudo":
		return sudoCmd
	case "doas":
		return doasCmd
	case "env":
		return envCmd
	case "ssh", "autossh", "mosh":
		return sshCmd
	case "su":
		return suCmd
	case "nohup", "setsid", "unbuffer", "caffeinate", "chronic", "catchsegv", "proxychains", "proxychains4", "torsocks":
		return simpleWrapper("", 0)
	case "nice":
		return simpleWrapper("-n --adjustment", 0)
	case "stdbuf":
		return simpleWrapper("-i -o -e --input --output --error", 0)
	case "taskset":
		return simpleWrapper("", 1)
	case "time":
		return timeCmd
	case "command":
		return commandCmd
	case "builtin":
		return simpleWrapper("", 0)
	case "exec":
		return execCmd
	case "timeout", "gtimeout":
		return timeoutCmd
	case "watch":
		return watchCmd
	case "flock":
		return flockCmd
	case "ionice":
		return ioniceCmd
	case "chroot":
		return chrootCmd
	case "nsenter", "unshare":
		return nsenterCmd
	case "busybox", "toybox":
		return busyboxCmd
	case "eval":
		return evalCmd
	case "source", ".":
		return sourceCmd
	case "trap":
		return trapCmd
	case "xargs":
		return xargsCmd
	case "parallel":
		return parallelCmd
	// files: files.go
	case "rm", "unlink":
		return rmCmd
	case "find":
		return findCmd
	case "cp", "mv", "install", "ln", "rsync":
		return copyCmd
	case "tee":
		return teeCmd
	case "sed", "gsed":
		return sedCmd
	case "rg", "ripgrep":
		return rgCmd
	case "dd":
		return ddCmd
	case "tar", "bsdtar", "gtar":
		return tarCmd
	case "base64", "base32", "sort", "iconv":
		return outputOptionCmd("-o --output")
	case "chmod":
		return chmodCmd
	case "chown", "chgrp":
		return chownCmd
	case "fdisk", "parted", "sgdisk", "cryptsetup":
		return diskCmd
	case "crontab":
		return crontabCmd
	case "sysctl":
		return sysctlCmd
	case "hostname":
		return hostnameCmd
	case "hostnamectl", "timedatectl", "localectl":
		return settingsCtlCmd
	// git: git.go
	case "git":
		return gitCmd
	// network: network.go
	case "curl":
		return curlCmd
	case "wget", "wget2":
		return wgetCmd
	case "http", "https", "xh", "xhs":
		return httpieCmd
	// infrastructure: infra.go
	case "pct":
		return pctCmd
	case "qm":
		return qmCmd
	case "pvesh":
		return pveshCmd
	case "pvesm":
		return pvesmCmd
	case "pveam":
		return pveamCmd
	case "zfs":
		return zfsCmd
	case "zpool":
		return zpoolCmd
	case "systemctl":
		return systemctlCmd
	case "service":
		return serviceCmd
	case "journalctl":
		return journalctlCmd
	case "docker", "podman", "nerdctl":
		return dockerCmd
	case "docker-compose", "podman-compose":
		return composeCmd
	case "kubectl", "oc", "k":
		return kubectlCmd
	case "helm":
		return helmCmd
	case "terraform", "tofu", "terragrunt":
		return terraformCmd
	case "aws":
		return awsCmd
	case "gcloud", "az", "doctl", "hcloud", "flyctl", "fly":
		return cloudVerbCmd
	case "iptables", "ip6tables", "iptables-nft", "iptables-legacy", "ebtables", "arptables":
		return iptablesCmd
	case "nft":
		return nftCmd
	case "ip":
		return ipCmd
	case "ifconfig", "route":
		return ifconfigCmd
	// databases: infra.go
	case "psql", "mysql", "mariadb", "sqlite3", "sqlite", "duckdb", "clickhouse-client", "cockroach":
		return sqlClientCmd
	case "redis-cli", "valkey-cli", "keydb-cli":
		return redisCmd
	case "mongosh", "mongo":
		return mongoCmd
	// packages: packages.go
	case "apt", "apt-get", "aptitude":
		return aptCmd
	case "apt-cache", "dpkg-query", "rpm-query", "apt-file":
		return fixed(ReadOnly, "queries the package database")
	case "dpkg", "rpm":
		return dpkgCmd
	case "dnf", "yum", "microdnf", "zypper", "tdnf":
		return dnfCmd
	case "apk":
		return apkCmd
	case "pacman", "yay", "paru":
		return pacmanCmd
	case "brew", "port", "snap", "flatpak", "gem", "choco", "winget", "scoop", "nix-env", "pkg":
		return genericPackageCmd
	case "pip", "pip3", "pipx", "uv", "poetry", "conda", "mamba", "micromamba", "pdm", "rye":
		return pipCmd
	case "npm", "pnpm", "yarn", "bun", "corepack":
		return npmCmd
	case "npx", "pnpx", "bunx", "uvx":
		return fixed(Unknown, "downloads and runs a package, which logbook cannot read")
	case "cargo":
		return cargoCmd
	case "go":
		return goCmd
	// editors with command options: interp.go
	case "vim", "vi", "nvim", "view", "ex", "gvim":
		return vimCmd
	case "awk", "gawk", "mawk", "nawk":
		return awkCmd
	}
	return nil
}

// fixed returns a handler that always gives the same judgement.
func fixed(c Class, what string) func(*state, command) judgement {
	return func(_ *state, cmd command) judgement { return is(c, cmd.name+" "+what) }
}

// helpOnly reports a command line that only asks for help or a version.
func helpOnly(args []arg) bool {
	if len(args) != 1 {
		return false
	}
	switch args[0].text {
	case "--help", "-h", "--version", "-V", "help", "version", "--usage":
		return true
	}
	return false
}

// subcommand returns the first operand of args, lower-cased, after the
// options described by valued, and the arguments after it.
func subcommand(args []arg, valued string) (string, []arg) {
	o := scanOptions(args, scanSpec{valued: valued, stopAtOperand: true})
	rest := args[o.rest:]
	if len(rest) == 0 {
		return "", nil
	}
	return strings.ToLower(rest[0].text), rest[1:]
}

// verbTable maps subcommands to classes; rule phrases come from verbRule.
type verbTable map[string]Class

// lookupVerb judges a subcommand with a table, falling back to unknown.
func lookupVerb(prog, verb string, t verbTable) judgement {
	if verb == "" {
		return is(ReadOnly, prog+" without a subcommand prints its usage")
	}
	if c, ok := t[verb]; ok {
		return is(c, prog+" "+verb+" "+verbRule(c))
	}
	if helpOnly([]arg{lit(verb)}) {
		return is(ReadOnly, prog+" "+verb+" only prints help")
	}
	return is(Unknown, "logbook does not know what "+prog+" "+verb+" does")
}

// verbRule says in words what a class means for a subcommand.
func verbRule(c Class) string {
	switch c {
	case ReadOnly:
		return "only reads"
	case WorkspaceWrite:
		return "changes files in the workspace"
	case Network:
		return "talks to other machines"
	case ConfigMutation:
		return "changes configuration"
	case ServiceControl:
		return "starts, stops or moves services or machines"
	case PackageInstall:
		return "installs or removes software"
	case Privilege:
		return "changes users or permissions"
	case Destructive:
		return "destroys data that cannot be got back"
	}
	return "cannot be read"
}
