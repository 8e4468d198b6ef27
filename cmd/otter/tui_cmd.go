package main

// `otter` with no subcommand: the terminal UI (internal/tui) over the core
// (internal/app).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth"
	"github.com/otter-sh/otter/internal/tui"
)

// tuiOptions are what the command line chooses for the TUI.
type tuiOptions struct {
	Session         app.SessionOptions
	Prompt          string // sent as the first message ("" = none)
	Model, Provider string // instead of [agent]'s
}

func runTUI(ctx context.Context, f *cli.Factory, o tuiOptions) error {
	session := o.Session
	paths := config.DefaultPaths()
	// Logs go to --log-file or $XDG_STATE_HOME/otter/otter.log: never to
	// the terminal the TUI draws on.
	logger, closeLog, err := f.Logger(cli.LogSetup{DefaultFile: filepath.Join(paths.StateDir, "otter.log"), Level: slog.LevelInfo})
	if err != nil {
		return exitCode(2, err)
	}
	defer closeLog()

	// -r without an ID: a new conversation, and the picker open over it.
	pick := session.Resume == cli.ResumePicker
	if pick && session.Fork {
		return exitCode(2, errors.New("--fork-session needs the session's ID (otter -r ID --fork-session); or pick one with otter -r, then type /fork"))
	}
	if pick {
		session.Resume = ""
	}
	ui := tui.New(tui.Options{
		OpenURL:     oauth.OpenBrowser,
		ImageDir:    filepath.Join(paths.CacheDir, "images"),
		Version:     version,
		HistoryFile: filepath.Join(paths.StateDir, "history.jsonl"),
		PickSession: pick,
		Prompt:      o.Prompt,
	})
	base := f.AppOptions(logger)
	base.Paths = paths
	base.Model, base.Provider = o.Model, o.Provider
	a, err := app.New(ctx, tui.AppOptions(base, ui))
	if err != nil {
		return exitCode(2, err)
	}
	if o.Provider != "" || o.Model != "" {
		// Chosen on the command line: a provider that cannot be used is a
		// usage error, not a TUI that cannot chat.
		if _, _, err := a.Provider(); err != nil {
			_ = a.Close()
			return exitCode(2, fmt.Errorf("the provider or model chosen on the command line cannot be used: %w", err))
		}
	}
	defer func() {
		if err := a.Close(); err != nil {
			logger.Warn("stopping MCP servers", "err", err)
		}
	}()
	conv, err := tui.NewConversation(ctx, ui, a, session)
	if err != nil {
		return exitCode(2, err)
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	a.Start(runCtx)
	go ui.WatchConfig(runCtx, a) // it reloads while auto_reload is on, also when turned on later
	terminalTaken.Store(true)    // for an exit past endGrace (main.go)
	defer terminalTaken.Store(false)
	return ui.Run(runCtx, conv)
}
