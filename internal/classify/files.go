package classify

import "strings"

// Files: listing, creating, copying, removing and changing the permissions
// of files, where the target decides how bad a change is (see paths.go).

// filePrograms registers the file tools.
func filePrograms(r *registry) {
	r.handle(fdCmd, "fd", "fdfind")
	r.handle(outputOptionCmd("-o"), "tree")
	r.fixed(Destructive, map[string]string{"trash-empty": "empties the trash for good"})
	r.fixed(WorkspaceWrite, map[string]string{"trash-put": "moves files to the trash", "trash": "moves files to the trash", "trash-restore": "restores files from the trash"})
	r.handle(rmCmd, "rm", "unlink", "srm", "wipe")
	r.handle(findCmd, "find")
	r.handle(copyCmd, "cp", "mv", "install", "ln", "rsync")
	r.handle(teeCmd, "tee")
	r.handle(sedCmd, "sed", "gsed")
	r.handle(ddCmd, "dd")
	r.handle(tarCmd, "tar", "bsdtar", "gtar")
	r.handle(chmodCmd, "chmod")
	r.handle(chownCmd, "chown", "chgrp")
	r.fixed(ReadOnly, map[string]string{
		"ls": "lists files", "ll": "lists files", "dir": "lists files",
		"file": "guesses file types", "stat": "prints file metadata", "du": "measures disk usage",
		"df": "prints free disk space", "realpath": "resolves a path", "readlink": "resolves a link",
		"basename": "strips directories", "dirname": "strips the file name",
		"locate": "finds files", "mlocate": "finds files",
		"lsattr": "lists file attributes", "getfacl": "lists file permissions", "namei": "follows a path",
	})
	r.fixed(WorkspaceWrite, map[string]string{
		"mkdir": "creates directories", "rmdir": "removes empty directories",
		"patch": "patches files", "gzip": "compresses files", "gunzip": "decompresses files",
		"bzip2": "compresses files", "bunzip2": "decompresses files", "xz": "compresses files",
		"unxz": "decompresses files", "zstd": "compresses files", "unzstd": "decompresses files",
		"zip": "makes an archive", "unzip": "extracts an archive", "7z": "handles archives",
		"split": "splits a file", "csplit": "splits a file", "mktemp": "creates a temporary file",
		"mkfifo": "creates a pipe", "ar": "handles archives", "cpio": "handles archives",
	})
	r.fixed(ConfigMutation, map[string]string{
		"chattr": "changes file attributes", "setfacl": "changes file permissions",
	})
	r.fixed(Privilege, map[string]string{
		"setfattr": "changes file attributes",
	})
	r.fixed(Destructive, map[string]string{
		"shred": "overwrites files so they cannot be recovered",
	})
	r.handle(operandsWritten(WorkspaceWrite, "touch creates files", "-d --date -r --reference -t"), "touch")
	r.handle(operandsWritten(Destructive, "truncate cuts files to a size, throwing away their end", "-s --size -r --reference"), "truncate")
}

// rmCmd: rm removes files. Removing the root, a home directory, everything
// here, or a system path is destructive whatever the flags; a recursive
// forced removal (-rf) is destructive unless every target is inside a
// temporary directory, because it deletes whole trees without asking and
// nothing can bring them back.
func rmCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{})
	if o.has("--no-preserve-root") {
		return is(Destructive, "rm --no-preserve-root lets rm delete the whole filesystem")
	}
	if helpOnly(c.args) {
		return is(ReadOnly, "rm only prints its help or version")
	}
	for _, t := range o.operands {
		st.noteWrite(t)
	}
	recursive := o.has("-r", "-R", "--recursive")
	forced := o.has("-f", "--force")
	for _, t := range o.operands {
		if what := st.criticalTarget(t); what != "" {
			return is(Destructive, c.name+" removes "+what)
		}
	}
	if recursive && forced {
		for _, t := range o.operands {
			if p, dynamic := st.resolve(t); !isTempPath(p, dynamic) {
				return is(Destructive, "rm -rf deletes "+quoteText(t)+" and everything under it without asking, outside any temporary directory")
			}
		}
		if len(o.operands) == 0 {
			// rm -rf with its target missing: the line was cut short or
			// the target is supplied some way the reader cannot see, so
			// nothing shows it is a temporary directory.
			return is(Destructive, "rm -rf with no visible target: nothing shows it stays inside a temporary directory")
		}
		return is(WorkspaceWrite, "rm -rf only inside temporary directories")
	}
	if recursive {
		return is(WorkspaceWrite, "rm -r removes directories in the workspace, asking about write-protected files")
	}
	return is(WorkspaceWrite, c.name+" removes files in the workspace")
}

// findValued are find's tests and options that take one argument.
const findValued = "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype " +
	"-newer -anewer -cnewer -perm -size -mtime -atime -ctime -mmin -amin -cmin -user -group " +
	"-uid -gid -links -inum -samefile -maxdepth -mindepth -lname -ilname -used -fstype " +
	"-context -printf -regextype -files0-from -D -newermt -newerct -newerat -newermm"

// findCmd: find reads, except -delete, -exec/-execdir/-ok/-okdir (which run
// a command on each file found, judged with {} as input) and the -fprint
// family, which write files.
func findCmd(st *state, c command) judgement {
	j := is(ReadOnly, "find only lists files")
	args := c.args
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case hasWord(findValued, t):
			i++ // the test's argument, even if it reads -delete
		case t == "-delete":
			j = is(Destructive, "find -delete deletes every file it matches")
		case t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir":
			end := i + 1
			for end < len(args) && args[end].text != ";" && args[end].text != "+" {
				end++
			}
			inner := make([]arg, 0, end-i-1)
			for _, a := range args[i+1 : end] {
				if strings.Contains(a.text, "{}") {
					a = arg{text: a.text, fromInput: true}
				}
				inner = append(inner, a)
			}
			st.call(inner, input{})
			i = end
		case t == "-fprint" || t == "-fprint0" || t == "-fls" || t == "-fprintf":
			if i+1 < len(args) {
				if w := writeTargets(st, "find "+t+" writes", args[i+1:i+2]); w.class.Rank() > j.class.Rank() {
					j = w
				}
			}
			i++
			if t == "-fprintf" {
				i++
			}
		}
	}
	return j
}

// copyCmd: cp, mv, install, ln and rsync write to their last operand (or
// the -t directory). rsync --delete also deletes what the source lacks.
func copyCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-t --target-directory -S --suffix -m --mode -o --owner -g --group -e --rsh --exclude --include --filter -f --chmod --chown --backup-dir --link-dest --compare-dest --rsync-path --password-file --log-file --files-from --exclude-from --include-from"})
	if helpOnly(c.args) {
		return is(ReadOnly, c.name+" only prints its help or version")
	}
	if c.name == "rsync" && (o.hasPrefix("--delete") || o.has("--remove-source-files")) {
		return is(Destructive, "rsync --delete deletes files in the destination that the source lacks")
	}
	var dest []arg
	if t, ok := o.value("-t", "--target-directory"); ok {
		dest = []arg{lit(t)}
	} else if n := len(o.operands); n > 0 {
		dest = o.operands[n-1:]
	}
	if c.name == "rsync" {
		for _, op := range o.operands {
			if strings.Contains(op.text, ":") && !strings.HasPrefix(op.text, "/") {
				return is(Network, "rsync copies files to or from another machine")
			}
		}
	}
	if c.name == "mv" && len(o.operands) > 0 {
		// Moving a system path or a home directory away is as bad as
		// removing it.
		for _, src := range o.operands[:len(o.operands)-1] {
			st.noteWrite(src) // moved away: the file at its path is gone
			p, _ := st.resolve(src)
			if what := st.criticalTarget(src); what != "" && !isHomeDotfile(p) {
				return is(Destructive, "mv moves away "+what)
			}
		}
	}
	return writeTargets(st, c.name+" writes into", dest)
}

// teeCmd: tee writes its input to each file operand.
func teeCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "--output-error"})
	if len(o.operands) == 0 {
		return is(ReadOnly, "tee without files only copies its input to its output")
	}
	return writeTargets(st, "tee writes", o.operands)
}

// sedCmd: sed only prints, unless -i edits files in place.
func sedCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-e --expression -f --file -l --line-length"})
	inPlace := o.has("-i", "--in-place") || o.hasPrefix("--in-place")
	if !inPlace {
		return is(ReadOnly, "sed prints edited text and changes no file")
	}
	files := o.operands
	if _, scripted := o.value("-e", "--expression", "-f", "--file"); !scripted && len(files) > 0 {
		files = files[1:] // the first operand is the script
	}
	return writeTargets(st, "sed -i edits", files)
}

// ddCmd: dd of=FILE writes FILE; onto a disk device that destroys the disk.
func ddCmd(st *state, c command) judgement {
	for _, a := range c.args {
		if out, ok := strings.CutPrefix(a.text, "of="); ok {
			if isDiscard(out) {
				return is(ReadOnly, "dd writes to "+out)
			}
			return writeTargets(st, "dd writes", []arg{{text: out, literal: a.literal, param: a.param}})
		}
	}
	return is(ReadOnly, "dd without of= only writes to its output")
}

// tarCmd: listing an archive reads; creating or extracting writes, and
// extracting into a system directory (-C /) changes the system.
func tarCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-f --file -C --directory -T --files-from -X --exclude-from --exclude -b -H --format --owner --group --mode"})
	if helpOnly(c.args) {
		return is(ReadOnly, "tar only prints its help or version")
	}
	// The old style puts the letters first without a dash: tar xzf a.tgz.
	first := ""
	if len(c.args) > 0 && !strings.HasPrefix(c.args[0].text, "-") {
		first = c.args[0].text
	}
	switch {
	case o.has("-t", "--list") || strings.Contains(first, "t"):
		return is(ReadOnly, "tar lists an archive")
	case o.has("-x", "--extract", "--get") || strings.Contains(first, "x"):
		if dir, ok := o.value("-C", "--directory"); ok {
			return writeTargets(st, "tar extracts into", []arg{lit(dir)})
		}
		return is(WorkspaceWrite, "tar extracts an archive into the workspace")
	}
	if f, ok := o.value("-f", "--file"); ok && f != "-" {
		return writeTargets(st, "tar writes the archive", []arg{lit(f)})
	}
	return is(WorkspaceWrite, "tar creates an archive")
}

// chmodCmd: setuid or setgid bits grant privilege; permissions on system
// paths change the system; recursive changes on a critical path wreck it.
func chmodCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "--reference"})
	if len(o.operands) == 0 {
		return is(ReadOnly, "chmod without operands changes nothing")
	}
	mode, targets := o.operands[0].text, o.operands[1:]
	recursive := o.has("-R", "--recursive")
	for _, t := range targets {
		if what := recursiveDisaster(st, t); recursive && what != "" {
			return is(Destructive, "chmod -R changes the permissions of everything under "+what)
		}
	}
	if setuid(mode) {
		return is(Privilege, "chmod sets the setuid or setgid bit, so the program runs with its owner's rights")
	}
	return writeTargets(st, "chmod changes the permissions of", targets)
}

// recursiveDisaster says why changing owners or permissions recursively
// under t would wreck the machine: t is the root, a home directory, or a
// system directory no more than two levels down (/etc, /usr/lib).
func recursiveDisaster(st *state, t arg) string {
	p, _ := st.resolve(t)
	what := st.criticalTarget(t)
	if isSystemPath(p) && strings.Count(p, "/") > 2 {
		return ""
	}
	return what
}

// setuid reports a chmod mode that sets the setuid or setgid bit.
func setuid(mode string) bool {
	if len(mode) == 4 && mode[0] >= '0' && mode[0] <= '7' && strings.Trim(mode, "01234567") == "" {
		return mode[0] == '2' || mode[0] == '4' || mode[0] == '6'
	}
	for _, clause := range strings.Split(mode, ",") {
		if i := strings.IndexAny(clause, "+="); i >= 0 && strings.Contains(clause[i:], "s") {
			return true
		}
	}
	return false
}

// chownCmd: changing owners is privilege; recursively on a critical path it
// is destructive.
func chownCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "--reference --from"})
	if len(o.operands) == 0 {
		return is(ReadOnly, c.name+" without operands changes nothing")
	}
	if o.has("-R", "--recursive") {
		for _, t := range o.operands[1:] {
			if what := recursiveDisaster(st, t); what != "" {
				return is(Destructive, c.name+" -R changes the owner of everything under "+what)
			}
		}
	}
	return is(Privilege, c.name+" changes file owners")
}

// fdCmd: fd finds files, and with -x/--exec or -X/--exec-batch runs a
// command on them, which is judged with the files as input.
func fdCmd(st *state, c command) judgement {
	for i, a := range c.args {
		switch a.text {
		case "-x", "--exec", "-X", "--exec-batch":
			inner := make([]arg, 0, len(c.args)-i)
			for _, w := range c.args[i+1:] {
				if w.text == ";" {
					break
				}
				if strings.Contains(w.text, "{") {
					w = arg{text: w.text, fromInput: true}
				}
				inner = append(inner, w)
			}
			if len(inner) == 0 {
				return is(Unknown, c.name+" "+a.text+" without a command")
			}
			inner = append(inner, inputArg())
			st.call(inner, input{})
			return judgement{wrapper: true}
		}
	}
	return is(ReadOnly, c.name+" finds files")
}

// operandsWritten judges a program that writes each file it names (touch,
// truncate) with a fixed class and rule; valued are its options that take
// a value, so that the value is not taken for a file.
func operandsWritten(c Class, rule, valued string) handler {
	return func(st *state, cmd command) judgement {
		for _, t := range scanOptions(cmd.args, scanSpec{valued: valued}).operands {
			st.noteWrite(t)
		}
		return is(c, rule)
	}
}
