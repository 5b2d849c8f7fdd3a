package service_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/logbookhq/logbook/internal/bench"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// The service's hot paths on each engine, for regressions:
//
//	go test ./internal/service -run '^$' -bench . -benchmem
//
// Group commit is on (svc.Run), as in logbook serve; parallel benchmarks
// show what it buys.
func BenchmarkHotPaths(b *testing.B) {
	for _, e := range testdb.Engines() {
		b.Run(e.Name, func(b *testing.B) {
			svc := service.New(e.Open(b), service.Options{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go svc.Run(ctx)
			alice := service.Caller{Actor: "alice", Project: "p"}

			b.Run("AppendOneEntry", func(b *testing.B) {
				s, _, _ := svc.StartSession(ctx, alice, service.StartParams{})
				b.ResetTimer()
				for i := range b.N {
					if _, err := svc.AppendEntries(ctx, alice, s.ID, service.Batch{Entries: []logbook.Entry{
						{Kind: logbook.KindToolCall, Tool: "Bash", Key: fmt.Sprint(i)}}}); err != nil {
						b.Fatal(err)
					}
				}
			})
			// As hooks report them: a tool call, its result, the agent's
			// text, each its own request.
			b.Run("AppendOneEntryParallel", func(b *testing.B) {
				b.SetParallelism(25) // 50 writers on 2 cores
				b.RunParallel(func(pb *testing.PB) {
					s, _, _ := svc.StartSession(ctx, alice, service.StartParams{})
					i := 0
					for pb.Next() {
						i++
						if _, err := svc.AppendEntries(ctx, alice, s.ID, service.Batch{Entries: []logbook.Entry{bench.LoadEntry(fmt.Sprint("toolu_", i/3), i)}}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
			b.Run("Append100Entries", func(b *testing.B) {
				s, _, _ := svc.StartSession(ctx, alice, service.StartParams{})
				batch := make([]logbook.Entry, 100)
				b.ResetTimer()
				for i := range b.N {
					for j := range batch {
						batch[j] = logbook.Entry{Kind: logbook.KindMessage, Role: "assistant", Text: "working on it", Key: fmt.Sprint(i, "-", j)}
					}
					if _, err := svc.AppendEntries(ctx, alice, s.ID, service.Batch{Entries: batch}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "entries/s")
			})
			b.Run("StartSession", func(b *testing.B) {
				for i := range b.N {
					if _, _, err := svc.StartSession(ctx, alice, service.StartParams{Harness: "h", HarnessSessionID: fmt.Sprint(i)}); err != nil {
						b.Fatal(err)
					}
				}
			})
			for range 1000 {
				s, _, _ := svc.StartSession(ctx, alice, service.StartParams{})
				_, _ = svc.EndSession(ctx, alice, s.ID, service.EndParams{Outcome: logbook.OutcomeFailed})
			}
			b.Run("ListSessions50", func(b *testing.B) {
				for range b.N {
					if _, err := svc.ListSessions(ctx, alice, service.ListParams{Filter: logbook.SessionFilter{Outcome: logbook.OutcomeFailed}}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("GetSession500Entries", func(b *testing.B) {
				s, _, _ := svc.StartSession(ctx, alice, service.StartParams{})
				batch := make([]logbook.Entry, 500)
				for j := range batch {
					batch[j] = logbook.Entry{Kind: logbook.KindMessage, Role: "assistant", Text: "step " + fmt.Sprint(j)}
				}
				if _, err := svc.AppendEntries(ctx, alice, s.ID, service.Batch{Entries: batch}); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if _, err := svc.GetSession(ctx, alice, s.ID, service.GetParams{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
