// Package tui is otter's terminal user interface: a chat transcript with
// streaming markdown, the /mcp views, a tool inspector (/call), and the
// in-terminal forms that answer the core's questions (elicitation, login,
// tool permission, sampling).
//
// The package is a view. Everything it shows or does goes through the
// small Backend interface; AppBackend implements it over the core
// (internal/app and the agent it builds), and tests use a fake. No MCP or
// agent logic lives here.
//
// It imports agent, app, ask, attach, config, instructions, llm, markdown,
// render, schema, shellline, termtext, tool and toolname of otter's
// packages, and the Charm stack; never internal/cli nor cmd/otter, nor the
// MCP client or the session store (those are app's).
package tui

import (
	"context"
	"encoding/json"
	"errors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/tool"
)

// Backend is what the TUI needs from the core. Methods that take a context
// may block; the TUI calls them off its event loop.
type Backend interface {
	// Provider describes the configured model provider.
	Provider() Provider
	// Servers returns a snapshot of every configured MCP server.
	Servers() []app.ServerStatus
	// Tools returns the merged tool set (built-ins first, then MCP tools).
	Tools() []tool.Entry
	// ToolOffer says which MCP tools the model is not offered (deferred
	// behind tool_search) until it loads them.
	ToolOffer() agent.ToolOffer
	// Prompts returns the prompts offered by connected servers.
	Prompts() []app.Prompt
	// GetPrompt expands a server's prompt with its arguments.
	GetPrompt(ctx context.Context, server, name string, args map[string]string) (*sdk.GetPromptResult, error)

	// Reload re-reads the configuration and restarts changed servers.
	Reload(ctx context.Context) (app.ReloadDiff, error)
	// Reconnect restarts one server.
	Reconnect(ctx context.Context, server string) error
	// SetEnabled enables or disables a server for this session.
	SetEnabled(ctx context.Context, server string, on bool) error
	// Login runs an interactive (OAuth) login for a server.
	Login(ctx context.Context, server string) error
	// ToolChanges are a server's tool definitions (and instructions) that
	// differ from their pins, held back from the model.
	ToolChanges(server string) ([]app.ToolChange, error)
	// ApproveTools takes a server's held-back definitions as its pins.
	ApproveTools(ctx context.Context, server string) error

	// CallTool calls a tool by its qualified name, as /call does.
	CallTool(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error)

	// Send sends one user message to the agent and blocks until the turn
	// is over. It reports the agent's events through emit, in order.
	// Cancelling ctx stops the turn (Esc). An error that wraps ErrNotSent
	// means the message never reached the model (an @-mention could not
	// be read): the TUI gives the text back to fix.
	Send(ctx context.Context, text string, emit func(agent.Event)) error
	// ResetChat forgets the conversation (/clear); the TUI calls it when
	// no turn runs. A saved conversation stays saved as it was.
	ResetChat(ctx context.Context) error

	// TrustPrompt returns what to ask when the working directory is an
	// untrusted project that defines MCP servers, or nil.
	TrustPrompt() *TrustRequest
	// Trust marks the project directory trusted with what req listed, and
	// reloads.
	Trust(ctx context.Context, req *TrustRequest) (app.ReloadDiff, error)
	// ConfigWarnings are the problems of the configuration loaded last
	// that did not stop otter (a broken untrusted project file left out,
	// servers whose tools would get the same names), each naming the
	// file and line to change. It does not block.
	ConfigWarnings() []string

	ContextBackend // the model, its window and the cost (context.go)
}

// ErrNotSent is wrapped by Send's error when the message did not reach
// the model, e.g. an @-mention's resource could not be read.
var ErrNotSent = app.ErrNotSent

// A ServerWaiter is a Backend whose first message may wait for servers
// still starting (agent.WaitingForServers): esc sends it at once.
type ServerWaiter interface {
	// SendNow ends the wait; the message goes with the tools so far.
	SendNow() bool
}

// notSent reports whether err means the message never reached the model.
func notSent(err error) bool {
	return errors.Is(err, ErrNotSent) || errors.Is(err, agent.ErrBusy)
}

// Provider describes the model provider the agent talks to.
type Provider struct {
	Name  string // the [providers.NAME] key, e.g. "anthropic"
	Model string
	// Help is set when no provider is configured: how to configure one
	// (a config snippet and the environment variables). A typed prompt is
	// answered with it.
	Help string
}

// TrustRequest asks whether to trust a project directory, or, when
// Changed, what was added to or changed in its configuration since the
// user trusted it.
type TrustRequest struct {
	Dir string
	// Changed: the project is trusted; the lists are what changed since
	// (each marked new or changed), held back until trusted again. Legacy:
	// its trust was recorded by an older otter that kept no record of
	// what the user saw.
	Changed, Legacy bool
	// Servers lists what the project would run, one line per server
	// ("name: command args (in DIR; env KEY, …)" or "name: url").
	Servers []string
	// Settings lists its hooks ("hook Stop: ./x.sh"), commands, skills and
	// other settings (by name only: values may be secrets).
	Settings []string
	// Instructions are the project's instruction files (AGENTS.md and the
	// like) the model gets once the project is trusted.
	Instructions []string
	report       app.TrustReport // what Trust approves
}

// Reloaded is a notice for UI.Notify: the configuration was reloaded
// (by a file watcher when Auto is true).
type Reloaded struct {
	Diff app.ReloadDiff
	Err  error
	Auto bool
}
