package service_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/testdb"
)

// clock is a settable time for the service under test.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type bundle struct {
	svc   *service.Service
	st    store.Store
	clock *clock
	alice service.Caller
	bob   service.Caller
	ctx   context.Context
}

func setup(t *testing.T, e testdb.Engine) *bundle {
	t.Helper()
	st := e.Open(t)
	clk := &clock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	svc := service.New(st, service.Options{NowFunc: clk.Now})
	// As logbook serve runs it: on SQLite, concurrent writes share
	// transactions (group commit).
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { svc.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return &bundle{
		svc:   svc,
		st:    st,
		clock: clk,
		alice: service.Caller{Actor: "alice", Project: "p"},
		bob:   service.Caller{Actor: "bob", Project: "p"},
		ctx:   context.Background(),
	}
}

func str(s string) *string { return &s }

func (b *bundle) start(t *testing.T, c service.Caller, p service.StartParams) logbook.Session {
	t.Helper()
	sess, _, err := b.svc.StartSession(b.ctx, c, p)
	if err != nil {
		t.Fatalf("StartSession: %v", err)
	}
	return sess
}

func (b *bundle) get(t *testing.T, id string) service.SessionView {
	t.Helper()
	v, err := b.svc.GetSession(b.ctx, b.alice, id, service.GetParams{All: true})
	if err != nil {
		t.Fatalf("GetSession: %v", err)
	}
	return v
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestService(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Run("StartIsIdempotent", func(t *testing.T) { t.Parallel(); testStartIdempotent(t, setup(t, e)) })
		t.Run("ConcurrentStartsMakeOneSession", func(t *testing.T) { t.Parallel(); testConcurrentStart(t, setup(t, e)) })
		t.Run("ConcurrentBatchesNumberWithoutGaps", func(t *testing.T) { t.Parallel(); testConcurrentBatches(t, setup(t, e)) })
		t.Run("KeysMakeRepeatsNoOps", func(t *testing.T) { t.Parallel(); testKeys(t, setup(t, e)) })
		t.Run("ConcurrentRetriesStoreEachKeyOnce", func(t *testing.T) { t.Parallel(); testConcurrentRetries(t, setup(t, e)) })
		t.Run("FailedBatchWritesNothing", func(t *testing.T) { t.Parallel(); testFailedBatch(t, setup(t, e)) })
		t.Run("CountersAndTitle", func(t *testing.T) { t.Parallel(); testCounters(t, setup(t, e)) })
		t.Run("End", func(t *testing.T) { t.Parallel(); testEnd(t, setup(t, e)) })
		t.Run("EndedAndTimedOut", func(t *testing.T) { t.Parallel(); testEndedAndTimedOut(t, setup(t, e)) })
		t.Run("Subagents", func(t *testing.T) { t.Parallel(); testSubagents(t, setup(t, e)) })
		t.Run("Ownership", func(t *testing.T) { t.Parallel(); testOwnership(t, setup(t, e)) })
		t.Run("Plan", func(t *testing.T) { t.Parallel(); testPlan(t, setup(t, e)) })
		t.Run("AgentSessions", func(t *testing.T) { t.Parallel(); testAgents(t, setup(t, e)) })
		t.Run("ConcurrentEnsureMakesOneAgentSession", func(t *testing.T) { t.Parallel(); testConcurrentEnsure(t, setup(t, e)) })
		t.Run("Compact", func(t *testing.T) { t.Parallel(); testCompact(t, setup(t, e)) })
		t.Run("ListPagesWithStableCursor", func(t *testing.T) { t.Parallel(); testList(t, setup(t, e)) })
		t.Run("Tokens", func(t *testing.T) { t.Parallel(); testTokens(t, setup(t, e)) })
		t.Run("ClipsLongText", func(t *testing.T) { t.Parallel(); testClip(t, setup(t, e)) })
	})
}

func testStartIdempotent(t *testing.T, b *bundle) {
	p := service.StartParams{Harness: "claude-code", HarnessSessionID: "h1", Fields: logbook.SessionFields{Model: str("opus"), Issue: str("12")}}
	first, created, err := b.svc.StartSession(b.ctx, b.alice, p)
	must(t, err)
	if !created {
		t.Fatal("first start: created = false")
	}
	b.clock.Add(time.Minute)
	p.Fields = logbook.SessionFields{Branch: str("main"), Model: str("")} // a blank field does not erase
	again, created, err := b.svc.StartSession(b.ctx, b.alice, p)
	must(t, err)
	if created || again.ID != first.ID {
		t.Fatalf("second start: created=%v id=%s, want the same session %s", created, again.ID, first.ID)
	}
	if again.Branch != "main" || again.Model != "opus" || again.Issue != "12" {
		t.Errorf("second start fields: branch=%q model=%q issue=%q", again.Branch, again.Model, again.Issue)
	}
	if !again.LastSeenAt.After(first.LastSeenAt) {
		t.Errorf("a repeated start is not a heartbeat: last_seen_at %v", again.LastSeenAt)
	}
	other := b.start(t, b.alice, service.StartParams{Harness: "codex", HarnessSessionID: "h1"})
	if other.ID == first.ID {
		t.Error("another harness with the same id got the same session")
	}
}

// concurrently runs fn n times at once and returns the distinct session
// ids it answered.
func concurrently(t *testing.T, n int, fn func() (logbook.Session, error)) map[string]bool {
	t.Helper()
	ids := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := fn()
			if err != nil {
				t.Errorf("concurrent call: %v", err)
				return
			}
			ids <- s.ID
		}()
	}
	wg.Wait()
	close(ids)
	distinct := map[string]bool{}
	for id := range ids {
		distinct[id] = true
	}
	return distinct
}

func testConcurrentStart(t *testing.T, b *bundle) {
	const n = 20
	distinct := concurrently(t, n, func() (logbook.Session, error) {
		s, _, err := b.svc.StartSession(b.ctx, b.alice, service.StartParams{Harness: "claude-code", HarnessSessionID: "same"})
		return s, err
	})
	page, err := b.svc.ListSessions(b.ctx, b.alice, service.ListParams{Limit: 200})
	must(t, err)
	if len(distinct) != 1 || len(page.Sessions) != 1 {
		t.Fatalf("%d concurrent starts made %d ids and %d stored sessions, want 1", n, len(distinct), len(page.Sessions))
	}
}

func testConcurrentBatches(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{Harness: "h", HarnessSessionID: "x"})
	const batches, per = 50, 4
	var wg sync.WaitGroup
	for i := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var entries []logbook.Entry
			for j := range per {
				entries = append(entries, logbook.Entry{Kind: logbook.KindNote, Text: fmt.Sprintf("%d-%d", i, j)})
			}
			if _, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: entries}); err != nil {
				t.Errorf("batch %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	v := b.get(t, s.ID)
	if len(v.Entries) != batches*per {
		t.Fatalf("stored %d entries, want %d", len(v.Entries), batches*per)
	}
	batchOf := map[string][]int64{}
	for i, e := range v.Entries {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d: numbering has a gap or a repeat", i, e.Seq)
		}
		batch, _, _ := strings.Cut(e.Text, "-")
		batchOf[batch] = append(batchOf[batch], e.Seq)
	}
	for batch, seqs := range batchOf {
		if seqs[len(seqs)-1]-seqs[0] != per-1 {
			t.Errorf("batch %s was interleaved with others: seqs %v", batch, seqs)
		}
	}
	if v.Session.EntryCount != batches*per {
		t.Errorf("entry_count = %d, want %d", v.Session.EntryCount, batches*per)
	}
}

// testConcurrentRetries sends batches of keyed entries to two sessions
// from many callers at once, each batch overlapping others' (as a hook
// retrying after a timeout does), so that groups sharing a transaction
// hold the same keys, new and stored, in one request or several: each key
// is stored once, numbering has no gap, and the entries answered as
// recorded are the entries stored.
func testConcurrentRetries(t *testing.T, b *bundle) {
	sessions := []logbook.Session{
		b.start(t, b.alice, service.StartParams{Harness: "h", HarnessSessionID: "r1"}),
		b.start(t, b.alice, service.StartParams{Harness: "h", HarnessSessionID: "r2"}),
	}
	const callers, keys = 40, 30
	var recorded [2]atomic.Int64
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			which := i % 2
			// Keys i/2 .. i/2+2, and a batch of one every fourth caller.
			var entries []logbook.Entry
			for j := range 3 - 2*(i%4/3) {
				k := (i/2 + j) % keys
				entries = append(entries, logbook.Entry{Kind: logbook.KindNote, Text: fmt.Sprint(k), Key: fmt.Sprint("k", k)})
			}
			res, err := b.svc.AppendEntries(b.ctx, b.alice, sessions[which].ID, service.Batch{Entries: entries})
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
				return
			}
			recorded[which].Add(int64(res.Recorded))
		}()
	}
	wg.Wait()
	for which, s := range sessions {
		v := b.get(t, s.ID)
		seen := map[string]bool{}
		for i, e := range v.Entries {
			if e.Seq != int64(i+1) {
				t.Fatalf("session %d: entry %d has seq %d: numbering has a gap or a repeat", which, i, e.Seq)
			}
			if seen[e.Key] {
				t.Errorf("session %d: key %s stored twice", which, e.Key)
			}
			seen[e.Key] = true
		}
		if got := recorded[which].Load(); got != int64(len(v.Entries)) {
			t.Errorf("session %d: answers said %d entries recorded, %d are stored", which, got, len(v.Entries))
		}
		if v.Session.EntryCount != int64(len(v.Entries)) {
			t.Errorf("session %d: entry_count = %d, %d entries stored", which, v.Session.EntryCount, len(v.Entries))
		}
	}
}

func testKeys(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{})
	batch := []logbook.Entry{
		{Kind: logbook.KindToolCall, Tool: "Bash", Key: "tool-1"},
		{Kind: logbook.KindToolResult, Key: "result-1"},
		{Kind: logbook.KindToolCall, Key: "tool-1"}, // repeated inside the batch
		{Kind: logbook.KindNote},                    // no key: always recorded
	}
	res, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: batch})
	must(t, err)
	if res.Recorded != 3 || res.Duplicates != 1 {
		t.Errorf("first batch: %+v, want 3 recorded, 1 duplicate", res)
	}
	res, err = b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: batch})
	must(t, err)
	if res.Recorded != 1 || res.Duplicates != 3 || res.LastSeq != 4 {
		t.Errorf("repeated batch: %+v, want 1 recorded (the keyless note), 3 duplicates, last seq 4", res)
	}
	// Hooks send one entry at a time; a repeated one is a duplicate too,
	// and neither numbers nor counts move.
	one := []logbook.Entry{{Kind: logbook.KindToolCall, Tool: "Bash", Key: "tool-2"}}
	for i, want := range []service.AppendResult{{Recorded: 1, LastSeq: 5}, {Duplicates: 1, LastSeq: 5}} {
		res, err = b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: one})
		must(t, err)
		if res != want {
			t.Errorf("single entry, try %d: %+v, want %+v", i+1, res, want)
		}
	}
	res, err = b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote, Key: "note-1"}}})
	must(t, err)
	if res.LastSeq != 6 {
		t.Errorf("after a duplicate, the next entry got seq %d, want 6 (no gap)", res.LastSeq)
	}
	v := b.get(t, s.ID)
	if v.Session.ToolCallCount != 2 || v.Session.EntryCount != 6 {
		t.Errorf("tool_call_count = %d, entry_count = %d, want 2 and 6", v.Session.ToolCallCount, v.Session.EntryCount)
	}
}

func testFailedBatch(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{})
	_, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote, Text: "ok"}, {Kind: "bogus"}}})
	var ve *logbook.ValidationError
	if !errors.As(err, &ve) || ve.Field != "entries[1].kind" {
		t.Fatalf("a batch with a bad kind: err = %v, want a ValidationError on entries[1].kind", err)
	}
	big := make([]logbook.Entry, logbook.MaxBatch+1)
	for i := range big {
		big[i] = logbook.Entry{Kind: logbook.KindNote}
	}
	if _, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: big}); !errors.Is(err, logbook.ErrInvalid) {
		t.Fatalf("a batch of %d: err = %v, want ErrInvalid", len(big), err)
	}
	if v := b.get(t, s.ID); len(v.Entries) != 0 || v.Session.EntryCount != 0 {
		t.Errorf("failed batches left %d entries (count %d)", len(v.Entries), v.Session.EntryCount)
	}
}

func testCounters(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{})
	if s.Title != "" {
		t.Errorf("title of a bare session = %q", s.Title)
	}
	_, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindMessage, Role: "assistant", Text: "Hello, I will look", Usage: &logbook.Usage{InputTokens: 100, OutputTokens: 10}},
		{Kind: logbook.KindPrompt, Text: "Fix the flaky test\nin pkg/api"},
		{Kind: logbook.KindToolCall, Tool: "Bash"},
		{Kind: logbook.KindToolResult, Text: "ok"},
		{Kind: logbook.KindMessage, Role: "assistant", Text: "Done", Usage: &logbook.Usage{InputTokens: 50, OutputTokens: 5}},
	}})
	must(t, err)
	got := b.get(t, s.ID).Session
	want := []int64{5, 3, 1, 150, 15}
	have := []int64{got.EntryCount, got.MessageCount, got.ToolCallCount, got.InputTokens, got.OutputTokens}
	if fmt.Sprint(have) != fmt.Sprint(want) {
		t.Errorf("entries, messages, tool calls, input, output = %v, want %v", have, want)
	}
	if got.Title != "Fix the flaky test" {
		t.Errorf("title from the first prompt = %q", got.Title)
	}
	updated, err := b.svc.UpdateSession(b.ctx, b.alice, s.ID, logbook.SessionFields{Goal: str("Make CI green")})
	must(t, err)
	if updated.Title != "Make CI green" || updated.Prompt != "Fix the flaky test\nin pkg/api" {
		t.Errorf("after a goal: title %q, prompt %q", updated.Title, updated.Prompt)
	}
}

func testEnd(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{})
	_, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindMessage, Role: "assistant", Text: "I'll try again later."},
		{Kind: logbook.KindMessage, Role: "assistant", Text: "API Error: 429 rate limit exceeded"},
	}})
	must(t, err)
	_, err = b.svc.SetPlan(b.ctx, b.alice, s.ID, []service.StepInput{{Text: "a", Status: "done"}, {Text: "b", Status: "running"}, {Text: "c"}})
	must(t, err)
	b.clock.Add(time.Minute)
	ended, err := b.svc.EndSession(b.ctx, b.alice, s.ID, service.EndParams{Outcome: logbook.OutcomeFailed})
	must(t, err)
	if ended.Blocker != logbook.BlockerRateLimited || ended.State != logbook.StateEnded || ended.EndReason != "ended" {
		t.Errorf("ended: blocker %q state %q end_reason %q", ended.Blocker, ended.State, ended.EndReason)
	}
	closedAt := *ended.ClosedAt
	v := b.get(t, s.ID)
	statuses := ""
	for _, st := range v.Plan {
		statuses += string(st.Status) + " "
	}
	if statuses != "done skipped skipped " {
		t.Errorf("plan after a failed end: %s", statuses)
	}
	b.clock.Add(time.Hour)
	again, err := b.svc.EndSession(b.ctx, b.alice, s.ID, service.EndParams{Outcome: logbook.OutcomeSuccess, Result: "late result"})
	must(t, err)
	if !again.ClosedAt.Equal(closedAt) || again.Outcome != logbook.OutcomeFailed || again.Result != "late result" {
		t.Errorf("ending again: closed_at %v (was %v), outcome %q, result %q; want only the missing result filled", again.ClosedAt, closedAt, again.Outcome, again.Result)
	}
	third, err := b.svc.EndSession(b.ctx, b.alice, s.ID, service.EndParams{Outcome: logbook.OutcomeSuccess, Result: "other"})
	must(t, err)
	if third.Result != "late result" {
		t.Errorf("a third end replaced the result: %q", third.Result)
	}

	ok := b.start(t, b.alice, service.StartParams{})
	_, err = b.svc.SetPlan(b.ctx, b.alice, ok.ID, []service.StepInput{{Text: "a", Status: "running"}, {Text: "b", Status: "failed"}})
	must(t, err)
	_, err = b.svc.EndSession(b.ctx, b.alice, ok.ID, service.EndParams{Outcome: logbook.OutcomeSuccess, Blocker: ""})
	must(t, err)
	v = b.get(t, ok.ID)
	if v.Plan[0].Status != logbook.StepDone || v.Plan[1].Status != logbook.StepFailed || v.Session.Blocker != "" {
		t.Errorf("success end: plan %v, blocker %q", v.Plan, v.Session.Blocker)
	}

	given := b.start(t, b.alice, service.StartParams{})
	g, err := b.svc.EndSession(b.ctx, b.alice, given.ID, service.EndParams{Outcome: logbook.OutcomePartial, Blocker: logbook.BlockerApprovalTimeout, Reason: "user closed the laptop"})
	must(t, err)
	if g.Blocker != logbook.BlockerApprovalTimeout || g.EndReason != "user closed the laptop" {
		t.Errorf("given blocker and reason: %q %q", g.Blocker, g.EndReason)
	}
	for _, bad := range []service.EndParams{{Outcome: "meh"}, {Outcome: "failed", Blocker: "bored"}, {}} {
		if _, err := b.svc.EndSession(b.ctx, b.alice, given.ID, bad); !errors.Is(err, logbook.ErrInvalid) {
			t.Errorf("EndSession(%+v) err = %v, want ErrInvalid", bad, err)
		}
	}
}

func testEndedAndTimedOut(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{HarnessSessionID: "top"})
	_, err := b.svc.EndSession(b.ctx, b.alice, s.ID, service.EndParams{Outcome: logbook.OutcomeSuccess})
	must(t, err)
	closedAt := *b.get(t, s.ID).Session.ClosedAt
	if _, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote}}}); !errors.Is(err, logbook.ErrEnded) {
		t.Errorf("writing to an ended session: err = %v, want ErrEnded", err)
	}
	if _, err := b.svc.UpdateSession(b.ctx, b.alice, s.ID, logbook.SessionFields{}); !errors.Is(err, logbook.ErrEnded) {
		t.Errorf("patching an ended session: err = %v, want ErrEnded", err)
	}
	// A top-level session started again (claude --resume) reopens; closed_at stays.
	b.clock.Add(time.Minute)
	reopened := b.start(t, b.alice, service.StartParams{HarnessSessionID: "top"})
	if reopened.ID != s.ID || reopened.State != logbook.StateActive || !reopened.ClosedAt.Equal(closedAt) || reopened.Outcome != "" {
		t.Errorf("restart of an ended top-level session: id %s state %s closed_at %v outcome %q", reopened.ID, reopened.State, reopened.ClosedAt, reopened.Outcome)
	}

	idle := b.start(t, b.alice, service.StartParams{})
	b.clock.Add(11 * time.Minute)
	if v := b.get(t, idle.ID); v.Session.State != logbook.StateIdle {
		t.Errorf("not seen for 11 minutes: state %s, want idle", v.Session.State)
	}
	b.clock.Add(3 * time.Hour)
	swept, err := b.svc.Sweep(b.ctx, 0)
	must(t, err)
	if swept.TimedOut < 1 {
		t.Fatalf("the sweeper ended %d sessions", swept.TimedOut)
	}
	if v := b.get(t, idle.ID); v.Session.State != logbook.StateEnded || v.Session.EndReason != logbook.EndReasonTimedOut {
		t.Fatalf("after the sweep: state %s, end_reason %q", v.Session.State, v.Session.EndReason)
	}
	res, err := b.svc.AppendEntries(b.ctx, b.alice, idle.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote, Text: "back"}}})
	if err != nil || res.Recorded != 1 {
		t.Fatalf("writing to a timed-out session: %+v, %v; want it revived", res, err)
	}
	if v := b.get(t, idle.ID); v.Session.State != logbook.StateActive || v.Session.EndReason != "" {
		t.Errorf("revived: state %s, end_reason %q", v.Session.State, v.Session.EndReason)
	}
}

func testSubagents(t *testing.T, b *bundle) {
	parent := b.start(t, b.alice, service.StartParams{HarnessSessionID: "main", Fields: logbook.SessionFields{
		Issue: str("12"), Pull: str("7"), Branch: str("feat"), HeadCommit: str("abc123")}})
	child := b.start(t, b.alice, service.StartParams{HarnessSessionID: "main/agent-1", ParentID: parent.ID, Fields: logbook.SessionFields{Branch: str("own")}})
	if child.Issue != "12" || child.Pull != "7" || child.HeadCommit != "abc123" || child.Branch != "own" {
		t.Errorf("inheritance: issue %q pull %q commit %q branch %q", child.Issue, child.Pull, child.HeadCommit, child.Branch)
	}
	grandchild := b.start(t, b.alice, service.StartParams{ParentID: child.ID})

	if _, _, err := b.svc.StartSession(b.ctx, b.bob, service.StartParams{ParentID: parent.ID}); !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("bob starting a subagent under alice's session: err = %v, want ErrInvalid", err)
	}
	if _, _, err := b.svc.StartSession(b.ctx, b.alice, service.StartParams{ParentID: "missing"}); !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("a missing parent: err = %v, want ErrInvalid", err)
	}

	// A subagent's heartbeat keeps its parent seen.
	b.clock.Add(20 * time.Minute)
	_, err := b.svc.AppendEntries(b.ctx, b.alice, child.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote}}})
	must(t, err)
	if v := b.get(t, parent.ID); v.Session.State != logbook.StateActive {
		t.Errorf("parent after its subagent's heartbeat: %s, want active", v.Session.State)
	}
	if v := b.get(t, parent.ID); len(v.Subagents) != 1 || v.Subagents[0].ID != child.ID {
		t.Errorf("parent's subagents: %v", v.Subagents)
	}

	// A finished subagent stays ended when a late hook starts it again.
	_, err = b.svc.EndSession(b.ctx, b.alice, child.ID, service.EndParams{Outcome: logbook.OutcomeSuccess})
	must(t, err)
	late := b.start(t, b.alice, service.StartParams{HarnessSessionID: "main/agent-1", ParentID: parent.ID, Fields: logbook.SessionFields{Model: str("haiku")}})
	if late.ID != child.ID || late.State != logbook.StateEnded || late.Model != "haiku" {
		t.Errorf("late start of a finished subagent: id %s state %s model %q", late.ID, late.State, late.Model)
	}
	if v := b.get(t, grandchild.ID); v.Session.EndReason != logbook.EndReasonParentEnded {
		t.Errorf("grandchild after its parent ended: end_reason %q", v.Session.EndReason)
	}

	// Ending the parent ends the subagents it left going.
	other := b.start(t, b.alice, service.StartParams{ParentID: parent.ID})
	_, err = b.svc.EndSession(b.ctx, b.alice, parent.ID, service.EndParams{Outcome: logbook.OutcomeSuccess})
	must(t, err)
	if v := b.get(t, other.ID); v.Session.State != logbook.StateEnded || v.Session.EndReason != logbook.EndReasonParentEnded || v.Session.ClosedAt == nil {
		t.Errorf("running subagent after its parent ended: state %s end_reason %q", v.Session.State, v.Session.EndReason)
	}
	if v := b.get(t, child.ID); v.Session.EndReason != logbook.EndReasonEnded {
		t.Errorf("a subagent ended before its parent changed its end_reason to %q", v.Session.EndReason)
	}
}

func testOwnership(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{})
	if _, err := b.svc.AppendEntries(b.ctx, b.bob, s.ID, service.Batch{Entries: nil}); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("bob writing alice's session: err = %v, want ErrForbidden", err)
	}
	if _, err := b.svc.EndSession(b.ctx, b.bob, s.ID, service.EndParams{Outcome: logbook.OutcomeSuccess}); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("bob ending alice's session: err = %v, want ErrForbidden", err)
	}
	if _, err := b.svc.GetSession(b.ctx, b.bob, s.ID, service.GetParams{}); err != nil {
		t.Errorf("bob reading a session of his project: %v", err)
	}
	outsider := service.Caller{Actor: "alice", Project: "elsewhere"}
	if _, err := b.svc.GetSession(b.ctx, outsider, s.ID, service.GetParams{}); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("a token of another project reading: err = %v, want ErrNotFound", err)
	}
	if _, err := b.svc.UpdateSession(b.ctx, outsider, s.ID, logbook.SessionFields{}); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("a token of another project writing: err = %v, want ErrNotFound", err)
	}
	if _, _, err := b.svc.StartSession(b.ctx, b.alice, service.StartParams{Project: "elsewhere"}); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("starting in another project: err = %v, want ErrForbidden", err)
	}
	if _, err := b.svc.GetSession(b.ctx, b.alice, "no-such-id", service.GetParams{}); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("an unknown id: err = %v, want ErrNotFound", err)
	}
}

func testPlan(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{})
	plan, err := b.svc.SetPlan(b.ctx, b.alice, s.ID, []service.StepInput{{Text: "read"}, {Text: "write", Status: "running"}})
	must(t, err)
	if len(plan) != 2 || plan[0].N != 1 || plan[0].Status != logbook.StepPending {
		t.Errorf("plan: %+v", plan)
	}
	plan, err = b.svc.UpdatePlanStep(b.ctx, b.alice, s.ID, 2, logbook.StepDone)
	must(t, err)
	if plan[1].Status != logbook.StepDone {
		t.Errorf("step 2 after update: %s", plan[1].Status)
	}
	if _, err := b.svc.UpdatePlanStep(b.ctx, b.alice, s.ID, 3, logbook.StepDone); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("a missing step: err = %v, want ErrNotFound", err)
	}
	if _, err := b.svc.UpdatePlanStep(b.ctx, b.alice, s.ID, 1, "later"); !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("a bad status: err = %v, want ErrInvalid", err)
	}
	if _, err := b.svc.SetPlan(b.ctx, b.alice, s.ID, []service.StepInput{{Text: ""}}); !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("a step without text: err = %v, want ErrInvalid", err)
	}
}

func testAgents(t *testing.T, b *bundle) {
	first, created, err := b.svc.EnsureAgentSession(b.ctx, b.alice, "p", "engineer-1")
	must(t, err)
	if !created || first.Agent != "engineer-1" {
		t.Fatalf("first ensure: created %v agent %q", created, first.Agent)
	}
	again, created, err := b.svc.EnsureAgentSession(b.ctx, b.alice, "p", "engineer-1")
	must(t, err)
	if created || again.ID != first.ID {
		t.Errorf("second ensure: created %v id %s, want %s", created, again.ID, first.ID)
	}
	rot, err := b.svc.RotateAgent(b.ctx, b.alice, "p", "engineer-1", "context full")
	must(t, err)
	if rot.PreviousSessionID != first.ID || rot.Session.ID == first.ID {
		t.Errorf("rotation: %+v", rot)
	}
	if v := b.get(t, first.ID); v.Session.EndReason != "rotated: context full" || v.Session.State != logbook.StateEnded {
		t.Errorf("old session after rotation: %s, %q", v.Session.State, v.Session.EndReason)
	}
	now, _, err := b.svc.EnsureAgentSession(b.ctx, b.alice, "p", "engineer-1")
	must(t, err)
	if now.ID != rot.Session.ID {
		t.Errorf("ensure after rotation returned %s, want the new session %s", now.ID, rot.Session.ID)
	}
	_, err = b.svc.EndSession(b.ctx, b.alice, now.ID, service.EndParams{Outcome: logbook.OutcomeSuccess})
	must(t, err)
	fresh, created, err := b.svc.EnsureAgentSession(b.ctx, b.alice, "p", "engineer-1")
	must(t, err)
	if !created || fresh.ID == now.ID {
		t.Errorf("ensure after the current session ended: created %v", created)
	}
	if _, _, err := b.svc.EnsureAgentSession(b.ctx, b.alice, "p", " "); !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("a blank agent name: err = %v", err)
	}
}

func testConcurrentEnsure(t *testing.T, b *bundle) {
	const n = 20
	distinct := concurrently(t, n, func() (logbook.Session, error) {
		s, _, err := b.svc.EnsureAgentSession(b.ctx, b.alice, "p", "ceo")
		return s, err
	})
	if len(distinct) != 1 {
		t.Errorf("%d concurrent ensures returned %d sessions, want 1", n, len(distinct))
	}
}

func testCompact(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{})
	_, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindPrompt, Text: "a"}, {Kind: logbook.KindMessage, Role: "assistant", Text: "b"}}})
	must(t, err)
	res, err := b.svc.Compact(b.ctx, b.alice, s.ID, []logbook.Entry{{Kind: logbook.KindSummary, Text: "a then b"}})
	must(t, err)
	if res.Recorded != 1 || res.LastSeq != 3 {
		t.Errorf("compact: %+v", res)
	}
	active, err := b.svc.GetSession(b.ctx, b.alice, s.ID, service.GetParams{})
	must(t, err)
	if len(active.Entries) != 1 || active.Entries[0].Kind != logbook.KindSummary {
		t.Errorf("active entries after compaction: %+v", active.Entries)
	}
	all := b.get(t, s.ID)
	if len(all.Entries) != 3 || !all.Entries[0].Superseded || all.Entries[2].Superseded {
		t.Errorf("all entries after compaction: %+v", all.Entries)
	}
	if _, err := b.svc.Compact(b.ctx, b.alice, s.ID, []logbook.Entry{{Kind: "bad"}}); !errors.Is(err, logbook.ErrInvalid) {
		t.Fatalf("a bad compaction: %v", err)
	}
	if again := b.get(t, s.ID); len(again.Entries) != 3 || again.Entries[2].Superseded {
		t.Errorf("a failed compaction changed the entries")
	}
}

func testList(t *testing.T, b *bundle) {
	for range 5 {
		b.start(t, b.alice, service.StartParams{})
		b.clock.Add(time.Second)
	}
	page, err := b.svc.ListSessions(b.ctx, b.alice, service.ListParams{Limit: 2})
	must(t, err)
	if len(page.Sessions) != 2 || page.NextCursor == "" {
		t.Fatalf("first page: %d sessions, cursor %q", len(page.Sessions), page.NextCursor)
	}
	seen := map[string]bool{page.Sessions[0].ID: true, page.Sessions[1].ID: true}
	// New sessions arriving between pages do not shift the pages.
	b.start(t, b.alice, service.StartParams{})
	cursor := page.NextCursor
	for cursor != "" {
		page, err = b.svc.ListSessions(b.ctx, b.alice, service.ListParams{Limit: 2, Cursor: cursor})
		must(t, err)
		for _, s := range page.Sessions {
			if seen[s.ID] {
				t.Errorf("session %s listed twice", s.ID)
			}
			seen[s.ID] = true
		}
		cursor = page.NextCursor
	}
	if len(seen) != 5 {
		t.Errorf("paged through %d of the 5 older sessions", len(seen))
	}
	if _, err := b.svc.ListSessions(b.ctx, b.alice, service.ListParams{Cursor: "garbage!"}); !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("a bad cursor: %v", err)
	}
	if _, err := b.svc.ListSessions(b.ctx, b.alice, service.ListParams{Limit: 201}); !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("limit 201: %v", err)
	}
}

func testTokens(t *testing.T, b *bundle) {
	value, err := b.svc.EnsureAdminToken(b.ctx, "")
	must(t, err)
	if !strings.HasPrefix(value, "lbk_") {
		t.Fatalf("generated admin token %q", value)
	}
	if again, _ := b.svc.EnsureAdminToken(b.ctx, ""); again != "" {
		t.Error("a second start generated another admin token")
	}
	admin, err := b.svc.Authenticate(b.ctx, value)
	must(t, err)
	if !admin.Admin {
		t.Error("the admin token is not admin")
	}
	tok, err := b.svc.CreateToken(b.ctx, admin, "proj", "carol")
	must(t, err)
	carol, err := b.svc.Authenticate(b.ctx, tok)
	must(t, err)
	if carol.Actor != "carol" || carol.Project != "proj" || carol.Admin || carol.TokenID == "" {
		t.Errorf("carol's caller: %+v", carol)
	}
	if _, err := b.svc.CreateToken(b.ctx, carol, "proj", "dave"); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("a non-admin making a token: %v", err)
	}
	if _, err := b.svc.Authenticate(b.ctx, "lbk_wrong"); !errors.Is(err, logbook.ErrUnauthorized) {
		t.Errorf("a wrong token: %v", err)
	}
	if _, err := b.svc.EnsureAdminToken(b.ctx, "fixed-admin-token"); err != nil {
		t.Fatal(err)
	}
	if c, err := b.svc.Authenticate(b.ctx, "fixed-admin-token"); err != nil || !c.Admin {
		t.Errorf("LOGBOOK_ADMIN_TOKEN's token: %+v %v", c, err)
	}
	var stored int
	must(t, rawDB(b.st).QueryRow(`SELECT COUNT(*) FROM tokens WHERE hash = $1 OR hash = $2`, tok, value).Scan(&stored))
	if stored != 0 {
		t.Error("a token is stored in clear")
	}
}

func testClip(t *testing.T, b *bundle) {
	long := strings.Repeat("x", 9000)
	s := b.start(t, b.alice, service.StartParams{HarnessSessionID: strings.Repeat("h", 300), Fields: logbook.SessionFields{
		Title: str(long), Task: str(long), Branch: str(long), HeadCommit: str(long), Model: str(long)}})
	lengths := map[string]int{"title": len([]rune(s.Title)), "task": len([]rune(s.Task)), "branch": len([]rune(s.Branch)),
		"head_commit": len([]rune(s.HeadCommit)), "model": len([]rune(s.Model)), "harness_session_id": len([]rune(s.HarnessSessionID))}
	want := map[string]int{"title": 200, "task": 8000, "branch": 255, "head_commit": 64, "model": 100, "harness_session_id": 200}
	for field, n := range want {
		if lengths[field] != n {
			t.Errorf("%s clipped to %d characters, want %d", field, lengths[field], n)
		}
	}
	_, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote, Text: strings.Repeat("y", 70000)}}})
	must(t, err)
	if e := b.get(t, s.ID).Entries[0]; len([]rune(e.Text)) != logbook.MaxEntryText || !strings.HasSuffix(e.Text, "…") {
		t.Errorf("entry text clipped to %d", len([]rune(e.Text)))
	}
}
