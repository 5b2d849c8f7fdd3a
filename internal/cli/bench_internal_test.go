package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

// A long load run reports its rate and memory in each 10 seconds, so a
// rate that falls (a growing file, a host slowing down) shows in the run
// itself and not only as a lower overall figure.
func TestTenSecondSeries(t *testing.T) {
	var every tenSeconds
	memory := 70.0
	rss := func() float64 { memory++; return memory }
	// The progress ticks about once a second; entries arrive at 1,000/s
	// for the first 10 s and 500/s after.
	entries := int64(0)
	for s := 1; s <= 25; s++ {
		if s <= 10 {
			entries += 1000
		} else {
			entries += 500
		}
		every.observe(time.Duration(s)*time.Second, entries, rss)
	}
	if want := []float64{1000, 500}; !slices.Equal(every.rates, want) {
		t.Errorf("rates = %v, want %v (one for each full 10 s)", every.rates, want)
	}
	if want := []float64{71, 72}; !slices.Equal(every.rss, want) {
		t.Errorf("memory = %v, want %v, sampled with each rate", every.rss, want)
	}

	// A tick that comes late measures its rate over the time that passed.
	late := tenSeconds{}
	late.observe(12*time.Second, 6000, rss)
	if want := []float64{500}; !slices.Equal(late.rates, want) {
		t.Errorf("late tick: rates = %v, want %v", late.rates, want)
	}

	// Ticks a little late (every 1.1 s) still give a sample for each 10 s:
	// seven by 70.4 s, not one every ten ticks.
	drifting := tenSeconds{}
	for tick := 1; tick <= 64; tick++ {
		drifting.observe(time.Duration(tick)*1100*time.Millisecond, int64(tick)*1000, rss)
	}
	if len(drifting.rates) != 7 {
		t.Errorf("ticks every 1.1 s for 70.4 s gave %d samples, want 7", len(drifting.rates))
	}

	var out bytes.Buffer
	printBench(&out, benchOutput{EntriesPerSecEvery10s: every.rates, RSSEvery10s: every.rss})
	for _, want := range []string{"entries/s in each 10 s: [1000 500]", "every 10 s: [71 72]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed:\n%s\nwant a line with %q", out.String(), want)
		}
	}
}
