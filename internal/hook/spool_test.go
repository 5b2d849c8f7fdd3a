package hook

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

func promptPayload(t *testing.T, sid, text string) []byte {
	return payload(t, map[string]any{"session_id": sid, "hook_event_name": EventUserPromptSubmit, "prompt": text})
}

// TestSpoolServerDown: with the server stopped, 100 hook calls go to the
// spool; once it is back, one more call delivers every record exactly
// once, in order. Delivering the same records again (as after a crash
// between delivery and removal from the spool) doubles nothing.
func TestSpoolServerDown(t *testing.T) {
	srv := newTestServer(t)
	cfg := srv.config(t)
	runClaude(t, cfg, payload(t, map[string]any{"session_id": "s1", "hook_event_name": EventSessionStart, "source": "startup"}))

	srv.stop()
	for i := range 100 {
		start := time.Now()
		_, stderr := runClaude(t, cfg, promptPayload(t, "s1", fmt.Sprintf("prompt %03d", i)))
		if !strings.Contains(stderr, "wait in") {
			t.Fatalf("call %d with the server down: stderr %q should say the records wait in the spool", i, stderr)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("call %d took %v with the server down", i, d)
		}
	}
	spool, _ := OpenSpool(cfg.SpoolDir)
	if n, _ := spool.Pending(); n != 100 {
		t.Fatalf("%d records in the spool, want 100", n)
	}
	saved, err := os.ReadFile(filepath.Join(cfg.SpoolDir, spoolFile))
	if err != nil {
		t.Fatal(err)
	}

	srv.start()
	cfg.URL = srv.url()
	if _, stderr := runClaude(t, cfg, promptPayload(t, "s1", "prompt 100")); stderr != "" {
		t.Errorf("stderr %q once the server is back", stderr)
	}
	if n, _ := spool.Pending(); n != 0 {
		t.Errorf("%d records still in the spool", n)
	}
	check := func() {
		t.Helper()
		prompts := entriesOf(srv.session("s1"), logbook.KindPrompt)
		if len(prompts) != 101 {
			t.Fatalf("%d prompts stored, want 101", len(prompts))
		}
		for i, e := range prompts {
			if want := fmt.Sprintf("prompt %03d", i); e.Text != want {
				t.Fatalf("prompt %d is %q, want %q: not in order", i, e.Text, want)
			}
		}
	}
	check()

	// The same 100 records delivered again are all duplicates.
	if err := os.WriteFile(filepath.Join(cfg.SpoolDir, spoolFile), saved, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := New(cfg, os.Stderr).Flush(context.Background())
	if err != nil || rep.Delivered != 100 || rep.Remaining != 0 {
		t.Fatalf("flush: %+v, %v", rep, err)
	}
	check()
}

// TestSpoolConcurrentHooks: hook processes running at once (Claude Code
// runs hooks in parallel) neither interleave nor double records.
func TestSpoolConcurrentHooks(t *testing.T) {
	srv := newTestServer(t)
	cfg := srv.config(t)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if _, stderr := runClaude(t, cfg, promptPayload(t, "s1", fmt.Sprintf("p%d", i))); stderr != "" {
				t.Errorf("stderr %q", stderr)
			}
		})
	}
	wg.Wait()
	rep, err := New(cfg, os.Stderr).Flush(context.Background())
	if err != nil || rep.Remaining != 0 {
		t.Fatalf("flush: %+v, %v", rep, err)
	}
	seen := map[string]int{}
	for _, e := range entriesOf(srv.session("s1"), logbook.KindPrompt) {
		seen[e.Text]++
	}
	for i := range 20 {
		if seen[fmt.Sprintf("p%d", i)] != 1 {
			t.Errorf("prompt p%d stored %d times", i, seen[fmt.Sprintf("p%d", i)])
		}
	}
}

// TestSpoolCorruptLine: an unreadable line is set aside in spool.bad and
// reported; the records around it are delivered, in order.
func TestSpoolCorruptLine(t *testing.T) {
	srv := newTestServer(t)
	cfg := srv.config(t)
	srv.stop()
	runClaude(t, cfg, promptPayload(t, "s1", "before"))
	path := filepath.Join(cfg.SpoolDir, spoolFile)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("not json at all\n")
	f.WriteString(`{"id": "torn", "session": {"harn`) // a write torn before its newline
	f.Close()
	// The next call reads the spool, sets the bad lines aside and says so,
	// even though the server is still down.
	_, stderr := runClaude(t, cfg, promptPayload(t, "s1", "after"))
	if !strings.Contains(stderr, "2 unreadable spool lines were set aside") || !strings.Contains(stderr, badFile) {
		t.Errorf("stderr %q should report the 2 lines set aside in %s", stderr, badFile)
	}

	srv.start()
	cfg.URL = srv.url()
	if _, stderr := runClaude(t, cfg, promptPayload(t, "s1", "last")); stderr != "" {
		t.Errorf("stderr %q once the server is back", stderr)
	}
	bad, _ := os.ReadFile(filepath.Join(cfg.SpoolDir, badFile))
	if !bytes.Contains(bad, []byte("not json at all")) || !bytes.Contains(bad, []byte(`"torn"`)) {
		t.Errorf("spool.bad holds %q", bad)
	}
	var texts []string
	for _, e := range entriesOf(srv.session("s1"), logbook.KindPrompt) {
		texts = append(texts, e.Text)
	}
	if strings.Join(texts, ",") != "before,after,last" {
		t.Errorf("prompts %v, want before, after, last", texts)
	}
}

// TestSpoolRejectedRecord: a record the server refuses for good (here an
// entry for a subagent that has ended: 409) is set aside with the answer,
// reported, and does not hold back the records after it. A server error
// (503) keeps records in the spool.
func TestSpoolRejectedRecord(t *testing.T) {
	srv := newTestServer(t)
	cfg := srv.config(t)
	sub := func(event string, more map[string]any) []byte {
		fields := map[string]any{"session_id": "s1", "hook_event_name": event, "agent_id": "a1"}
		for k, v := range more {
			fields[k] = v
		}
		return payload(t, fields)
	}
	runClaude(t, cfg, sub(EventSubagentStart, nil))
	runClaude(t, cfg, sub(EventSubagentStop, nil))

	srv.mu.Lock()
	srv.failWith = http.StatusServiceUnavailable
	srv.mu.Unlock()
	_, stderr := runClaude(t, cfg, sub(EventNotification, map[string]any{"message": "late subagent note"}))
	runClaude(t, cfg, promptPayload(t, "s1", "after the refusal"))
	if !strings.Contains(stderr, "503") {
		t.Errorf("stderr %q should report the 503", stderr)
	}
	spool, _ := OpenSpool(cfg.SpoolDir)
	if n, _ := spool.Pending(); n != 2 {
		t.Fatalf("%d records in the spool after 503s, want 2", n)
	}

	srv.mu.Lock()
	srv.failWith = 0
	srv.mu.Unlock()
	_, stderr = runClaude(t, cfg, promptPayload(t, "s1", "last"))
	if !strings.Contains(stderr, "refused a Notification record for good") || !strings.Contains(stderr, "409") {
		t.Errorf("stderr %q should report the refused record", stderr)
	}
	rejected, _ := os.ReadFile(filepath.Join(cfg.SpoolDir, rejectedFile))
	if !bytes.Contains(rejected, []byte("late subagent note")) || !bytes.Contains(rejected, []byte(`"status":409`)) {
		t.Errorf("rejected.jsonl holds %s", rejected)
	}
	var texts []string
	for _, e := range entriesOf(srv.session("s1"), logbook.KindPrompt) {
		texts = append(texts, e.Text)
	}
	if strings.Join(texts, ",") != "after the refusal,last" {
		t.Errorf("prompts %v", texts)
	}
	if n, _ := spool.Pending(); n != 0 {
		t.Errorf("%d records left in the spool", n)
	}
}

// TestSpoolBadToken: with a wrong token, records wait in the spool (the
// record is fine, the configuration is not) until the token is fixed.
func TestSpoolBadToken(t *testing.T) {
	srv := newTestServer(t)
	cfg := srv.config(t)
	good := cfg.Token
	cfg.Token = "wrong"
	_, stderr := runClaude(t, cfg, promptPayload(t, "s1", "kept"))
	if !strings.Contains(stderr, "401") {
		t.Errorf("stderr %q should report the 401", stderr)
	}
	cfg.Token = good
	runClaude(t, cfg, promptPayload(t, "s1", "next"))
	if n := len(entriesOf(srv.session("s1"), logbook.KindPrompt)); n != 2 {
		t.Errorf("%d prompts, want both", n)
	}
}

// TestSpoolLongSpool: a spool longer than one chunk, with records of two
// sessions interleaved, is delivered whole and in order by one flush.
func TestSpoolLongSpool(t *testing.T) {
	srv := newTestServer(t)
	cfg := srv.config(t)
	spool, err := OpenSpool(cfg.SpoolDir)
	if err != nil {
		t.Fatal(err)
	}
	const n = 2*drainChunk + 37
	var recs []Record
	for i := range n {
		sid := []string{"s1", "s2"}[i/50%2] // runs of 50 records per session
		recs = append(recs, Record{ID: newRecordID(), Event: EventUserPromptSubmit, At: time.Now().UTC(),
			Session: SessionSpec{Project: testProject, Harness: HarnessClaude, HarnessSessionID: sid},
			Entries: []logbook.Entry{{Kind: logbook.KindPrompt, Text: fmt.Sprintf("p%04d", i), Key: fmt.Sprintf("k%d", i)}}})
	}
	if err := spool.Append(recs...); err != nil {
		t.Fatal(err)
	}
	rep, err := New(cfg, os.Stderr).Flush(context.Background())
	if err != nil || rep.Delivered != n || rep.Remaining != 0 {
		t.Fatalf("flush: %+v, %v", rep, err)
	}
	total := 0
	for _, sid := range []string{"s1", "s2"} {
		prev := ""
		for _, e := range entriesOf(srv.session(sid), logbook.KindPrompt) {
			if e.Text <= prev {
				t.Fatalf("session %s: %q after %q, out of order", sid, e.Text, prev)
			}
			prev = e.Text
			total++
		}
	}
	if total != n {
		t.Errorf("%d prompts stored, want %d", total, n)
	}
}
