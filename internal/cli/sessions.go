package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/logbookhq/logbook/internal/client"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// serverFlags are the flags of every command that talks to a server.
type serverFlags struct {
	server, token, project *string
}

func addServerFlags(fs *flag.FlagSet, env Env) serverFlags {
	return serverFlags{
		server:  fs.String("server", env.Getenv("LOGBOOK_URL"), "logbook server URL (env LOGBOOK_URL; default http://127.0.0.1:7474)"),
		token:   tokenFlag(fs, env, "bearer `token` (default: env LOGBOOK_TOKEN)"),
		project: fs.String("project", env.Getenv("LOGBOOK_PROJECT"), "project (env LOGBOOK_PROJECT; default the token's)"),
	}
}

// tokenFlag defines -token, whose value is LOGBOOK_TOKEN unless given.
// Its usage says where the default comes from and never shows it: a
// usage message lands in terminals, logs and bug reports.
func tokenFlag(fs *flag.FlagSet, env Env, usage string) *string {
	v := &secretValue{value: env.Getenv("LOGBOOK_TOKEN")}
	fs.Var(v, "token", usage)
	return &v.value
}

// secretValue is a string flag that shows nothing of its value: String is
// what flag prints as the default, so it is always empty.
type secretValue struct{ value string }

func (v *secretValue) String() string     { return "" }
func (v *secretValue) Set(s string) error { v.value = s; return nil }

// ledger is the server's ledger, as the token's actor sees it.
func (f serverFlags) ledger() ledger.Ledger { return f.client().Ledger() }

func (f serverFlags) client() *client.Client {
	server := *f.server
	if server == "" {
		server = "http://127.0.0.1:7474"
	}
	return client.New(server, *f.token)
}

// sessions is `logbook sessions list|show|tail|stats`.
func sessions(ctx context.Context, env Env, args []string) int {
	usage := "Usage: logbook sessions list|show ID|tail|stats [flags]\n\nRun 'logbook sessions <command> --help' for its flags.\n"
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, usage)
		return 2
	}
	switch args[0] {
	case "list":
		return sessionsList(ctx, env, args[1:])
	case "show":
		return sessionsShow(ctx, env, args[1:])
	case "tail":
		return sessionsTail(ctx, env, args[1:])
	case "stats":
		return sessionsStats(ctx, env, args[1:])
	case "-h", "--help", "help":
		fmt.Fprint(env.Stdout, usage)
		return 0
	}
	fmt.Fprintf(env.Stderr, "logbook sessions: unknown command %q\n%s", args[0], usage)
	return 2
}

// listFilters are the audit list's filters, as flags named like the API's
// query parameters.
var listFilters = []struct{ name, help string }{
	{"state", "active, idle or ended"}, {"outcome", "success, partial or failed"},
	{"blocker", "why it got stuck, e.g. rate_limited"}, {"harness", "claude-code, codex, …"},
	{"actor", "who ran it"}, {"agent", "the named agent"}, {"issue", "attached to or naming issue N"},
	{"pull", "attached to, naming or on the branch of pull N"}, {"subject", "what it is about, e.g. vm:101"},
	{"path", "touched this file (a folder when it ends in /)"}, {"parent", "children of this session"},
	{"since", "seen since: RFC 3339 or a duration back (36h, 7d)"}, {"until", "started before: RFC 3339 or a duration back"},
	{"min_duration", "ran at least this long (90m)"}, {"min_tool_calls", "made at least this many tool calls"},
	{"q", "words of the title, goal or result (see logbook search)"}, {"sort", "last_seen (default), started or duration"},
	{"limit", "sessions per page (default 50, at most 200)"}, {"cursor", "next_cursor of the previous page"},
}

func sessionsList(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("sessions list", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := addServerFlags(fs, env)
	asJSON := fs.Bool("json", false, "print the API's JSON")
	subagents := fs.Bool("subagents", false, "list subagents too, not only the top of each tree")
	values := map[string]*string{}
	for _, f := range listFilters {
		values[f.name] = fs.String(f.name, "", f.help)
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	q := url.Values{}
	q.Set("project", *srv.project)
	for name, v := range values {
		if *v != "" {
			q.Set(name, *v)
		}
	}
	if *subagents {
		q.Set("subagents", "true")
	}
	// The flags are the API's query parameters, read as the server reads them.
	params, err := ledger.ParseListParams(q, time.Now())
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: --%v\n", err)
		return 2
	}
	page, err := srv.ledger().ListSessions(ctx, params)
	if done, code := answered(env, page, err, *asJSON); done {
		return code
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tOUTCOME\tBLOCKER\tHARNESS\tACTOR\tDURATION\tMSGS\tTOOLS\tTITLE")
	for _, s := range page.Sessions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", s.ID, s.State, dash(string(s.Outcome)), dash(string(s.Blocker)),
			dash(s.Harness), s.Actor, time.Duration(s.DurationSeconds)*time.Second, s.MessageCount, s.ToolCallCount, logbook.Clip(s.Title, 60))
	}
	tw.Flush()
	if page.NextCursor != "" {
		fmt.Fprintf(env.Stdout, "more: --cursor %s\n", page.NextCursor)
	}
	return 0
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// answered finishes a client command's call. On an error it says so on
// stderr and the command is done with code 1; with asJSON it prints the
// answer as the API's JSON and the command is done; otherwise the command
// goes on to render it.
func answered(env Env, answer any, err error, asJSON bool) (done bool, code int) {
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return true, 1
	}
	if asJSON {
		if err := json.NewEncoder(env.Stdout).Encode(answer); err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return true, 1
		}
		return true, 0
	}
	return false, 0
}

func sessionsShow(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("sessions show", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := addServerFlags(fs, env)
	asJSON := fs.Bool("json", false, "print the API's JSON")
	all := fs.Bool("all", false, "include entries superseded by a compaction")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, "Usage: logbook sessions show [flags] ID\n\nPrints a session's transcript readably.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	l := srv.ledger()
	id := fs.Arg(0)
	var view ledger.SessionView
	var after int64
	for first := true; ; first = false {
		page, err := l.GetSession(ctx, id, ledger.GetParams{AfterSeq: after, All: *all})
		if done, code := answered(env, page, err, *asJSON && first); done {
			return code
		}
		if first {
			view = page
		} else {
			view.Entries = append(view.Entries, page.Entries...)
		}
		if len(page.Entries) < logbook.MaxEntryPage {
			break
		}
		after = page.NextAfterSeq
	}
	printTranscript(env.Stdout, view)
	return 0
}

// printTranscript writes a session as a person reads it: a header, then
// each entry on its own lines, tool calls with their results.
func printTranscript(w io.Writer, v ledger.SessionView) {
	s := v.Session
	fmt.Fprintf(w, "%s\n%s\n", s.Title, strings.Repeat("=", min(len([]rune(s.Title)), 80)))
	fmt.Fprintf(w, "session %s · %s · %s by %s\n", s.ID, s.State, dash(s.Harness), s.Actor)
	if s.Outcome != "" {
		fmt.Fprintf(w, "outcome %s", s.Outcome)
		if s.Blocker != "" {
			fmt.Fprintf(w, " (blocker: %s)", s.Blocker)
		}
		fmt.Fprintln(w)
	}
	if s.Result != "" {
		fmt.Fprintf(w, "result: %s\n", s.Result)
	}
	fmt.Fprintf(w, "%d entries, %d messages, %d tool calls, %d in / %d out tokens, cost %s\n\n", s.EntryCount, s.MessageCount, s.ToolCallCount,
		s.InputTokens, s.OutputTokens, logbook.FormatUSD(s.CostMicros))
	for _, e := range v.Entries {
		mark := ""
		if e.Superseded {
			mark = " (superseded)"
		}
		head := fmt.Sprintf("#%d %s", e.Seq, e.At.Local().Format("15:04:05"))
		switch e.Kind {
		case logbook.KindPrompt:
			fmt.Fprintf(w, "%s  PROMPT%s\n%s\n\n", head, mark, indent(e.Text))
		case logbook.KindMessage:
			fmt.Fprintf(w, "%s  %s%s\n%s\n\n", head, strings.ToUpper(e.Role), mark, indent(e.Text))
		case logbook.KindToolCall:
			fmt.Fprintf(w, "%s  → %s%s %s\n", head, e.Tool, mark, logbook.Clip(string(e.Payload), 300))
		case logbook.KindToolResult:
			fmt.Fprintf(w, "%s  ← result%s\n%s\n\n", head, mark, indent(logbook.Clip(e.Text, 1000)))
		default:
			if e.Author != nil {
				mark = " from " + e.Author.Actor + mark
			}
			fmt.Fprintf(w, "%s  %s%s\n%s\n\n", head, strings.ToUpper(string(e.Kind)), mark, indent(e.Text))
		}
	}
	if len(v.Subagents) > 0 {
		fmt.Fprintln(w, "subagents:")
		for _, c := range v.Subagents {
			fmt.Fprintf(w, "  %s  %s  %s\n", c.ID, c.State, c.Title)
		}
	}
	if len(v.Plan) > 0 {
		fmt.Fprintln(w, "plan:")
		for _, st := range v.Plan {
			fmt.Fprintf(w, "  %d. [%s] %s\n", st.N, st.Status, st.Text)
		}
	}
}

func indent(text string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(text, "\n"), "\n", "\n    ")
}

func sessionsStats(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("sessions stats", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := addServerFlags(fs, env)
	by := fs.String("by", "outcome", "group by outcome, blocker, harness, agent, actor, model or day")
	then := fs.String("then", "", "and within each group by another of them (--by day --then outcome)")
	tz := fs.String("tz", "", "the time zone of days, an IANA name like Europe/Berlin (default UTC)")
	since := fs.String("since", "30d", "sessions started since: RFC 3339 or a duration back (7d)")
	topLevel := fs.Bool("top-level", false, "count only sessions with no parent, not subagents")
	asJSON := fs.Bool("json", false, "print the API's JSON")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	q := url.Values{"project": {*srv.project}, "by": {*by}, "since": {*since}, "then": {*then}, "tz": {*tz}, "top_level": {strconv.FormatBool(*topLevel)}}
	params, err := ledger.ParseStatsParams(q, time.Now())
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: --%v\n", err)
		return 2
	}
	groups, err := srv.ledger().Stats(ctx, params)
	if done, code := answered(env, ledger.StatsAnswer{By: *by, Groups: groups}, err, *asJSON); done {
		return code
	}
	var most int64 = 1
	for _, g := range groups {
		most = max(most, g.Sessions)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	header := strings.ToUpper(*by)
	if *then != "" {
		header += "\t" + strings.ToUpper(*then)
	}
	fmt.Fprintf(tw, "%s\tSESSIONS\t\tTOTAL TIME\tTOOL CALLS\tTOKENS IN/OUT\tCOST\n", header)
	for _, g := range groups {
		bar := strings.Repeat("█", int(g.Sessions*30/most))
		key := dash(g.Key)
		if *then != "" {
			key += "\t" + dash(g.Then)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%d/%d\t%s\n", key, g.Sessions, bar, time.Duration(g.DurationSeconds)*time.Second, g.ToolCalls,
			g.InputTokens, g.OutputTokens, logbook.FormatUSD(g.CostMicros))
	}
	tw.Flush()
	return 0
}

// sessionsTail follows a project's events and prints one line each,
// resuming after the last one it saw when the connection drops.
func sessionsTail(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("sessions tail", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := addServerFlags(fs, env)
	after := fs.Int64("after", 0, "start after this event id (default: only new events)")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	from := *after
	if from == 0 {
		from = ledger.FromNow
	}
	fmt.Fprintf(env.Stderr, "following %s (Ctrl-C to stop)\n", dash(*srv.project))
	// Follow reconnects by itself after a break, resuming after the last
	// event it saw; it returns when ctx ends or the server refuses.
	err := srv.ledger().Follow(ctx, *srv.project, from, func(ev logbook.Event) error {
		_, err := fmt.Fprintln(env.Stdout, eventLine(ev))
		return err
	})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	return 0
}

// eventLine is one readable line for an event.
func eventLine(ev logbook.Event) string {
	var d map[string]any
	_ = json.Unmarshal(ev.Data, &d)
	detail := ""
	switch ev.Type {
	case logbook.EventSessionStarted:
		detail = fmt.Sprintf("%v by %v: %v", d["harness"], d["actor"], d["title"])
	case logbook.EventSessionEnded:
		detail = fmt.Sprintf("%v %v %v", d["outcome"], d["blocker"], d["end_reason"])
	case logbook.EventSessionAppended:
		detail = fmt.Sprintf("+%v entries (to #%v)", d["count"], d["last_seq"])
	case logbook.EventClaimTaken, logbook.EventClaimReleased, logbook.EventClaimExpired:
		detail = fmt.Sprintf("%v by %v", d["subject"], d["actor"])
	case logbook.EventMessageSent:
		detail = fmt.Sprintf("%v from %v: %v", d["message_id"], d["from"], logbook.Clip(fmt.Sprint(d["text"]), 80))
	case logbook.EventMessageDelivered, logbook.EventMessageRead, logbook.EventMessageAcked:
		detail = fmt.Sprintf("%v from %v", d["message_id"], d["from"])
	}
	return strings.TrimSpace(fmt.Sprintf("%s  #%-6d %-18s %s  %s", ev.At.Local().Format("15:04:05"), ev.ID, ev.Type, ev.SessionID, detail))
}
