package web

import (
	"encoding/json"
	"net/http"
	"strings"
)

// setupHelp is what the empty states show: how to get sessions into a
// project, with this server's address filled in.
type setupHelp struct {
	Project   string
	ServerURL string
	// MCP is a .mcp.json snippet that connects an MCP client to this server.
	MCP string
}

// newSetupHelp fills the setup help for project, addressing the server by
// Options.PublicURL, else as the browser did.
func (h *handler) newSetupHelp(r *http.Request, project string) setupHelp {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	base := scheme + "://" + r.Host
	if h.publicURL != nil {
		base = strings.TrimSuffix(h.publicURL.String(), "/")
	}
	snippet, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"logbook": map[string]any{
		"type": "http", "url": base + "/mcp",
		"headers": map[string]string{"Authorization": "Bearer ${LOGBOOK_TOKEN}"},
	}}}, "", "  ")
	return setupHelp{Project: project, ServerURL: base, MCP: string(snippet)}
}
