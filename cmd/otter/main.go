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
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/iostreams"
	"github.com/otter-sh/otter/internal/secret"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// exitCode wraps err so that main exits with code. Code 1 means "the tool
// reported an error", code 2 "usage, config or connection error".
func exitCode(code int, err error) error { return cli.ExitCode(code, err) }

func main() {
	ctx, end, sig, stop := notifyEnd()
	defer stop()
	streams := iostreams.System()
	// A reader of stdout that went away (otter -p … | head -1) ends otter
	// as SIGTERM does, through its cleanup.
	stdout := &countingWriter{w: pipeOutput(os.Stdout, end)}
	streams.Out = stdout
	streams.ErrOut = pipeOutput(os.Stderr, end)
	root := newRootCmd(&cli.Factory{IO: streams, Version: version})
	cmd, err := root.ExecuteContextC(ctx)
	stop()
	if s := sig(); s != 0 {
		// Ended by a signal: exit as shells expect of a process the
		// signal ended (130 for SIGINT, 143 for SIGTERM, 141 for a
		// closed stdout), after the cleanup. An error saying only that
		// the command was cut short is not printed.
		if err != nil && s != syscall.SIGPIPE && !errors.Is(err, context.Canceled) && !errors.Is(err, syscall.EPIPE) {
			fmt.Fprintln(streams.ErrOut, "otter:", secret.MaskText(explained(err)))
		}
		os.Exit(128 + int(s))
	}
	if err == nil {
		return
	}
	code := 2
	var ee *cli.ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	}
	msg := explained(err)
	if msg != "" {
		fmt.Fprintln(streams.ErrOut, "otter:", secret.MaskText(msg))
	}
	if kind := jsonOutput(cmd, os.Args[1:]); kind != "" && stdout.n.Load() == 0 {
		var r cli.Reported
		if msg == "" && errors.As(err, &r) && r.Err != nil {
			msg = explained(r.Err) // told on stderr already, but not in JSON
		}
		printJSONError(streams.Out, kind, secret.MaskText(msg))
	}
	os.Exit(code)
}

// notifyEnd installs the one handler of the signals that end otter: each
// cancels ctx, so that every front end returns through its deferred
// cleanup and stdio servers' process groups are stopped. SIGHUP (terminal
// closed, SSH dropped) too, which would otherwise end otter with no
// cleanup. end does the same for a signal otter raises itself (SIGPIPE
// for a closed stdout); sig returns the first signal, or 0.
func notifyEnd() (ctx context.Context, end func(syscall.Signal), sig func() syscall.Signal, stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(context.Background())
	var first atomic.Int32
	end = func(s syscall.Signal) {
		first.CompareAndSwap(0, int32(s))
		cancel()
	}
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			end(s.(syscall.Signal))
		case <-done:
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel()
		})
	}
	return ctx, end, func() syscall.Signal { return syscall.Signal(first.Load()) }, stop
}

// pipeOutput returns f (stdout or stderr) written through a duplicate of
// its file descriptor. The Go runtime raises SIGPIPE, which kills otter
// with no cleanup (each stdio server's children lived on), when a write
// to descriptor 1 or 2 finds the pipe's reader gone; on any other
// descriptor the write fails with EPIPE, and pipeOutput then calls end,
// which stops otter as SIGTERM does. (Handling SIGPIPE itself would not
// do: it is raised as well by a write to a stdio server that died.)
func pipeOutput(f *os.File, end func(syscall.Signal)) io.Writer {
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return f
	}
	syscall.CloseOnExec(fd)
	return &closedPipeWriter{f: os.NewFile(uintptr(fd), f.Name()), end: end}
}

type closedPipeWriter struct {
	f   *os.File
	end func(syscall.Signal)
}

func (w *closedPipeWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		w.end(syscall.SIGPIPE)
	}
	return n, err
}
