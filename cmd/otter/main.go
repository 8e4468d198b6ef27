// Command otter is a terminal AI agent shell whose tools merge otter's
// built-in web-data tools with the tools of any number of MCP servers.
//
// This package only parses flags into options and wires the internal
// packages together: the commands' work is internal/cli's (headless) and
// internal/tui's (the TUI). Each command's flags live in their own file:
// config_cmd.go, mcp_cmd.go, import_cmd.go, login_cmd.go, serve_cmd.go,
// prompt_cmd.go, sessions_cmd.go, tui_cmd.go. It may import every internal package.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/iostreams"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// exitCode wraps err so that main exits with code. Code 1 means "the tool
// reported an error", code 2 "usage, config or connection error".
func exitCode(code int, err error) error { return cli.ExitCode(code, err) }

func main() {
	// The one handler of the signals that end otter: each cancels ctx, so
	// that every front end returns through its deferred cleanup and stdio
	// servers' process groups are stopped. SIGHUP (terminal closed, SSH
	// dropped) too, which would otherwise end otter with no cleanup.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	streams := iostreams.System()
	root := newRootCmd(&cli.Factory{IO: streams, Version: version})
	err := root.ExecuteContext(ctx)
	stop()
	if err == nil {
		return
	}
	code := 2
	var ee *cli.ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	}
	if msg := explained(err); msg != "" {
		fmt.Fprintln(streams.ErrOut, "otter:", msg)
	}
	os.Exit(code)
}
