package transcript

import (
	"bytes"
	"fmt"
	"testing"
)

// FuzzParseClaude checks that no input makes ParseClaude panic or fail, and
// that every output keeps the invariants collect checks (sessions before
// their entries, unique keys, valid payloads, consistent stats). Seeds are
// in testdata/fuzz/FuzzParseClaude.
func FuzzParseClaude(f *testing.F) {
	fuzzParse(f, ParseClaude, "s.jsonl", "agent-a.jsonl")
}

// FuzzParseCodex is FuzzParseClaude for ParseCodex. Seeds are in
// testdata/fuzz/FuzzParseCodex.
func FuzzParseCodex(f *testing.F) {
	fuzzParse(f, ParseCodex, "rollout-2025-01-01T00-00-00-44444444-4444-4444-8444-444444444444.jsonl", "x.jsonl")
}

func fuzzParse(f *testing.F, parse parseFunc, names ...string) {
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range names {
			res := collect(t, parse, name, data)
			// Determinism: a second parse gives the same keys.
			if again := collect(t, parse, name, data); fmt.Sprint(again.keys()) != fmt.Sprint(res.keys()) {
				t.Errorf("%s: keys differ between two parses", name)
			}
			if want := bytes.Count(data, []byte("\n")) + 1; res.stats.Lines > want {
				t.Errorf("%s: Lines = %d, more than the %d lines of input", name, res.stats.Lines, want)
			}
		}
	})
}
