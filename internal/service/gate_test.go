package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/testdb"
)

func TestGate(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Run("Held", func(t *testing.T) { t.Parallel(); testGateHeld(t, setup(t, e)) })
		t.Run("Tree", func(t *testing.T) { t.Parallel(); testGateTree(t, setup(t, e)) })
		t.Run("Policy", func(t *testing.T) { t.Parallel(); testGatePolicy(t, setup(t, e)) })
		t.Run("AutoClaims", func(t *testing.T) { t.Parallel(); testAutoClaims(t, setup(t, e)) })
		t.Run("AutoClaimRace", func(t *testing.T) { t.Parallel(); testAutoClaimRace(t, setup(t, e)) })
	})
}

func (b *bundle) gate(t *testing.T, c service.Caller, p ledger.GateParams) ledger.GateAnswer {
	t.Helper()
	ans, err := b.svc.Gate(b.ctx, c, p)
	must(t, err)
	return ans
}

func (b *bundle) setPolicy(t *testing.T, policy string) {
	t.Helper()
	_, err := b.svc.SetPolicy(b.ctx, service.Caller{Actor: "admin", Admin: true}, "p", json.RawMessage(policy))
	must(t, err)
}

// testGateHeld: a write to a path under another live session's claim is
// denied, naming the holder, its agent, its goal and the claim's expiry,
// however the path is spelled and whichever surface asks.
func testGateHeld(t *testing.T, b *bundle) {
	holder := b.start(t, b.bob, service.StartParams{Harness: "claude-code",
		Fields: logbook.SessionFields{Goal: str("rewrite the API handlers"), Agent: str("engineer-1")}})
	writer := b.start(t, b.alice, service.StartParams{})
	claim, _, err := b.svc.Claim(b.ctx, b.bob, service.ClaimParams{SessionID: holder.ID, Subject: "src/api/"})
	must(t, err)

	ans := b.gate(t, b.alice, ledger.GateParams{SessionID: writer.ID, Paths: []string{"./src/web/../api/handlers.go", "README.md"}})
	equal(t, "decision", ans.Decision, classify.Deny)
	if len(ans.Held) != 1 || ans.Held[0].Path != "src/api/handlers.go" || ans.Held[0].Claim.ID != claim.ID {
		t.Fatalf("held: %+v, want src/api/handlers.go under the claim on src/api/", ans.Held)
	}
	for _, want := range []string{"src/api/handlers.go", holder.ID, "actor bob", "agent engineer-1", `"rewrite the API handlers"`,
		"through its claim on src/api/", claim.ExpiresAt.UTC().Format(time.RFC3339)} {
		if !strings.Contains(ans.Reason, want) {
			t.Errorf("the reason %q does not say %q", ans.Reason, want)
		}
	}
	if strings.Join(ans.Paths, ",") != "src/api/handlers.go,README.md" {
		t.Errorf("paths checked: %q", ans.Paths)
	}

	// A tool call names its files as the hooks see them: a Bash command's
	// writes, a patch's headers.
	bash, _ := json.Marshal(map[string]string{"command": "cd src && echo x > api/routes.go"})
	if ans := b.gate(t, b.alice, ledger.GateParams{SessionID: writer.ID, Tool: "Bash", Input: bash}); ans.Decision != classify.Deny || ans.Paths[0] != "src/api/routes.go" {
		t.Errorf("a Bash write under the claim: %s %q", ans.Decision, ans.Paths)
	}
	patch, _ := json.Marshal(map[string]string{"input": "*** Begin Patch\n*** Update File: src/api/x.go\n@@\n-a\n+b\n*** End Patch"})
	if ans := b.gate(t, b.alice, ledger.GateParams{SessionID: writer.ID, Tool: "apply_patch", Input: patch}); ans.Decision != classify.Deny {
		t.Errorf("a patch under the claim: %s", ans.Decision)
	}
	read, _ := json.Marshal(map[string]string{"command": "cat src/api/x.go > /dev/null"})
	if ans := b.gate(t, b.alice, ledger.GateParams{SessionID: writer.ID, Tool: "Bash", Input: read}); ans.Decision != classify.Defer || len(ans.Paths) != 0 {
		t.Errorf("a command that writes nothing: %s %q", ans.Decision, ans.Paths)
	}
	// A write to a folder (rm -r, mv) collides with a claim under it.
	_, _, err = b.svc.Claim(b.ctx, b.bob, service.ClaimParams{SessionID: holder.ID, Subject: "lib/auth/token.go"})
	must(t, err)
	rmdir, _ := json.Marshal(map[string]string{"command": "rm -r lib/auth"})
	if ans := b.gate(t, b.alice, ledger.GateParams{SessionID: writer.ID, Tool: "Bash", Input: rmdir}); ans.Decision != classify.Deny || ans.Held[0].Claim.Subject != "lib/auth/token.go" {
		t.Errorf("rm -r of a folder holding a claimed file: %s %+v", ans.Decision, ans.Held)
	}
	if ans := b.gate(t, b.alice, ledger.GateParams{SessionID: writer.ID, Paths: []string{"lib/authz", "lib/auth/token.go.bak"}}); ans.Decision != classify.Defer {
		t.Errorf("neighbours of a claimed file: %s %q", ans.Decision, ans.Reason)
	}
	// Without a session (a person's commit) every live claim counts.
	if ans := b.gate(t, b.alice, ledger.GateParams{Paths: []string{"src/api/x.go"}}); ans.Decision != classify.Deny {
		t.Errorf("no session: %s", ans.Decision)
	}
	// The holder itself passes.
	if ans := b.gate(t, b.bob, ledger.GateParams{SessionID: holder.ID, Paths: []string{"src/api/x.go"}}); ans.Decision != classify.Defer {
		t.Errorf("the holder writing its own path: %s %s", ans.Decision, ans.Reason)
	}
	// Released, the path is free again.
	_, err = b.svc.Release(b.ctx, b.bob, claim.ID)
	must(t, err)
	if ans := b.gate(t, b.alice, ledger.GateParams{SessionID: writer.ID, Paths: []string{"src/api/x.go"}}); ans.Decision != classify.Defer {
		t.Errorf("after the release: %s %s", ans.Decision, ans.Reason)
	}

	// Bad input says what to fix.
	many := make([]string, service.MaxGatePaths+1)
	for i := range many {
		many[i] = "f" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "/" + string(rune('a'+i/26))
	}
	if _, err := b.svc.Gate(b.ctx, b.alice, ledger.GateParams{SessionID: writer.ID, Paths: many}); err == nil || !strings.Contains(err.Error(), "the limit is 200") {
		t.Errorf("too many paths: %v", err)
	}
	if _, err := b.svc.Gate(b.ctx, b.alice, ledger.GateParams{SessionID: "nope", Paths: []string{"a"}}); err == nil {
		t.Errorf("an unknown session: no error")
	}
}

// testGateTree: a session's own claims, its parent's and its subagents'
// pass; a sibling subagent's and an unrelated session's do not.
func testGateTree(t *testing.T, b *bundle) {
	parent := b.start(t, b.alice, service.StartParams{HarnessSessionID: "main"})
	child := b.start(t, b.alice, service.StartParams{HarnessSessionID: "main/agent-1", ParentID: parent.ID})
	grandchild := b.start(t, b.alice, service.StartParams{HarnessSessionID: "main/agent-1/x", ParentID: child.ID})
	sibling := b.start(t, b.alice, service.StartParams{HarnessSessionID: "main/agent-2", ParentID: parent.ID})
	other := b.start(t, b.alice, service.StartParams{HarnessSessionID: "other"})
	_, err := b.claim(parent.ID, "parent.go")
	must(t, err)
	_, err = b.claim(child.ID, "child.go")
	must(t, err)
	tests := []struct {
		writer, path string
		want         classify.Decision
	}{
		{child.ID, "parent.go", classify.Defer},      // a subagent works for its parent
		{grandchild.ID, "parent.go", classify.Defer}, // and for its parent's parent
		{parent.ID, "child.go", classify.Defer},      // a parent may write what its subagent claimed
		{grandchild.ID, "child.go", classify.Defer},
		{sibling.ID, "child.go", classify.Deny}, // a sibling is another worker
		{sibling.ID, "parent.go", classify.Defer},
		{other.ID, "parent.go", classify.Deny},
		{other.ID, "child.go", classify.Deny},
	}
	for _, tc := range tests {
		if ans := b.gate(t, b.alice, ledger.GateParams{SessionID: tc.writer, Paths: []string{tc.path}}); ans.Decision != tc.want {
			t.Errorf("session %s writing %s: %s (%s), want %s", tc.writer, tc.path, ans.Decision, ans.Reason, tc.want)
		}
	}
}

// testGatePolicy: the project's claims guard may ask instead, or be off.
func testGatePolicy(t *testing.T, b *bundle) {
	holder := b.start(t, b.alice, service.StartParams{})
	writer := b.start(t, b.alice, service.StartParams{})
	_, err := b.claim(holder.ID, "docs/")
	must(t, err)
	p := ledger.GateParams{SessionID: writer.ID, Paths: []string{"docs/guide.md"}}
	b.setPolicy(t, `{"claims": {"guard": "ask"}}`)
	if ans := b.gate(t, b.alice, p); ans.Decision != classify.Ask || !strings.Contains(ans.Reason, "approve only if") {
		t.Errorf("guard ask: %s %q", ans.Decision, ans.Reason)
	}
	b.setPolicy(t, `{"claims": {"guard": "defer"}}`)
	if ans := b.gate(t, b.alice, p); ans.Decision != classify.Defer || ans.Reason != "" {
		t.Errorf("guard off: %s %q", ans.Decision, ans.Reason)
	}
	b.setPolicy(t, `{}`)
	if ans := b.gate(t, b.alice, p); ans.Decision != classify.Deny {
		t.Errorf("the default guard: %s", ans.Decision)
	}
	// Another project's caller cannot ask about this project's session.
	if _, err := b.svc.Gate(b.ctx, service.Caller{Actor: "eve", Project: "q"}, p); err == nil {
		t.Errorf("a caller of project q asked about a session of p: no error")
	}
}

// testAutoClaims: with auto claims on, a session's first write claims the
// file; writing again renews it; another session is refused; ending the
// session, or the sweeper finding it gone, releases its claims with events.
func testAutoClaims(t *testing.T, b *bundle) {
	b.setPolicy(t, `{"claims": {"auto": true, "ttl_minutes": 10}}`)
	first := b.start(t, b.alice, service.StartParams{Fields: logbook.SessionFields{Goal: str("fix the parser")}})
	second := b.start(t, b.alice, service.StartParams{})
	write := func(sess logbook.Session, path string) ledger.GateAnswer {
		return b.gate(t, b.alice, ledger.GateParams{SessionID: sess.ID, Paths: []string{path}})
	}

	ans := write(first, "parser.go")
	if ans.Decision != classify.Defer || len(ans.Claimed) != 1 || ans.Claimed[0].Subject != "parser.go" || ans.Claimed[0].SessionID != first.ID {
		t.Fatalf("the first write: %s, claimed %+v", ans.Decision, ans.Claimed)
	}
	taken := ans.Claimed[0]
	equal(t, "the claim says it was taken by a write", taken.Auto, true)
	equal(t, "expiry", taken.ExpiresAt, b.clock.Now().Add(10*time.Minute))
	if ans := write(second, "parser.go"); ans.Decision != classify.Deny || !strings.Contains(ans.Reason, "fix the parser") || len(ans.Claimed) != 0 {
		t.Errorf("the other session's write: %s %q, claimed %+v", ans.Decision, ans.Reason, ans.Claimed)
	}
	b.clock.Add(4 * time.Minute)
	ans = write(first, "parser.go")
	if len(ans.Claimed) != 1 || ans.Claimed[0].ID != taken.ID || !ans.Claimed[0].ExpiresAt.Equal(b.clock.Now().Add(10*time.Minute)) {
		t.Errorf("writing again renews the claim: %+v", ans.Claimed)
	}
	// A write to files outside the repository claims nothing, nor does a
	// write into a folder (wget -P downloads/) claim the folder.
	for _, path := range []string{"/tmp/scratch.txt", "downloads/"} {
		if ans := write(first, path); ans.Decision != classify.Defer || len(ans.Claimed) != 0 {
			t.Errorf("a write to %s: %s, claimed %+v", path, ans.Decision, ans.Claimed)
		}
	}
	if ans := write(second, "lexer.go"); len(ans.Claimed) != 1 {
		t.Errorf("the second session's write to lexer.go claimed %+v", ans.Claimed)
	}

	// Ending the first session releases its claim; the second may take it.
	_, err := b.svc.EndSession(b.ctx, b.alice, first.ID, service.EndParams{Outcome: logbook.OutcomeSuccess})
	must(t, err)
	if ans := write(second, "parser.go"); ans.Decision != classify.Defer || len(ans.Claimed) != 1 {
		t.Errorf("after the holder ended: %s, claimed %+v", ans.Decision, ans.Claimed)
	}
	// The second session goes quiet: the sweeper ends it and releases
	// everything it held.
	b.clock.Add(4 * time.Hour)
	_, err = b.svc.Sweep(b.ctx, 0)
	must(t, err)
	left, err := b.svc.Claims(b.ctx, b.alice, service.ClaimsParams{})
	must(t, err)
	if len(left) != 0 {
		t.Errorf("claims left after the sweep: %+v", left)
	}

	events, err := b.svc.Events(b.ctx, b.alice, "p", 0, 500)
	must(t, err)
	var taken2, released int
	for _, ev := range events {
		var data map[string]any
		_ = json.Unmarshal(ev.Data, &data)
		switch ev.Type {
		case logbook.EventClaimTaken:
			if data["auto"] != true {
				t.Errorf("claim.taken by a write does not say auto: %s", ev.Data)
			}
			taken2++
		case logbook.EventClaimReleased, logbook.EventClaimExpired:
			released++
		}
	}
	if taken2 != 3 || released != 3 {
		t.Errorf("events: %d claims taken and %d released or expired, want 3 and 3", taken2, released)
	}
}

// testAutoClaimRace: many sessions write one unclaimed file at once: one
// gets it, every other is refused.
func testAutoClaimRace(t *testing.T, b *bundle) {
	b.setPolicy(t, `{"claims": {"auto": true}}`)
	const n = 12
	var sessions []string
	for range n {
		sessions = append(sessions, b.start(t, b.alice, service.StartParams{}).ID)
	}
	decisions := gateAtOnce(t, sessions, "go.mod", func(id string) (ledger.GateAnswer, error) {
		return b.svc.Gate(b.ctx, b.alice, ledger.GateParams{SessionID: id, Paths: []string{"go.mod"}})
	})
	if decisions[classify.Defer] != 1 || decisions[classify.Deny] != n-1 {
		t.Errorf("decisions of %d sessions writing go.mod at once: %v, want 1 defer and the rest deny", n, decisions)
	}
}

// gateAtOnce asks the gate for each session at once and counts the
// decisions.
func gateAtOnce(t *testing.T, sessions []string, path string, gate func(id string) (ledger.GateAnswer, error)) map[classify.Decision]int {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	decisions := map[classify.Decision]int{}
	for _, id := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ans, err := gate(id)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("gate on %s: %v", path, err)
				return
			}
			decisions[ans.Decision]++
		}()
	}
	wg.Wait()
	return decisions
}

// TestGateTwoReplicas: two services on one PostgreSQL database, as two
// logbook serve replicas, decide the writes of sessions racing for one
// unclaimed file: exactly one session gets it.
func TestGateTwoReplicas(t *testing.T) {
	url := testdb.PostgresURL(t)
	var replicas [2]*service.Service
	for i := range replicas {
		st, err := pgstore.Open(context.Background(), url)
		must(t, err)
		t.Cleanup(func() { st.Close() })
		replicas[i] = service.New(st, service.Options{})
	}
	alice := service.Caller{Actor: "alice", Project: "p"}
	_, err := replicas[0].SetPolicy(context.Background(), service.Caller{Actor: "admin", Admin: true}, "p", json.RawMessage(`{"claims": {"auto": true}}`))
	must(t, err)
	const n = 16
	var sessions []string
	replicaOf := map[string]*service.Service{}
	for i := range n {
		sess, _, err := replicas[0].StartSession(context.Background(), alice, service.StartParams{Harness: "h", HarnessSessionID: fmt.Sprint(i)})
		must(t, err)
		sessions = append(sessions, sess.ID)
		replicaOf[sess.ID] = replicas[i%2]
	}
	decisions := gateAtOnce(t, sessions, "internal/x.go", func(id string) (ledger.GateAnswer, error) {
		return replicaOf[id].Gate(context.Background(), alice, ledger.GateParams{SessionID: id, Paths: []string{"internal/x.go"}})
	})
	if decisions[classify.Defer] != 1 || decisions[classify.Deny] != n-1 {
		t.Errorf("decisions of %d sessions on two replicas writing one file at once: %v, want 1 defer and the rest deny", n, decisions)
	}
	held, err := replicas[1].Claims(context.Background(), alice, service.ClaimsParams{Subject: "internal/x.go"})
	must(t, err)
	if len(held) != 1 {
		t.Errorf("claims on the file after the race: %+v", held)
	}
}
