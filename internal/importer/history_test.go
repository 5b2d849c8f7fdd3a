package importer_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/importer"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// lineTimes returns the earliest and latest "timestamp" of a transcript's
// lines, read with encoding/json rather than through the parser under test.
func lineTimes(t *testing.T, path string) (first, last time.Time) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var line struct {
			Timestamp time.Time `json:"timestamp"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Timestamp.IsZero() {
			continue
		}
		if first.IsZero() || line.Timestamp.Before(first) {
			first = line.Timestamp
		}
		if line.Timestamp.After(last) {
			last = line.Timestamp
		}
	}
	if err := sc.Err(); err != nil || first.IsZero() {
		t.Fatalf("no line times in %s (%v)", path, err)
	}
	return first, last
}

// TestHistoryKeepsItsTime: a session imported from a 2025 transcript
// starts at its first line and ends at its last, in the database directly
// and through a server; so lists since yesterday, statistics of the last
// days, the dashboard's busiest files and prune see it as old, and the
// statistics count it on its own day.
func TestHistoryKeepsItsTime(t *testing.T) {
	const hid = "1af7fc5e-8455-4414-9ccd-011d40f70b2a"
	path := filepath.Join(t.TempDir(), hid+".jsonl")
	copyFile(t, filepath.Join(fixturesDir(t), "claude-code", "ccviewer_"+hid+".jsonl"), path)
	first, last := lineTimes(t, path)

	sinks := map[string]func(t *testing.T, svc *service.Service) ledger.Ledger{
		"database": func(_ *testing.T, svc *service.Service) ledger.Ledger { return importAs(svc) },
		"server":   func(t *testing.T, svc *service.Service) ledger.Ledger { return throughServer(t, svc, "p") },
	}
	for name, sinkFor := range sinks {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			svc := newService(t)
			run(t, sinkFor(t, svc), importer.Options{Format: importer.Claude, Project: "p"}, path)
			_, sessions := storedIn(t, svc, "p")
			s := sessions[hid]
			if !s.StartedAt.Equal(first) || s.ClosedAt == nil || !s.ClosedAt.Equal(last) || !s.LastSeenAt.Equal(last) {
				t.Fatalf("started %v, closed %v, last seen %v; want the transcript's %v to %v", s.StartedAt, s.ClosedAt, s.LastSeenAt, first, last)
			}
			if want := int64(last.Sub(first).Seconds()); s.DurationSeconds != want || want == 0 {
				t.Errorf("duration %d s, want %d s", s.DurationSeconds, want)
			}
			view, err := svc.GetSession(ctx, admin, s.ID, service.GetParams{})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range view.Entries {
				if e.At.Before(first) || e.At.After(last) {
					t.Errorf("entry %d at %v, outside the transcript's %v to %v", e.Seq, e.At, first, last)
				}
			}
			if len(view.Touched) == 0 {
				t.Fatal("the transcript's Write left no touch")
			}
			for _, touch := range view.Touched {
				if touch.FirstAt.Before(first) || touch.FirstAt.After(last) {
					t.Errorf("touch %s first at %v, outside the transcript's time", touch.Value, touch.FirstAt)
				}
			}

			// Seen as old: not in a list since yesterday, not among this
			// week's busiest files, not in this month's statistics.
			yesterday := time.Now().Add(-24 * time.Hour)
			recent, err := svc.ListSessions(ctx, admin, service.ListParams{Project: "p", Filter: logbook.SessionFilter{Since: yesterday}})
			if err != nil {
				t.Fatal(err)
			}
			if len(recent.Sessions) != 0 {
				t.Errorf("sessions since yesterday: %d, want none", len(recent.Sessions))
			}
			busiest, err := svc.BusiestFiles(ctx, admin, "p", time.Time{}, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(busiest) != 0 {
				t.Errorf("this week's busiest files: %+v, want none", busiest)
			}
			if then, err := svc.BusiestFiles(ctx, admin, "p", first, 10); err != nil || len(then) == 0 {
				t.Errorf("busiest files since the transcript's day: %+v (%v), want its files", then, err)
			}
			month, err := svc.Stats(ctx, admin, service.StatsParams{Project: "p", By: logbook.ByOutcome})
			if err != nil {
				t.Fatal(err)
			}
			if len(month) != 0 {
				t.Errorf("statistics of the last 30 days: %+v, want none", month)
			}
			days, err := svc.Stats(ctx, admin, service.StatsParams{Project: "p", By: logbook.ByDay, Since: first.Add(-48 * time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			counted := map[string]int64{}
			for _, row := range days {
				counted[row.Key] += row.Sessions
			}
			if day := first.UTC().Format("2006-01-02"); counted[day] != 1 {
				t.Errorf("sessions by day %v, want 1 on %s", counted, day)
			}

			// prune --ended-before a month ago removes it.
			pruned, err := svc.Prune(ctx, admin, time.Now().Add(-30*24*time.Hour), 0)
			if err != nil {
				t.Fatal(err)
			}
			if pruned.Sessions != 1 {
				t.Errorf("prune of sessions ended over a month ago removed %d, want the imported one", pruned.Sessions)
			}
		})
	}
}
