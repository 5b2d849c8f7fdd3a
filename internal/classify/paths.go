package classify

import (
	"path"
	"strings"
)

// Paths: where a write or a removal lands decides how bad it is. A file in
// the workspace is workspace_write; a system path or a dotfile in a home
// directory is config_mutation; a disk device is destructive.

// discardFiles are redirection targets that write nothing to disk.
var discardFiles = map[string]bool{
	"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true,
	"/dev/fd/1": true, "/dev/fd/2": true, "/dev/zero": true,
}

func isDiscard(p string) bool { return discardFiles[p] }

// systemDirs are top-level directories that belong to the system, not to a
// workspace. Writing into them changes how the machine works.
var systemDirs = map[string]bool{
	"etc": true, "boot": true, "usr": true, "bin": true, "sbin": true,
	"lib": true, "lib32": true, "lib64": true, "libx32": true, "opt": true,
	"root": true, "sys": true, "proc": true, "dev": true, "var": true,
	"snap": true, "efi": true,
	// macOS
	"System": true, "Library": true, "Applications": true, "private": true,
}

// tempDirs are directories whose content is scratch by convention.
var tempDirs = []string{"/tmp", "/var/tmp", "/dev/shm", "/private/tmp", "/var/folders", "/private/var/folders"}

// diskDevicePrefixes name block devices: writing to one overwrites a disk.
var diskDevicePrefixes = []string{
	"/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme", "/dev/mmcblk",
	"/dev/disk", "/dev/rdisk", "/dev/mapper/", "/dev/md", "/dev/dm-", "/dev/loop",
	"/dev/zd", "/dev/zvol/", "/dev/pve/", "/dev/mem", "/dev/kmem", "/dev/port",
}

// resolvePath turns a path argument into a cleaned path the rules can read:
// ~ and $HOME become "~", a trusted $TMPDIR becomes /tmp, $PWD becomes ".".
// dynamic reports that some part is still only known at run time.
func resolvePath(a arg, tmpdirTrusted bool) (p string, dynamic bool) {
	p = a.text
	switch a.param {
	case "HOME":
		p = "~" + afterParam(p)
	case "TMPDIR":
		if tmpdirTrusted {
			p = "/tmp" + afterParam(p)
		}
	case "PWD":
		p = "." + afterParam(p)
	}
	dynamic = a.fromInput || strings.ContainsAny(p, "$`")
	if strings.HasPrefix(p, "~") && !strings.HasPrefix(p, "~/") && p != "~" {
		// ~user is another user's home directory.
		user, rest, _ := strings.Cut(p[1:], "/")
		p = "/home/" + user + "/" + rest
	}
	if p != "" {
		p = path.Clean(p)
	}
	return p, dynamic
}

// afterParam returns what follows the leading parameter expansion of a
// word's text: "/x" of "$HOME/x" or "${TMPDIR:-/tmp}/x".
func afterParam(text string) string {
	if strings.HasPrefix(text, "${") {
		if i := strings.IndexByte(text, '}'); i >= 0 {
			return text[i+1:]
		}
		return ""
	}
	i := 1
	for i < len(text) && (text[i] == '_' || 'a' <= text[i] && text[i] <= 'z' || 'A' <= text[i] && text[i] <= 'Z' || '0' <= text[i] && text[i] <= '9') {
		i++
	}
	return text[i:]
}

// isTempPath reports whether p is a temporary directory or inside one.
func isTempPath(p string, dynamic bool) bool {
	if dynamic {
		return false
	}
	for _, d := range tempDirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// isSystemPath reports whether p is a system directory or inside one (and
// not inside a temporary directory).
func isSystemPath(p string) bool {
	if !strings.HasPrefix(p, "/") || isTempPath(p, false) || isDiscard(p) {
		return false
	}
	top, _, _ := strings.Cut(p[1:], "/")
	return systemDirs[top]
}

// isDiskDevice reports whether p names a block device or raw memory.
func isDiskDevice(p string) bool {
	for _, d := range diskDevicePrefixes {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}

// isHomeDotfile reports whether p is a dotfile or dot-directory in a home
// directory (~/.bashrc, /root/.ssh/authorized_keys): shell start-up files,
// keys and tool configuration.
func isHomeDotfile(p string) bool {
	var rest string
	switch {
	case strings.HasPrefix(p, "~/"):
		rest = p[2:]
	case strings.HasPrefix(p, "/root/"):
		rest = p[6:]
	case strings.HasPrefix(p, "/home/"), strings.HasPrefix(p, "/Users/"):
		_, after, _ := strings.Cut(p[1:], "/")
		_, rest, _ = strings.Cut(after, "/")
	default:
		return false
	}
	return strings.HasPrefix(rest, ".") && rest != "." && rest != ".."
}

// writeTarget judges writing to a path: it returns the class and a phrase
// naming the target.
func writeTarget(a arg, st *state) (Class, string) {
	st.noteWrite(a)
	p, _ := st.resolve(a)
	switch {
	case isDiskDevice(p):
		return Destructive, "the disk device " + p + ", overwriting what is on it"
	case isSystemPath(p):
		return ConfigMutation, "the system path " + p
	case isHomeDotfile(p):
		return ConfigMutation, "the home dotfile " + p
	}
	return WorkspaceWrite, "the file " + quoteText(a)
}

// writeTargets judges writing to each of paths and returns the worst.
func writeTargets(st *state, verb string, paths []arg) judgement {
	j := is(WorkspaceWrite, verb+" files in the workspace")
	for i, a := range paths {
		if c, why := writeTarget(a, st); i == 0 || c.Rank() > j.class.Rank() {
			j = is(c, verb+" "+why)
		}
	}
	return j
}

// criticalTarget is criticalTarget of a path argument seen from the
// working directory. A glob or dot that names a whole directory (*, .)
// stays critical in a directory changed to, unless that directory is
// surely a temporary one.
func (st *state) criticalTarget(a arg) string {
	p, dynamic := st.resolve(a)
	if what := criticalTarget(a, p); what != "" {
		return what
	}
	if raw, _ := resolvePath(a, !st.tmpdirSet); raw != p && !isTempPath(p, dynamic) {
		return criticalTarget(a, raw)
	}
	return ""
}

// criticalTarget says why removing p would be a disaster, or "" if it is
// not one of the paths that must never be removed: the root, a home
// directory, everything in the current or parent directory, a system path.
func criticalTarget(a arg, p string) string {
	switch {
	case p == "/" || p == "/*":
		return "the filesystem root"
	case p == "~" || p == "~/*" || p == "/home" || p == "/Users" || p == "/root" ||
		strings.Count(p, "/") == 2 && (strings.HasPrefix(p, "/home/") || strings.HasPrefix(p, "/Users/")):
		return "a home directory"
	case p == "." || p == ".." || p == "../*":
		return "the current or parent directory"
	case a.glob && (p == "*" || p == ".*" || p == "*.*"):
		return "every file in the current directory"
	case isSystemPath(p):
		return "the system path " + p
	case isHomeDotfile(p):
		return "the home dotfile " + p
	case isDiskDevice(p):
		return "the disk device " + p
	}
	return ""
}

// noteWrite lists a file the line writes in the verdict's Writes, as the
// path it names from where the line starts. A path only known at run time
// (a parameter, a substitution, an input item, a glob) is left out, and so
// is a discarding target such as /dev/null.
func (st *state) noteWrite(a arg) {
	p, dynamic := st.resolve(a)
	if dynamic || a.glob || a.subst || p == "" || isDiscard(p) || len(st.writes) >= maxReasons {
		return
	}
	for _, w := range st.writes {
		if w == p {
			return
		}
	}
	st.writes = append(st.writes, p)
}
