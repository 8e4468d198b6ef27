// Command otter is a terminal AI agent shell whose tools merge otter's
// built-in web-data tools with the tools of any number of MCP servers.
//
// This package only parses flags and wires the internal packages together.
// Each subcommand lives in its own file: config_cmd.go, mcp_cmd.go,
// import_cmd.go, login_cmd.go, serve_cmd.go, prompt_cmd.go, tui_cmd.go.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// exitError carries a process exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitCode wraps err so that main exits with code. Code 1 means "the tool
// reported an error", code 2 "usage, config or connection error".
func exitCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

func main() {
	// The one handler of the signals that end otter: each cancels ctx, so
	// that every front end returns through its deferred cleanup and stdio
	// servers' process groups are stopped. SIGHUP (terminal closed, SSH
	// dropped) too, which would otherwise end otter with no cleanup.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	root := newRootCmd()
	err := root.ExecuteContext(ctx)
	stop()
	if err == nil {
		return
	}
	code := 2
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(os.Stderr, "otter:", msg)
	}
	os.Exit(code)
}
