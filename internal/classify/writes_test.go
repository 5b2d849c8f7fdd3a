package classify

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestWrites checks the files a command line writes, found in its parsed
// syntax: what the claims gate checks before a shell command runs.
func TestWrites(t *testing.T) {
	tests := []struct {
		command string
		want    []string
	}{
		{"ls -la; cat go.mod", nil},
		{"echo hi > notes.txt", []string{"notes.txt"}},
		{"echo hi >> ./logs/app.log 2>&1", []string{"logs/app.log"}},
		{"go test ./... > /dev/null", nil},
		{"rm -f a.go b.go", []string{"a.go", "b.go"}},
		{"mv old.go new.go", []string{"old.go", "new.go"}},
		{"cp -r src/ dst/", []string{"dst"}},
		{"sed -i 's/a/b/' main.go", []string{"main.go"}},
		{"sed 's/a/b/' main.go", nil},
		{"printf x | tee out1 out2", []string{"out1", "out2"}},
		{"touch -d yesterday stamp", []string{"stamp"}},
		{"truncate -s 0 big.log", []string{"big.log"}},
		{"install -m 755 tool bin/tool", []string{"bin/tool"}},
		{"ln -s target link", []string{"link"}},
		{"cd internal && echo x > a.go", []string{"internal/a.go"}},
		{"sudo bash -c 'echo x > /etc/hosts'", []string{"/etc/hosts"}},
		{"echo x > $OUT; rm *.tmp", nil},
		{"echo 'x > y'", nil},
		{"rm a.go; rm a.go", []string{"a.go"}},
		{"git rm --cached -r old/ && git mv src/a.go src/b.go", []string{"old", "src/a.go", "src/b.go"}},
		{"git status && git add .", nil},
	}
	for _, tc := range tests {
		got := Classify(tc.command, Policy{}).Writes
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: writes %q, want %q", tc.command, got, tc.want)
		}
	}
}

// TestWrittenPaths checks the files each kind of tool call writes.
func TestWrittenPaths(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: gamma.txt\n+synthetic\n*** Update File: src/a.go\n@@\n-x\n+y\n" +
		"*** Move to: src/b.go\n*** Delete File: old.txt\n*** End Patch"
	quoted, _ := json.Marshal(patch)
	// A patch a shell command pipes into apply_patch names its files too.
	heredoc, _ := json.Marshal(map[string]string{"command": "apply_patch <<'EOF'\n" + patch + "\nEOF"})
	patched := []string{"gamma.txt", "src/a.go", "src/b.go", "old.txt"}
	tests := []struct {
		tool, input string
		want        []string
	}{
		{"Edit", `{"file_path": "/repo/a.go", "old_string": "x", "new_string": "y"}`, []string{"/repo/a.go"}},
		{"Write", `{"file_path": "b.go", "content": "x"}`, []string{"b.go"}},
		{"MultiEdit", `{"file_path": "c.go", "edits": []}`, []string{"c.go"}},
		{"NotebookEdit", `{"notebook_path": "n.ipynb", "new_source": "x"}`, []string{"n.ipynb"}},
		{"Read", `{"file_path": "a.go"}`, nil},
		{"Bash", `{"command": "go build -o bin/logbook ./cmd/logbook && echo ok > done"}`, []string{"done"}},
		{"shell", `{"command": ["bash", "-lc", "echo x > out.txt"]}`, []string{"out.txt"}},
		{"apply_patch", `{"input": ` + string(quoted) + `}`, patched},
		{"apply_patch", string(quoted), patched},
		{"shell", `{"command": ["apply_patch", ` + string(quoted) + `]}`, patched},
		{"Bash", string(heredoc), patched},
	}
	for _, tc := range tests {
		got := WrittenPaths(tc.tool, json.RawMessage(tc.input))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %s: writes %q, want %q", tc.tool, tc.input, got, tc.want)
		}
	}
}
