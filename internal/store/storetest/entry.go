package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

func testEntry(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()

	t.Run("InsertListRoundTrip", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		in := []logbook.Entry{
			{SessionID: s.ID, Seq: 1, At: base, Kind: logbook.KindPrompt, Text: "hi"},
			{SessionID: s.ID, Seq: 2, At: base.Add(time.Second), Kind: logbook.KindToolCall, Tool: "Bash",
				ToolCallID: "t1", Payload: json.RawMessage(`{"command":"ls"}`), Commit: "abc", Key: "k1",
				Usage: &logbook.Usage{InputTokens: 30, OutputTokens: 4, CacheReadTokens: 20, CacheWriteTokens: 5, Model: "claude-haiku-4-5", CostMicros: 1234}},
			{SessionID: s.ID, Seq: 3, At: base, Kind: logbook.KindNote, Text: "CI is red",
				Author: &logbook.Author{Actor: "bob", TokenID: "tok-1"}},
		}
		insertAll(t, st, in)
		got, err := st.EntryList(ctx, store.EntryListParams{SessionID: s.ID, Limit: 10})
		must(t, err)
		if len(got) != 3 {
			t.Fatalf("listed %d entries, want 3", len(got))
		}
		if got[2].Author == nil || *got[2].Author != (logbook.Author{Actor: "bob", TokenID: "tok-1"}) {
			t.Errorf("a note's author reads back as %+v", got[2].Author)
		}
		if got[0].Author != nil || got[1].Author != nil {
			t.Errorf("entries written without an author read back with one")
		}
		equal(t, "seq", got[1].Seq, int64(2))
		equal(t, "at", got[1].At, base.Add(time.Second))
		equal(t, "tool", got[1].Tool, "Bash")
		equal(t, "payload", string(got[1].Payload), `{"command":"ls"}`)
		equal(t, "key", got[1].Key, "k1")
		equal(t, "commit", got[1].Commit, "abc")
		if got[1].Usage == nil || *got[1].Usage != (logbook.Usage{InputTokens: 30, OutputTokens: 4, CacheReadTokens: 20, CacheWriteTokens: 5,
			Model: "claude-haiku-4-5", CostMicros: 1234}) {
			t.Errorf("usage = %+v", got[1].Usage)
		}
		if got[0].Usage != nil || got[0].Payload != nil || got[0].Key != "" {
			t.Errorf("an entry without usage, payload or key reads back with them: %+v", got[0])
		}
	})

	t.Run("AfterSeqLimitAndSupersede", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		var in []logbook.Entry
		for i := 1; i <= 530; i++ { // more than one insert chunk on either engine
			in = append(in, logbook.Entry{SessionID: s.ID, Seq: int64(i), At: base, Kind: logbook.KindNote, Text: "n"})
		}
		insertAll(t, st, in)
		page, err := st.EntryList(ctx, store.EntryListParams{SessionID: s.ID, AfterSeq: 100, Limit: 20})
		must(t, err)
		equal(t, "page length", len(page), 20)
		equal(t, "first seq after 100", page[0].Seq, int64(101))
		n, err := st.EntrySupersede(ctx, s.ID, base.Add(time.Minute))
		must(t, err)
		equal(t, "superseded", n, int64(530))
		insertAll(t, st, []logbook.Entry{{SessionID: s.ID, Seq: 531, At: base, Kind: logbook.KindSummary, Text: "sum"}})
		active, err := st.EntryList(ctx, store.EntryListParams{SessionID: s.ID, Limit: 500})
		must(t, err)
		equal(t, "active after compaction", len(active), 1)
		equal(t, "active kind", active[0].Kind, logbook.KindSummary)
		all, err := st.EntryList(ctx, store.EntryListParams{SessionID: s.ID, Limit: 500, IncludeSuperseded: true})
		must(t, err)
		equal(t, "all entries, first page", len(all), 500)
		equal(t, "first is superseded", all[0].Superseded, true)
		rest, err := st.EntryList(ctx, store.EntryListParams{SessionID: s.ID, AfterSeq: 500, Limit: 500, IncludeSuperseded: true})
		must(t, err)
		equal(t, "all entries, second page", len(rest), 31)
		equal(t, "the summary is not superseded", rest[30].Superseded, false)
	})

	t.Run("SeqAndKeyAreUnique", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		insert := func(entries ...logbook.Entry) (int, error) { return st.EntryInsert(ctx, entries) }
		n, err := insert(logbook.Entry{SessionID: s.ID, Seq: 1, At: base, Kind: logbook.KindNote, Text: "first", Key: "k"})
		must(t, err)
		equal(t, "inserted", n, 1)
		if _, err := insert(logbook.Entry{SessionID: s.ID, Seq: 1, At: base, Kind: logbook.KindNote}); !errors.Is(err, logbook.ErrConflict) {
			t.Errorf("repeated seq: err = %v, want ErrConflict", err)
		}
		// A repeated key is skipped, not stored twice, and the first stays.
		n, err = insert(logbook.Entry{SessionID: s.ID, Seq: 2, At: base, Kind: logbook.KindNote, Text: "again", Key: "k"},
			logbook.Entry{SessionID: s.ID, Seq: 3, At: base, Kind: logbook.KindNote, Key: "k2"})
		must(t, err)
		equal(t, "inserted with a repeated key", n, 1)
		got, err := st.EntryList(ctx, store.EntryListParams{SessionID: s.ID, Limit: 10})
		must(t, err)
		equal(t, "entries", len(got), 2)
		equal(t, "first entry's text", got[0].Text, "first")
		equal(t, "second entry's seq", got[1].Seq, int64(3))
		other := newSession(t, st, sessionOpts{})
		n, err = insert(logbook.Entry{SessionID: other.ID, Seq: 1, At: base, Kind: logbook.KindNote, Key: "k"})
		must(t, err)
		equal(t, "inserted in another session", n, 1)
	})

	t.Run("ExistingKeys", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		var in []logbook.Entry
		var ask []string
		for i := 1; i <= 600; i++ { // more keys than one IN list holds
			k := "k" + string(rune('a'+i%26)) + time.Duration(i).String()
			if i%2 == 0 {
				in = append(in, logbook.Entry{SessionID: s.ID, Seq: int64(len(in) + 1), At: base, Kind: logbook.KindNote, Key: k})
			}
			ask = append(ask, k)
		}
		insertAll(t, st, in)
		found, err := st.EntryExistingKeys(ctx, s.ID, ask)
		must(t, err)
		equal(t, "keys found", len(found), 300)
		none, err := st.EntryExistingKeys(ctx, s.ID, nil)
		must(t, err)
		equal(t, "keys found for none asked", len(none), 0)
	})

	t.Run("DeleteAfter", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		other := newSession(t, st, sessionOpts{})
		var in []logbook.Entry
		for seq := int64(1); seq <= 5; seq++ {
			in = append(in, logbook.Entry{SessionID: s.ID, Seq: seq, At: base, Kind: logbook.KindNote, Key: fmt.Sprint("k", seq)},
				logbook.Entry{SessionID: other.ID, Seq: seq, At: base, Kind: logbook.KindNote})
		}
		insertAll(t, st, in)
		must(t, st.EntryDeleteAfter(ctx, s.ID, 3))
		kept, err := st.EntryList(ctx, store.EntryListParams{SessionID: s.ID, Limit: 10})
		must(t, err)
		equal(t, "entries kept", len(kept), 3)
		equal(t, "last entry kept", kept[len(kept)-1].Seq, int64(3))
		others, err := st.EntryList(ctx, store.EntryListParams{SessionID: other.ID, Limit: 10})
		must(t, err)
		equal(t, "another session's entries", len(others), 5)
		// The keys of the entries taken back are free again.
		n, err := st.EntryInsert(ctx, []logbook.Entry{{SessionID: s.ID, Seq: 4, At: base, Kind: logbook.KindNote, Key: "k5"}})
		must(t, err)
		equal(t, "a taken-back key inserted again", n, 1)
	})
}
