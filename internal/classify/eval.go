package classify

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Evaluation against an external corpus of commands whose verdicts other
// projects' test suites set (../shared/eval/commands.jsonl). Each row says
// what the classifier must or must not answer; Evaluate counts agreement
// per source and per kind of expectation and lists every disagreement.

// The expectations a corpus row can carry.
const (
	ExpectDestructive    = "destructive"     // the class must be destructive
	ExpectNotDestructive = "not_destructive" // the class must not be destructive
	ExpectReadOnly       = "read_only"       // the class must be read_only
	ExpectNotReadOnly    = "not_read_only"   // the class must not be read_only
)

// EvalRow is one corpus row.
type EvalRow struct {
	Source  string `json:"source"`
	Command string `json:"command"`
	Expect  string `json:"expect"`
}

// SourceName returns the project a row comes from: its source up to the
// first colon ("dcg" of "dcg:tests/corpus/...").
func (r EvalRow) SourceName() string {
	name, _, _ := strings.Cut(r.Source, ":")
	return name
}

// Agrees reports whether class c meets the row's expectation.
func (r EvalRow) Agrees(c Class) bool {
	switch r.Expect {
	case ExpectDestructive:
		return c == Destructive
	case ExpectNotDestructive:
		return c != Destructive
	case ExpectReadOnly:
		return c == ReadOnly
	case ExpectNotReadOnly:
		return c != ReadOnly
	}
	return false
}

// ReadEvalRows reads JSON lines of rows. Blank lines are skipped; a row
// that is not JSON, has no command field or an unknown expect is an error
// naming its line.
func ReadEvalRows(r io.Reader) ([]EvalRow, error) {
	var rows []EvalRow
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var raw map[string]json.RawMessage
		var row EvalRow
		if err := json.Unmarshal([]byte(text), &raw); err != nil {
			return nil, fmt.Errorf("classify: eval line %d: %w", line, err)
		}
		if err := json.Unmarshal([]byte(text), &row); err != nil {
			return nil, fmt.Errorf("classify: eval line %d: %w", line, err)
		}
		if _, ok := raw["command"]; !ok {
			return nil, fmt.Errorf("classify: eval line %d: no \"command\" field", line)
		}
		switch row.Expect {
		case ExpectDestructive, ExpectNotDestructive, ExpectReadOnly, ExpectNotReadOnly:
		default:
			return nil, fmt.Errorf("classify: eval line %d: expect %q is not one of destructive, not_destructive, read_only, not_read_only", line, row.Expect)
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("classify: reading eval rows: %w", err)
	}
	return rows, nil
}

// Tally counts rows and agreements.
type Tally struct {
	Agree int `json:"agree"`
	Total int `json:"total"`
}

// Rate returns the share of rows that agree, 1 for no rows.
func (t Tally) Rate() float64 {
	if t.Total == 0 {
		return 1
	}
	return float64(t.Agree) / float64(t.Total)
}

func (t Tally) String() string {
	return fmt.Sprintf("%d/%d (%.1f%%)", t.Agree, t.Total, 100*t.Rate())
}

// Disagreement is a row the classifier does not agree with.
type Disagreement struct {
	Row    EvalRow `json:"row"`
	Class  Class   `json:"class"`
	Reason Reason  `json:"reason"`
}

// EvalReport is the result of Evaluate.
type EvalReport struct {
	All           Tally            `json:"all"`
	BySource      map[string]Tally `json:"by_source"`
	ByExpect      map[string]Tally `json:"by_expect"`
	Disagreements []Disagreement   `json:"disagreements"`
}

// Evaluate classifies every row under the default policy and tallies
// agreement.
func Evaluate(rows []EvalRow) EvalReport {
	rep := EvalReport{BySource: map[string]Tally{}, ByExpect: map[string]Tally{}}
	for _, row := range rows {
		v := Classify(row.Command, Policy{})
		ok := row.Agrees(v.Class)
		count := func(t Tally) Tally {
			t.Total++
			if ok {
				t.Agree++
			}
			return t
		}
		rep.All = count(rep.All)
		rep.BySource[row.SourceName()] = count(rep.BySource[row.SourceName()])
		rep.ByExpect[row.Expect] = count(rep.ByExpect[row.Expect])
		if !ok {
			rep.Disagreements = append(rep.Disagreements, Disagreement{Row: row, Class: v.Class, Reason: v.Summary()})
		}
	}
	return rep
}

// WriteText prints the report for people: agreement per source and per
// expectation, then every disagreement with the rule that decided it.
func (rep EvalReport) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "all rows: %s\n\nby source:\n", rep.All)
	for _, k := range sortedKeys(rep.BySource) {
		fmt.Fprintf(&b, "  %-16s %s\n", k, rep.BySource[k])
	}
	b.WriteString("\nby expectation:\n")
	for _, k := range sortedKeys(rep.ByExpect) {
		fmt.Fprintf(&b, "  %-16s %s\n", k, rep.ByExpect[k])
	}
	fmt.Fprintf(&b, "\ndisagreements: %d\n", len(rep.Disagreements))
	for _, d := range rep.Disagreements {
		fmt.Fprintf(&b, "  [%s] expect %s, got %s: %q\n      %s\n", d.Row.Source, d.Row.Expect, d.Class, d.Row.Command, d.Reason.Rule)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func sortedKeys(m map[string]Tally) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
