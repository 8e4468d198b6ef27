// Package mcphost is otter's MCP client manager: it starts and supervises the
// configured MCP servers (stdio, SSE, streamable HTTP) through the official
// go-sdk, keeps each one's state, and feeds their tools into a tool.Set.
// Probe connects once through the same transports, for a login.
//
// The supervisor of each server is in supervisor.go, its live connection in
// conn.go, the errors a person reads in errors.go, the transports in
// transport.go and process.go, and the work-arounds of go-sdk behaviours,
// behind one observer per connection, in sdkobserver.go.
//
// It may import ask, config, oauth, servers, tool and toolname; never the agent,
// app or a front end.
package mcphost

import "github.com/otter-sh/otter/internal/servers"

// The values of servers, the vocabulary otter's other packages use for
// servers; mcphost's own names for them.
type (
	State               = servers.State
	Status              = servers.Status
	Event               = servers.Event
	StateChanged        = servers.StateChanged
	ToolsChanged        = servers.ToolsChanged
	ServerLog           = servers.ServerLog
	ResourceUpdated     = servers.ResourceUpdated
	ReloadDiff          = servers.ReloadDiff
	Authorizer          = servers.Authorizer
	Options             = servers.Options
	Prompt              = servers.Prompt
	Resource            = servers.Resource
	ResourceTemplate    = servers.ResourceTemplate
	URLElicitation      = servers.URLElicitation
	URLElicitationError = servers.URLElicitationError
)

// A server's states.
const (
	StatePending   = servers.StatePending
	StateConnected = servers.StateConnected
	StateFailed    = servers.StateFailed
	StateNeedsAuth = servers.StateNeedsAuth
	StateDisabled  = servers.StateDisabled
)

var _ servers.Host = (*Manager)(nil)
