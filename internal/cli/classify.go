package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/logbookhq/logbook/internal/classify"
)

// Exit codes of logbook classify: the decision, so scripts and hooks can
// branch on it without parsing output.
const (
	classifyExitAllow = 0
	classifyExitError = 1 // a file or input could not be read
	classifyExitUsage = 2
	classifyExitAsk   = 3
	classifyExitDeny  = 4
	classifyExitDefer = 5
)

const classifyUsage = `usage:
  logbook classify [--json|--explain] [--policy FILE.json | --project P] 'COMMAND LINE'
  logbook classify [--json|--explain] [--policy FILE.json | --project P] -- PROGRAM ARGS...
  logbook classify [--json|--explain] [--policy FILE.json | --project P] - < command.sh
  logbook classify --batch [--policy FILE.json] < commands.jsonl
  logbook classify --eval FILE.jsonl [--json]

Says how risky a shell command is before it runs, the same way the server,
the MCP tool and the Claude Code hook do. It needs no server and no
database: the command is parsed, never run.

Classes, least to most risky: read_only, workspace_write, network,
config_mutation, service_control, package_install, secret_read, privilege,
destructive; unknown for what cannot be read (treated at least as
config_mutation). The policy turns each command's class into a decision,
and the line gets the strictest:

  allow  approve without asking the user (only where a policy says so)
  defer  say nothing: the harness's own permission settings decide
  ask    ask the user first
  deny   refuse

The default policy denies destructive, asks about secret_read, privilege
and unknown, and defers everything else: it never allows on its own. A
policy may carry rules for a project's own programs (program, leading
words, an argument pattern → class, with a reason); --explain shows which
fired. --project uses a project's policy as the server holds it.

- reads the command line from standard input (all of it, less the final
newline), so a line full of quotes or a heredoc needs no shell quoting.
--batch reads JSON lines {"command": "..."} on standard input and writes one
verdict JSON per line, with the input command, for auditing command logs.
--eval reads rows {"source", "command", "expect"} (expect is destructive,
not_destructive, read_only or not_read_only) and prints agreement per source
and every disagreement.

Exit codes:
  0  allow (and for --batch and --eval: done)
  1  a file or the input could not be read
  2  usage error
  3  ask
  4  deny
  5  defer

Flags:
`

// Classify runs logbook classify with args (after the subcommand name) and
// returns the exit code.
func Classify(ctx context.Context, env Env, args []string) int {
	stdin, stdout, stderr := env.Stdin, env.Stdout, env.Stderr
	fs := flag.NewFlagSet("classify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the verdict (or the --eval report) as JSON")
	explain := fs.Bool("explain", false, "say how the verdict was reached: each command, its class, the rule and the decision, and the policy")
	policyFile := fs.String("policy", "", "read the policy from this JSON file, e.g. {\"network\": \"ask\", \"rules\": [...]}")
	project := fs.String("project", "", "use this project's policy, fetched from the server (--server, --token)")
	server := fs.String("server", env.Getenv("LOGBOOK_URL"), "logbook server URL for --project (env LOGBOOK_URL; default http://127.0.0.1:7474)")
	token := tokenFlag(fs, env, "bearer `token` for --project (default: env LOGBOOK_TOKEN)")
	batch := fs.Bool("batch", false, "classify JSON lines {\"command\": ...} from standard input")
	evalFile := fs.String("eval", "", "measure agreement with a JSON-lines corpus of {source, command, expect}")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), classifyUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return classifyExitAllow
		}
		return classifyExitUsage
	}

	var policy classify.Policy
	source := "the default policy"
	switch {
	case *policyFile != "" && *project != "":
		return classifyUsageError(fs, "--policy and --project cannot be used together")
	case *policyFile != "":
		data, err := os.ReadFile(*policyFile)
		if err != nil {
			fmt.Fprintf(stderr, "logbook classify: reading the policy: %v\n", err)
			return classifyExitError
		}
		if policy, err = classify.ParsePolicy(data); err != nil {
			fmt.Fprintf(stderr, "logbook classify: %s: %v\n", *policyFile, err)
			return classifyExitError
		}
		source = *policyFile
	case *project != "":
		sf := serverFlags{server: server, token: token, project: project}
		var err error
		if policy, err = sf.ledger().Policy(ctx, *project); err != nil {
			fmt.Fprintf(stderr, "logbook classify: fetching the policy of project %s: %v\n", *project, err)
			return classifyExitError
		}
		source = "project " + *project
	}

	rest := fs.Args()
	switch {
	case *batch && *evalFile != "":
		return classifyUsageError(fs, "--batch and --eval cannot be used together")
	case (*batch || *evalFile != "") && len(rest) > 0:
		return classifyUsageError(fs, "--batch and --eval take no command")
	case *batch:
		return classifyBatch(ctx, stdin, stdout, stderr, policy)
	case *evalFile != "":
		return classifyEval(*evalFile, *asJSON, stdout, stderr)
	case len(rest) == 0:
		return classifyUsageError(fs, "no command to classify")
	}

	line := rest[0]
	dashdash := len(args) > len(rest) && args[len(args)-len(rest)-1] == "--"
	if line == "-" && len(rest) == 1 && !dashdash {
		data, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintf(stderr, "logbook classify: reading the command from standard input: %v\n", err)
			return classifyExitError
		}
		line = strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	} else if dashdash || len(rest) > 1 {
		// An argument vector: quote each word so that parsing the line
		// gives back the same words.
		var err error
		if line, err = quoteArgv(rest); err != nil {
			fmt.Fprintf(stderr, "logbook classify: %v\n", err)
			return classifyExitUsage
		}
	}
	v := classify.Classify(line, policy)
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(v); err != nil {
			fmt.Fprintf(stderr, "logbook classify: %v\n", err)
			return classifyExitError
		}
	} else {
		writeVerdict(stdout, line, v, !*explain)
		if *explain {
			writeExplanation(stdout, v, policy, source)
		}
	}
	return decisionExit(v.Decision)
}

// writeExplanation says how the verdict was reached: every command with its
// class, the decision the policy gives it and the rule (a project rule says
// so), then where the policy came from and its decision for each class,
// marking the ones it chose.
func writeExplanation(w io.Writer, v classify.Verdict, p classify.Policy, source string) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nThe line is %s: the strictest decision of its commands.\n", v.Decision)
	for i, r := range v.Reasons {
		fmt.Fprintf(&b, "%3d. %s\n     %s → %s: %s\n", i+1, oneLine(r.Command), r.Class, p.Decide(r.Class), r.Rule)
	}
	fmt.Fprintf(&b, "\nPolicy: %s", source)
	if n := len(p.Rules); n > 0 {
		fmt.Fprintf(&b, ", with %d project rules", n)
	}
	b.WriteString(" (* chosen by the policy, the rest default):\n")
	for _, c := range classify.Classes {
		mark := " "
		if _, chosen := p.Decisions[c]; chosen {
			mark = "*"
		}
		fmt.Fprintf(&b, "  %s %-16s %s\n", mark, c, p.Decide(c))
	}
	io.WriteString(w, b.String())
}

func classifyUsageError(fs *flag.FlagSet, msg string) int {
	fmt.Fprintf(fs.Output(), "logbook classify: %s\n\n", msg)
	fs.Usage()
	return classifyExitUsage
}

// quoteArgv joins words into a bash command line that parses back into
// the same words.
func quoteArgv(words []string) (string, error) {
	quoted := make([]string, len(words))
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			return "", fmt.Errorf("argument %d cannot be quoted for the shell: %w", i+1, err)
		}
		quoted[i] = q
	}
	return strings.Join(quoted, " "), nil
}

func decisionExit(d classify.Decision) int {
	switch d {
	case classify.Allow:
		return classifyExitAllow
	case classify.Deny:
		return classifyExitDeny
	case classify.Defer:
		return classifyExitDefer
	}
	return classifyExitAsk
}

// writeVerdict prints the short human answer: the decision, the class and
// the deciding reason on one line, then, with all, every reason.
func writeVerdict(w io.Writer, line string, v classify.Verdict, all bool) {
	s := v.Summary()
	if s.Rule == "" {
		s = classify.Reason{Command: line, Rule: "nothing to run"}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-5s  %s  %s: %s\n", v.Decision, v.Class, oneLine(s.Command), s.Rule)
	if all && len(v.Reasons) > 1 {
		for _, r := range v.Reasons {
			fmt.Fprintf(&b, "  %-15s  %s: %s\n", r.Class, oneLine(r.Command), r.Rule)
		}
	}
	io.WriteString(w, b.String())
}

// oneLine keeps multi-line commands (here-documents) on one output line.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", `\n`) }

// batchVerdict is one line of --batch output: the input command beside
// its verdict, or the error that kept the line from being read.
type batchVerdict struct {
	Command string `json:"command"`
	*classify.Verdict
	Line  int    `json:"line,omitempty"`
	Error string `json:"error,omitempty"`
}

func classifyBatch(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, policy classify.Policy) int {
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	out := bufio.NewWriter(stdout)
	enc := json.NewEncoder(out)
	code := classifyExitAllow
	for n := 1; sc.Scan(); n++ {
		if err := ctx.Err(); err != nil {
			fmt.Fprintf(stderr, "logbook classify: %v\n", err)
			return classifyExitError
		}
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var in struct {
			Command *string `json:"command"`
		}
		res := batchVerdict{}
		if err := json.Unmarshal([]byte(text), &in); err != nil || in.Command == nil {
			res.Line, res.Error = n, `want a JSON object with a "command" string`
			if err != nil {
				res.Error += ": " + err.Error()
			}
			fmt.Fprintf(stderr, "logbook classify: line %d: %s\n", n, res.Error)
			code = classifyExitError
		} else {
			v := classify.Classify(*in.Command, policy)
			res.Command, res.Verdict = *in.Command, &v
		}
		if err := enc.Encode(res); err != nil {
			fmt.Fprintf(stderr, "logbook classify: %v\n", err)
			return classifyExitError
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(stderr, "logbook classify: reading standard input: %v\n", err)
		code = classifyExitError
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintf(stderr, "logbook classify: %v\n", err)
		return classifyExitError
	}
	return code
}

func classifyEval(path string, asJSON bool, stdout, stderr io.Writer) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "logbook classify: %v\n", err)
		return classifyExitError
	}
	defer f.Close()
	rows, err := classify.ReadEvalRows(f)
	if err != nil {
		fmt.Fprintf(stderr, "logbook classify: %s: %v\n", path, err)
		return classifyExitError
	}
	rep := classify.Evaluate(rows)
	if asJSON {
		err = json.NewEncoder(stdout).Encode(rep)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "logbook classify: %v\n", err)
		return classifyExitError
	}
	return classifyExitAllow
}
