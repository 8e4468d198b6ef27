// Package app is otter's UI-agnostic core: it loads the configuration,
// builds the merged tool set (built-in web-data tools and the tools of every
// MCP server), the MCP client manager and the model provider, builds the
// agents (NewAgent) and answers servers' sampling requests, and wires in
// the front end's answers to the questions the core asks (elicitation,
// login, approvals). A config reload reaches every part from Reload.
// The TUI and the headless CLI are thin front ends over an App.
//
// A running conversation is a Conversation (NewConversation): the agent,
// its saved session, what happens to a typed message on its way out, the
// first message's wait for servers still starting (ServerWait), the
// events of each turn, and the new/clear/fork/resume lifecycle with its
// notes. Front ends decide nothing about a conversation: they turn keys or
// flags into calls on it and its events into pixels or lines.
//
// A login to a remote server needs no App, so that it starts no other
// server: LoginTarget resolves a server's name or URL against the merged
// configuration, LoginServer logs in (or checks the stored token) over a
// connection of its own and reports a LoginOutcome or a typed error, and
// Logout forgets the token. Front ends word the outcome and the errors.
//
// Extension points for features that act on the conversation:
//   - ConversationOptions.Hooks: an OutgoingHook sees each typed message
//     after its @SERVER:URI mentions are expanded, and may append context
//     to Outgoing.Text (project instructions, @file contents, the output
//     of a shell line), add images and chips (Outgoing.Attached), or
//     refuse the message (Send then returns an error wrapping ErrNotSent).
//   - Options.SystemParts: each is asked for a part of the system prompt
//     when an agent is built and on every Reload, after [agent]
//     system_prompt.
//
// It imports agent, ask, attach, config, customcmd, hooks, instructions,
// llm, llmconfig, localtools, oauth, pins, record, sandbox, servers,
// shellline, skill, tool and webdata of otter's packages; never a front end (tui, cli) nor cmd/otter,
// nor serve (the headless front end builds `otter mcp serve`'s server),
// and it names no CLI flag. It does not import the MCP client
// (internal/mcphost) nor the session database (internal/session) either:
// it builds them through [Parts], so that a front end, which imports app,
// links neither in through it.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/localtools"
	"github.com/otter-sh/otter/internal/oauth"
	"github.com/otter-sh/otter/internal/pins"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

// Options configure New.
type Options struct {
	// Parts are the MCP client manager and the session database the App
	// builds on (internal/appparts' Default); New fails without
	// NewServers.
	Parts Parts
	// Paths are otter's XDG directories; the zero value means
	// config.DefaultPaths().
	Paths config.Paths
	// WorkDir is the directory otter runs in ("" = the current directory):
	// it selects the project config and is the root offered to servers.
	WorkDir string
	// ConfigFile is an extra config file, above every scope.
	ConfigFile string
	// ConfigFileHint is what to do when ConfigFile does not exist, as the
	// front end words it (naming its flag); "" = check the path.
	ConfigFileHint string
	// LookupEnv resolves ${VAR} in the config; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)

	// Asker answers elicitation requests, OAuth login prompts and
	// approvals. Nil: servers are not offered elicitation and logins use
	// oauth's terminal prompter.
	Asker ask.Asker
	// SamplingApprover approves servers' sampling/createMessage requests,
	// which the App then answers with the configured model. Nil: the
	// client does not offer sampling.
	SamplingApprover ask.Approver
	// Model, when set, replaces the configured model ([agent].model) for
	// the agents and for sampling.
	Model string
	// Provider, when set, replaces the configured provider
	// ([agent].provider) with the one [providers.Provider] configures, with
	// Model or else that provider's own model.
	Provider string
	// OnEvent receives the MCP manager's events, from any goroutine; it
	// must not block.
	OnEvent func(servers.Event)
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// Interactive lets servers start an OAuth login (which may open a
	// browser) as soon as they connect. Without it a server that needs a
	// login goes needs-auth until Manager.Login is called. The headless CLI
	// sets it for ad hoc servers given on the command line.
	Interactive bool

	// SelectServers, when set, chooses the servers to manage from the
	// configured ones, each time the config is (re)loaded. The CLI uses it to
	// run one named server, none, or an ad hoc server given by flags. An
	// error fails New or Reload.
	SelectServers func(configured []config.Server) ([]config.Server, error)
	// SandboxLauncher is otter's own executable: set, stdio servers run
	// confined (package sandbox), the binary starting itself as the
	// launcher; "" runs them unconfined.
	SandboxLauncher string
	// Version is the client version sent to servers in initialize.
	Version string
	// NoInstructions leaves out the person's instruction files (AGENTS.md
	// and the like): the model gets none.
	NoInstructions bool
	// SystemParts contribute to every agent's system prompt, after
	// [agent].system_prompt, each asked again on Reload; "" adds nothing.
	SystemParts []func() string
	// Lazy lets servers start when they are needed: a server whose tools
	// would be deferred behind tool_search and are known from an earlier
	// connection (its pins) stays idle at Start until one of its tools is
	// found or called, or its resources or prompts are asked for ([mcp]
	// lazy and each server's lazy can turn it off). Front ends that talk to
	// a model set it; a command that needs a server connected does not.
	Lazy bool
}

// App is the core both front ends use. Its fields are set by New; Reload
// replaces Config, so a front end reads Config from the goroutine that
// calls Reload.
type App struct {
	cfg     *config.Config
	Paths   config.Paths
	WorkDir string
	mcp     servers.Host
	tools   *tool.Set
	auth    *oauth.Authorizer
	Logger  *slog.Logger

	opts     Options
	llm      providerState
	sessions sessionStore
	ext      extensionState
	instr    instructionState
	closeMu  sync.Mutex
	closed   bool

	// cfgMu guards cfg, which Reload replaces; reloadMu serialises
	// reloads (a command, the file watcher, trusting).
	cfgMu    sync.RWMutex
	reloadMu sync.Mutex

	builtinsMu    sync.Mutex // see setBuiltins
	web           []tool.Tool
	resourceTools bool

	// local are the tools for the project (read_file … run_command),
	// offered while [tools] local is on; each Conversation has its State.
	local *localtools.Tools
}

// New loads the configuration and builds the tool set (with the built-in
// tools) and the MCP manager. It does not start any server: call Start.
// Config errors are returned as config reports them (file:line and what to
// do).
func New(ctx context.Context, opts Options) (*App, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opts.Parts.NewServers == nil {
		return nil, errNoPart("NewServers")
	}
	paths := opts.Paths
	if paths == (config.Paths{}) {
		paths = config.DefaultPaths()
	}
	workDir, err := filepath.Abs(cmp.Or(opts.WorkDir, "."))
	if err != nil {
		return nil, fmt.Errorf("resolve the working directory %q: %w", opts.WorkDir, err)
	}
	logger := cmp.Or(opts.Logger, slog.Default())
	a := &App{Paths: paths, WorkDir: workDir, Logger: logger, opts: opts}

	cfg, err := a.load()
	if err != nil {
		return nil, err
	}
	a.cfg = cfg
	a.refreshProvider(cfg)
	a.refreshExtensions(cfg)

	a.tools = tool.NewSet(tool.Options{
		MaxOutputChars: cfg.Tools.MaxOutputChars,
		SpillDir:       a.spillDir(),
	})
	a.local = localtools.New(a.localOptions(cfg))
	builtins, err := a.builtins(cfg)
	if err != nil {
		return nil, err
	}
	a.setBuiltins(builtins)

	var prompter ask.LoginPrompter // nil: oauth's terminal prompter
	if opts.Asker != nil {
		prompter = opts.Asker
	}
	a.auth = oauth.New(oauth.Options{
		Paths:    paths,
		Prompter: prompter,
		Logger:   logger.With("component", "oauth"),
	})
	var authz servers.Authorizer = a.auth
	if opts.Interactive {
		authz = interactiveAuth{a.auth}
	}
	mopts := servers.Options{
		Tools:   a.tools,
		Auth:    authz,
		Logger:  logger,
		Roots:   []string{workDir},
		Version: opts.Version,
		// The project does not change on Reload: the working directory
		// selects it once.
		Pins: pins.NewStore(paths.StateDir, cfg.Project),
	}
	if opts.Asker != nil {
		mopts.Eliciter = opts.Asker
	}
	if opts.SamplingApprover != nil {
		mopts.Sampler = a.sample
	}
	if opts.SandboxLauncher != "" {
		mopts.Sandbox = &servers.SandboxOptions{
			Launcher: opts.SandboxLauncher,
			Deny:     []string{paths.ConfigDir, paths.DataDir, paths.StateDir, paths.CacheDir},
			Required: cfg.Sandbox.Required,
		}
	}
	mopts.OnEvent = a.onMCPEvent
	if opts.Lazy {
		mopts.Lazy = a.defersKnown
	}
	a.mcp = a.opts.Parts.NewServers(cfg.MCP, mopts)
	return a, nil
}

// load reads the config and applies SelectServers.
func (a *App) load() (*config.Config, error) {
	cfg, err := config.Load(config.LoadOptions{
		Paths:     a.Paths,
		WorkDir:   a.WorkDir,
		Extra:     a.opts.ConfigFile,
		ExtraHint: a.opts.ConfigFileHint,
		LookupEnv: a.opts.LookupEnv,
	})
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings {
		// Headless, this reaches stderr; the TUI also shows them.
		a.Logger.Warn("config", "warning", w.Error())
	}
	if a.opts.SelectServers != nil {
		servers, err := a.opts.SelectServers(cfg.MCP.Servers)
		if err != nil {
			return nil, err
		}
		cfg.MCP.Servers = servers
	}
	return cfg, nil
}

// Start starts every enabled server in the background and returns at once.
// Use MCP.WaitSettled to wait until none is pending.
func (a *App) Start(ctx context.Context) { a.mcp.Start(ctx) }

// Reload re-reads the configuration, rebuilds the built-in tools and lets
// the manager restart only the servers whose configuration changed. On a
// config error nothing changes and the error is returned.
func (a *App) Reload(ctx context.Context) (servers.ReloadDiff, error) {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	cfg, err := a.load()
	if err != nil {
		return servers.ReloadDiff{}, err
	}
	a.refreshExtensions(cfg)
	builtins, err := a.builtins(cfg)
	if err != nil {
		return servers.ReloadDiff{}, err
	}
	a.local.Configure(a.localOptions(cfg))
	a.cfgMu.Lock()
	a.cfg = cfg
	a.cfgMu.Unlock()
	a.setBuiltins(builtins)
	a.refreshProvider(cfg)
	a.refreshInstructions(cfg)
	return a.mcp.Reload(ctx, cfg.MCP), nil
}

// Close stops every server; no server process outlives it. It is safe to
// call more than once.
func (a *App) Close() error {
	a.closeMu.Lock()
	defer a.closeMu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	a.local.Close() // no background command outlives otter
	return errors.Join(a.mcp.Close(), a.closeSessions())
}

// interactiveAuth lets every connection start a login at once.
type interactiveAuth struct{ *oauth.Authorizer }

func (i interactiveAuth) Handler(srv config.Server, _ bool) auth.OAuthHandler {
	return i.Authorizer.Handler(srv, true)
}
