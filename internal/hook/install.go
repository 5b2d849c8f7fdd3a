package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// hookTimeout is the timeout, in seconds, written with each hook entry.
// The hook bounds itself to about a second; this is Claude Code's backstop.
const hookTimeout = 10

// toolEvents take a tool-name matcher in Claude Code's settings.
var toolEvents = map[string]bool{EventPreToolUse: true, EventPostToolUse: true, EventPostToolUseFailure: true}

// SettingsPath is the Claude Code settings file to install into: the
// project's <dir>/.claude/settings.json, or with user the user's
// ~/.claude/settings.json (home is the user's home folder).
func SettingsPath(dir string, user bool, home string) string {
	if user {
		return filepath.Join(home, ".claude", "settings.json")
	}
	return filepath.Join(dir, ".claude", "settings.json")
}

// LeanBinary is the name of the hook built alone (cmd/logbook-hook): the
// same hook as `logbook hook claude`, without the server, the engines and
// the rest, so the process Claude Code starts before every tool call
// starts faster.
const LeanBinary = "logbook-hook"

// ClaudeCommand is the hook command for the logbook binary at binary:
// "<dir>/logbook-hook claude" when the lean hook sits beside it, else
// "<binary> hook claude"; plus --guard-claims when asked.
func ClaudeCommand(binary string, guardClaims bool) string {
	cmd := shellQuote(binary) + " hook claude"
	if lean := filepath.Join(filepath.Dir(binary), LeanBinary); isExecutable(lean) {
		cmd = shellQuote(lean) + " claude"
	}
	if guardClaims {
		cmd += " --guard-claims"
	}
	return cmd
}

// isExecutable reports whether path is a file someone may run.
func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0
}

// Install writes command as a hook of every event in ClaudeEvents into the
// Claude Code settings file at path, keeping every other setting and every
// other hook. Earlier logbook entries (see Uninstall) are replaced, so
// installing again, or with other flags, leaves one entry per event. The
// file is written only when it changes, after copying it to
// settings.json.bak. It reports whether it wrote.
func Install(path, command, binary string) (changed bool, err error) {
	return editSettings(path, func(hooks map[string]any) {
		for _, event := range ClaudeEvents {
			if groups, ok := hooks[event].([]any); ok && onlyOurs(groups, binary) == command {
				continue // already installed exactly so: leave it where it is
			}
			groups := removeOurs(asList(hooks[event]), binary)
			group := map[string]any{"hooks": []any{map[string]any{
				"type": "command", "command": command, "timeout": json.Number(fmt.Sprint(hookTimeout)),
			}}}
			if toolEvents[event] {
				group["matcher"] = "*"
			}
			hooks[event] = append(groups, group)
		}
	})
}

// Uninstall removes from the settings file at path the hook entries of
// logbook: those whose command is "<binary> hook claude…" (or any
// logbook binary's "hook claude"), dropping groups and events it leaves
// empty. Other hooks and settings stay. It reports whether it wrote.
func Uninstall(path, binary string) (changed bool, err error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return editSettings(path, func(hooks map[string]any) {
		for event, v := range hooks {
			groups := removeOurs(asList(v), binary)
			if len(groups) == 0 {
				delete(hooks, event)
			} else {
				hooks[event] = groups
			}
		}
	})
}

// editSettings applies edit to the "hooks" object of the settings file at
// path (made when missing) and writes the file when that changed it.
func editSettings(path string, edit func(hooks map[string]any)) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("cannot read %s: %w", path, err)
	}
	settings := map[string]any{}
	if len(bytes.TrimSpace(old)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(old))
		dec.UseNumber() // keep numbers exactly as written
		if err := dec.Decode(&settings); err != nil {
			return false, fmt.Errorf("%s is not a JSON object (%v); fix it or move it away, then run this again", path, err)
		}
	}
	before, _ := json.Marshal(settings)
	hooks, ok := settings["hooks"].(map[string]any)
	if !ok {
		if settings["hooks"] != nil {
			return false, fmt.Errorf(`%s has a "hooks" setting that is not an object; fix it, then run this again`, path)
		}
		hooks = map[string]any{}
	}
	edit(hooks)
	if len(hooks) == 0 {
		delete(settings, "hooks")
	} else {
		settings["hooks"] = hooks
	}
	after, _ := json.Marshal(settings)
	if bytes.Equal(before, after) {
		return false, nil
	}
	out, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return false, err
	}
	out = append(out, '\n')
	mode := os.FileMode(0o644)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, fmt.Errorf("cannot make %s: %w", filepath.Dir(path), err)
	}
	if old != nil {
		if err := os.WriteFile(path+".bak", old, mode); err != nil {
			return false, fmt.Errorf("cannot back up %s (nothing was changed): %w", path, err)
		}
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, mode); err != nil {
		return false, fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return false, fmt.Errorf("cannot write %s: %w", path, err)
	}
	return true, nil
}

// isOurs reports whether a hook command runs logbook's Claude hook: the
// binary's own, or another logbook binary's (an older build elsewhere).
func isOurs(command, binary string) bool {
	command = strings.TrimSpace(command)
	lean := filepath.Join(filepath.Dir(binary), LeanBinary)
	for _, prefix := range []string{shellQuote(binary) + " hook claude", binary + " hook claude", shellQuote(lean) + " claude", lean + " claude"} {
		if command == prefix || strings.HasPrefix(command, prefix+" ") {
			return true
		}
	}
	first, rest := splitProgram(command)
	switch filepath.Base(first) {
	case "logbook":
		return rest == "hook claude" || strings.HasPrefix(rest, "hook claude ")
	case LeanBinary:
		return rest == "claude" || strings.HasPrefix(rest, "claude ")
	}
	return false
}

// splitProgram splits a command into its program, unquoted when it is
// quoted as a whole, and the rest.
func splitProgram(command string) (program, rest string) {
	if q := command[:min(1, len(command))]; q == "'" || q == `"` {
		if end := strings.Index(command[1:], q); end >= 0 {
			return command[1 : end+1], strings.TrimSpace(command[end+2:])
		}
	}
	program, rest, _ = strings.Cut(command, " ")
	return program, strings.TrimSpace(rest)
}

// removeOurs returns groups without logbook's hooks, dropping groups left
// with none.
func removeOurs(groups []any, binary string) []any {
	var out []any
	for _, g := range groups {
		group, ok := g.(map[string]any)
		if !ok {
			out = append(out, g)
			continue
		}
		entries := asList(group["hooks"])
		var kept []any
		for _, e := range entries {
			if entry, ok := e.(map[string]any); ok {
				if cmd, _ := entry["command"].(string); isOurs(cmd, binary) {
					continue
				}
			}
			kept = append(kept, e)
		}
		if len(kept) == len(entries) {
			out = append(out, g)
			continue
		}
		if len(kept) == 0 {
			continue
		}
		group["hooks"] = kept
		out = append(out, group)
	}
	return out
}

// onlyOurs returns the command of logbook's one hook entry in groups, or
// "" when there is none or more than one.
func onlyOurs(groups []any, binary string) string {
	found := ""
	for _, g := range groups {
		group, _ := g.(map[string]any)
		for _, e := range asList(group["hooks"]) {
			entry, _ := e.(map[string]any)
			if cmd, _ := entry["command"].(string); isOurs(cmd, binary) {
				if found != "" {
					return ""
				}
				found = cmd
			}
		}
	}
	return found
}

func asList(v any) []any {
	list, _ := v.([]any)
	return list
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
