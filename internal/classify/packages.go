package classify

import "strings"

// Package managers. Installing or removing system software is
// package_install; queries read; refreshing package lists is network.
// Project-local dependency installs (npm install, cargo build) fetch into
// the workspace and are network; global ones are package_install.

// packagePrograms registers the package managers.
func packagePrograms(r *registry) {
	r.handle(aptCmd, "apt", "apt-get", "aptitude")
	r.handle(fixedRule(ReadOnly, "queries the package database"), "apt-cache", "dpkg-query", "rpm-query", "apt-file")
	r.handle(dpkgCmd, "dpkg", "rpm")
	r.handle(dnfCmd, "dnf", "yum", "microdnf", "zypper", "tdnf")
	r.handle(apkCmd, "apk")
	r.handle(pacmanCmd, "pacman", "yay", "paru")
	r.handle(genericPackageCmd, "brew", "port", "snap", "flatpak", "gem", "choco", "winget", "scoop", "nix-env", "pkg")
	r.handle(pipCmd, "pip", "pip3", "pipx", "uv", "poetry", "conda", "mamba", "micromamba", "pdm", "rye")
	r.handle(npmCmd, "npm", "pnpm", "yarn", "bun", "corepack")
	r.handle(packageRunCmd, "npx", "pnpx", "bunx", "uvx")
	r.handle(cargoCmd, "cargo")
	r.handle(goCmd, "go")
}

var aptVerbs = verbTable{
	"install": PackageInstall, "reinstall": PackageInstall, "upgrade": PackageInstall,
	"full-upgrade": PackageInstall, "dist-upgrade": PackageInstall, "build-dep": PackageInstall,
	"remove": PackageInstall, "purge": PackageInstall, "autoremove": PackageInstall, "autopurge": PackageInstall,
	"satisfy": PackageInstall, "markauto": PackageInstall, "hold": ConfigMutation, "unhold": ConfigMutation,
	"update": Network, "download": Network, "source": Network, "changelog": Network,
	"clean": ConfigMutation, "autoclean": ConfigMutation, "edit-sources": ConfigMutation,
	"list": ReadOnly, "search": ReadOnly, "show": ReadOnly, "showsrc": ReadOnly, "policy": ReadOnly,
	"depends": ReadOnly, "rdepends": ReadOnly, "madison": ReadOnly, "check": ReadOnly, "help": ReadOnly,
	"moo": ReadOnly, "why": ReadOnly, "why-not": ReadOnly, "version": ReadOnly,
}

// aptCmd: --simulate turns any verb into a read.
func aptCmd(_ *state, c command) judgement {
	verb, rest := subcommand(c.args, "-o --option -c --config-file -t --target-release")
	if o := scanOptions(append(append([]arg(nil), c.args...), rest...), scanSpec{}); o.has("-s", "--simulate", "--dry-run", "--just-print", "--no-act", "--recon") {
		return is(ReadOnly, c.name+" --simulate only shows what would happen")
	}
	return lookupVerb(c.name, verb, aptVerbs)
}

// dpkgCmd: dpkg and rpm by their action option. rpm -q with any other
// letters (-qi, -ql) is a query.
func dpkgCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "--root --admindir --instdir -f --showformat --queryformat"})
	changes := "-i --install --unpack --configure -r --remove -P --purge --set-selections --triggers-only"
	if c.name == "rpm" {
		if o.has("-q", "--query", "-V", "--verify", "-K", "--checksig") {
			return is(ReadOnly, "rpm queries the package database")
		}
		changes = "-i --install -U --upgrade -F --freshen -e --erase --import --rebuilddb"
	}
	for _, op := range o.opts {
		if hasWord(changes, op.name) {
			return is(PackageInstall, c.name+" "+op.name+" installs or removes packages")
		}
	}
	return is(ReadOnly, c.name+" queries the package database")
}

var dnfVerbs = verbTable{
	"install": PackageInstall, "reinstall": PackageInstall, "upgrade": PackageInstall, "update": PackageInstall,
	"downgrade": PackageInstall, "remove": PackageInstall, "erase": PackageInstall, "autoremove": PackageInstall,
	"groupinstall": PackageInstall, "groupremove": PackageInstall, "swap": PackageInstall, "distro-sync": PackageInstall,
	"localinstall": PackageInstall, "in": PackageInstall, "rm": PackageInstall, "up": PackageInstall,
	"dup": PackageInstall, "patch": PackageInstall, "module": PackageInstall, "group": PackageInstall,
	"list": ReadOnly, "info": ReadOnly, "search": ReadOnly, "provides": ReadOnly, "whatprovides": ReadOnly,
	"repolist": ReadOnly, "check-update": ReadOnly, "history": ReadOnly, "repoquery": ReadOnly, "deplist": ReadOnly,
	"se": ReadOnly, "if": ReadOnly, "lr": ReadOnly, "help": ReadOnly, "check": ReadOnly, "list-updates": ReadOnly,
	"makecache": Network, "refresh": Network, "ref": Network, "download": Network,
	"clean": ConfigMutation, "config-manager": ConfigMutation, "addrepo": ConfigMutation, "ar": ConfigMutation,
	"removerepo": ConfigMutation, "mark": ConfigMutation,
}

func dnfCmd(_ *state, c command) judgement {
	verb, _ := subcommand(c.args, "-c --config --releasever --installroot --enablerepo --disablerepo -x --exclude --setopt -d --debuglevel -e --errorlevel")
	return lookupVerb(c.name, verb, dnfVerbs)
}

var apkVerbs = verbTable{
	"add": PackageInstall, "del": PackageInstall, "upgrade": PackageInstall, "fix": PackageInstall,
	"update": Network, "fetch": Network, "cache": ConfigMutation,
	"info": ReadOnly, "search": ReadOnly, "list": ReadOnly, "policy": ReadOnly, "stats": ReadOnly,
	"dot": ReadOnly, "audit": ReadOnly, "verify": ReadOnly, "version": ReadOnly,
}

func apkCmd(_ *state, c command) judgement {
	verb, _ := subcommand(c.args, "-X --repository -p --root --arch")
	return lookupVerb("apk", verb, apkVerbs)
}

// pacmanCmd: pacman -S installs (but -Ss, -Si, -Sl only read), -R
// removes, -U installs a file, -Q and -F query.
func pacmanCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-r --root -b --dbpath --cachedir --config --arch"})
	switch {
	case o.has("-S", "--sync"):
		if o.has("-s", "--search", "-i", "--info", "-l", "--list", "-g", "--groups") && !o.has("-u", "--sysupgrade") {
			return is(ReadOnly, c.name+" searches packages")
		}
		if o.has("-y", "--refresh") && len(o.operands) == 0 && !o.has("-u", "--sysupgrade") {
			return is(Network, c.name+" -Sy refreshes package lists")
		}
		return is(PackageInstall, c.name+" -S installs or upgrades packages")
	case o.has("-R", "--remove", "-U", "--upgrade"):
		return is(PackageInstall, c.name+" installs or removes packages")
	case o.has("-F", "--files") && o.has("-y", "--refresh"):
		return is(Network, c.name+" -Fy refreshes the file database")
	case o.has("-D", "--database"):
		return is(ConfigMutation, c.name+" -D changes the package database")
	}
	if c.name != "pacman" && len(o.operands) > 0 && len(o.opts) == 0 {
		return is(PackageInstall, c.name+" searches for and installs packages")
	}
	return is(ReadOnly, c.name+" queries packages")
}

// genericPackageVerbs covers brew, snap, flatpak, gem, port and others that
// share the install/uninstall/list vocabulary.
var genericPackageVerbs = verbTable{
	"install": PackageInstall, "reinstall": PackageInstall, "upgrade": PackageInstall, "uninstall": PackageInstall,
	"remove": PackageInstall, "rm": PackageInstall, "refresh": PackageInstall, "update": Network,
	"tap": PackageInstall, "untap": PackageInstall, "link": PackageInstall, "unlink": PackageInstall,
	"cleanup": ConfigMutation, "autoremove": PackageInstall, "pin": ConfigMutation, "unpin": ConfigMutation,
	"add": PackageInstall, "del": PackageInstall, "i": PackageInstall, "revert": PackageInstall,
	"fetch": Network, "download": Network, "outdated": ReadOnly, "services": ServiceControl,
	"list": ReadOnly, "ls": ReadOnly, "info": ReadOnly, "search": ReadOnly, "deps": ReadOnly, "uses": ReadOnly,
	"config": ReadOnly, "doctor": ReadOnly, "home": ReadOnly, "desc": ReadOnly, "leaves": ReadOnly,
	"find": ReadOnly, "show": ReadOnly, "query": ReadOnly, "contents": ReadOnly, "env": ReadOnly,
	"help": ReadOnly, "version": ReadOnly, "--prefix": ReadOnly, "--cellar": ReadOnly, "--version": ReadOnly,
	"which": ReadOnly, "specification": ReadOnly, "audit": ReadOnly,
}

func genericPackageCmd(_ *state, c command) judgement {
	verb, rest := subcommand(c.args, "")
	if c.name == "brew" && verb == "services" {
		if sub, _ := subcommand(rest, ""); sub == "list" || sub == "info" || sub == "" {
			return is(ReadOnly, "brew services list shows services")
		}
	}
	return lookupVerb(c.name, verb, genericPackageVerbs)
}

var pipVerbs = verbTable{
	"install": PackageInstall, "uninstall": PackageInstall, "download": Network, "wheel": WorkspaceWrite,
	"list": ReadOnly, "show": ReadOnly, "freeze": ReadOnly, "check": ReadOnly, "search": ReadOnly,
	"help": ReadOnly, "debug": ReadOnly, "inspect": ReadOnly, "index": ReadOnly, "hash": ReadOnly,
	"config": ConfigMutation, "cache": ConfigMutation,
	// uv, poetry, pdm, conda
	"add": Network, "remove": WorkspaceWrite, "sync": Network, "lock": Network, "venv": WorkspaceWrite,
	"init": WorkspaceWrite, "new": WorkspaceWrite, "build": WorkspaceWrite, "publish": Network,
	"run": WorkspaceWrite, "tree": ReadOnly, "env": WorkspaceWrite, "shell": Unknown, "update": Network,
	"create": WorkspaceWrite, "activate": ReadOnly, "info": ReadOnly, "tool": PackageInstall,
	"python": PackageInstall, "export": ReadOnly, "version": ReadOnly,
}

// pipCmd: pip install is package_install; uv pip ... is pip; poetry run,
// uv run and conda run run a command in the project's environment, which
// is judged as it is.
func pipCmd(st *state, c command) judgement {
	verb, rest := subcommand(c.args, "--python -p --directory --project -C")
	if verb == "run" && c.name != "pip" && c.name != "pip3" && c.name != "pipx" {
		o := scanOptions(rest, scanSpec{valued: "--with --with-requirements --python -p -n --name --prefix --env --env-file --group --extra --package --directory --project --index --index-url --frozen-lockfile", stopAtOperand: true})
		inner := rest[o.rest:]
		if len(inner) > 0 && inner[0].text == "--" {
			inner = inner[1:]
		}
		if len(inner) > 0 && strings.HasSuffix(inner[0].text, ".py") {
			inner = append([]arg{lit("python")}, inner...)
		}
		return runInner(st, inner, c.in, is(ReadOnly, c.name+" run without a command runs nothing"))
	}
	if verb == "pip" {
		verb, _ = subcommand(rest, "")
	}
	if c.name == "conda" || c.name == "mamba" || c.name == "micromamba" {
		sub, _ := subcommand(rest, "")
		o := scanOptions(c.args, scanSpec{valued: "-n --name -p --prefix"})
		if verb == "env" && (sub == "remove" || sub == "rm") || (verb == "remove" || verb == "uninstall") && o.has("--all") {
			return is(Destructive, c.name+" deletes a whole environment")
		}
		if verb == "env" && (sub == "list" || sub == "export") {
			return is(ReadOnly, c.name+" env "+sub+" only reads")
		}
	}
	if c.name == "pipx" && (verb == "run") {
		return is(Unknown, "pipx run downloads and runs a package")
	}
	return lookupVerb(c.name, verb, pipVerbs)
}

var npmVerbs = verbTable{
	"install": Network, "i": Network, "ci": Network, "add": Network, "update": Network, "up": Network,
	"upgrade": Network, "dedupe": Network, "fetch": Network, "import": Network,
	"uninstall": WorkspaceWrite, "remove": WorkspaceWrite, "rm": WorkspaceWrite, "un": WorkspaceWrite,
	"prune": WorkspaceWrite, "link": PackageInstall, "unlink": PackageInstall,
	"run": WorkspaceWrite, "run-script": WorkspaceWrite, "test": WorkspaceWrite, "t": WorkspaceWrite,
	"start": WorkspaceWrite, "build": WorkspaceWrite, "init": WorkspaceWrite, "create": Unknown,
	"exec": Unknown, "x": Unknown, "dlx": Unknown, "pack": WorkspaceWrite, "version": WorkspaceWrite,
	"list": ReadOnly, "ls": ReadOnly, "view": ReadOnly, "info": ReadOnly, "show": ReadOnly, "outdated": ReadOnly,
	"audit": Network, "why": ReadOnly, "explain": ReadOnly, "search": ReadOnly, "help": ReadOnly,
	"root": ReadOnly, "bin": ReadOnly, "prefix": ReadOnly, "doctor": ReadOnly, "whoami": ReadOnly,
	"publish": Network, "unpublish": Destructive, "deprecate": Network, "login": ConfigMutation,
	"logout": ConfigMutation, "adduser": ConfigMutation, "config": ConfigMutation, "set": ConfigMutation,
	"cache": ConfigMutation, "global": PackageInstall, "format": WorkspaceWrite, "lint": WorkspaceWrite,
	"dev": WorkspaceWrite, "serve": Network, "preview": Network,
}

// npmCmd: a global install (-g, yarn global) changes the system's
// software; a local one fetches into the project. An unknown verb is a
// project script (yarn build, pnpm lint), which runs the project's code.
func npmCmd(st *state, c command) judgement {
	verb, rest := subcommand(c.args, "--prefix -C --dir --filter -w --workspace")
	o := scanOptions(c.args, scanSpec{})
	global := o.has("-g", "--global", "--location=global") || verb == "global"
	if verb == "config" || verb == "cache" {
		if sub, _ := subcommand(rest, ""); sub == "get" || sub == "list" || sub == "ls" {
			return is(ReadOnly, c.name+" "+verb+" "+sub+" only reads")
		}
	}
	if global {
		switch verb {
		case "install", "i", "add", "uninstall", "remove", "rm", "un", "update", "upgrade", "global", "link":
			return is(PackageInstall, c.name+" installs or removes software globally")
		}
	}
	if _, known := npmVerbs[verb]; !known && verb != "" && c.name != "npm" && !helpOnly(c.args) {
		return targetVerbs(c.name, []arg{lit(verb)}, is(WorkspaceWrite, c.name+" "+verb+" runs the project's "+verb+" script"))
	}
	if verb == "exec" || verb == "x" || verb == "dlx" {
		return packageRunCmd(st, command{name: c.name + " " + verb, args: rest, all: c.all, in: c.in})
	}
	if verb == "run" || verb == "run-script" {
		if script, _ := subcommand(rest, "--workspace -w"); script != "" {
			return targetVerbs(c.name+" run", []arg{lit(script)}, lookupVerb(c.name, verb, npmVerbs))
		}
	}
	return lookupVerb(c.name, verb, npmVerbs)
}

var cargoVerbs = verbTable{
	"build": WorkspaceWrite, "b": WorkspaceWrite, "check": WorkspaceWrite, "c": WorkspaceWrite,
	"test": WorkspaceWrite, "t": WorkspaceWrite, "run": WorkspaceWrite, "r": WorkspaceWrite,
	"bench": WorkspaceWrite, "doc": WorkspaceWrite, "clippy": WorkspaceWrite, "fmt": WorkspaceWrite,
	"clean": WorkspaceWrite, "new": WorkspaceWrite, "init": WorkspaceWrite, "fix": WorkspaceWrite,
	"add": Network, "remove": WorkspaceWrite, "rm": WorkspaceWrite, "vendor": Network, "package": WorkspaceWrite,
	"install": PackageInstall, "uninstall": PackageInstall, "publish": Network, "yank": Network,
	"fetch": Network, "update": Network, "search": ReadOnly, "tree": ReadOnly, "metadata": ReadOnly,
	"version": ReadOnly, "help": ReadOnly, "locate-project": ReadOnly, "pkgid": ReadOnly, "verify-project": ReadOnly,
	"login": ConfigMutation, "logout": ConfigMutation, "owner": Network, "nextest": WorkspaceWrite,
	"llvm-cov": WorkspaceWrite, "audit": Network, "deny": ReadOnly, "expand": ReadOnly, "machete": ReadOnly,
}

func cargoCmd(_ *state, c command) judgement {
	verb, _ := subcommand(c.args, "-Z --config --color --manifest-path -C")
	if strings.HasPrefix(verb, "+") { // cargo +nightly build
		o := scanOptions(c.args, scanSpec{})
		if len(o.operands) > 1 {
			verb = strings.ToLower(o.operands[1].text)
		}
	}
	return lookupVerb("cargo", verb, cargoVerbs)
}

var goVerbs = verbTable{
	"build": WorkspaceWrite, "test": WorkspaceWrite, "vet": WorkspaceWrite, "run": WorkspaceWrite,
	"generate": WorkspaceWrite, "fmt": WorkspaceWrite, "fix": WorkspaceWrite, "clean": WorkspaceWrite,
	"work": WorkspaceWrite, "tool": WorkspaceWrite, "mod": WorkspaceWrite,
	"install": PackageInstall, "get": Network, "version": ReadOnly, "env": ReadOnly, "list": ReadOnly,
	"doc": ReadOnly, "help": ReadOnly, "bug": ReadOnly, "telemetry": ConfigMutation,
}

// goCmd: go env -w changes the user's Go configuration; go mod download
// and tidy fetch modules.
func goCmd(_ *state, c command) judgement {
	verb, rest := subcommand(c.args, "-C")
	switch verb {
	case "env":
		if o := scanOptions(rest, scanSpec{}); o.has("-w", "-u") {
			return is(ConfigMutation, "go env -w changes the user's Go configuration")
		}
	case "mod":
		sub, _ := subcommand(rest, "")
		switch sub {
		case "download", "tidy":
			return is(Network, "go mod "+sub+" fetches modules")
		case "graph", "why", "verify":
			return is(ReadOnly, "go mod "+sub+" only reads")
		}
	}
	return lookupVerb("go", verb, goVerbs)
}

// packageRunCmd: npx PACKAGE ARGS downloads and runs a package, which is
// unknown, unless the general verbs say what it runs destroys
// (npx prisma migrate reset) or the package is a program logbook knows.
func packageRunCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-p --package -c --call --from --with --python", stopAtOperand: true})
	rest := c.args[o.rest:]
	if len(rest) == 0 || !rest[0].literal {
		return is(Unknown, c.name+" downloads and runs a package, which logbook cannot read")
	}
	name := programName(strings.TrimPrefix(rest[0].text, "@"))
	if i := strings.LastIndexByte(name, '@'); i > 0 {
		name = name[:i] // prisma@5 is prisma
	}
	inner := command{name: name, args: rest[1:], all: rest, in: c.in}
	if h := knownPrograms().lookup(name); h != nil && name != "npx" {
		return h(st, inner)
	}
	if j := unknownProgram(st, inner); j.class == Destructive {
		return j
	}
	return is(Unknown, c.name+" downloads and runs "+name+", which logbook cannot read")
}
