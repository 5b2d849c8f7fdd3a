// Package classify says how risky a shell command is before it runs.
//
// Classify parses a command line with a real shell parser
// (mvdan.cc/sh/v3/syntax, bash dialect), never with regular expressions over
// the raw text. It walks every command the line would run — pipelines,
// lists, subshells, command and process substitutions, function bodies,
// if/for/while/case bodies, here-documents fed to shells — unwraps wrappers
// such as sudo, env, bash -c, ssh, pct exec, xargs and find -exec
// (recursively, up to a depth limit), and judges each inner command with
// the registry of program knowledge (registry.go: one file per family of
// programs registers them beside their tables and handlers). The verdict is the worst class found, with
// one reason per command naming the rule that fired, and the decision the
// caller's Policy gives that class.
//
// The same function serves the library, the `logbook classify` command, the
// HTTP API, the MCP tool and the Claude Code hook, so every surface gives the
// same answer for the same command.
//
// What the package must not do: run, expand or look up anything. It reads
// no environment variables, no files and no PATH; a word whose value is only
// known at run time (a variable, a substitution, a glob) is judged by what it
// could be, never by what it happens to be on this machine. Everything here
// is safe for concurrent use: the program tables are read-only and each call
// keeps its own state.
//
// Classes, from least to most risky, are read_only, workspace_write,
// network, config_mutation, service_control, package_install, privilege and
// destructive; unknown is for what the classifier cannot read, and a Policy
// always treats it at least as strictly as config_mutation.
package classify
