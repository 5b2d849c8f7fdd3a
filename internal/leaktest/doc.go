// Package leaktest holds the end-to-end test of logbook's promise that no
// secret it recognises is stored: one set of secrets (an AWS key id and
// secret key, a GitHub token, a PEM private key, a PostgreSQL URL's
// password, a JWT, an OpenAI project key, and a command exporting an API
// key) is sent through every route that writes — the JSON API, the MCP
// tools, the Claude Code and Codex hooks, both transcript importers and
// OTLP — on SQLite and on PostgreSQL. Then every column of every table the
// database catalogue lists is read back, and on SQLite the bytes of the
// database file and of its write-ahead log, and the test fails naming
// table.column for any secret found. Tables and columns come from the
// catalogue, not from a list here, so one added later is read too.
//
// The package has test files only.
package leaktest
