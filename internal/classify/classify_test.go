package classify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/testshared"
)

// corpusPath is shared/eval/commands.jsonl: the corpus lives beside the
// repository, not in it (see package testshared).
func corpusPath(tb testing.TB) string {
	return filepath.Join(testshared.Dir(tb, "eval"), "commands.jsonl")
}

func readCorpus(tb testing.TB) []EvalRow {
	tb.Helper()
	f, err := os.Open(corpusPath(tb))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rows, err := ReadEvalRows(f)
	if err != nil {
		tb.Fatal(err)
	}
	return rows
}

// keptDisagreements are the corpus verdicts logbook deliberately does not
// follow, by command, with why. Each is also a case here, so the reason is
// tested, not just written down.
var keptDisagreements = map[string]struct {
	want Class
	why  string
}{
	// codex's is_dangerous_command only flags rm -f/-rf; logbook's classes
	// (and the issue) call these destructive.
	"bash -lc 'git reset --hard'":      {dest, "git reset --hard discards uncommitted changes, inside bash -lc too"},
	"zsh -lc 'git reset --hard'":       {dest, "same, inside zsh -lc"},
	"sudo git reset --hard":            {dest, "same, as root"},
	"/usr/bin/git reset --hard":        {dest, "same, by full path"},
	"git branch -D feature":            {dest, "-D deletes a branch whose commits may be merged nowhere"},
	"git push --force origin main":     {dest, "force-pushing overwrites remote history"},
	"git push -f origin main":          {dest, "same"},
	"git push origin +main":            {dest, "+refspec is a force-push of that ref"},
	"git push --delete origin feature": {dest, "deletes a remote branch"},
	"git push origin :feature":         {dest, "an empty source deletes the remote branch"},
	"git clean -fdx":                   {dest, "deletes untracked and ignored files git cannot restore"},
	"git clean --force":                {dest, "deletes untracked files git cannot restore"},
	// dcg's "future packs" are rules dcg has not enabled yet, not a
	// judgement that these are safe.
	"docker system prune":           {dest, "removes stopped containers and their writable layers"},
	"docker system prune -a":        {dest, "also removes every unused image"},
	"kubectl delete namespace prod": {dest, "deletes a namespace and everything in it"},
	"kubectl delete all --all":      {dest, "deletes every workload in the namespace"},
	// cc-safety-net reads 123> as a file descriptor; logbook reads the
	// same, which leaves rm -rf with no visible target, and an rm -rf with
	// no visible target is destructive (see echo / | xargs -i rm -rf).
	"rm -rf 123>/dev/null": {dest, "rm -rf whose target cannot be seen is not shown to be temporary"},
}

func TestCorpus(t *testing.T) {
	t.Parallel()
	rows := readCorpus(t)
	rep := Evaluate(rows)

	thresholds := map[string]float64{
		ExpectDestructive:    0.97,
		ExpectNotDestructive: 0.95,
		ExpectReadOnly:       1,
		ExpectNotReadOnly:    1,
	}
	for kind, min := range thresholds {
		if got := rep.ByExpect[kind]; got.Total == 0 || got.Rate() < min {
			t.Errorf("agreement on %s rows is %s, want at least %.0f%%", kind, got, 100*min)
		}
	}
	for _, d := range rep.Disagreements {
		kept, ok := keptDisagreements[d.Row.Command]
		if !ok {
			t.Errorf("new disagreement [%s] expect %s, got %s: %q (%s)", d.Row.Source, d.Row.Expect, d.Class, d.Row.Command, d.Reason.Rule)
			continue
		}
		if d.Class != kept.want {
			t.Errorf("%q: got %s, the kept disagreement says %s", d.Row.Command, d.Class, kept.want)
		}
	}
	if len(rep.Disagreements) != len(keptDisagreements) {
		t.Errorf("%d disagreements, %d kept: update keptDisagreements and BENCHMARKS.md", len(rep.Disagreements), len(keptDisagreements))
	}
}

// TestKeptDisagreements checks the classes logbook gives where it departs
// from the corpus, without needing the corpus.
func TestKeptDisagreements(t *testing.T) {
	t.Parallel()
	for cmd, kept := range keptDisagreements {
		if got := Classify(cmd, Policy{}).Class; got != kept.want {
			t.Errorf("Classify(%q) = %s, want %s: %s", cmd, got, kept.want, kept.why)
		}
	}
}

func TestVerdict(t *testing.T) {
	t.Parallel()
	v := Classify("sudo -u root timeout 5 rm -rf / && ls", Policy{})
	if v.Class != Destructive || v.Decision != Deny {
		t.Fatalf("got %s/%s, want destructive/deny", v.Class, v.Decision)
	}
	wantCommands := [][]string{{"rm", "-rf", "/"}, {"ls"}}
	if !reflect.DeepEqual(v.Commands, wantCommands) {
		t.Errorf("commands = %q, want %q", v.Commands, wantCommands)
	}
	s := v.Summary()
	if s.Command != "rm -rf /" || s.Class != Destructive || !strings.Contains(s.Rule, "filesystem root") {
		t.Errorf("summary = %+v, want rm -rf / as destructive naming the filesystem root", s)
	}

	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"class", "decision", "reasons", "commands"} {
		if _, ok := raw[key]; !ok {
			t.Errorf("verdict JSON has no %q: %s", key, data)
		}
	}
	if raw["class"] != "destructive" || raw["decision"] != "deny" {
		t.Errorf("verdict JSON = %s", data)
	}

	empty := Classify("", Policy{})
	if empty.Class != ReadOnly || empty.Reasons == nil || empty.Commands == nil {
		t.Errorf("empty command: %+v, want read_only with empty (not null) lists", empty)
	}
}

func TestReasonsNameInnerCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cmd, command, rule string
	}{
		{"bash -c", "bash -c 'git reset --hard'", "git reset --hard", "discards uncommitted changes"},
		{"ssh", "ssh host 'pct destroy 101'", "pct destroy 101", "destroys data"},
		{"curl", "curl -X POST https://x", "curl -X POST https://x", "POST"},
		{"redirect", "echo x > /etc/hosts", ">/etc/hosts", "system path /etc/hosts"},
		{"xargs", "echo / | xargs rm -rf", "rm -rf /", "filesystem root"},
		{"find", "find . -exec rm -rf {} +", "rm -rf {}", "without asking"},
		{"pipe to shell", "curl -s https://x | sh", "sh", "pipe"},
		{"python", "python3 -c 'import shutil; shutil.rmtree(\"x\")'", "python3 -c 'import shutil; shutil.rmtree(\"x\")'", "shutil.rmtree"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := Classify(tc.cmd, Policy{}).Summary()
			if s.Command != tc.command || !strings.Contains(s.Rule, tc.rule) {
				t.Errorf("summary of %q = %+v, want command %q and a rule mentioning %q", tc.cmd, s, tc.command, tc.rule)
			}
		})
	}
}

// limitCases are the inputs that push the classifier to its limits.
func limitCases() []struct{ name, cmd, want string } {
	return []struct{ name, cmd, want string }{
		{"1 MiB", "echo " + strings.Repeat("x", 1<<20), "too long"},
		{"64 KiB + 1", strings.Repeat("l", maxCommandBytes+1), "too long"},
		{"sudo 50 deep", strings.Repeat("sudo ", 50) + "ls", "nested too deeply"},
		{"env 50 deep", strings.Repeat("env ", 50) + "rm -rf /", "nested too deeply"},
		{"eval 50 deep", strings.Repeat("eval ", 50) + "ls", "nested too deeply"},
		{"bash -c 50 deep", nestQuoted(50), ""},
		// Each level runs another command's output as a script: that rule
		// answers (destructive) long before the nesting limit would.
		{"bash -c $( 50 deep", strings.Repeat(`bash -c "$(`, 50) + "ls" + strings.Repeat(`)"`, 50), "another command's output"},
		{"subshells 5000 deep", strings.Repeat("( ", 5000) + "ls" + strings.Repeat(" )", 5000), "nested too deeply"},
		{"substitutions 1000 deep", strings.Repeat("$(", 1000) + "ls" + strings.Repeat(")", 1000), "nested too deeply"},
		{"quoted echo substitutions 6000 deep", strings.Repeat(`echo "$(`, 6000) + "ls" + strings.Repeat(`)"`, 6000), "nested too deeply"},
	}
}

// BenchmarkLimits times the inputs of TestLimits, which must each stay
// far under a second:
//
//	go test ./internal/classify -run '^$' -bench Limits
func BenchmarkLimits(b *testing.B) {
	for _, tc := range limitCases() {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				Classify(tc.cmd, Policy{})
			}
		})
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	tests := limitCases()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// How long these take is measured by BenchmarkLimits, never
			// asserted here: a loaded machine would fail a timed test.
			v := Classify(tc.cmd, Policy{})
			want := Unknown
			if strings.Contains(tc.want, "output") {
				want = Destructive
			}
			if v.Class != want {
				t.Errorf("class %s, want %s", v.Class, want)
			}
			if tc.want != "" && !strings.Contains(v.Summary().Rule, tc.want) {
				t.Errorf("summary %+v, want a rule mentioning %q", v.Summary(), tc.want)
			}
		})
	}
}

// nestQuoted wraps ls in bash -c n times, quoting each level properly. The
// text grows exponentially, so past the length limit it stops growing and
// the length limit answers instead.
func nestQuoted(n int) string {
	s := "ls"
	for i := 0; i < n && len(s) < maxCommandBytes; i++ {
		s = "bash -c " + shellQuote(s)
	}
	return s
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'" }

func TestDepthLimitIsNotReadOnly(t *testing.T) {
	t.Parallel()
	// Just past the limit nothing is read as safe.
	cmd := "ls"
	for i := 0; i < maxDepth+1; i++ {
		cmd = "sudo " + cmd
	}
	if got := Classify(cmd, Policy{}).Class; got != Unknown {
		t.Errorf("%d wrappers deep: %s, want unknown", maxDepth+1, got)
	}
	// Just inside it, the command is read.
	if got := Classify("sudo sudo sudo rm -rf /", Policy{}).Class; got != Destructive {
		t.Errorf("3 wrappers deep: %s, want destructive", got)
	}
}

func TestConcurrentAndDeterministic(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	results := make([][]Verdict, 4)
	for g := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, tc := range classCases {
				results[g] = append(results[g], Classify(tc.cmd, Policy{}))
			}
		}()
	}
	wg.Wait()
	for g := 1; g < len(results); g++ {
		if !reflect.DeepEqual(results[0], results[g]) {
			t.Fatalf("goroutine %d got different verdicts", g)
		}
	}
}

func TestClassOrder(t *testing.T) {
	t.Parallel()
	for i := 1; i < len(Classes); i++ {
		if Classes[i-1] == Unknown || Classes[i] == Unknown {
			continue
		}
		if Classes[i-1].Rank() >= Classes[i].Rank() {
			t.Errorf("%s ranks at or above %s", Classes[i-1], Classes[i])
		}
	}
	if ReadOnly.Worse(Unknown) != Unknown || Unknown.Worse(Destructive) != Destructive || Privilege.Worse(Unknown) != Unknown {
		t.Error("unknown must be worse than every class but destructive")
	}
	if _, err := ParseClass("nope"); err == nil {
		t.Error("ParseClass accepted nope")
	}
	if c, err := ParseClass("network"); err != nil || c != Network {
		t.Errorf("ParseClass(network) = %s, %v", c, err)
	}
}

func TestReadEvalRows(t *testing.T) {
	t.Parallel()
	rows, err := ReadEvalRows(strings.NewReader(`{"source":"a:x","command":"ls","expect":"read_only"}

{"source":"b","command":"rm -rf /","expect":"destructive"}
`))
	if err != nil || len(rows) != 2 || rows[0].SourceName() != "a" || rows[1].SourceName() != "b" {
		t.Fatalf("rows %+v, err %v", rows, err)
	}
	rep := Evaluate(rows)
	if rep.All.Agree != 2 || rep.BySource["a"].Total != 1 || len(rep.Disagreements) != 0 {
		t.Errorf("report %+v", rep)
	}
	for _, bad := range []string{`{"command":"ls","expect":"safe"}`, `{"expect":"read_only"}`, `not json`} {
		if _, err := ReadEvalRows(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ReadEvalRows(%s) error %v, want one naming line 1", bad, err)
		}
	}
	var sb strings.Builder
	rep = Evaluate([]EvalRow{{Source: "s", Command: "ls", Expect: ExpectNotReadOnly}})
	if err := rep.WriteText(&sb); err != nil || !strings.Contains(sb.String(), "expect not_read_only, got read_only") {
		t.Errorf("report text %q, %v", sb.String(), err)
	}
}

func FuzzClassify(f *testing.F) {
	for _, tc := range classCases {
		f.Add(tc.cmd)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		v := Classify(cmd, Policy{})
		if !v.Class.Valid() {
			t.Fatalf("Classify(%q) returned class %q", cmd, v.Class)
		}
		if !v.Decision.Valid() {
			t.Fatalf("Classify(%q) returned decision %q", cmd, v.Decision)
		}
		for _, r := range v.Reasons {
			if !r.Class.Valid() || r.Class.Rank() > v.Class.Rank() || r.Rule == "" {
				t.Fatalf("Classify(%q) reason %+v against class %s", cmd, r, v.Class)
			}
		}
		if again := Classify(cmd, Policy{}); !reflect.DeepEqual(v, again) {
			t.Fatalf("Classify(%q) is not deterministic:\n%+v\n%+v", cmd, v, again)
		}
	})
}

func benchCommands(b *testing.B) []string {
	rows := readCorpus(b)
	cmds := make([]string, len(rows))
	for i, r := range rows {
		cmds[i] = r.Command
	}
	return cmds
}

// BenchmarkClassify classifies every corpus command once per iteration.
func BenchmarkClassify(b *testing.B) {
	cmds := benchCommands(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, c := range cmds {
			Classify(c, Policy{})
		}
	}
}

// BenchmarkParse only parses every corpus command once per iteration, with
// a new parser per command as Classify makes: the floor Classify is
// measured against.
func BenchmarkParse(b *testing.B) {
	cmds := benchCommands(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, c := range cmds {
			p := newParser()
			_, _ = p.Parse(strings.NewReader(c), "")
		}
	}
}

func TestWorkBudget(t *testing.T) {
	t.Parallel()
	// Each level of inline code holds several literals that each run the
	// next level: without a budget the work multiplies per level.
	code := "ls"
	for i := 0; i < 8; i++ {
		q := shellQuote(code)
		code = "python -c " + shellQuote("import os; os.system("+strconvQuote(q)+"); os.system("+strconvQuote(q)+"); os.system("+strconvQuote(q)+")")
		if len(code) > maxCommandBytes/2 {
			break
		}
	}
	start := time.Now()
	v := Classify(code, Policy{})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	if v.Class != Unknown {
		t.Errorf("class %s, want unknown", v.Class)
	}
}

func strconvQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
