package classify

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDefaultPolicyNeverAllows(t *testing.T) {
	t.Parallel()
	want := map[Class]Decision{
		ReadOnly: Defer, WorkspaceWrite: Defer, Network: Defer, ConfigMutation: Defer,
		ServiceControl: Defer, PackageInstall: Defer, SecretRead: Ask, Privilege: Ask,
		Destructive: Deny, Unknown: Ask,
	}
	if len(want) != len(Classes) {
		t.Fatalf("the test names %d classes, the package has %d", len(want), len(Classes))
	}
	for c, d := range want {
		if got := DefaultPolicy().Decide(c); got != d {
			t.Errorf("default Decide(%s) = %s, want %s", c, got, d)
		}
		if got := (Policy{}).Decide(c); got != d {
			t.Errorf("zero policy Decide(%s) = %s, want %s", c, got, d)
		}
	}
	// What users tried and saw approved without being asked.
	for _, cmd := range []string{"make deploy", "npm run deploy", "go run ./cmd/migrate", "ls", "git status"} {
		if v := Classify(cmd, Policy{}); v.Decision == Allow {
			t.Errorf("Classify(%q) under the default policy = allow; only a project's explicit choice may allow", cmd)
		}
	}
}

func TestPolicyDecide(t *testing.T) {
	t.Parallel()
	// Unknown is never more lenient than config_mutation.
	p := Policy{Decisions: map[Class]Decision{Unknown: Allow, ConfigMutation: Deny}}
	if got := p.Decide(Unknown); got != Deny {
		t.Errorf("unknown with config_mutation deny: %s, want deny", got)
	}
	p = Policy{Decisions: map[Class]Decision{Unknown: Allow, ConfigMutation: Allow}}
	if got := p.Decide(Unknown); got != Allow {
		t.Errorf("unknown allowed with config_mutation allowed: %s, want allow", got)
	}
	p = Policy{Decisions: map[Class]Decision{ConfigMutation: Ask, Unknown: Defer}}
	if got := p.Decide(Unknown); got != Ask {
		t.Errorf("unknown defer, config_mutation ask: %s, want ask", got)
	}
	if v := Classify("curl -d x https://example.com", Policy{Decisions: map[Class]Decision{Network: Allow}}); v.Decision != Allow {
		t.Errorf("network allowed by policy: %s", v.Decision)
	}
	if v := Classify("ls", Policy{Decisions: map[Class]Decision{ReadOnly: Allow}}); v.Decision != Allow {
		t.Errorf("read_only allowed by policy: %s", v.Decision)
	}
}

// The verdict's decision is the strictest any command of the line gets, not
// only the decision of the riskiest class.
func TestDecisionIsStrictestOfAllCommands(t *testing.T) {
	t.Parallel()
	p := Policy{Decisions: map[Class]Decision{Network: Deny, Destructive: Ask}}
	v := Classify("curl -d @notes.txt https://example.com; rm -rf /", p)
	if v.Class != Destructive {
		t.Fatalf("class %s, want destructive", v.Class)
	}
	if v.Decision != Deny {
		t.Errorf("decision %s, want deny (the network part is denied)", v.Decision)
	}
	if s := v.Summary(); s.Class != Network || s.Decision != Deny {
		t.Errorf("summary %+v, want the denied network command", s)
	}
	for _, r := range v.Reasons {
		if r.Decision != p.Decide(r.Class) {
			t.Errorf("reason %+v carries decision %s, want %s", r, r.Decision, p.Decide(r.Class))
		}
	}
}

func TestDecisionStricter(t *testing.T) {
	t.Parallel()
	order := []Decision{Allow, Defer, Ask, Deny}
	for i, d := range order {
		for j, e := range order {
			want := d
			if j > i {
				want = e
			}
			if got := d.Stricter(e); got != want {
				t.Errorf("%s.Stricter(%s) = %s, want %s", d, e, got, want)
			}
		}
	}
	if got := Allow.Stricter("maybe"); got != Ask {
		t.Errorf("a value that is not a decision counts as ask, got %s", got)
	}
}

func TestParsePolicy(t *testing.T) {
	t.Parallel()
	p, err := ParsePolicy([]byte(`{"network": "ask", "destructive": "ask", "read_only": "allow"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[Class]Decision{Network: Ask, Destructive: Ask, ReadOnly: Allow}
	if !reflect.DeepEqual(p.Decisions, want) {
		t.Errorf("parsed decisions %v, want only what was given: %v", p.Decisions, want)
	}
	if p.Decide(WorkspaceWrite) != Defer {
		t.Errorf("a class left out takes the default")
	}
	bad := []struct{ in, want string }{
		{`{"networking": "allow"}`, `unknown class "networking"`},
		{`{"network": "maybe"}`, `class "network" the decision "maybe" (decisions are allow, defer, ask, deny)`},
		{`{"network": 3}`, `must be a decision`},
		{`[1]`, "a policy is a JSON object"},
		{`{"rules": {}}`, `"rules" must be an array`},
		{`{"rules": [{"class": "destructive", "reason": "x"}]}`, `rules[0]: name the program`},
		{`{"rules": [{"program": "/usr/bin/x", "class": "destructive", "reason": "x"}]}`, `bare program name`},
		{`{"rules": [{"program": "x", "class": "risky", "reason": "x"}]}`, `rules[0]: class "risky" is not a class`},
		{`{"rules": [{"program": "x", "class": "destructive"}]}`, `say why in "reason"`},
		{`{"rules": [{"program": "x", "pattern": "(", "class": "destructive", "reason": "r"}]}`, `pattern "(" is not a regular expression`},
		{`{"rules": [{"program": "x", "words": ["a b"], "class": "destructive", "reason": "r"}]}`, `words[0]`},
		{`{"claims": {"guard": "allow"}}`, `claims.guard is "allow"; it is deny, ask or defer`},
		{`{"claims": {"ttl_minutes": 2000}}`, `claims.ttl_minutes is 2000; give 1 to 1440 minutes`},
		{`{"claims": true}`, `"claims" must be an object`},
	}
	for _, tc := range bad {
		if _, err := ParsePolicy([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePolicy(%s) error %v, want one mentioning %q", tc.in, err, tc.want)
		}
	}
}

func TestPolicyJSONRoundTrip(t *testing.T) {
	t.Parallel()
	in := `{"read_only":"allow","destructive":"ask","rules":[{"program":"deployctl","words":["push"],"pattern":"--env[= ]prod","class":"destructive","reason":"pushes to production"}],"claims":{"guard":"ask","auto":true,"ttl_minutes":15}}`
	p, err := ParsePolicy([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip:\n got %s\nwant %s", out, in)
	}
	var again Policy
	if err := json.Unmarshal(out, &again); err != nil {
		t.Fatal(err)
	}
	if err := again.Validate(); err != nil {
		t.Fatal(err)
	}
	if v := Classify("deployctl push --env prod", again); v.Class != Destructive || v.Decision != Ask {
		t.Errorf("the round-tripped rule: %s/%s, want destructive/ask", v.Class, v.Decision)
	}
	if again.Claims.GuardDecision() != Ask || !again.Claims.Auto || again.Claims.AutoClaimTTL() != 15 {
		t.Errorf("the round-tripped claims policy: %+v", again.Claims)
	}
	// A policy that says nothing of claims guards them with deny, and
	// claims nothing by itself.
	if e := (Policy{}).Effective().Claims; e.Guard != Deny || e.Auto || e.TTLMinutes != DefaultAutoClaimTTL {
		t.Errorf("the default claims policy in effect: %+v", e)
	}
}

func TestProjectRules(t *testing.T) {
	t.Parallel()
	p, err := ParsePolicy([]byte(`{"rules": [
		{"program": "deployctl", "words": ["push"], "class": "destructive", "reason": "pushes a release to production"},
		{"program": "deployctl", "words": ["status"], "class": "read_only", "reason": "prints the release status"},
		{"program": "make", "words": ["deploy"], "class": "service_control", "reason": "make deploy restarts production"},
		{"program": "npm", "words": ["run", "deploy"], "class": "destructive", "reason": "npm run deploy replaces the live site"},
		{"program": "rm", "class": "read_only", "reason": "a rule that tries to lower a known class"},
		{"program": "psql", "pattern": "(^| )-h +prod", "class": "destructive", "reason": "the production database"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		cmd  string
		want Class
		rule string
	}{
		{"deployctl push --tag v2", Destructive, "project rule: pushes a release"},
		{"sudo env X=1 deployctl --verbose push", Destructive, "project rule"},
		{"bash -c 'deployctl push'", Destructive, "project rule"},
		{"deployctl status", ReadOnly, "prints the release status"},
		{"deployctl frobnicate", Unknown, "does not know"},
		{"make deploy", ServiceControl, "make deploy restarts production"},
		{"make -j4 deploy", ServiceControl, "make deploy restarts production"},
		{"make test", WorkspaceWrite, "Makefile"},
		{"npm run deploy", Destructive, "replaces the live site"},
		{"npm --silent run deploy", Destructive, "replaces the live site"},
		{"npm run build", WorkspaceWrite, ""},
		{"rm -rf /", Destructive, "does not lower"},
		{"psql -h prod-db -c 'select 1'", Destructive, "the production database"},
		{"psql -h localhost -c 'select 1'", ReadOnly, ""},
	}
	for _, tc := range cases {
		v := Classify(tc.cmd, p)
		if v.Class != tc.want {
			t.Errorf("Classify(%q) = %s (%+v), want %s", tc.cmd, v.Class, v.Reasons, tc.want)
			continue
		}
		if tc.rule != "" && !strings.Contains(v.Summary().Rule, tc.rule) {
			t.Errorf("Classify(%q) rule %q, want one mentioning %q", tc.cmd, v.Summary().Rule, tc.rule)
		}
	}
}
