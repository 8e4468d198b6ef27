package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/serve"
	"github.com/otter-sh/otter/internal/termtext"
)

// ServeOptions are the options of `otter mcp serve`.
type ServeOptions struct {
	HTTPAddr    string // "": stdio
	DailyQuota  int
	CallTimeout time.Duration
}

// RunServe serves otter's built-in tools over MCP until ctx is done.
func RunServe(ctx context.Context, f *Factory, o ServeOptions) error {
	httpAddr := o.HTTPAddr
	logger, closeLog, err := f.Logger(LogSetup{Stderr: f.IO.ErrOut, Level: slog.LevelInfo, JSON: true})
	if err != nil {
		return ExitCode(2, err)
	}
	defer closeLog()

	lopts := f.LoadOptions()
	lopts.Paths = config.DefaultPaths()
	srv, err := serve.FromConfig(serve.ConfigOptions{
		Load: lopts, HTTP: httpAddr != "", HTTPAddr: httpAddr,
		DailyQuota: o.DailyQuota, CallTimeout: o.CallTimeout,
		Version: f.Version, Logger: logger,
	})
	if errors.Is(err, serve.ErrLedgerOnStdout) {
		return ExitCode(2, fmt.Errorf("%w: serve over HTTP (otter mcp serve --http 127.0.0.1:8080), or set audit_log to a file", err))
	}
	if err != nil {
		return ExitCode(2, err)
	}
	defer srv.Close()

	if httpAddr == "" {
		err = srv.RunStdio(ctx, f.IO.In, termtext.Raw(f.IO.Out)) // the protocol, exact
	} else {
		err = srv.ListenAndServe(ctx, httpAddr)
	}
	if err != nil {
		logger.Error("serve stopped", "err", err)
		return ExitCode(2, err)
	}
	return nil
}
