package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// exported is what an Export read: the tables it counted, and each row
// as JSON (how an export writes it), in order.
type exported struct {
	tables []store.ExportTable
	rows   []exportedRow
}

type exportedRow struct {
	table string
	row   map[string]any
}

// lines is the rows as JSON lines, to compare two exports.
func (x exported) lines(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	for _, r := range x.rows {
		data, err := json.Marshal(r.row)
		must(t, err)
		b.WriteString(r.table + " " + string(data) + "\n")
	}
	return b.String()
}

func exportAll(t testing.TB, st store.Store, project string) exported {
	t.Helper()
	var x exported
	must(t, st.Export(context.Background(), store.ExportParams{
		Project: project,
		Counted: func(tables []store.ExportTable) error { x.tables = tables; return nil },
		Row: func(table string, row map[string]any) error {
			x.rows = append(x.rows, exportedRow{table, row})
			return nil
		},
	}))
	return x
}

// restore writes x's rows into st, a few rows a call and a transaction a
// call, and returns how many were inserted.
func restore(t testing.TB, st store.Store, x exported) int {
	t.Helper()
	ctx := context.Background()
	inserted := 0
	for start := 0; start < len(x.rows); {
		end := start + 1
		for end < len(x.rows) && end-start < 3 && x.rows[end].table == x.rows[start].table {
			end++
		}
		rows := make([]map[string]any, 0, end-start)
		for _, r := range x.rows[start:end] {
			rows = append(rows, clone(r.row))
		}
		tx, err := st.Begin(ctx)
		must(t, err)
		n, err := tx.ImportRows(ctx, x.rows[start].table, rows)
		if err != nil {
			tx.Rollback()
			t.Fatalf("ImportRows(%s): %v", x.rows[start].table, err)
		}
		must(t, tx.Commit())
		inserted += n
		start = end
	}
	return inserted
}

func clone(row map[string]any) map[string]any {
	out := make(map[string]any, len(row))
	for k, v := range row {
		out[k] = v
	}
	return out
}

func testExport(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()
	st := newStore(t)
	must(t, st.ProjectEnsure(ctx, "p", base))
	must(t, st.ProjectEnsure(ctx, "q", base))
	must(t, st.ProjectPolicySet(ctx, "p", `{"network":"ask"}`))
	must(t, st.ProjectRetentionSet(ctx, "p", logbook.Retention{SessionsDays: 30, PayloadsDays: 7}))
	s := newSession(t, st, sessionOpts{HarnessID: "h1"})
	sub := newSession(t, st, sessionOpts{ParentID: s.ID, StartedAt: base.Add(time.Minute)})
	other := newSession(t, st, sessionOpts{Project: "q"})
	insertAll(t, st, []logbook.Entry{
		{SessionID: s.ID, Seq: 1, At: base, Kind: logbook.KindPrompt, Text: "find the race in the cache", Key: "k1"},
		{SessionID: s.ID, Seq: 2, At: base.Add(time.Second), Kind: logbook.KindToolResult, Tool: "Bash", ToolCallID: "c1",
			Payload: json.RawMessage(`{"is_error":true}`), Commit: "1a2b3c4", Usage: &logbook.Usage{InputTokens: 10, OutputTokens: 2}},
		{SessionID: sub.ID, Seq: 1, At: base.Add(time.Minute), Kind: logbook.KindMessage, Role: "assistant", Text: "subagent text"},
		{SessionID: other.ID, Seq: 1, At: base, Kind: logbook.KindNote, Text: "elsewhere"},
	})
	_, err := st.EntrySupersede(ctx, sub.ID, base.Add(2*time.Minute))
	must(t, err)
	must(t, st.TouchUpsert(ctx, s.ID, "p", []logbook.Touch{{Kind: logbook.TouchFile, Value: "cache.go", FirstAt: base}}))
	must(t, st.PlanReplace(ctx, s.ID, []logbook.PlanStep{{N: 1, Text: "reproduce", Status: logbook.StepDone, UpdatedAt: base}}))
	ended := s
	closed := base.Add(time.Hour)
	ended.Status, ended.Outcome, ended.Blocker, ended.ClosedAt = logbook.StatusEnded, logbook.OutcomeFailed, logbook.BlockerToolError, &closed
	must(t, st.SessionUpdate(ctx, &ended, &s))

	x := exportAll(t, st, "")
	var names []string
	counted := map[string]int64{}
	for _, tb := range x.tables {
		names = append(names, tb.Name)
		counted[tb.Name] = tb.Rows
	}
	for _, want := range []string{"projects", "sessions", "entries", "plan_steps", "touches"} {
		if !slices.Contains(names, want) {
			t.Errorf("Export counted tables %v, without %s", names, want)
		}
	}
	if slices.Index(names, "projects") > slices.Index(names, "sessions") || slices.Index(names, "sessions") > slices.Index(names, "entries") {
		t.Errorf("tables in the order %v: a row must come after the rows it refers to", names)
	}
	read := map[string]int64{}
	for _, r := range x.rows {
		read[r.table]++
	}
	for name, n := range counted {
		equal(t, "rows of "+name+" read as counted", read[name], n)
	}
	equal(t, "sessions exported", read["sessions"], 3)
	equal(t, "entries exported, superseded too", read["entries"], 4)

	t.Run("RestoreIsWholeAndIdempotent", func(t *testing.T) {
		t.Parallel()
		dst := newStore(t)
		equal(t, "rows restored", restore(t, dst, x), len(x.rows))
		equal(t, "restored export equals the original", exportAll(t, dst, "").lines(t), x.lines(t))
		equal(t, "rows restored again", restore(t, dst, x), 0)
		equal(t, "export after restoring twice", exportAll(t, dst, "").lines(t), x.lines(t))

		// Derived data is written with the rows.
		statsOf := func(st store.Store) string {
			rows, err := st.SessionStats(ctx, store.SessionStatsParams{Project: "p", Since: base.Add(-time.Hour), By: logbook.ByOutcome, Now: base.Add(2 * time.Hour)})
			must(t, err)
			data, _ := json.Marshal(rows)
			return string(data)
		}
		equal(t, "statistics after restore", statsOf(dst), statsOf(st))
		top, err := dst.TouchTop(ctx, "p", base.Add(-time.Hour), 10)
		must(t, err)
		equal(t, "busiest files after restore", len(top) == 1 && top[0].Value == "cache.go" && top[0].Count == 1, true)
		found, err := dst.Search(ctx, store.SearchParams{Project: "p", Query: "race", Candidates: 50, Limit: 10})
		must(t, err)
		equal(t, "search finds a restored entry", len(found.Hits) == 1 && found.Hits[0].Entry != nil && found.Hits[0].Entry.Seq == 1, true)
		byCommit, err := dst.SessionListByCommit(ctx, "p", "1a2b3c4d5e6f", 10)
		must(t, err)
		equal(t, "why finds the restored session", ids(byCommit), s.ID+" ")

		// New entries are numbered past the restored ones.
		insertAll(t, dst, []logbook.Entry{{SessionID: other.ID, Seq: 2, At: base, Kind: logbook.KindNote, Text: "after the restore"}})
	})

	t.Run("OneProject", func(t *testing.T) {
		t.Parallel()
		q := exportAll(t, st, "q")
		for _, r := range q.rows {
			for _, column := range []string{"project", "name"} {
				if v, ok := r.row[column]; ok && r.table != "agents" && v != "q" {
					t.Errorf("export of q holds %s row %v", r.table, r.row)
				}
			}
			if id, ok := r.row["session_id"]; ok && id != other.ID {
				t.Errorf("export of q holds %s row of session %v", r.table, id)
			}
		}
		equal(t, "rows of q", len(q.rows), 3) // the project, its session, its entry
	})

	t.Run("Refused", func(t *testing.T) {
		t.Parallel()
		dst := newStore(t)
		_, err := dst.ImportRows(ctx, "tokens", []map[string]any{{"id": "t"}})
		equal(t, "a table an export does not hold is ErrInvalid", errors.Is(err, logbook.ErrInvalid), true)
		_, err = dst.ImportRows(ctx, "projects", []map[string]any{{"name": "p", "created_at": int64(1), "colour": "red"}})
		equal(t, "a column this database lacks is ErrInvalid", errors.Is(err, logbook.ErrInvalid), true)

		// Another database: its own session and entry under the ids.
		must(t, dst.ProjectEnsure(ctx, "p", base))
		mine := newSession(t, dst, sessionOpts{HarnessID: "mine"})
		insertAll(t, dst, []logbook.Entry{{SessionID: mine.ID, Seq: 1, At: base, Kind: logbook.KindNote, Text: "mine"},
			{SessionID: mine.ID, Seq: 2, At: base, Kind: logbook.KindNote, Text: "mine too"}})
		var sessions, entries []map[string]any
		for _, r := range x.rows {
			switch {
			case r.table == "sessions" && r.row["project"] == "p":
				sessions = append(sessions, clone(r.row))
			case r.table == "entries":
				entries = append(entries, clone(r.row))
			}
		}
		_, err = dst.ImportRows(ctx, "sessions", sessions)
		must(t, err)
		_, err = dst.ImportRows(ctx, "entries", entries[:1])
		equal(t, "an entry id held by another entry is ErrConflict", errors.Is(err, logbook.ErrConflict), true)
		if err != nil && !strings.Contains(err.Error(), "empty database") {
			t.Errorf("the conflict says %q, without what to do", err)
		}
		clash := clone(sessions[0])
		clash["id"] = "another-id-for-h1"
		_, err = dst.ImportRows(ctx, "sessions", []map[string]any{clash})
		equal(t, "a session clashing on its harness id is ErrConflict", errors.Is(err, logbook.ErrConflict), true)
	})
}
