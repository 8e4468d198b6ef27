// Package servers is the vocabulary of otter's MCP servers as the rest of
// otter sees them: a server's [Status] and [State], the [Event]s its client
// manager sends, the prompts and resources servers offer, what a reload
// changed, the [URLElicitationError] of a request a server refused until
// the person opens a page, and the [Options] and [Host] of a client manager.
//
// internal/mcphost implements [Host]; the App builds one through a
// constructor it is given, so the App and the front ends over it name these
// values without linking the MCP client in (see internal/app's Parts).
//
// It imports only ask, config, pins, termtext and tool of otter's packages.
package servers

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/pins"
	"github.com/otter-sh/otter/internal/termtext"
	"github.com/otter-sh/otter/internal/tool"
)

const (
	// urlElicitMaxShown bounds the URLs an error names; a server cannot
	// make the text grow without limit.
	urlElicitMaxShown = 5
	// urlElicitMaxText bounds each URL and message in the text.
	urlElicitMaxText = 2000
)

// TransportAuto is a URL server's transport when it is to be found out
// (streamable HTTP, else SSE).
const TransportAuto = config.TransportAuto

// State is a server's connection state.
type State string

const (
	StatePending   State = "pending"
	StateConnected State = "connected"
	StateFailed    State = "failed"
	StateNeedsAuth State = "needs-auth"
	StateDisabled  State = "disabled"
	// StateIdle: the server has not started, and otter knows its tools
	// from an earlier connection (its pins). They are in the tool set,
	// deferred behind tool_search, and the server starts when it is needed:
	// one of its tools is found or called, its resources or prompts are
	// asked for (Host.Wake). Status.Tools counts the known tools.
	StateIdle State = "idle"
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
	NotOffered []tool.Collision
	// HeldBack are the server's tools (that pass allowed_tools and
	// denied_tools) whose definitions differ from their pins, or that were
	// not pinned, by name: they are listed, not offered (see
	// internal/pins). InstructionsHeldBack: the server's instructions
	// differ from the pinned ones, and are not sent to a model
	// (Instructions is then ""). Pinned is false for a server whose tools
	// are not pinned (pin_tools = false, an ad hoc server).
	HeldBack             []HeldTool
	InstructionsHeldBack bool
	Pinned               bool
	Prompts              int
	Resources            int
	Templates            int      // resource templates
	Instructions         string   // the server's initialize instructions
	StderrTail           []string // the last lines the server wrote on stderr (stdio)
	ServerInfo           string   // "name version" from initialize
	ConnectedAt          time.Time
	// Attempts counts the reconnect attempts since the last success. A
	// failed server with Attempts > 0 lost its connection and gave up
	// reconnecting after that many: the front end says how to retry (the
	// TUI's /mcp panel), the core names no command.
	Attempts int

	// Roots are the directories offered to the server as MCP roots (a
	// server such as server-filesystem confines itself to them): its
	// config's roots, else the working directory (RootsByDefault). None:
	// the roots capability is not offered.
	Roots          []string
	RootsByDefault bool
	// Sandbox is how a stdio server runs; nil for a remote server, or when
	// the manager confines none (Options.Sandbox).
	Sandbox *SandboxStatus

	// Live figures.
	Calls         int64
	Errors        int64
	MedianLatency time.Duration

	// Token expiry of a stored OAuth token; zero if none.
	TokenExpiry time.Time
}

// HeldTool is one held-back tool of a server (Status.HeldBack).
type HeldTool struct {
	Name string
	// New: the server added it since its tools were pinned; else its
	// definition changed.
	New bool
}

// ToolChange is one difference between a server's pins and what it
// sends now; its Diff shows it (pins.Change).
type ToolChange = pins.Change

// The kinds of ToolChange.
const (
	ToolChanged         = pins.Changed
	ToolAdded           = pins.Added
	InstructionsChanged = pins.Instructions
)

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

// Authorizer supplies OAuth for remote servers. internal/oauth implements it.
type Authorizer interface {
	// Handler returns the OAuth handler for a remote server, or nil if it
	// needs none. With interactive false it must never open a browser: its
	// Authorize returns an error wrapping oauth.ErrLoginRequired when a
	// login is needed, and the server goes needs-auth.
	Handler(srv config.Server, interactive bool) auth.OAuthHandler
	// TokenExpiry returns the expiry of the stored token; zero if none.
	TokenExpiry(srv config.Server) time.Time
}

// Options configure a client manager ([Host]).
type Options struct {
	// Tools receives each connected server's tools, filtered by the
	// server's allowed_tools and denied_tools. May be nil.
	Tools *tool.Set
	// Eliciter answers servers' elicitation requests. Nil: the client does
	// not offer elicitation.
	Eliciter ask.Eliciter
	// Sampler answers sampling/createMessage. Nil: the client does not offer
	// sampling.
	Sampler func(ctx context.Context, server string, req *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error)
	// Auth supplies OAuth for remote servers. Nil: no OAuth.
	Auth Authorizer
	// OnEvent receives events from any goroutine. It must not block.
	OnEvent func(Event)
	// Logger receives the manager's diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// Roots are the directories offered to servers as roots. Default: the
	// working directory.
	Roots []string
	// Version is the client version sent in initialize.
	Version string
	// Pins keeps the servers' tool definitions as first seen and holds
	// back what changes (see internal/pins). Nil: nothing is pinned.
	Pins *pins.Store
	// Sandbox confines stdio servers (package sandbox). Nil: they run
	// unconfined (tests and embedders; otter's binary sets it).
	Sandbox *SandboxOptions
	// Lazy, when set, lets the servers that may start lazily (see
	// config.MCP.StartsLazily) and whose tools are known from their pins
	// stay idle at Start, until they are needed. It is given the known
	// tools of every pinned server that is to run (under their qualified
	// names) and reports whether tools like these would be deferred behind
	// tool_search (the agent's rule): only then do those servers stay idle;
	// otherwise every server starts. Nil: every server starts.
	Lazy func(known []tool.Entry) bool
}

// SandboxOptions say how stdio servers are confined.
type SandboxOptions struct {
	// Launcher is otter's own executable, which confines itself and then
	// execs the server.
	Launcher string
	// Deny are otter's own folders (config, data, state, cache), which no
	// server reads: they hold keys, tokens and sessions.
	Deny []string
	// Required refuses to start a server that cannot be confined here
	// ([sandbox] required), rather than running it unconfined.
	Required bool
}

// SandboxStatus is how a stdio server runs: confined, and with what, or
// not, and why.
type SandboxStatus struct {
	On      bool
	Write   []string // the trees it may write
	Network bool     // it may reach any host
	// Hosts, with Network false, are the only hosts it may reach, through
	// otter's filtering proxy (sandbox.network = ["api.github.com"]).
	Hosts []string
	// Why it is not confined: sandbox.enabled = false, or the system
	// cannot (Linux without Landlock, another system).
	Off string
	// Weaker, for a server with no network or a host list, says why its
	// network is confined less than it should be here (no network
	// namespace of its own: the host list holds by port only).
	Weaker string
}

// Prompt is a prompt offered by a connected server.
type Prompt struct {
	Server      string
	Name        string
	Description string
	Arguments   []*sdk.PromptArgument
}

// Resource is a resource offered by a connected server.
type Resource struct {
	Server string
	*sdk.Resource
}

// ResourceTemplate is a resource template offered by a connected server.
type ResourceTemplate struct {
	Server string
	*sdk.ResourceTemplate
}

// URLElicitation is one page a server needs the person to open.
type URLElicitation struct {
	URL     string
	Message string // why, in the server's words
	ID      string // the elicitationId
}

// URLElicitationError is a request a server refused with -32042 until the
// person has opened the URLs in a browser. Its text names them, for the
// person and for the model.
type URLElicitationError struct {
	// What names the request: the tool's qualified name (mcp__srv__tool),
	// or a prompt or resource of a server.
	What   string
	Server string
	// Message is the server's error message, without the "MCP error
	// -32042: " some SDKs put before it.
	Message      string
	Elicitations []URLElicitation
	again        string // "call again" for a tool, "try again" otherwise
	err          error
}

func (e *URLElicitationError) Unwrap() error { return e.err }

func (e *URLElicitationError) Error() string {
	var b strings.Builder
	b.WriteString(e.What)
	b.WriteString(": the server needs you to open ")
	shown := e.Elicitations[:min(len(e.Elicitations), urlElicitMaxShown)]
	for i, el := range shown {
		switch {
		case i == 0:
		case i == len(shown)-1 && len(shown) == len(e.Elicitations):
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(printable(el.URL))
		if msg := printable(el.Message); msg != "" {
			b.WriteString(" (" + msg + ")")
		}
	}
	if more := len(e.Elicitations) - len(shown); more > 0 {
		fmt.Fprintf(&b, " and %d more", more)
	}
	b.WriteString(" in a browser, then " + cmp.Or(e.again, "try again"))
	if msg := printable(e.Message); msg != "" && !strings.EqualFold(msg, "URL elicitation required") {
		b.WriteString("; it said: " + msg)
	}
	return b.String()
}

// ParseURLElicitation returns err, the failure of a request, as a
// URLElicitationError when it is a -32042 answer that lists at least one
// URL; otherwise nil.
func ParseURLElicitation(err error, what, server, again string) *URLElicitationError {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != sdk.CodeURLElicitationRequired {
		return nil
	}
	var data struct {
		Elicitations []struct {
			Mode          string `json:"mode"`
			URL           string `json:"url"`
			Message       string `json:"message"`
			ElicitationID string `json:"elicitationId"`
		} `json:"elicitations"`
	}
	if len(rpcErr.Data) == 0 || json.Unmarshal(rpcErr.Data, &data) != nil {
		return nil
	}
	e := &URLElicitationError{What: what, Server: server, again: again, err: err}
	e.Message = strings.TrimSpace(strings.TrimPrefix(rpcErr.Message, fmt.Sprintf("MCP error %d:", rpcErr.Code)))
	for _, el := range data.Elicitations {
		if el.URL == "" || (el.Mode != "" && el.Mode != "url") {
			continue
		}
		e.Elicitations = append(e.Elicitations, URLElicitation{URL: el.URL, Message: el.Message, ID: el.ElicitationID})
	}
	if len(e.Elicitations) == 0 {
		return nil
	}
	return e
}

// printable makes server text safe for a terminal and one line long
// (termtext.Line: no escape sequence, control, bidi or invisible
// character), runs of space become one, and it is cut at
// urlElicitMaxText bytes.
func printable(s string) string {
	s = strings.Join(strings.Fields(termtext.Line(s)), " ")
	if len(s) > urlElicitMaxText {
		cut := urlElicitMaxText
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Host is an MCP client manager: it starts the configured servers, keeps
// their state and offers what they offer. internal/mcphost's Manager is
// one.
type Host interface {
	// Start starts every enabled server in the background.
	Start(ctx context.Context)
	// WaitSettled waits until no server is pending, or ctx is done. An
	// idle server is not waited for.
	WaitSettled(ctx context.Context) error
	// Wake starts an idle server and waits until it is connected or has
	// failed (its error); for a server that is not idle it waits only while
	// it is starting. Calls, prompts and resources of an idle server wake
	// it by themselves; a front end wakes one to list what it offers.
	Wake(ctx context.Context, name string) error
	Statuses() []Status
	Status(name string) (Status, bool)
	// Session is the live MCP session with a server.
	Session(name string) (*sdk.ClientSession, bool)
	// Reload restarts only the servers whose configuration changed.
	Reload(ctx context.Context, cfg config.MCP) ReloadDiff
	Reconnect(ctx context.Context, name string) error
	Login(ctx context.Context, name string) error
	SetEnabled(ctx context.Context, name string, on bool) error
	// Instructions are the connected servers' instructions, by server.
	Instructions() map[string]string
	Prompts() []Prompt
	GetPrompt(ctx context.Context, server, name string, args map[string]string) (*sdk.GetPromptResult, error)
	Resources() []Resource
	ResourceTemplates() []ResourceTemplate
	HasResources() bool
	ReadResource(ctx context.Context, server, uri string) (*sdk.ReadResourceResult, error)
	Complete(ctx context.Context, server, ref, name, arg, value string, resolved map[string]string) ([]string, error)
	// ToolChanges are what the server's tools and instructions changed
	// since they were pinned, as the server lists them now (filtered by
	// allowed_tools and denied_tools); none when nothing is held back.
	ToolChanges(name string) ([]ToolChange, error)
	// ApproveTools takes the server's current definitions of the named
	// tools as their pins — of every held-back tool, and its instructions,
	// when none is named — and offers them from then on. It returns the
	// changes it took.
	ApproveTools(ctx context.Context, name string, tools []string) ([]ToolChange, error)
	CanSubscribe(server string) bool
	Subscribe(ctx context.Context, server, uri string) error
	Unsubscribe(ctx context.Context, server, uri string) error
	Close() error
}
