package bench

import (
	"math"
	"testing"
	"time"
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
