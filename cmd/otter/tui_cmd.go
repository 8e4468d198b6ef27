package main

// `otter` with no subcommand: the terminal UI over internal/app and
// internal/agent. This file adapts the core to tui.Backend; the view itself
// lives in internal/tui.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/mcphost"
	"github.com/otter-sh/otter/internal/oauth"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/tui"
)

func runTUI(cmd *cobra.Command) error {
	ctx := cmd.Context()
	paths := config.DefaultPaths()
	logger, closeLog, err := tuiLogger(paths)
	if err != nil {
		return exitCode(2, err)
	}
	defer closeLog()

	ui := tui.New(tui.Options{
		OpenURL:     oauth.OpenBrowser,
		ImageDir:    filepath.Join(paths.CacheDir, "images"),
		Version:     version,
		HistoryFile: filepath.Join(paths.StateDir, "history.jsonl"),
	})
	b := &tuiBackend{ui: ui, logger: logger}
	a, err := app.New(ctx, tuiAppOptions(paths, ui, b, logger))
	if err != nil {
		return exitCode(2, err)
	}
	defer func() {
		if err := a.Close(); err != nil {
			logger.Warn("stopping MCP servers", "err", err)
		}
	}()
	b.app = a
	b.agent = agent.New(agent.Options{
		Tools:        a.Tools,
		Approver:     ui,
		Permissions:  a.Config.Permissions,
		MaxTurns:     a.Config.Agent.MaxTurns,
		MaxTokens:    a.Config.Agent.MaxTokens,
		SystemPrompt: a.Config.Agent.SystemPrompt,
		ToolSearch:   agent.ToolSearchConfig(a.Config),
		Instructions: a.MCP.Instructions,
		WorkDir:      a.WorkDir,
		OnEvent:      b.onAgentEvent,
		Logger:       logger,
	})
	b.setProvider(a.Config)

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	a.Start(runCtx)
	if a.Config.MCP.AutoReload {
		go b.watchConfig(runCtx)
	}
	return ui.Run(runCtx, b)
}

// tuiAppOptions configures the core under the TUI. Logins are not
// Interactive: at startup a server that needs one goes needs-auth and the
// TUI says so in one notice; the person starts each login from /mcp (l).
// Asking at once would put a login prompt per server in front of the
// person before they typed anything (issue 3: no browser storm at startup).
func tuiAppOptions(paths config.Paths, ui *tui.UI, b *tuiBackend, logger *slog.Logger) app.Options {
	return app.Options{
		Paths:      paths,
		WorkDir:    flags.workDir,
		ConfigFile: flags.configFile,
		Asker:      ui,
		Sampler:    b.sample,
		OnEvent:    func(ev mcphost.Event) { ui.Notify(ev) },
		Logger:     logger,
		Version:    version,
	}
}

// tuiLogger writes logs to --log-file or $XDG_STATE_HOME/otter/otter.log:
// never to the terminal the TUI draws on.
func tuiLogger(paths config.Paths) (*slog.Logger, func(), error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(flags.logLevel)); err != nil {
		return nil, nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", flags.logLevel)
	}
	path := flags.logFile
	if path == "" {
		path = filepath.Join(paths.StateDir, "otter.log")
		if err := os.MkdirAll(paths.StateDir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("creating the log directory: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the log file: %w (choose another with --log-file)", err)
	}
	logger := slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(logger)
	return logger, func() { f.Close() }, nil
}

// tuiBackend implements tui.Backend over the App and the Agent.
type tuiBackend struct {
	ui     *tui.UI
	app    *app.App
	agent  *agent.Agent
	logger *slog.Logger

	reloadMu sync.Mutex // serialises reloads (the /mcp reload command and the watcher)

	mu       sync.Mutex
	provider tui.Provider
	llm      llm.Provider
	model    string
	emit     func(agent.Event) // the running Send's
}

// setProvider (re)reads the model provider from the config.
func (b *tuiBackend) setProvider(cfg *config.Config) {
	p, model, err := llm.FromConfig(cfg, nil)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		b.provider = tui.Provider{Help: err.Error()}
		b.llm, b.model = nil, ""
		if !errors.Is(err, llm.ErrNoProvider) {
			b.logger.Warn("model provider", "err", err)
		}
		return
	}
	b.provider = tui.Provider{Name: p.Name(), Model: model}
	b.llm, b.model = p, model
	b.agent.SetProvider(p, model)
}

// sample answers servers' sampling requests with the configured model,
// after the person approved.
func (b *tuiBackend) sample(ctx context.Context, server string, req *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	b.mu.Lock()
	p, model := b.llm, b.model
	b.mu.Unlock()
	return agent.SamplingHandler(p, model, b.ui)(ctx, server, req)
}

func (b *tuiBackend) onAgentEvent(ev agent.Event) {
	b.mu.Lock()
	emit := b.emit
	b.mu.Unlock()
	if emit != nil {
		emit(ev)
	}
}

func (b *tuiBackend) Provider() tui.Provider {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.provider
}

func (b *tuiBackend) Servers() []mcphost.Status  { return b.app.MCP.Statuses() }
func (b *tuiBackend) Tools() []tool.Entry        { return b.app.Tools.Entries() }
func (b *tuiBackend) ToolOffer() agent.ToolOffer { return b.agent.ToolOffer() }
func (b *tuiBackend) Prompts() []mcphost.Prompt  { return b.app.MCP.Prompts() }
func (b *tuiBackend) ResetChat()                 { b.agent.Reset() }
func (b *tuiBackend) Login(ctx context.Context, server string) error {
	return b.app.MCP.Login(ctx, server)
}

func (b *tuiBackend) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*sdk.GetPromptResult, error) {
	return b.app.MCP.GetPrompt(ctx, server, name, args)
}

func (b *tuiBackend) Reconnect(ctx context.Context, server string) error {
	return b.app.MCP.Reconnect(ctx, server)
}

func (b *tuiBackend) SetEnabled(ctx context.Context, server string, on bool) error {
	return b.app.MCP.SetEnabled(ctx, server, on)
}

func (b *tuiBackend) CallTool(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
	return b.app.Tools.Call(ctx, name, args)
}

func (b *tuiBackend) Send(ctx context.Context, text string, emit func(agent.Event)) error {
	finished := false
	b.mu.Lock()
	b.emit = func(ev agent.Event) {
		if _, ok := ev.(agent.TurnFinished); ok {
			finished = true
		}
		emit(ev)
	}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.emit = nil
		b.mu.Unlock()
	}()
	err := b.agent.Send(ctx, text)
	if err != nil && finished && !errors.Is(err, context.Canceled) {
		// Already shown from TurnFinished.Err.
		b.logger.Info("turn failed", "err", err)
		return nil
	}
	return err
}

func (b *tuiBackend) Reload(ctx context.Context) (mcphost.ReloadDiff, error) {
	b.reloadMu.Lock()
	defer b.reloadMu.Unlock()
	diff, err := b.app.Reload(ctx)
	if err == nil {
		cfg := b.app.Config
		b.setProvider(cfg)
		b.agent.Configure(agent.Settings{
			Permissions:  cfg.Permissions,
			MaxTurns:     cfg.Agent.MaxTurns,
			MaxTokens:    cfg.Agent.MaxTokens,
			SystemPrompt: cfg.Agent.SystemPrompt,
			ToolSearch:   agent.ToolSearchConfig(cfg),
		})
	}
	return diff, err
}

// TrustPrompt asks about an untrusted project whose config defines servers.
func (b *tuiBackend) TrustPrompt() *tui.TrustRequest {
	cfg := b.app.Config
	untrusted := false
	for _, f := range cfg.Files {
		if f.Scope == config.ScopeProject && !f.Trusted {
			untrusted = true
		}
	}
	if !untrusted {
		return nil
	}
	req := &tui.TrustRequest{Dir: cmp.Or(config.ProjectDir(b.app.WorkDir), b.app.WorkDir)}
	for _, s := range cfg.MCP.Servers {
		if s.Scope != config.ScopeProject || s.DisabledReason == "" {
			continue
		}
		what := s.URL
		if s.Command != "" {
			what = strings.TrimSpace(s.Command + " " + strings.Join(s.Args, " "))
		}
		// What else the entry would change, by name only (values may be secrets).
		var more []string
		if s.Cwd != "" {
			more = append(more, "in "+s.Cwd)
		}
		if len(s.Env) > 0 {
			more = append(more, "env "+strings.Join(slices.Sorted(maps.Keys(s.Env)), ", "))
		}
		if len(s.Headers) > 0 {
			more = append(more, "headers "+strings.Join(slices.Sorted(maps.Keys(s.Headers)), ", "))
		}
		if len(more) > 0 {
			what += " (" + strings.Join(more, "; ") + ")"
		}
		req.Servers = append(req.Servers, s.Name+": "+what)
	}
	if len(req.Servers) == 0 {
		return nil
	}
	req.Settings = untrustedSettings(cfg.Files)
	return req
}

// untrustedSettings names the settings that untrusted project TOML files
// would apply besides their servers ("agent.model", "providers.openai",
// "permissions mcp__fs__* = allow"), held back until the project is
// trusted. Names only, except permissions: other values may be secrets.
func untrustedSettings(files []config.Source) []string {
	var names []string
	for _, f := range files {
		if f.Scope != config.ScopeProject || f.Trusted || filepath.Ext(f.Path) != ".toml" {
			continue
		}
		var top map[string]any
		if err := config.DecodeFile(f.Path, &top); err != nil {
			continue // the config loader reports it
		}
		for k, v := range top {
			sub, ok := v.(map[string]any)
			if !ok {
				names = append(names, k)
				continue
			}
			for sk := range sub {
				switch {
				case k == "mcp" && sk == "servers":
					// listed server by server
				case k == "permissions": // what it lets run unasked is the point
					names = append(names, fmt.Sprintf("permissions %s = %v", sk, sub[sk]))
				default:
					names = append(names, k+"."+sk)
				}
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func (b *tuiBackend) Trust(ctx context.Context) (mcphost.ReloadDiff, error) {
	req := b.TrustPrompt()
	if req == nil {
		return mcphost.ReloadDiff{}, nil
	}
	if err := b.app.Paths.Trust(req.Dir); err != nil {
		return mcphost.ReloadDiff{}, fmt.Errorf("trusting %s: %w", req.Dir, err)
	}
	return b.Reload(ctx)
}

// watchConfig reloads when a config file changes (auto_reload = true). It
// watches the directories (editors replace files rather than write them)
// and waits for a quiet moment before reloading.
func (b *tuiBackend) watchConfig(ctx context.Context) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		b.logger.Warn("auto_reload: cannot watch the config files", "err", err)
		return
	}
	defer w.Close()
	files := map[string]bool{}
	add := func(path string) {
		if path == "" {
			return
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return
		}
		files[abs] = true
		if err := w.Add(filepath.Dir(abs)); err != nil {
			b.logger.Debug("auto_reload: not watching", "dir", filepath.Dir(abs), "err", err)
		}
	}
	for _, f := range b.app.Config.Files {
		add(f.Path)
	}
	add(b.app.Paths.UserConfigFile())
	add(flags.configFile)
	if dir := config.ProjectDir(b.app.WorkDir); dir != "" {
		add(filepath.Join(dir, ".otter", "config.toml"))
		add(filepath.Join(dir, ".otter", "config.local.toml"))
		add(filepath.Join(dir, ".mcp.json"))
	}

	const quiet = 300 * time.Millisecond
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if abs, _ := filepath.Abs(ev.Name); files[abs] {
				timer.Reset(quiet)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			b.logger.Warn("auto_reload: watching the config", "err", err)
		case <-timer.C:
			diff, err := b.Reload(ctx)
			b.ui.Notify(tui.Reloaded{Diff: diff, Err: err, Auto: true})
		}
	}
}
