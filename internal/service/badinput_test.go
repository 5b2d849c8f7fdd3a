package service_test

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestTokenCounts: a token count no model call uses (2^63-1, which wrapped
// a session's counter to -2 after two entries) is refused naming the bound
// and changes nothing; counts up to the bound are kept; a session's
// counters and the stats sums saturate at 2^63-1 instead of wrapping.
func TestTokenCounts(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		b := setup(t, e)
		sess := b.start(t, b.alice, service.StartParams{Harness: "h", HarnessSessionID: "tokens"})
		usage := func(in, out int64) service.Batch {
			return service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "ok",
				Usage: &logbook.Usage{InputTokens: in, OutputTokens: out}}}}
		}

		for _, bad := range []service.Batch{usage(math.MaxInt64, 0), usage(0, math.MaxInt64), usage(logbook.MaxTokens+1, 0), usage(-1, 0)} {
			_, err := b.svc.AppendEntries(b.ctx, b.alice, sess.ID, bad)
			var invalid *logbook.ValidationError
			if !errors.As(err, &invalid) || !strings.HasPrefix(invalid.Field, "entries[0].usage.") ||
				!strings.Contains(invalid.Message, strconv.FormatInt(logbook.MaxTokens, 10)) {
				t.Errorf("usage %+v: %v, want a validation error naming the field and the bound", *bad.Entries[0].Usage, err)
			}
		}
		if got := b.get(t, sess.ID).Session; got.EntryCount != 0 || got.InputTokens != 0 || got.OutputTokens != 0 {
			t.Fatalf("refused batches changed the session: %d entries, %d in, %d out", got.EntryCount, got.InputTokens, got.OutputTokens)
		}
		_, err := b.svc.AppendEntries(b.ctx, b.alice, sess.ID, usage(logbook.MaxTokens, 7))
		must(t, err)
		if got := b.get(t, sess.ID).Session; got.InputTokens != logbook.MaxTokens || got.OutputTokens != 7 {
			t.Fatalf("counters %d in, %d out; want %d, 7", got.InputTokens, got.OutputTokens, int64(logbook.MaxTokens))
		}

		// A counter near the top (as a database written before the bound
		// may hold) stops at 2^63-1, on this session and on another.
		nearTop := func(id string) {
			t.Helper()
			s, err := b.st.SessionGet(b.ctx, store.SessionGetParams{ID: id})
			must(t, err)
			s.InputTokens, s.OutputTokens = math.MaxInt64-3, math.MaxInt64-3
			must(t, b.st.SessionUpdate(b.ctx, &s, nil))
			_, err = b.svc.AppendEntries(b.ctx, b.alice, id, usage(logbook.MaxTokens, logbook.MaxTokens))
			must(t, err)
			if got := b.get(t, id).Session; got.InputTokens != math.MaxInt64 || got.OutputTokens != math.MaxInt64 {
				t.Errorf("counters %d in, %d out; want both %d (saturated)", got.InputTokens, got.OutputTokens, int64(math.MaxInt64))
			}
		}
		nearTop(sess.ID)
		nearTop(b.start(t, b.alice, service.StartParams{Harness: "h", HarnessSessionID: "tokens-2"}).ID)

		rows, err := b.svc.Stats(b.ctx, b.alice, service.StatsParams{By: logbook.ByHarness})
		must(t, err)
		if len(rows) != 1 || rows[0].Sessions != 2 || rows[0].InputTokens != math.MaxInt64 || rows[0].OutputTokens != math.MaxInt64 {
			t.Errorf("stats %+v, want one row of 2 sessions with both sums %d (saturated)", rows, int64(math.MaxInt64))
		}
	})
}
