package classify

// Backup tools: restic, Borg, rclone, Kopia, Velero, tarsnap. Listing
// snapshots and checking a repository read; making a backup sends data to
// the repository (network); restoring writes files; forgetting, pruning
// and deleting snapshots, archives and keys destroy backups that may be
// the only copy; and rclone sync, move and dedupe delete files at their
// destination or source.

// backupPrograms registers the backup tools.
func backupPrograms(r *registry) {
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{
		"snapshots": ReadOnly, "stats": ReadOnly, "dump": ReadOnly, "cat": ReadOnly, "backup": Network,
		"copy": Network, "self-update": PackageInstall, "restore": WorkspaceWrite, "mount": ConfigMutation,
		"cache": ConfigMutation, "rewrite": ConfigMutation, "features": ReadOnly,
		"options": ReadOnly,
	}), "restic")
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{
		"extract": WorkspaceWrite, "export-tar": WorkspaceWrite, "recreate": Destructive, "rdelete": Destructive,
		"rlist": ReadOnly, "rinfo": ReadOnly, "rcreate": ConfigMutation, "rcompact": ConfigMutation,
		"benchmark": WorkspaceWrite, "break-lock": ConfigMutation, "with-lock": Unknown, "serve": Network,
		"import-tar": ConfigMutation, "export": SecretRead,
	}), "borg", "borgbackup", "borg2")
	r.handle(rcloneCmd, "rclone")
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{
		"expire": ReadOnly, "maintenance": ConfigMutation, "connect": ConfigMutation, "disconnect": ConfigMutation,
		"gc": Destructive, "restore": WorkspaceWrite, "estimate": ReadOnly, "verify": ReadOnly, "clear": ConfigMutation,
		"server": ServiceControl, "benchmark": WorkspaceWrite,
	}), "kopia")
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{
		"debug": ReadOnly, "bug": ReadOnly,
	}), "velero")
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", nil),
		"duplicity", "duplicacy", "rdiff-backup", "bup", "borgmatic", "pgbackrest", "wal-g", "barman", "autorestic", "resticprofile", "snapper", "timeshift", "tmutil")
	r.handle(tarsnapCmd, "tarsnap")
}

// rcloneVerbs are rclone's subcommands. sync makes the destination like
// the source, deleting what the source lacks; move and moveto delete the
// source; dedupe and cleanup delete; rmdir and rmdirs remove only empty
// directories.
var rcloneVerbs = verbTable{
	"sync": Destructive, "bisync": Destructive, "move": Destructive, "moveto": Destructive,
	"dedupe": Destructive, "cleanup": Destructive, "delete": Destructive, "deletefile": Destructive,
	"purge": Destructive,
	"copy":  Network, "copyto": Network, "copyurl": Network, "touch": Network, "mkdir": Network,
	"rcat": Network, "link": Network, "serve": Network, "rmdir": Network, "rmdirs": Network,
	"ls": ReadOnly, "lsd": ReadOnly, "lsl": ReadOnly, "lsf": ReadOnly, "lsjson": ReadOnly, "size": ReadOnly,
	"about": ReadOnly, "check": ReadOnly, "cryptcheck": ReadOnly, "checksum": ReadOnly, "md5sum": ReadOnly,
	"sha1sum": ReadOnly, "hashsum": ReadOnly, "tree": ReadOnly, "listremotes": ReadOnly, "ncdu": ReadOnly,
	"cat": ReadOnly, "version": ReadOnly, "obscure": ReadOnly, "help": ReadOnly, "test": ReadOnly,
	"mount": ConfigMutation, "nfsmount": ConfigMutation, "settier": ConfigMutation, "authorize": ConfigMutation,
	"selfupdate": PackageInstall, "backend": Unknown, "rc": Unknown, "rcd": Network, "gendocs": WorkspaceWrite,
	"genautocomplete": WorkspaceWrite, "completion": WorkspaceWrite,
}

// rcloneCmd: rclone [options] VERB ...; config show and config dump print
// the remotes' credentials.
func rcloneCmd(_ *state, c command) judgement {
	verb, rest := subcommand(c.args, "--config --log-file --log-level -v --transfers --checkers --bwlimit --exclude --include --filter --filter-from --exclude-from --include-from --backup-dir --suffix --max-age --min-age --max-size --min-size")
	if verb == "config" {
		switch sub, _ := subcommand(rest, ""); sub {
		case "show", "dump", "redacted":
			if sub == "redacted" {
				return is(ReadOnly, "rclone config redacted prints the configuration without secrets")
			}
			return is(SecretRead, "rclone config "+sub+" prints the remotes' credentials")
		case "file", "paths", "providers":
			return is(ReadOnly, "rclone config "+sub+" only reads")
		case "delete":
			return is(Destructive, "rclone config delete deletes a remote's configuration")
		}
		return is(ConfigMutation, "rclone config changes the remotes' configuration")
	}
	if o := scanOptions(rest, scanSpec{}); o.has("--dry-run", "-n") && rcloneVerbs[verb] == Destructive {
		return is(ReadOnly, "rclone "+verb+" --dry-run only says what it would do")
	}
	return lookupVerb("rclone", verb, rcloneVerbs)
}

// tarsnapCmd: tarsnap -d deletes archives and --nuke deletes them all;
// -t and --list-archives list; -c makes an archive; -x extracts.
func tarsnapCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-f -C --keyfile --cachedir --configfile"})
	switch {
	case o.has("--nuke", "-d"):
		return is(Destructive, "tarsnap -d and --nuke delete archives")
	case o.has("-c"):
		return is(Network, "tarsnap -c uploads an archive")
	case o.has("-x"):
		return is(WorkspaceWrite, "tarsnap -x extracts an archive")
	case o.has("-t", "--list-archives", "--print-stats", "--fsck", "--version", "--help"):
		return is(ReadOnly, "tarsnap lists archives or checks its cache")
	}
	return is(Unknown, "logbook does not know what this tarsnap command does")
}
