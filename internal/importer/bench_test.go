package importer_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/importer"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/service"
)

// writeTranscripts generates files Claude Code transcripts of about
// perFile bytes each in dir: turns of a prompt, an assistant answer with
// reasoning and a Bash call, and a tool result of about 2 KB, as real
// sessions have. It returns the bytes written.
func writeTranscripts(tb testing.TB, dir string, files, perFile int) int64 {
	tb.Helper()
	output := strings.Repeat(`ok  \tgithub.com/example/app/pkg\t0.123s\n`, 50) // JSON escapes
	var total int64
	for f := range files {
		sid := fmt.Sprintf("00000000-0000-4000-8000-%012d", f)
		fh, err := os.Create(filepath.Join(dir, sid+".jsonl"))
		if err != nil {
			tb.Fatal(err)
		}
		w := bufio.NewWriter(fh)
		written := 0
		at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(f) * time.Hour)
		for turn := 0; written < perFile; turn++ {
			ts := func(s int) string { return at.Add(time.Duration(turn*10+s) * time.Second).Format(time.RFC3339) }
			lines := []string{
				fmt.Sprintf(`{"type":"user","sessionId":"%s","uuid":"u%d","cwd":"/work/app","gitBranch":"main","timestamp":"%s","message":{"role":"user","content":"Run the tests of package %d and fix what fails"}}`, sid, turn, ts(0), turn),
				fmt.Sprintf(`{"type":"assistant","sessionId":"%s","uuid":"a%d","cwd":"/work/app","timestamp":"%s","message":{"id":"msg_%d","model":"claude-sonnet-4","role":"assistant","content":[{"type":"thinking","thinking":"I will run go test on the package and read the failures before changing anything."},{"type":"text","text":"Running the tests."},{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{"command":"go test ./pkg/%d/..."}}],"usage":{"input_tokens":1500,"output_tokens":120}}}`, sid, turn, ts(1), turn, turn, turn),
				fmt.Sprintf(`{"type":"user","sessionId":"%s","uuid":"r%d","cwd":"/work/app","timestamp":"%s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":"%s"}]}}`, sid, turn, ts(5), turn, output),
			}
			for _, l := range lines {
				n, _ := w.WriteString(l + "\n")
				written += n
			}
		}
		if err := w.Flush(); err != nil {
			tb.Fatal(err)
		}
		fh.Close()
		total += int64(written)
	}
	return total
}

// BenchmarkImport imports a generated transcript set (200 files, 50 MB by
// default; LOGBOOK_IMPORT_BENCH_MB sets the size) into SQLite through the
// service, as `logbook import claude --db` does, and reports MB/s,
// entries/s and the peak heap (of the whole process: with the server's,
// for BenchmarkImportServer).
//
//	go test ./internal/importer -run '^$' -bench Import -benchtime 1x
func BenchmarkImport(b *testing.B) {
	benchmarkImport(b, func(svc *service.Service) ledger.Ledger { return importAs(svc) })
}

// BenchmarkImportServer is the same through a server on the same
// database, as `logbook import claude` with a token does, the server's
// default per-token rate limit included.
func BenchmarkImportServer(b *testing.B) {
	benchmarkImport(b, func(svc *service.Service) ledger.Ledger { return throughServer(b, svc, "bench") })
}

func benchmarkImport(b *testing.B, sinkOn func(*service.Service) ledger.Ledger) {
	mb := 50
	if v, err := strconv.Atoi(os.Getenv("LOGBOOK_IMPORT_BENCH_MB")); err == nil && v > 0 {
		mb = v
	}
	const files = 200
	dir := b.TempDir()
	size := writeTranscripts(b, dir, files, mb<<20/files)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		im, err := importer.New(sinkOn(newService(b)), importer.Options{Format: importer.Claude, Project: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		stop := watchHeap()
		b.StartTimer()
		start := time.Now()
		counts, err := im.Run(context.Background(), []string{dir})
		elapsed := time.Since(start)
		b.StopTimer()
		peak := stop()
		if err != nil {
			b.Fatal(err)
		}
		if counts.Files != files || counts.Recorded != counts.Entries || counts.Skipped != 0 {
			b.Fatalf("counts: %+v", counts)
		}
		b.ReportMetric(float64(size)/1e6/elapsed.Seconds(), "MB/s")
		b.ReportMetric(float64(counts.Recorded)/elapsed.Seconds(), "entries/s")
		b.ReportMetric(float64(counts.Recorded), "entries")
		b.ReportMetric(float64(size)/1e6, "MB")
		b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	}
}

// watchHeap samples the heap in use until the returned function is
// called, which returns the largest sample.
func watchHeap() func() uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		return peak.Load()
	}
}

// TestMemoryStaysFlat imports one file ten times the size of another and
// checks the heap does not grow with it: the import streams.
func TestMemoryStaysFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 44 MB")
	}
	peakFor := func(size int) uint64 {
		dir := t.TempDir()
		writeTranscripts(t, dir, 1, size)
		im, err := importer.New(importAs(newService(t)), importer.Options{Format: importer.Claude, Project: "p"})
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		stop := watchHeap()
		_, err = im.Run(context.Background(), []string{dir})
		peak := stop()
		if err != nil {
			t.Fatal(err)
		}
		return peak
	}
	small, large := peakFor(4<<20), peakFor(40<<20)
	t.Logf("peak heap: %.1f MB importing 4 MB, %.1f MB importing 40 MB", float64(small)/1e6, float64(large)/1e6)
	if large > 2*small+16<<20 {
		t.Errorf("the heap grew with the file: %d bytes for 4 MB, %d for 40 MB", small, large)
	}
}
