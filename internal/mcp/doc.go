// Package mcp is logbook's MCP server: the tools an agent calls to report
// its session (start_session, set_goal, record, plan, complete_task), to
// coordinate with other agents (claim, release), to ask before running a
// shell command (classify_command) and to read the ledger (search,
// list_sessions, get_session, list_alerts).
//
// The tools are defined once, in tools.go, over the ledger port
// (ledger.Ledger). Two ledgers answer them: the service in process, as the
// caller of the request's bearer token (Handler, mounted at /mcp by logbook
// serve, over streamable HTTP), and the typed client calling a server's /v1
// API (ServeStdio, run by logbook mcp for harnesses that start MCP servers
// as processes). An agent gets the same answers either way, and the same as
// the HTTP API, the CLI and the hooks give.
//
// The protocol is the official Go SDK's (github.com/modelcontextprotocol/go-sdk).
// A failed call comes back as a tool error (IsError) whose text says what to
// fix; the server itself never fails for a bad call.
package mcp
