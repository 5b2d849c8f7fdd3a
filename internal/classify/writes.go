package classify

import (
	"encoding/json"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// What a tool call writes. The claims gate asks, before a tool call runs,
// which files it would change, so that a file another session claimed is
// not changed behind its back. The answer comes from the call itself: the
// path a file tool names, the file headers of a patch, and for a shell
// command the writes the classifier sees in its parsed syntax (Verdict's
// Writes), never a guess over the raw text.

// editTools are the file tools that change the file their input names, with
// the input that names it.
var editTools = map[string]string{
	"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path", "NotebookEdit": "notebook_path",
}

// shellTools are the tools that run a shell command line: Claude Code's and
// Codex's hooks call it Bash; Codex's own events call it shell.
var shellTools = map[string]bool{"Bash": true, "shell": true, "local_shell": true, "exec_command": true}

// patchTools are the tools that apply a patch in Codex's format.
var patchTools = map[string]bool{"apply_patch": true, "ApplyPatch": true}

// WritesFiles reports whether calls of tool can write files that WrittenPaths
// finds.
func WritesFiles(tool string) bool {
	return editTools[tool] != "" || shellTools[tool] || patchTools[tool]
}

// WrittenPaths returns the files a tool call would write, as its input
// names them (relative to the call's working directory, or absolute),
// once each: the file of Claude Code's Edit, Write, MultiEdit and
// NotebookEdit; each file a Codex apply_patch adds, updates, deletes or
// moves to; the files a shell command writes as far as the classifier sees
// (see Verdict's Writes), and those of a patch it pipes into apply_patch.
// Other tools write nothing it can see (nil).
func WrittenPaths(tool string, input json.RawMessage) []string {
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(input, &fields)
	// words returns an input member that is a string, or the words of one
	// that is an argv, as the shell line they make.
	words := func(key string) (line string, argv []string) {
		if json.Unmarshal(fields[key], &line) == nil {
			return line, []string{line}
		}
		if json.Unmarshal(fields[key], &argv) == nil {
			return joinArgv(argv), argv
		}
		return "", nil
	}
	var paths []string
	switch {
	case editTools[tool] != "":
		if p, _ := words(editTools[tool]); p != "" {
			paths = append(paths, p)
		}
	case shellTools[tool]:
		line, argv := words("command")
		paths = append(paths, Classify(line, Policy{}).Writes...)
		for _, w := range argv {
			paths = append(paths, PatchPaths(w)...)
		}
	case patchTools[tool]:
		var whole string
		if json.Unmarshal(input, &whole) == nil {
			return PatchPaths(whole)
		}
		for _, key := range []string{"input", "patch", "command"} {
			_, argv := words(key)
			for _, w := range argv {
				paths = append(paths, PatchPaths(w)...)
			}
		}
	}
	return unique(paths)
}

// patchHeaders are the lines of Codex's patch format that name a file the
// patch writes.
var patchHeaders = []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "}

// PatchPaths returns the files a patch in Codex's apply_patch format
// ("*** Begin Patch" … "*** End Patch") adds, updates, deletes or moves
// to, once each, as its headers name them; nil for text without such a
// patch.
func PatchPaths(patch string) []string {
	if !strings.Contains(patch, "*** Begin Patch") {
		return nil
	}
	var paths []string
	for line := range strings.Lines(patch) {
		line = strings.TrimRight(line, "\r\n")
		for _, h := range patchHeaders {
			if p, ok := strings.CutPrefix(line, h); ok && strings.TrimSpace(p) != "" {
				paths = append(paths, strings.TrimSpace(p))
			}
		}
	}
	return unique(paths)
}

// joinArgv writes an argv as one shell line ([bash -lc "x > y"] stays the
// same command).
func joinArgv(argv []string) string {
	quoted := make([]string, len(argv))
	for i, a := range argv {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			q = a
		}
		quoted[i] = q
	}
	return strings.Join(quoted, " ")
}

// unique returns list without repeats, in first-seen order.
func unique(list []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
