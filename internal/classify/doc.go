// Package classify says how risky a shell command is before it runs.
//
// Classify parses a command line with a real shell parser
// (mvdan.cc/sh/v3/syntax, bash dialect), never with regular expressions over
// the raw text. It walks every command the line would run — pipelines,
// lists, subshells, command and process substitutions, function bodies,
// if/for/while/case bodies, here-documents and here-strings fed to shells
// and interpreters — unwraps wrappers such as sudo, env, bash -c, ssh, pct
// exec, xargs and find -exec (recursively, up to a depth limit), follows
// the working directory that cd, pushd and env -C set (cwd.go), and judges
// each inner command with the registry of program knowledge (registry.go:
// one file per family of programs registers them beside their tables and
// handlers). The verdict is the worst class found, with one reason per
// command naming the rule that fired, and the decision the caller's Policy
// gives that class.
//
// Programs no family names are judged by general rules (verbs.go): a verb
// among a subcommand-style tool's leading words that deletes or destroys
// makes the command destructive, one that changes something makes it at
// least config_mutation, and a program logbook does not know is never
// read_only. HTTP clients are judged by the request they send (network.go):
// DELETE, or a write whose URL or body says it deletes, is destructive.
// Commands that read or print credentials — a file of credentials named in
// any program's arguments (SecretPath, the same table the hook uses for
// file tools), a dump of the whole environment or of shell history, a
// secrets manager revealing a value — are secret_read (secrets.go).
//
// The same function serves the library, the `logbook classify` command, the
// HTTP API, the MCP tool and the Claude Code hook, so every surface gives the
// same answer for the same command.
//
// What the package must not do: run, expand or look up anything. It reads
// no environment variables, no files and no PATH; a word whose value is only
// known at run time (a variable, a substitution, a glob) is judged by what it
// could be, never by what it happens to be on this machine. Everything here
// is safe for concurrent use: the registry is built once and only read, and
// each call keeps its own state.
//
// Classes, from least to most risky, are read_only, workspace_write,
// network, config_mutation, service_control, package_install, secret_read,
// privilege and destructive; unknown is for what the classifier cannot read,
// and a Policy always treats it at least as strictly as config_mutation.
package classify
