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

// alerts is `logbook alerts`: a project's alert rules, the alerts they
// raised and how their delivery went; with the admin token, adding,
// deleting and testing rules.
func alerts(ctx context.Context, env Env, args []string) int {
	usage := `Usage: logbook alerts list|add|rm ID|test ID|log [flags]

A project's alert rules post to a webhook when a session ends failed or
with a blocker (session_failed), the gate denies a tool call
(command_denied), a session idle for N minutes still holds claims
(idle_with_claims), a session makes the same tool call N times in a row
(tool_loop), or model calls cost more than a budget in US dollars: a
session's, an agent's in a UTC day or the project's in a UTC day
(cost_over_budget). Adding, deleting and testing rules takes the admin token.

Run 'logbook alerts <command> --help' for its flags.
`
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, usage)
		return 2
	}
	commands := map[string]func(context.Context, Env, []string) int{
		"list": alertsList, "add": alertsAdd, "rm": alertsRemove, "test": alertsTest, "log": alertsLog,
	}
	if run, ok := commands[args[0]]; ok {
		return run(ctx, env, args[1:])
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(env.Stdout, usage)
		return 0
	}
	fmt.Fprintf(env.Stderr, "logbook alerts: unknown command %q\n%s", args[0], usage)
	return 2
}

// alertsCommand is what every alerts command shares: its flags (the
// server's, --json), its usage, and the project it is about.
type alertsCommand struct {
	name   string
	fs     *flag.FlagSet
	srv    serverFlags
	asJSON *bool
}

func newAlertsCommand(env Env, name, usage string) *alertsCommand {
	fs := flag.NewFlagSet("alerts "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	c := &alertsCommand{name: name, fs: fs, srv: addServerFlags(fs, env), asJSON: fs.Bool("json", false, "print the API's JSON")}
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "%s\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	return c
}

// parse reads the flags and wants operands (the rule's id, or none);
// done says to exit with code.
func (c *alertsCommand) parse(env Env, args []string, operands int) (done bool, code int) {
	if err := c.fs.Parse(args); err != nil {
		return true, parseExit(err)
	}
	if c.fs.NArg() != operands {
		if operands == 0 {
			fmt.Fprintf(env.Stderr, "logbook alerts %s: unexpected argument %q\n", c.name, c.fs.Arg(0))
		} else {
			fmt.Fprintf(env.Stderr, "logbook alerts %s: name the rule: logbook alerts %s RULE_ID\n", c.name, c.name)
		}
		return true, 2
	}
	if *c.srv.project == "" {
		fmt.Fprintf(env.Stderr, "logbook alerts %s: name the project: --project P (or LOGBOOK_PROJECT)\n", c.name)
		return true, 2
	}
	return false, 0
}

func alertsList(ctx context.Context, env Env, args []string) int {
	c := newAlertsCommand(env, "list", "Usage: logbook alerts list [--project P]\n\nLists the project's alert rules (webhook URLs masked).")
	if done, code := c.parse(env, args, 0); done {
		return code
	}
	rules, err := c.srv.ledger().AlertRules(ctx, *c.srv.project)
	if done, code := answered(env, ledger.AlertRulesAnswer{Rules: rules}, err, *c.asJSON); done {
		return code
	}
	if len(rules) == 0 {
		fmt.Fprintf(env.Stdout, "project %s has no alert rules; add one with logbook alerts add\n", *c.srv.project)
		return 0
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tKIND\tTHRESHOLD\tFORMAT\tWEBHOOK")
	for _, r := range rules {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Name, r.Kind, threshold(r), r.Format, r.WebhookURL)
	}
	tw.Flush()
	return 0
}

// threshold says a rule's threshold in its unit.
func threshold(r logbook.AlertRule) string {
	switch r.Kind {
	case logbook.AlertIdleWithClaims:
		return fmt.Sprintf("%d min", r.Threshold)
	case logbook.AlertToolLoop:
		return fmt.Sprintf("%d calls", r.Threshold)
	case logbook.AlertCostOverBudget:
		return r.Budget()
	}
	return "-"
}

func alertsAdd(ctx context.Context, env Env, args []string) int {
	c := newAlertsCommand(env, "add", `Usage: logbook alerts add --kind K --webhook URL [--format json|slack] [--threshold N] [--budget-usd D --scope S] [--name S]

Adds an alert rule to the project (the admin token only) and prints the
secret that signs its webhook's JSON bodies: keep it, it is not shown
again. The kinds: session_failed, command_denied, idle_with_claims
(threshold: minutes, default 30), tool_loop (threshold: calls in a row,
default 5), cost_over_budget (--budget-usd and --scope: session for each
session's own model calls, agent_day for each agent's sessions started in
a UTC day, project_day for all the project's sessions started in a UTC
day). For example:

  logbook alerts add --kind cost_over_budget --budget-usd 25 --scope project_day --webhook https://hooks.example.com/logbook`)
	var body ledger.AlertRuleBody
	c.fs.StringVar((*string)(&body.Kind), "kind", "", "session_failed, command_denied, idle_with_claims, tool_loop or cost_over_budget")
	c.fs.StringVar(&body.WebhookURL, "webhook", "", "the http(s) URL alerts are posted to")
	c.fs.StringVar((*string)(&body.Format), "format", "json", "json (signed, logbook's body) or slack ({\"text\": ...})")
	c.fs.IntVar(&body.Threshold, "threshold", 0, "idle_with_claims: minutes; tool_loop: calls in a row (0: the default)")
	c.fs.Float64Var(&body.BudgetUSD, "budget-usd", 0, "cost_over_budget: the budget in US dollars, e.g. 25 or 2.50")
	c.fs.StringVar((*string)(&body.Scope), "scope", "", "cost_over_budget: whose cost: session, agent_day or project_day")
	c.fs.StringVar(&body.Name, "name", "", "a name for the rule (default: its kind)")
	if done, code := c.parse(env, args, 0); done {
		return code
	}
	rule, err := c.srv.ledger().AddAlertRule(ctx, *c.srv.project, body)
	if done, code := answered(env, rule, err, *c.asJSON); done {
		return code
	}
	fmt.Fprintf(env.Stdout, "added alert rule %s (%s, %s) posting to %s\nsecret: %s\n(it signs the webhook's bodies: see the README's \"Alerts\" on checking Logbook-Signature; it is not shown again)\n",
		rule.ID, rule.Name, rule.Kind, rule.WebhookURL, rule.Secret)
	return 0
}

func alertsRemove(ctx context.Context, env Env, args []string) int {
	c := newAlertsCommand(env, "rm", "Usage: logbook alerts rm [--project P] RULE_ID\n\nDeletes an alert rule with its alerts and their delivery log (the admin token only).")
	if done, code := c.parse(env, args, 1); done {
		return code
	}
	rule, err := c.srv.ledger().DeleteAlertRule(ctx, *c.srv.project, c.fs.Arg(0))
	if done, code := answered(env, rule, err, *c.asJSON); done {
		return code
	}
	fmt.Fprintf(env.Stdout, "deleted alert rule %s (%s, %s)\n", rule.ID, rule.Name, rule.Kind)
	return 0
}

func alertsTest(ctx context.Context, env Env, args []string) int {
	c := newAlertsCommand(env, "test", "Usage: logbook alerts test [--project P] RULE_ID\n\nPosts a sample alert, signed and marked test, to the rule's webhook now and says how it went (the admin token only).")
	if done, code := c.parse(env, args, 1); done {
		return code
	}
	attempt, err := c.srv.ledger().TestAlertRule(ctx, *c.srv.project, c.fs.Arg(0))
	if done, code := answered(env, attempt, err, *c.asJSON); done {
		return code
	}
	if attempt.Error != "" {
		fmt.Fprintf(env.Stderr, "logbook alerts test: the webhook did not take the sample: %s\n", attempt.Error)
		return 1
	}
	fmt.Fprintf(env.Stdout, "the webhook answered %d in %d ms\n", attempt.StatusCode, attempt.DurationMS)
	return 0
}

func alertsLog(ctx context.Context, env Env, args []string) int {
	c := newAlertsCommand(env, "log", "Usage: logbook alerts log [--project P] [--rule ID] [--limit N]\n\nLists the project's alerts, the newest first, with their delivery and its attempts.")
	rule := c.fs.String("rule", "", "only this rule's alerts")
	limit := c.fs.Int("limit", 20, "how many alerts (at most 200)")
	if done, code := c.parse(env, args, 0); done {
		return code
	}
	list, err := c.srv.ledger().Alerts(ctx, ledger.AlertsParams{Project: *c.srv.project, RuleID: *rule, Limit: *limit})
	if done, code := answered(env, ledger.AlertsAnswer{Alerts: list}, err, *c.asJSON); done {
		return code
	}
	if len(list) == 0 {
		fmt.Fprintf(env.Stdout, "no alerts in project %s\n", *c.srv.project)
		return 0
	}
	for _, a := range list {
		fmt.Fprintf(env.Stdout, "%s  %s  %s  %s\n  %s\n", a.RaisedAt.Format(time.RFC3339), a.Kind, a.Status, a.ID, a.Summary)
		for i, at := range a.Log {
			outcome := fmt.Sprint(at.StatusCode)
			if at.Error != "" {
				outcome = strings.TrimSpace(outcome + " " + at.Error)
			}
			fmt.Fprintf(env.Stdout, "  attempt %d at %s: %s (%d ms)\n", i+1, at.At.Format(time.RFC3339), outcome, at.DurationMS)
		}
		if a.Status == logbook.AlertPending && a.NextAttemptAt != nil {
			fmt.Fprintf(env.Stdout, "  next attempt at %s\n", a.NextAttemptAt.Format(time.RFC3339))
		}
	}
	return 0
}
