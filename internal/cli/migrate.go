package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/logbookhq/logbook/internal/importer"
	"github.com/logbookhq/logbook/internal/service"
)

// migrateCmd creates or updates the schema, counts the sessions a
// migration left uncounted into the statistics' rollups, indexes for
// search what was written before the search index, and exits. serve does
// the same on start (counting and indexing in the background while it
// serves); this is for deployments that migrate as a separate step.
func migrateCmd(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	db := fs.String("db", "", "SQLite file or postgres:// URL (env LOGBOOK_DB; default "+defaultDB(env)+")")
	rebuild := fs.Bool("rebuild-stats", false, "empty the statistics' rollups and count every session into them again (stop every server on the database first)")
	reindex := fs.Bool("rebuild-search", false, "empty the search index and index every entry and session again (servers may run meanwhile; their searches miss what is not indexed yet)")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	dbValue := dbFlagValue(env, *db)
	st, err := env.OpenStore(ctx, dbValue)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	defer st.Close()
	if *rebuild {
		if err := st.StatsRebuild(ctx); err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
	}
	if *reindex {
		if err := st.SearchRebuild(ctx); err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
	}
	svc := service.New(st, service.Options{Logger: logger(env.Stderr)})
	for _, b := range []struct {
		doing, done string
		run         func(context.Context, func(n, total int64)) error
	}{
		{"counting sessions into the statistics", "counted %d sessions into the statistics in %s (the longest batch held the writer %s)\n", svc.BackfillStats},
		{"indexing entries and sessions for search", "indexed %d entries and sessions for search in %s (the longest batch held the writer %s)\n", svc.BackfillSearch},
	} {
		start := time.Now()
		progress := &backfillProgress{w: env.Stderr, terminal: importer.IsTerminal(env.Stderr), doing: b.doing, last: start}
		err = b.run(ctx, progress.update)
		progress.end()
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %s: %v (run logbook migrate again to go on from there)\n", b.doing, err)
			return 1
		}
		if progress.counted > 0 {
			fmt.Fprintf(env.Stderr, b.done, progress.counted, time.Since(start).Round(time.Millisecond), progress.longest.Round(time.Millisecond))
		}
	}
	fmt.Fprintf(env.Stdout, "database %s is up to date\n", describeDB(dbValue))
	return 0
}

// backfillProgress shows how a backfill (statistics, search) goes: a
// line redrawn in place on a terminal, else a line every 10%.
type backfillProgress struct {
	w        io.Writer
	terminal bool
	doing    string // "counting sessions into the statistics"
	counted  int64
	shown    int64         // the percentage last printed (not on a terminal)
	last     time.Time     // when the last batch ended (or the first began)
	longest  time.Duration // the longest batch (its transaction)
}

func (p *backfillProgress) update(n, total int64) {
	if n > 0 {
		p.longest = max(p.longest, time.Since(p.last))
	}
	p.last = time.Now()
	p.counted = n
	percent := 100 * n / max(total, 1)
	switch {
	case p.terminal:
		fmt.Fprintf(p.w, "\r\033[K%s: %d of %d (%d%%)", p.doing, n, total, percent)
	case percent >= p.shown+10 || (n == total && p.shown < 100):
		p.shown = percent
		fmt.Fprintf(p.w, "%s: %d of %d (%d%%)\n", p.doing, n, total, percent)
	}
}

// end ends the redrawn line.
func (p *backfillProgress) end() {
	if p.terminal && p.counted > 0 {
		fmt.Fprintln(p.w)
	}
}
