package app

// What a front end asks of the App about servers and tools. The App's
// parts (the MCP client manager, the tool set, the authorizer, the loaded
// configuration) are its own; a front end calls these methods and uses the
// vocabulary below, so that it needs no core package but app to show
// servers, tools, resources, prompts and sessions.

import (
	"context"
	"encoding/json"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/localtools"
	"github.com/otter-sh/otter/internal/record"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

// The MCP client's vocabulary as front ends see it. They are aliases: the
// values are mcphost's, named here so that app is a front end's one seam.
type (
	ServerStatus     = servers.Status
	ServerState      = servers.State
	ServerEvent      = servers.Event
	StateChanged     = servers.StateChanged
	ResourceUpdated  = servers.ResourceUpdated
	ServerLog        = servers.ServerLog
	Prompt           = servers.Prompt
	Resource         = servers.Resource
	ResourceTemplate = servers.ResourceTemplate
	ReloadDiff       = servers.ReloadDiff
	// URLElicitationError is a tool call's error when the server needs the
	// person to open a URL first.
	URLElicitationError = servers.URLElicitationError
	// HeldTool is a server's tool held back because its definition is not
	// the pinned one (ServerStatus.HeldBack); ToolChange is one such
	// difference, with its diff (ToolChanges).
	HeldTool   = servers.HeldTool
	ToolChange = servers.ToolChange
	// HeldBackError is the error of a call of a held-back tool.
	HeldBackError = tool.HeldBackError
)

// The kinds of ToolChange.
const (
	ToolChanged         = servers.ToolChanged
	ToolAdded           = servers.ToolAdded
	InstructionsChanged = servers.InstructionsChanged
)

// A server's states (ServerStatus.State).
const (
	StatePending   = servers.StatePending
	StateConnected = servers.StateConnected
	StateNeedsAuth = servers.StateNeedsAuth
	StateFailed    = servers.StateFailed
	StateDisabled  = servers.StateDisabled
	StateIdle      = servers.StateIdle
)

// TransportAuto is a URL server's transport when it is to be found out
// (streamable HTTP, else SSE).
const TransportAuto = servers.TransportAuto

// The saved sessions' vocabulary as front ends see it (aliases of
// session's).
type (
	SessionInfo          = record.Info
	SessionEntry         = record.Entry
	SessionFound         = record.Found
	SessionCompaction    = record.Compaction
	SessionListOptions   = record.ListOptions
	SessionSearchOptions = record.SearchOptions
	// SessionStore is the session database (App.Sessions).
	SessionStore = record.Store
)

// Errors about saved sessions, for errors.Is.
var (
	ErrSessionNotFound  = record.ErrNotFound
	ErrSessionAmbiguous = record.ErrAmbiguous
	// ErrSessionsDamaged: the session database file is damaged (what
	// still reads can be read with SessionsToRead).
	ErrSessionsDamaged = record.ErrCorrupt
)

// RoleNotice is a stored entry's role for a notice of otter's (not a
// message of the person's or the model's).
const RoleNotice = record.RoleNotice

// How a stored notice was shown (SessionEntry.Notice).
const (
	NoticeInfo     = record.NoticeInfo
	NoticeError    = record.NoticeError
	NoticeAttached = record.NoticeAttached
)

// InterruptedResult is what a tool call cut off by otter's exit is
// stored as.
const InterruptedResult = record.InterruptedResult

// Config is the configuration the App runs with (re-read by Reload); the
// caller does not change it.
func (a *App) Config() *config.Config {
	a.cfgMu.RLock()
	defer a.cfgMu.RUnlock()
	return a.cfg
}

// Warnings are the problems of the configuration loaded last that did not
// stop otter — a broken untrusted project file left out, servers whose
// tools would get the same names, extensions that could not be read, an
// instruction file left out — each naming the file and line to change. It
// does not wait for a reload in progress.
func (a *App) Warnings() []string {
	var ws []string
	for _, w := range a.Config().Warnings {
		ws = append(ws, w.Error())
	}
	for _, p := range a.Extensions().Problems {
		ws = append(ws, p.Error())
	}
	// Instruction files left out: a project's AGENTS.md that links out of
	// the project, a named pipe called AGENTS.md.
	for _, err := range a.Instructions().Errors {
		ws = append(ws, err.Error())
	}
	return ws
}

// Servers are the configured MCP servers' states, in the config's order.
func (a *App) Servers() []ServerStatus { return a.mcp.Statuses() }

// Server is one server's state; ok is false for a name not configured.
func (a *App) Server(name string) (ServerStatus, bool) { return a.mcp.Status(name) }

// WaitSettled waits until no server is still starting, or ctx is done.
func (a *App) WaitSettled(ctx context.Context) error { return a.mcp.WaitSettled(ctx) }

// WakeServer starts server if it is idle (not started until needed) and
// waits until it is connected or has failed: a front end wakes a server
// before it lists the server's resources or prompts, or when the person
// opens it. For another server it waits only while it is starting.
func (a *App) WakeServer(ctx context.Context, server string) error { return a.mcp.Wake(ctx, server) }

// Login runs server's OAuth login now (its prompts go to Options.Asker).
func (a *App) Login(ctx context.Context, server string) error { return a.mcp.Login(ctx, server) }

// Reconnect stops server and starts it again.
func (a *App) Reconnect(ctx context.Context, server string) error {
	return a.mcp.Reconnect(ctx, server)
}

// SetEnabled turns server on or off for this run (its config is not
// changed).
func (a *App) SetEnabled(ctx context.Context, server string, on bool) error {
	return a.mcp.SetEnabled(ctx, server, on)
}

// ToolChanges are what server's tools and instructions changed since
// otter pinned them: each held-back tool (and the instructions) with its
// pinned and current definitions and their diff.
func (a *App) ToolChanges(server string) ([]ToolChange, error) { return a.mcp.ToolChanges(server) }

// ApproveTools takes server's current definitions of the named tools as
// their pins — every held-back tool's and the instructions when none is
// named — and offers them from now on. It returns what it took.
func (a *App) ApproveTools(ctx context.Context, server string, tools []string) ([]ToolChange, error) {
	return a.mcp.ApproveTools(ctx, server, tools)
}

// ServerInstructions are the connected servers' instructions, by server
// (instructions held back until approved are left out).
func (a *App) ServerInstructions() map[string]string { return a.mcp.Instructions() }

// ServerSession is the live MCP session with server, for asking it what
// otter does not keep (its whole tool list before filters).
func (a *App) ServerSession(server string) (*sdk.ClientSession, bool) { return a.mcp.Session(server) }

// Prompts are the connected servers' prompts.
func (a *App) Prompts() []Prompt { return a.mcp.Prompts() }

// GetPrompt asks server for prompt name with args.
func (a *App) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*sdk.GetPromptResult, error) {
	return a.mcp.GetPrompt(ctx, server, name, args)
}

// Resources are the connected servers' resources.
func (a *App) Resources() []Resource { return a.mcp.Resources() }

// ResourceTemplates are the connected servers' resource templates.
func (a *App) ResourceTemplates() []ResourceTemplate { return a.mcp.ResourceTemplates() }

// ReadResource reads uri from server.
func (a *App) ReadResource(ctx context.Context, server, uri string) (*sdk.ReadResourceResult, error) {
	return a.mcp.ReadResource(ctx, server, uri)
}

// Complete asks server for completions of a prompt's or a resource
// template's argument (see servers.Manager.Complete).
func (a *App) Complete(ctx context.Context, server, ref, name, arg, value string, resolved map[string]string) ([]string, error) {
	return a.mcp.Complete(ctx, server, ref, name, arg, value, resolved)
}

// ToolEntries are the tools the model is offered, built-ins and servers'.
func (a *App) ToolEntries() []tool.Entry { return a.tools.Entries() }

// ToolCollisions are the tools left out because another had their name.
func (a *App) ToolCollisions() []tool.Collision { return a.tools.Collisions() }

// LookupTool finds a tool by its qualified name.
func (a *App) LookupTool(name string) (tool.Entry, bool) { return a.tools.Lookup(name) }

// CheckToolArguments checks args against the tool's input schema (a
// *tool.ArgumentsError lists what does not match).
func (a *App) CheckToolArguments(name string, args json.RawMessage) error {
	return a.tools.CheckArguments(name, args)
}

// CallTool calls a tool by its qualified name, as the model would.
func (a *App) CallTool(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
	return a.tools.Call(ctx, name, args)
}

// SearchTools ranks the tools for query (as the model's tool_search
// does), the best limit of them.
func (a *App) SearchTools(query string, limit int) []tool.Match {
	return a.tools.Search(query, limit, a.mcp.Instructions())
}

// SessionAge is how long ago t was, as the session lists show it ("3h",
// "2d").
func SessionAge(t, now time.Time) string { return record.Age(t, now) }

// The tools for the project that change files, by name: a front end shows
// their results' diffs (localtools' names, so that it need not import the
// tools).
const (
	ToolEditFile  = localtools.NameEditFile
	ToolWriteFile = localtools.NameWriteFile
)
