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
// It may import ask, config, oauth, tool and toolname; never the agent,
// app or a front end.
package mcphost

import (
	"encoding/json"
	"time"

	"github.com/otter-sh/otter/internal/tool"
)

// State is a server's connection state.
type State string

const (
	StatePending   State = "pending"
	StateConnected State = "connected"
	StateFailed    State = "failed"
	StateNeedsAuth State = "needs-auth"
	StateDisabled  State = "disabled"
)

// Status is a snapshot of one server, for `otter mcp list`, `/mcp` and
// get_status.
type Status struct {
	Name      string
	Transport string
	Scope     string // config scope it came from
	State     State
	// Error says why the server is failed, needs-auth or disabled (and the
	// last error of a connected one after a reconnect), written for a person.
	Error string
	// Tools counts the server's tools that pass allowed_tools and
	// denied_tools, NotOffered included: Tools - len(NotOffered) are in
	// the tool set (tool.Set.ServerToolCounts counts those directly).
	Tools int
	// NotOffered are the server's tools the tool set leaves out because
	// another tool (a built-in, or one of a server whose name normalises
	// the same way, such as my.srv and my_srv) holds the same qualified
	// name; each one's String says which and what to do.
	NotOffered   []tool.Collision
	Prompts      int
	Resources    int
	Templates    int      // resource templates
	Instructions string   // the server's initialize instructions
	StderrTail   []string // the last lines the server wrote on stderr (stdio)
	ServerInfo   string   // "name version" from initialize
	ConnectedAt  time.Time
	Attempts     int // reconnect attempts since the last success

	// Roots are the directories offered to the server as MCP roots (a
	// server such as server-filesystem confines itself to them): its
	// config's roots, else the working directory (RootsByDefault). None:
	// the roots capability is not offered.
	Roots          []string
	RootsByDefault bool

	// Live figures.
	Calls         int64
	Errors        int64
	MedianLatency time.Duration

	// Token expiry of a stored OAuth token; zero if none.
	TokenExpiry time.Time
}

// Event is something that happened in the manager, for front ends.
type Event interface{ isEvent() }

// StateChanged reports a server's new status.
type StateChanged struct{ Status Status }

// ToolsChanged reports that the merged tool set changed (a server connected,
// disconnected or sent list_changed).
type ToolsChanged struct{ Server string }

// ServerLog is a notifications/message log entry from a server.
type ServerLog struct {
	Server string
	Level  string
	Logger string
	Data   json.RawMessage
}

// ResourceUpdated reports that a resource otter subscribed to (see
// Manager.Subscribe) changed on its server.
type ResourceUpdated struct{ Server, URI string }

func (StateChanged) isEvent()    {}
func (ResourceUpdated) isEvent() {}
func (ToolsChanged) isEvent()    {}
func (ServerLog) isEvent()       {}

// ReloadDiff says what a Reload changed.
type ReloadDiff struct {
	Added, Removed, Changed, Unchanged []string
}
