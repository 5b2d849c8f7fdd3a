// Package logbook holds the domain of the session ledger: sessions, entries,
// plan steps, agents, their states and the rules that every interface must
// apply the same way (titles, blockers, limits, state derivation).
//
// It imports only the standard library and knows nothing of HTTP, MCP or SQL,
// so the API, the MCP server, the hooks and the CLI all give the same answer.
package logbook
