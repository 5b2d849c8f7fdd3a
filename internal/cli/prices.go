package cli

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/logbookhq/logbook/internal/logbook"
)

// priceFlags collects --set MODEL=INPUT,OUTPUT,CACHE_READ,CACHE_WRITE.
type priceFlags map[string]logbook.Price

func (p priceFlags) String() string { return "" }

func (p priceFlags) Set(v string) error {
	model, rates, ok := strings.Cut(v, "=")
	parts := strings.Split(rates, ",")
	if !ok || strings.TrimSpace(model) == "" || len(parts) != 4 {
		return fmt.Errorf("%q: write MODEL=INPUT,OUTPUT,CACHE_READ,CACHE_WRITE in US dollars per million tokens", v)
	}
	var n [4]float64
	for i, part := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil {
			return fmt.Errorf("%q: %q is not a number of dollars", v, part)
		}
		n[i] = f
	}
	p[strings.TrimSpace(model)] = logbook.Price{Input: n[0], Output: n[1], CacheRead: n[2], CacheWrite: n[3]}
	return nil
}

// prices is `logbook prices`: the prices a project's model calls are
// costed at, and with the admin token, the project's own.
func prices(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("prices", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := addServerFlags(fs, env)
	asJSON := fs.Bool("json", false, "print the API's JSON")
	set := priceFlags{}
	fs.Var(set, "set", "the project's own price of a model: MODEL=INPUT,OUTPUT,CACHE_READ,CACHE_WRITE in US dollars per million tokens (repeat for several)")
	drop := fs.String("drop", "", "forget the project's own price of this model (ALL: of every model)")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: logbook prices [--project P] [--set MODEL=IN,OUT,CACHE_READ,CACHE_WRITE]... [--drop MODEL|ALL]

Shows the prices, in US dollars per million tokens, the project's model
calls are costed at: the built-in table (with the date it was read and
each price's source) and the project's own, marked "project". --set and
--drop change the project's own (the admin token only). A new price costs
the calls recorded from then on; recorded costs stay as they were.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "logbook prices: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *srv.project == "" {
		fmt.Fprintln(env.Stderr, "logbook prices: name the project: --project P (or LOGBOOK_PROJECT)")
		return 2
	}
	l := srv.ledger()
	table, err := l.Prices(ctx, *srv.project)
	if err == nil && (len(set) > 0 || *drop != "") {
		own := table.Own
		if *drop == "ALL" {
			own = map[string]logbook.Price{}
		} else if *drop != "" {
			delete(own, *drop)
		}
		for model, p := range set {
			own[model] = p
		}
		table, err = l.SetPrices(ctx, *srv.project, own)
	}
	if done, code := answered(env, table, err, *asJSON); done {
		return code
	}
	fmt.Fprintf(env.Stdout, "prices of project %s, in US dollars per million tokens (built-in table read %s)\n", table.Project, table.Date)
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tSOURCE")
	for _, name := range (logbook.PriceTable{Models: table.Models}).Names() {
		p := table.Models[name]
		fmt.Fprintf(tw, "%s\t%g\t%g\t%g\t%g\t%s\n", name, p.Input, p.Output, p.CacheRead, p.CacheWrite, p.Source)
	}
	tw.Flush()
	return 0
}
