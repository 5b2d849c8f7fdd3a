package classify

import "strings"

// Text: programs that read files or their input and print, changing
// nothing, unless an option names an output file.

// textPrograms registers the text tools.
func textPrograms(r *registry) {
	r.handle(rgCmd, "rg", "ripgrep")
	r.handle(secondOperandWrites("filters repeated lines"), "uniq")
	r.handle(xxdCmd, "xxd")
	r.handle(optionWrites("-w", WorkspaceWrite, "rewrites the files in place", "prints formatted Go"), "gofmt")
	r.handle(outputOptionCmd("-o --output"), "base64", "base32", "sort", "iconv")
	r.fixed(ReadOnly, map[string]string{
		"cat": "prints files", "tac": "prints files backwards", "nl": "numbers lines",
		"head": "prints the start of files", "tail": "prints the end of files", "less": "pages through files",
		"more": "pages through files", "most": "pages through files", "grep": "searches text",
		"egrep": "searches text", "fgrep": "searches text", "ag": "searches text", "ack": "searches text",
		"zgrep": "searches compressed text", "wc": "counts lines and words", "cut": "cuts columns",
		"tr": "translates characters", "paste": "merges lines",
		"join": "joins lines", "column": "formats columns", "fold": "wraps lines", "fmt": "formats text",
		"pr": "formats text", "rev": "reverses lines", "expand": "converts tabs", "unexpand": "converts spaces",
		"diff": "compares files", "cmp": "compares files", "comm": "compares sorted files",
		"md5sum": "prints checksums", "sha1sum": "prints checksums", "sha256sum": "prints checksums",
		"sha512sum": "prints checksums", "shasum": "prints checksums", "cksum": "prints checksums",
		"b2sum": "prints checksums", "md5": "prints checksums", "od": "dumps bytes", "hexdump": "dumps bytes",
		"strings": "prints text in binaries", "jq": "queries JSON", "gron": "flattens JSON",
		"xmllint": "checks XML", "csvlook": "prints CSV", "bat": "prints files", "batcat": "prints files",
		"zcat": "prints compressed files", "bzcat": "prints compressed files", "xzcat": "prints compressed files",
		"zless": "pages compressed files", "shellcheck": "checks shell scripts",
		"wdiff": "compares files", "cloc": "counts lines of code",
		"tokei": "counts lines of code",
	})
}

// outputOptionCmd handles filters that only print unless an output option
// names a file (base64 -o, sort -o).
func outputOptionCmd(valued string) func(*state, command) judgement {
	return func(st *state, c command) judgement {
		o := scanOptions(c.args, scanSpec{valued: valued + " -k --key -t --field-separator -S --buffer-size -T --temporary-directory -w --wrap -f --from-code"})
		names := strings.Fields(valued)
		if out, ok := o.value(names...); ok && out != "-" {
			return writeTargets(st, c.name+" writes", []arg{lit(out)})
		}
		return is(ReadOnly, c.name+" prints its result")
	}
}

// rgCmd: ripgrep reads, except that --pre runs a program on every file and
// --search-zip and --hostname-bin run helper programs.
func rgCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-e --regexp -f --file -g --glob --iglob -t --type -T --type-not -m --max-count -A -B -C --context --max-depth -j --threads -M --max-columns --pre --pre-glob --hostname-bin --type-add --sort --sortr --color --colors -r --replace --encoding -E --engine --path-separator --ignore-file --max-filesize"})
	switch {
	case o.has("--pre"):
		return is(Unknown, "rg --pre runs a program on every file it searches")
	case o.has("--hostname-bin"):
		return is(Unknown, "rg --hostname-bin runs a program")
	case o.has("-z", "--search-zip"):
		return is(WorkspaceWrite, "rg --search-zip runs decompression programs on compressed files")
	}
	return is(ReadOnly, "rg searches text")
}

// secondOperandWrites returns the handler of a filter that writes its
// second operand when given one (uniq IN OUT).
func secondOperandWrites(what string) handler {
	return func(st *state, c command) judgement {
		o := scanOptions(c.args, scanSpec{valued: "-f --skip-fields -s --skip-chars -w --check-chars"})
		if len(o.operands) > 1 && o.operands[1].text != "-" {
			return writeTargets(st, c.name+" writes", o.operands[1:2])
		}
		return is(ReadOnly, c.name+" "+what)
	}
}

// xxdCmd dumps bytes; with -r it turns a dump back into bytes, written to
// its second operand when there is one.
func xxdCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-c -cols -g -groupsize -l -len -o -offset -s -seek -n -name"})
	if len(o.operands) > 1 && o.operands[1].text != "-" {
		return writeTargets(st, "xxd writes", o.operands[1:2])
	}
	return is(ReadOnly, "xxd dumps bytes")
}
