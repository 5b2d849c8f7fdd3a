package importer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/transcript"
)

// toEntry turns a parsed transcript entry into a logbook entry, clipped to
// the limits the server would clip it to (so a batch never grows past the
// request size limit on text the server would drop anyway).
func toEntry(e *transcript.Entry) logbook.Entry {
	out := logbook.Entry{
		Kind: logbook.Kind(e.Kind), Role: e.Role, Text: logbook.Clip(e.Text, logbook.MaxEntryText),
		Tool: e.Tool, ToolCallID: e.ToolCallID, Payload: e.Payload, Commit: e.Commit, Key: e.Key, At: e.At,
	}
	// A tool call and its result take the keys the Claude Code hook gives
	// them, so a transcript imported after its hook recorded it adds no
	// second copy.
	if e.ToolCallID != "" && (out.Kind == logbook.KindToolCall || out.Kind == logbook.KindToolResult) {
		out.Key = e.ToolCallID + map[logbook.Kind]string{logbook.KindToolCall: ":call", logbook.KindToolResult: ":result"}[out.Kind]
	}
	if e.IsError {
		out.Payload = markError(out.Payload)
	}
	if len(out.Payload) > logbook.MaxPayload {
		out.Payload, _ = json.Marshal(logbook.Clip(string(out.Payload), logbook.MaxEntryText))
	}
	if e.InputTokens != 0 || e.OutputTokens != 0 {
		out.Usage = &logbook.Usage{InputTokens: e.InputTokens, OutputTokens: e.OutputTokens,
			CacheReadTokens: e.CacheReadTokens, CacheWriteTokens: e.CacheWriteTokens, Model: e.Model}
	}
	return out
}

// markError records that a tool result was an error the way logbook reads
// it (a payload with "is_error": true): added to an object payload, or
// wrapping any other payload as its "output".
func markError(payload json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if len(payload) > 0 && payload[0] == '{' && json.Unmarshal(payload, &obj) == nil {
		obj["is_error"] = json.RawMessage("true")
		if out, err := json.Marshal(obj); err == nil {
			return out
		}
	}
	wrapped := map[string]any{"is_error": true}
	if len(payload) > 0 {
		wrapped["output"] = payload
	}
	out, _ := json.Marshal(wrapped) // a map of plain values and valid JSON
	return out
}

// entrySize estimates the bytes an entry takes in a JSON request: its text
// may double when escaped.
func entrySize(e *logbook.Entry) int {
	return 2*len(e.Text) + len(e.Payload) + len(e.Tool) + len(e.ToolCallID) + len(e.Key) + 160
}

// editTools are the Claude Code tools that change a file, with the input
// field naming it.
var editTools = map[string]string{
	"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path",
}

// patchFile finds the files an apply_patch input names.
var patchFile = regexp.MustCompile(`(?m)^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$`)

// touchedFiles lists the files a tool call changes: the path of an edit
// tool, or the files of a Codex apply_patch.
func touchedFiles(e *logbook.Entry) []string {
	if e.Kind != logbook.KindToolCall || len(e.Payload) == 0 {
		return nil
	}
	if field, ok := editTools[e.Tool]; ok {
		var input map[string]json.RawMessage
		var path string
		if json.Unmarshal(e.Payload, &input) == nil && json.Unmarshal(input[field], &path) == nil && path != "" {
			return []string{path}
		}
		return nil
	}
	if e.Tool == "apply_patch" {
		var patch string
		if json.Unmarshal(e.Payload, &patch) != nil {
			var input struct {
				Input string `json:"input"`
				Patch string `json:"patch"`
			}
			if json.Unmarshal(e.Payload, &input) != nil {
				return nil
			}
			patch = input.Input + input.Patch
		}
		var files []string
		for _, m := range patchFile.FindAllStringSubmatch(patch, 100) {
			files = append(files, m[1])
		}
		return files
	}
	return nil
}

// workTree is the folder paths of a session are relative to: the git work
// tree above cwd when it exists on this machine, else cwd itself.
func workTree(cwd string) string {
	if cwd == "" {
		return ""
	}
	for dir := filepath.Clean(cwd); ; {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Clean(cwd)
		}
		dir = parent
	}
}

// relativeTo is path relative to root when it lies inside it, else path
// as it was.
func relativeTo(path, root string) string {
	if root == "" || !filepath.IsAbs(path) {
		return path
	}
	if rel, err := filepath.Rel(root, path); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return path
}

// projectFromCwd names a project after the folder of the work tree a cwd
// lies in, or "" when there is no cwd.
func projectFromCwd(cwd string) string {
	tree := workTree(cwd)
	if tree == "" {
		return ""
	}
	name := filepath.Base(tree)
	if name == "/" || name == "." {
		return ""
	}
	return name
}
