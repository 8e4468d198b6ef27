// Package mcphost is otter's MCP client manager: it starts and supervises the
// configured MCP servers (stdio, SSE, streamable HTTP) through the official
// go-sdk, keeps each one's state, and feeds their tools into a tool.Set.
// Probe connects once through the same transports, for a login.
//
// The supervisor of each server is in supervisor.go, its live connection in
// conn.go, the errors a person reads in errors.go, the transports in
// transport.go and process.go, and the work-arounds of go-sdk behaviours,
// behind one observer per connection, in sdkobserver.go. The values it
// hands out (Status, its events, prompts, resources, ReloadDiff) are
// internal/servers', the vocabulary the rest of otter uses.
//
// It imports ask, config, oauth, pins, safehttp, sandbox, servers, tool and toolname of otter's
// packages; never the agent, app or a front end.
package mcphost

import "github.com/otter-sh/otter/internal/servers"

var _ servers.Host = (*Manager)(nil)
