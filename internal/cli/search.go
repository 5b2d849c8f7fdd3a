package cli

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/importer"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// searchFilters are a search's filters, as flags named like the API's
// query parameters.
var searchFilters = []struct{ name, help string }{
	{"actor", "who ran the session"}, {"harness", "claude-code, codex, …"}, {"outcome", "success, partial or failed"},
	{"tool", "entries of this tool (its calls and results)"},
	{"kind", "entries of this kind (prompt, message, tool_call, tool_result, note, summary, …), or session for titles, goals and results"},
	{"since", "recorded since: RFC 3339 or a duration back (36h, 7d)"},
	{"limit", "results per page (default 20, at most 100)"}, {"cursor", "next_cursor of the previous page"},
}

// search is `logbook search WORDS…`: the project's transcripts, best
// match first, each with the text around the match.
func search(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := addServerFlags(fs, env)
	asJSON := fs.Bool("json", false, "print the API's JSON")
	values := map[string]*string{}
	for _, f := range searchFilters {
		values[f.name] = fs.String(f.name, "", f.help)
	}
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: logbook search [flags] WORDS…

Searches every transcript of the project (prompts, messages, tool calls
and their results, notes, summaries) and its sessions' titles, goals and
results. Every word must be found; a word ending in * also finds longer
ones ("migrat*" finds "migration"); "a phrase in quotes" is found as
written (quote the quotes for the shell: '"connection refused"').

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	q := url.Values{}
	q.Set("project", *srv.project)
	q.Set("q", strings.Join(fs.Args(), " "))
	for name, v := range values {
		if *v != "" {
			q.Set(name, *v)
		}
	}
	// The flags are the API's query parameters, read as the server reads them.
	params, err := ledger.ParseSearchParams(q, time.Now())
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: --%v\n", err)
		return 2
	}
	page, err := srv.ledger().Search(ctx, params)
	if done, code := answered(env, page, err, *asJSON); done {
		return code
	}
	mark, unmark := "»", "«"
	if importer.IsTerminal(env.Stdout) {
		mark, unmark = "\033[1;33m", "\033[0m"
	}
	for _, h := range page.Results {
		where := fmt.Sprintf("#%d %s", h.Seq, h.Kind)
		if h.Tool != "" {
			where += " " + h.Tool
		}
		if h.Seq == 0 {
			where = "the session's " + h.Field
		}
		fmt.Fprintf(env.Stdout, "%s %s  %s  %s by %s  %s\n", h.SessionID, where, h.At.Local().Format("2006-01-02 15:04"),
			dash(h.Harness), h.Actor, logbook.Clip(h.Title, 60))
		fmt.Fprintf(env.Stdout, "    %s\n\n", logbook.SnippetString(h.Snippet, mark, unmark))
	}
	if len(page.Results) == 0 {
		fmt.Fprintln(env.Stdout, "nothing found")
	}
	if page.More && page.NextCursor == "" {
		fmt.Fprintf(env.Stdout, "(the newest %d matches were ranked; more words narrow the search)\n", logbook.SearchCandidates)
	}
	if page.Indexing {
		fmt.Fprintln(env.Stdout, "(the server is still indexing what was written before its search index; older matches may be missing)")
	}
	if page.NextCursor != "" {
		fmt.Fprintf(env.Stdout, "more: --cursor %s\n", page.NextCursor)
	}
	return 0
}
