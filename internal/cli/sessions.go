package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/logbookhq/logbook/internal/client"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
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
	{"q", "words in the title or goal"}, {"sort", "last_seen (default), started or duration"},
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
	var page struct {
		Sessions   []logbook.Session `json:"sessions"`
		NextCursor string            `json:"next_cursor"`
	}
	if done, code := fetch(ctx, env, srv.client(), "/v1/sessions?"+q.Encode(), *asJSON, &page); done {
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

// fetch GETs path for a client command. When asJSON, it prints the API's
// answer as it came and the command is done; otherwise it decodes the
// answer into out for the command to render. On an error it says so on
// stderr and the command is done with code 1.
func fetch(ctx context.Context, env Env, c *client.Client, path string, asJSON bool, out any) (done bool, code int) {
	var raw json.RawMessage
	if _, err := c.Do(ctx, http.MethodGet, path, nil, &raw); err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return true, 1
	}
	if asJSON {
		fmt.Fprintln(env.Stdout, string(raw))
		return true, 0
	}
	if err := json.Unmarshal(raw, out); err != nil {
		fmt.Fprintf(env.Stderr, "logbook: the server's answer cannot be read: %v\n", err)
		return true, 1
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
	c := srv.client()
	id := fs.Arg(0)
	var view service.SessionView
	var after int64
	for first := true; ; first = false {
		var page service.SessionView
		path := fmt.Sprintf("/v1/sessions/%s?after_seq=%d&all=%t", url.PathEscape(id), after, *all)
		if done, code := fetch(ctx, env, c, path, *asJSON && first, &page); done {
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
func printTranscript(w io.Writer, v service.SessionView) {
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
	fmt.Fprintf(w, "%d entries, %d messages, %d tool calls, %d in / %d out tokens\n\n", s.EntryCount, s.MessageCount, s.ToolCallCount, s.InputTokens, s.OutputTokens)
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
	by := fs.String("by", "outcome", "group by outcome, blocker, harness, agent or day")
	since := fs.String("since", "30d", "sessions started since: RFC 3339 or a duration back (7d)")
	asJSON := fs.Bool("json", false, "print the API's JSON")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	q := url.Values{"project": {*srv.project}, "by": {*by}, "since": {*since}}
	var res struct {
		Groups []logbook.StatsRow `json:"groups"`
	}
	if done, code := fetch(ctx, env, srv.client(), "/v1/stats?"+q.Encode(), *asJSON, &res); done {
		return code
	}
	var most int64 = 1
	for _, g := range res.Groups {
		most = max(most, g.Sessions)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tSESSIONS\t\tTOTAL TIME\tTOOL CALLS\tTOKENS IN/OUT\n", strings.ToUpper(*by))
	for _, g := range res.Groups {
		bar := strings.Repeat("█", int(g.Sessions*30/most))
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%d/%d\n", dash(g.Key), g.Sessions, bar, time.Duration(g.DurationSeconds)*time.Second, g.ToolCalls, g.InputTokens, g.OutputTokens)
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
	c := srv.client()
	last := *after // 0: the server starts at its newest event (after=latest)
	fmt.Fprintf(env.Stderr, "following %s (Ctrl-C to stop)\n", dash(*srv.project))
	for ctx.Err() == nil {
		err := streamEvents(ctx, c, *srv.project, &last, func(ev logbook.Event) {
			fmt.Fprintln(env.Stdout, eventLine(ev))
		})
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(env.Stderr, "logbook: %v; reconnecting\n", err)
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
	return 0
}

// streamEvents reads the SSE stream until it ends, calling fn for each
// event and keeping last at the newest id seen.
func streamEvents(ctx context.Context, c *client.Client, project string, last *int64, fn func(logbook.Event)) error {
	path := c.BaseURL + "/v1/events?project=" + url.QueryEscape(project) + "&after=latest"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if *last > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(*last, 10))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", c.BaseURL, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(res.Body)
		return fmt.Errorf("%s: %s", res.Status, strings.TrimSpace(string(body)))
	}
	lines := bufio.NewScanner(res.Body)
	lines.Buffer(make([]byte, 64*1024), 4<<20)
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			continue
		}
		var ev logbook.Event
		if json.Unmarshal([]byte(data), &ev) == nil {
			*last = ev.ID
			fn(ev)
		}
	}
	return fmt.Errorf("the stream ended: %v", lines.Err())
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
	}
	return strings.TrimSpace(fmt.Sprintf("%s  #%-6d %-18s %s  %s", ev.At.Local().Format("15:04:05"), ev.ID, ev.Type, ev.SessionID, detail))
}
