// Package logbook holds the domain of the session ledger: sessions, entries,
// plan steps, agents, their states and the rules that every interface must
// apply the same way (titles, blockers, limits, state derivation).
//
// It imports only the standard library and internal/redact, and knows
// nothing of HTTP, MCP or SQL, so the API, the MCP server, the hooks and the
// CLI all give the same answer.
//
// Secrets are redacted where values are stored, not here (see the service's
// redacting store), but the domain types say how: a string field tagged
// redact:"text" is free text, whose secrets become "[REDACTED:kind]"; every
// other string is an identifier or a name (ids, keys, subjects, paths,
// branches), whose secrets become "[REDACTED:kind:tag]" with a keyed hash as
// tag, so that identifiers stay apart and stay equal when redacted.
package logbook
