package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// send is `logbook send`: a message to a session, an agent or an actor.
func send(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("send", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := addServerFlags(fs, env)
	var p ledger.SendParams
	fs.StringVar(&p.ToSession, "to-session", "", "the session the message is for")
	fs.StringVar(&p.ToAgent, "to-agent", "", "the named agent the message is for (its live session gets it)")
	fs.StringVar(&p.ToActor, "to-actor", "", "the actor the message is for (one of their live sessions gets it)")
	fs.StringVar(&p.ReplyTo, "reply-to", "", "the message this answers; without a --to-… flag the answer goes to its sender")
	fs.StringVar(&p.FromSession, "from-session", "", "your own session, so that the answer comes back to it")
	asJSON := fs.Bool("json", false, "print the API's JSON")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: logbook send [flags] TEXT...

Sends a message to a session, a named agent or an actor of the project.
A live recipient gets it at once: on the event stream, and a Claude Code
session at its next tool call, as added context. 'logbook inbox' lists
messages, 'logbook inbox ack ID' acknowledges one.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	p.Project, p.Text = *srv.project, strings.Join(fs.Args(), " ")
	if p.Text == "" {
		fmt.Fprintln(env.Stderr, "logbook send: say something: logbook send --to-actor bob 'the login test is mine today'")
		return 2
	}
	m, err := srv.ledger().SendMessage(ctx, p)
	if done, code := answered(env, m, err, *asJSON); done {
		return code
	}
	fmt.Fprintf(env.Stdout, "sent message %s to %s\n", m.ID, m.Recipient())
	return 0
}

const inboxUsage = `Usage:
  logbook inbox [flags]           list messages, newest first (default: those for your actor)
  logbook inbox read [flags] ID   mark a message for you read
  logbook inbox ack [flags] ID    acknowledge a message for you (done, or taken in hand)

Flags:
`

// inbox is `logbook inbox`: list messages, or mark one read or acked.
func inbox(ctx context.Context, env Env, args []string) int {
	if len(args) > 0 && (args[0] == "read" || args[0] == "ack") {
		return inboxMark(ctx, env, args[0], args[1:])
	}
	fs := flag.NewFlagSet("inbox", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := addServerFlags(fs, env)
	var p ledger.MessagesParams
	fs.StringVar(&p.SessionID, "session", "", "messages for or from this session")
	fs.StringVar(&p.Agent, "agent", "", "messages for this agent")
	fs.StringVar(&p.Actor, "actor", "", "messages for this actor")
	fs.StringVar(&p.Thread, "thread", "", "one thread (the id of its first message)")
	fs.BoolVar(&p.Unread, "unread", false, "only the messages not read yet")
	fs.IntVar(&p.Limit, "limit", 0, "at most this many (default and most 200)")
	asJSON := fs.Bool("json", false, "print the API's JSON")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, inboxUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	p.Project = *srv.project
	msgs, err := srv.ledger().Messages(ctx, p)
	if done, code := answered(env, ledger.MessagesAnswer{Messages: msgs}, err, *asJSON); done {
		return code
	}
	if len(msgs) == 0 {
		fmt.Fprintln(env.Stdout, "no messages")
		return 0
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SENT\tID\tFROM\tTO\tSTATE\tTEXT")
	for _, m := range msgs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.CreatedAt.Local().Format(time.DateTime), m.ID, m.From.Actor, m.Recipient(),
			m.State(), logbook.Clip(strings.Join(strings.Fields(m.Text), " "), 60))
	}
	tw.Flush()
	return 0
}

func inboxMark(ctx context.Context, env Env, action string, args []string) int {
	fs := flag.NewFlagSet("inbox "+action, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := addServerFlags(fs, env)
	asJSON := fs.Bool("json", false, "print the API's JSON")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, inboxUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(env.Stderr, "logbook inbox %s: name one message: logbook inbox %s ID\n", action, action)
		return 2
	}
	mark := logbook.MarkRead
	if action == "ack" {
		mark = logbook.MarkAcked
	}
	m, err := srv.ledger().MarkMessage(ctx, fs.Arg(0), mark)
	if done, code := answered(env, m, err, *asJSON); done {
		return code
	}
	fmt.Fprintf(env.Stdout, "message %s from %s: %s\n", m.ID, m.From.Actor, m.State())
	return 0
}
