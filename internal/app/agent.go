package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llmconfig"
	"github.com/otter-sh/otter/internal/skill"
)

// providerState is the model provider the configuration names, read again
// on every Reload, and the agents that use it.
type providerState struct {
	mu       sync.Mutex
	provider llm.Provider // nil when err is set
	model    string
	err      error
	agents   []builtAgent // built by NewAgent, refreshed by Reload
	cfg      *config.Config
	chosen   *ModelChoice // /model's choice, kept across reloads
	// thinking is the front end's reasoning level, over the provider's
	// thinking setting; nil = the configuration's.
	thinking *llm.Thinking
	// windows keeps the context windows providers stated, across runs.
	windows *llm.WindowCache
}

// builtAgent is an agent NewAgent built, with what its front end chose.
type builtAgent struct {
	agent *agent.Agent
	opts  AgentOptions
}

// AgentOptions are what a front end chooses for an agent; everything else
// (provider, model, tools, permissions, limits, system prompt) comes from
// the App and its configuration.
type AgentOptions struct {
	// Approver answers tool permission prompts; nil denies every call that
	// would need to ask.
	Approver ask.Approver
	// OnEvent receives the agent's events (see agent.Options.OnEvent).
	OnEvent func(agent.Event)
	// MaxTurns overrides [agent].max_turns when positive.
	MaxTurns int
	// Hooks runs the user's hooks at the agent's tool calls and stops.
	Hooks agent.HookRunner
}

// NewAgent returns an agent over the App's tools and MCP servers, talking
// to the configured model provider (Options.Model overriding its model).
// Reload keeps it up to date: a new provider, model or [agent] and
// [permissions] settings apply from its next message on, and the
// conversation is kept. Without a configured provider the agent answers
// each message with how to configure one (see Provider).
func (a *App) NewAgent(o AgentOptions) *agent.Agent {
	p, model, _ := a.Provider()
	a.llm.mu.Lock()
	s := a.agentSettings(a.Config(), o, p)
	a.llm.mu.Unlock()
	ag := agent.New(agent.Options{
		Provider:     p,
		Model:        model,
		Tools:        a.tools,
		Approver:     o.Approver,
		Permissions:  s.Permissions,
		MaxTurns:     s.MaxTurns,
		MaxTokens:    s.MaxTokens,
		SystemPrompt: s.SystemPrompt,
		Skills:       s.Skills,
		ToolSearch:   s.ToolSearch,
		CompactAt:    s.CompactAt,
		Thinking:     s.Thinking,
		Facts:        a.Facts,
		Windows:      a.windowCache(),
		Instructions: a.mcp.Instructions,
		WorkDir:      a.WorkDir,
		OnEvent:      o.OnEvent,
		Hooks:        o.Hooks,
		Logger:       a.Logger,

		// The agent takes the config file's parts as options.
		SavePermission:   a.Paths.SavePermission,
		PermissionsFile:  a.permissionsFile,
		ProviderHelp:     llmconfig.HowToConfigure(),
		UserInstructions: a.userInstructions,
	})
	a.llm.mu.Lock()
	a.llm.agents = append(a.llm.agents, builtAgent{agent: ag, opts: o})
	a.llm.mu.Unlock()
	return ag
}

// windowCache is the cache of learned context windows, in the data
// directory.
func (a *App) windowCache() *llm.WindowCache {
	a.llm.mu.Lock()
	defer a.llm.mu.Unlock()
	if a.llm.windows == nil {
		path := ""
		if a.Paths.DataDir != "" {
			path = filepath.Join(a.Paths.DataDir, "windows.json")
		}
		a.llm.windows = llm.NewWindowCache(path)
	}
	return a.llm.windows
}

// thinkingOf is the reasoning level for provider p under cfg: the front
// end's choice, else [providers.NAME] thinking. The caller holds a.llm.mu
// or owns the App alone.
func (a *App) thinkingOf(cfg *config.Config, p llm.Provider) llm.Thinking {
	if a.llm.thinking != nil {
		return *a.llm.thinking
	}
	if p == nil || cfg == nil {
		return llm.Thinking{}
	}
	t, _ := llm.ParseThinking(cfg.Providers[p.Name()].Thinking) // checked when the config was loaded
	return t
}

// agentSettings are the settings of an agent built with o under cfg,
// talking to p.
func (a *App) agentSettings(cfg *config.Config, o AgentOptions, p llm.Provider) agent.Settings {
	s := agent.Settings{
		Thinking:     a.thinkingOf(cfg, p),
		Permissions:  cfg.Permissions,
		MaxTurns:     cfg.Agent.MaxTurns,
		MaxTokens:    cfg.Agent.MaxTokens,
		SystemPrompt: a.systemPrompt(cfg),
		Skills:       skill.Catalog(a.skills(), cfg.ProjectTrust.Dir),
		ToolSearch:   toolSearch(cfg),
		CompactAt:    cfg.Agent.CompactAt,
	}
	if o.MaxTurns > 0 {
		s.MaxTurns = o.MaxTurns
	}
	return s
}

// systemPrompt is [agent].system_prompt, then Options.SystemParts (the
// skills' catalog is a section of its own: agent.Settings.Skills).
func (a *App) systemPrompt(cfg *config.Config) string {
	parts := []string{cfg.Agent.SystemPrompt}
	if cfg.Tools.LocalEnabled() && a.local != nil {
		parts = append(parts, a.local.SystemPrompt())
	}
	for _, part := range a.opts.SystemParts {
		parts = append(parts, part())
	}
	return joinPrompt(parts...)
}

// Provider returns the model provider the configuration names and the
// model to use. When none is configured (or its configuration is wrong) it
// returns an error that says how to configure one; it wraps
// llm.ErrNoProvider when none is configured at all.
func (a *App) Provider() (llm.Provider, string, error) {
	a.llm.mu.Lock()
	defer a.llm.mu.Unlock()
	return a.llm.provider, a.llm.model, a.llm.err
}

// refreshProvider reads the model provider from cfg and hands it, with
// cfg's settings, to every agent NewAgent built: the one place a
// configuration change reaches the agents.
func (a *App) refreshProvider(cfg *config.Config) {
	p, model, err := llmconfig.FromConfig(cfg, a.opts.LookupEnv)
	switch {
	case a.opts.Provider != "":
		p, model, err = a.chosenProvider(cfg)
	case err == nil && a.opts.Model != "":
		model = a.opts.Model
	}
	a.llm.mu.Lock()
	a.llm.cfg = cfg
	chosen := a.llm.chosen
	a.llm.mu.Unlock()
	if chosen != nil {
		if cp, cm, cerr := a.providerNamed(cfg, chosen.Provider, chosen.Model); cerr == nil {
			p, model, err = cp, cm, nil
		}
	}
	if err != nil {
		p, model = nil, ""
		// No provider, or one whose config has a Problem (an unset ${VAR}):
		// what uses the model reports it; mcp list and the like need not.
		var cerr *config.Error
		if !errors.Is(err, llm.ErrNoProvider) && !errors.As(err, &cerr) {
			a.Logger.Warn("model provider", "err", err)
		}
	}
	a.llm.mu.Lock()
	defer a.llm.mu.Unlock()
	a.llm.provider, a.llm.model, a.llm.err = p, model, err
	for _, b := range a.llm.agents {
		if p != nil {
			b.agent.SetProvider(p, model)
		}
		b.agent.Configure(a.agentSettings(cfg, b.opts, p))
	}
}

// chosenProvider is the provider Options.Provider names, with
// Options.Model or the model configured for it.
func (a *App) chosenProvider(cfg *config.Config) (llm.Provider, string, error) {
	name := a.opts.Provider
	model := a.opts.Model
	if model == "" && name == cfg.Agent.Provider {
		model = cfg.Agent.Model
	}
	if _, ok := cfg.Providers[name]; !ok {
		if name != llm.TypeAnthropic && name != llm.TypeOpenAI {
			return nil, "", &UnknownProviderError{Name: name, Configured: slices.Sorted(maps.Keys(cfg.Providers))}
		}
		// The API by its name, with its key from the environment.
		c := *cfg
		c.Providers = maps.Clone(cfg.Providers)
		if c.Providers == nil {
			c.Providers = map[string]config.Provider{}
		}
		c.Providers[name] = config.Provider{Type: name}
		c.Agent.Provider, c.Agent.Model = name, model
		return llmconfig.FromConfig(&c, a.opts.LookupEnv)
	}
	return a.providerNamed(cfg, name, model)
}

// UnknownProviderError is the error of a provider chosen by name that the
// configuration does not define.
type UnknownProviderError struct {
	Name       string
	Configured []string // the [providers.NAME] names
}

func (e *UnknownProviderError) Error() string {
	if len(e.Configured) == 0 {
		return fmt.Sprintf("no provider %q: the config defines no [providers.NAME]", e.Name)
	}
	return fmt.Sprintf("no provider %q in the config; its providers are %s", e.Name, strings.Join(e.Configured, ", "))
}

// sample answers a server's sampling/createMessage request with the
// configured model, once Options.SamplingApprover approves it.
func (a *App) sample(ctx context.Context, server string, req *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	p, model, _ := a.Provider()
	return agent.SamplingHandler(p, model, a.opts.SamplingApprover)(ctx, server, req)
}

// joinPrompt joins the non-empty parts of a system prompt section.
func joinPrompt(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n\n")
}
