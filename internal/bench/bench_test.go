package bench

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/store/sqlstore"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestHistogram: percentiles from the fixed-size histogram are within the
// 2% of its buckets.
func TestHistogram(t *testing.T) {
	h := &histogram{}
	for ms := 1; ms <= 1000; ms++ {
		h.add(time.Duration(ms) * time.Millisecond)
	}
	for _, c := range []struct{ q, want float64 }{{0.50, 500}, {0.95, 950}, {0.99, 990}} {
		if got := h.quantile(c.q); math.Abs(got-c.want)/c.want > 0.025 {
			t.Errorf("p%.0f = %.1f ms, want %.0f ms within 2.5%%", c.q*100, got, c.want)
		}
	}
	if s := h.summary(); s.Count != 1000 || s.Max != 1000 {
		t.Errorf("summary: %+v", s)
	}
}

// TestLoadMix: a session's entries are a tool call, its result and the
// agent's text in turn, whatever the batch size, and a result carries its
// call's id. One-entry batches (what hooks send) used to be all tool calls.
func TestLoadMix(t *testing.T) {
	a := &agent{id: 7, rng: rand.New(rand.NewPCG(1, 2))}
	want := []string{"tool_call", "tool_result", "message", "tool_call", "tool_result", "message"}
	for n, kind := range want {
		e := a.loadEntry(n)
		if e["kind"] != kind {
			t.Errorf("entry %d is a %v, want a %s", n, e["kind"], kind)
		}
		if kind == "tool_result" && e["tool_call_id"] != a.loadEntry(n - 1)["tool_call_id"] {
			t.Errorf("entry %d answers call %v, want %v", n, e["tool_call_id"], a.loadEntry(n - 1)["tool_call_id"])
		}
	}
	if a.loadEntry(0)["key"] == a.loadEntry(3)["key"] {
		t.Error("two calls of one session share a key: the second would be dropped as a duplicate")
	}
}

// TestRawInsertMix: the raw baseline writes the load's mix of entries.
func TestRawInsertMix(t *testing.T) {
	st := testdb.SQLite(t)
	ctx := context.Background()
	if _, err := RawInsert(ctx, st, "raw", 9); err != nil {
		t.Fatal(err)
	}
	rows, err := st.(*sqlstore.Store).DB().QueryContext(ctx, `SELECT kind, COUNT(*) FROM entries GROUP BY kind`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int{}
	for rows.Next() {
		var kind string
		var n int
		if err := rows.Scan(&kind, &n); err != nil {
			t.Fatal(err)
		}
		got[kind] = n
	}
	if want := map[string]int{"tool_call": 3, "tool_result": 3, "message": 3}; !maps.Equal(got, want) {
		t.Errorf("raw baseline entries by kind: %v, want %v", got, want)
	}
}
