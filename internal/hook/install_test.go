package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// foreignSettings is a settings file with someone else's hooks and other
// settings, which install and uninstall must keep.
const foreignSettings = `{
  "model": "opus",
  "permissions": {"allow": ["Bash(go test:*)"], "deny": []},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/my-linter --strict", "timeout": 5}]}
    ],
    "Stop": [
      {"hooks": [{"type": "command", "command": "say done"}]}
    ],
    "PostToolUse": [
      {"matcher": "*", "hooks": [
        {"type": "command", "command": "/old/place/logbook hook claude"},
        {"type": "command", "command": "notify-send edited"}
      ]}
    ]
  }
}
`

func readSettings(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s is not JSON after the edit: %v", path, err)
	}
	return m
}

// commands lists the hook commands of an event.
func commands(settings map[string]any, event string) []string {
	var out []string
	hooks, _ := settings["hooks"].(map[string]any)
	for _, g := range asList(hooks[event]) {
		group, _ := g.(map[string]any)
		for _, e := range asList(group["hooks"]) {
			entry, _ := e.(map[string]any)
			cmd, _ := entry["command"].(string)
			out = append(out, cmd)
		}
	}
	return out
}

func TestInstallUninstall(t *testing.T) {
	dir := t.TempDir()
	path := SettingsPath(dir, false, "/nonexistent-home")
	if want := filepath.Join(dir, ".claude", "settings.json"); path != want {
		t.Fatalf("settings path %q, want %q", path, want)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(foreignSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	binary := "/opt/logbook dir/logbook" // a space, to check the quoting
	command := ClaudeCommand(binary, false)
	if command != "'/opt/logbook dir/logbook' hook claude" {
		t.Fatalf("command %q", command)
	}

	changed, err := Install(path, command, binary)
	if err != nil || !changed {
		t.Fatalf("install: changed %v, %v", changed, err)
	}
	if bak, _ := os.ReadFile(path + ".bak"); string(bak) != foreignSettings {
		t.Errorf("the backup holds %q, want the file as it was", bak)
	}
	s := readSettings(t, path)
	if s["model"] != "opus" || s["permissions"] == nil {
		t.Errorf("other settings lost: %v", s)
	}
	for _, event := range ClaudeEvents {
		n := 0
		for _, c := range commands(s, event) {
			if strings.Contains(c, "hook claude") {
				n++
				if c != command {
					t.Errorf("%s has %q, want %q", event, c, command)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s has %d logbook hooks, want 1", event, n)
		}
	}
	if got := commands(s, "PreToolUse"); got[0] != "/usr/local/bin/my-linter --strict" {
		t.Errorf("PreToolUse hooks %v: the linter must stay first", got)
	}
	if got := commands(s, "PostToolUse"); !contains(got, "notify-send edited") || contains(got, "/old/place/logbook hook claude") {
		t.Errorf("PostToolUse hooks %v: the old logbook entry goes, its neighbour stays", got)
	}
	if got := commands(s, "Stop"); !contains(got, "say done") {
		t.Errorf("Stop hooks %v lost say done", got)
	}

	// Installing again changes nothing and writes nothing.
	before, _ := os.ReadFile(path)
	if changed, err := Install(path, command, binary); err != nil || changed {
		t.Errorf("second install: changed %v, %v", changed, err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("a second install rewrote the file")
	}
	// Installing with --guard-claims replaces the entries.
	guarded := ClaudeCommand(binary, true)
	if changed, err := Install(path, guarded, binary); err != nil || !changed {
		t.Errorf("install with --guard-claims: changed %v, %v", changed, err)
	}
	if got := commands(readSettings(t, path), "PreToolUse"); len(got) != 2 || got[1] != guarded {
		t.Errorf("PreToolUse hooks %v, want the linter and %q", got, guarded)
	}

	// Uninstall removes logbook's entries, and only them.
	if changed, err := Uninstall(path, binary); err != nil || !changed {
		t.Fatalf("uninstall: changed %v, %v", changed, err)
	}
	s = readSettings(t, path)
	hooks := s["hooks"].(map[string]any)
	if len(hooks) != 3 {
		t.Errorf("events left %v, want PreToolUse, PostToolUse and Stop", hooks)
	}
	if got := commands(s, "PreToolUse"); len(got) != 1 || got[0] != "/usr/local/bin/my-linter --strict" {
		t.Errorf("PreToolUse after uninstall %v", got)
	}
	if got := commands(s, "PostToolUse"); len(got) != 1 || got[0] != "notify-send edited" {
		t.Errorf("PostToolUse after uninstall %v", got)
	}
	if s["model"] != "opus" {
		t.Error("uninstall lost other settings")
	}
	if changed, err := Uninstall(path, binary); err != nil || changed {
		t.Errorf("second uninstall: changed %v, %v", changed, err)
	}
}

func TestInstallFreshAndBroken(t *testing.T) {
	home := t.TempDir()
	path := SettingsPath("/unused", true, home)
	if want := filepath.Join(home, ".claude", "settings.json"); path != want {
		t.Fatalf("user settings path %q, want %q", path, want)
	}
	if changed, err := Uninstall(path, "/bin/logbook"); err != nil || changed {
		t.Errorf("uninstall without a file: changed %v, %v", changed, err)
	}
	if changed, err := Install(path, ClaudeCommand("/bin/logbook", false), "/bin/logbook"); err != nil || !changed {
		t.Fatalf("install into no file: changed %v, %v", changed, err)
	}
	if _, err := os.Stat(path + ".bak"); !os.IsNotExist(err) {
		t.Error("a backup of a file that did not exist")
	}
	if len(commands(readSettings(t, path), EventSessionEnd)) != 1 {
		t.Error("no SessionEnd hook")
	}
	if changed, _ := Uninstall(path, "/bin/logbook"); !changed {
		t.Error("uninstall found nothing")
	}
	if s := readSettings(t, path); len(s) != 0 {
		t.Errorf("after uninstall the fresh file holds %v, want {}", s)
	}

	broken := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(broken, []byte(`{"hooks": [`), 0o644)
	if _, err := Install(broken, "x hook claude", "x"); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("install into broken JSON: %v", err)
	}
	if raw, _ := os.ReadFile(broken); string(raw) != `{"hooks": [` {
		t.Error("a broken settings file was changed")
	}
}

func TestIsOurs(t *testing.T) {
	for cmd, want := range map[string]bool{
		"/bin/logbook hook claude":                true,
		"/bin/logbook hook claude --guard-claims": true,
		"/elsewhere/logbook hook claude":          true,
		"'/a b/logbook' hook claude":              true,
		"/bin/logbook hook codex":                 false,
		"/bin/logbook hook claudette":             false,
		"my-logbook hook claude":                  false,
		"echo /bin/logbook hook claude":           false,
	} {
		if got := isOurs(cmd, "/bin/logbook"); got != want {
			t.Errorf("isOurs(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestInstallPrefersTheLeanHook: with logbook-hook beside the logbook
// binary, the hooks run it (it starts faster); uninstall removes them
// either way, and other hooks stay.
func TestInstallPrefersTheLeanHook(t *testing.T) {
	dir := t.TempDir()
	binary := filepath.Join(dir, "logbook")
	for _, name := range []string{"logbook"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got := ClaudeCommand(binary, false); got != binary+" hook claude" {
		t.Errorf("without the lean hook: %q", got)
	}
	lean := filepath.Join(dir, LeanBinary)
	if err := os.WriteFile(lean, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := ClaudeCommand(binary, true); got != lean+" claude --guard-claims" {
		t.Errorf("with the lean hook: %q, want %q", got, lean+" claude --guard-claims")
	}
	settings := filepath.Join(t.TempDir(), "settings.json")
	other := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]}}`
	if err := os.WriteFile(settings, []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(settings, ClaudeCommand(binary, false), binary); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(settings)
	if !strings.Contains(string(raw), lean+" claude") || !strings.Contains(string(raw), "notify-send done") {
		t.Errorf("installed settings: %s", raw)
	}
	if changed, err := Uninstall(settings, binary); err != nil || !changed {
		t.Fatalf("uninstall: %v %v", changed, err)
	}
	raw, _ = os.ReadFile(settings)
	if strings.Contains(string(raw), LeanBinary) || !strings.Contains(string(raw), "notify-send done") {
		t.Errorf("after uninstall: %s", raw)
	}
}
