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
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"golang.org/x/sys/unix"

	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/iostreams"
	"github.com/otter-sh/otter/internal/sandbox"
	"github.com/otter-sh/otter/internal/secret"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// exitCode wraps err so that main exits with code. Code 1 means "the tool
// reported an error", code 2 "usage, config or connection error".
func exitCode(code int, err error) error { return cli.ExitCode(code, err) }

func main() {
	if len(os.Args) > 1 && os.Args[1] == sandbox.LauncherArg {
		// otter started itself to confine a stdio server: restrict, then
		// exec the server (internal/sandbox). Nothing else of otter runs.
		os.Exit(sandbox.Main(os.Args[2:]))
	}
	ctx, end, sig, stop := notifyEnd()
	defer stop()
	streams := iostreams.System()
	// A reader of stdout that went away (otter -p … | head -1) ends otter
	// as SIGTERM does, through its cleanup.
	stdout := &countingWriter{w: pipeOutput(os.Stdout, end)}
	streams.Out = stdout
	streams.ErrOut = pipeOutput(os.Stderr, end)
	// otter's own binary confines the stdio servers it starts.
	launcher, _ := os.Executable()
	root := newRootCmd(&cli.Factory{IO: streams, Version: version, SandboxLauncher: launcher})
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

// endGrace bounds otter's cleanup after a signal that ends it. The cleanup
// stops each stdio server's process group (mcphost gives a group 2 s from
// SIGTERM to SIGKILL) and restores the terminal; a second more is left to
// reap them. Past endGrace otter exits anyway, with the signal's status:
// a cleanup stuck in a system call (an open(2) of a FIFO nobody writes to)
// must not leave a process that no signal ends.
const endGrace = 3 * time.Second

// endSignals are the signals that end otter through its cleanup. SIGQUIT
// too: Go's own handler would dump the goroutines on the terminal and exit
// with it still raw and every server running.
var endSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// terminalTaken is set while the TUI holds the terminal (raw mode, the
// alternate screen): an exit that skips the TUI's cleanup restores them.
var terminalTaken atomic.Bool

// notifyEnd installs the one handler of the signals that end otter: each
// cancels ctx, so that every front end returns through its deferred
// cleanup and stdio servers' process groups are stopped. SIGHUP (terminal
// closed, SSH dropped) too, which would otherwise end otter with no
// cleanup. end does the same for a signal otter raises itself (SIGPIPE
// for a closed stdout); sig returns the first signal, or 0.
//
// A signal always ends otter: if the cleanup has not returned endGrace
// after the first signal, or the same signal comes again (a second
// Ctrl+C), otter exits at once with the first signal's status, after
// restoring the terminal if the TUI held it.
func notifyEnd() (ctx context.Context, end func(syscall.Signal), sig func() syscall.Signal, stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, endSignals...)
	tty := saveTerminal()
	ctx, cancel := context.WithCancel(context.Background())
	var first atomic.Int32
	ended := make(chan struct{})
	var endOnce sync.Once
	end = func(s syscall.Signal) {
		first.CompareAndSwap(0, int32(s))
		cancel()
		endOnce.Do(func() { close(ended) })
	}
	done := make(chan struct{})
	go func() {
		var grace <-chan time.Time
		for {
			select {
			case s := <-ch:
				s1 := s.(syscall.Signal)
				if f := syscall.Signal(first.Load()); f != 0 {
					if s1 == f {
						forceExit(f, tty, fmt.Sprintf("a second %s came while otter was stopping", unix.SignalName(s1)))
					}
					continue
				}
				if s1 == syscall.SIGQUIT {
					logGoroutines()
				}
				end(s1)
			case <-ended:
				ended = nil
				grace = time.After(endGrace)
			case <-grace:
				f := syscall.Signal(first.Load())
				forceExit(f, tty, fmt.Sprintf("stopping after %s took longer than %s", unix.SignalName(f), endGrace))
			case <-done:
				return
			}
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

// forceExit ends otter without waiting for its cleanup, as s would have
// (128+s), after restoring the terminal the TUI held; MCP servers not
// stopped yet may outlive it, which stderr says.
func forceExit(s syscall.Signal, tty []savedTerminal, why string) {
	if terminalTaken.Load() {
		for _, t := range tty {
			_ = term.Restore(t.fd, t.state)
		}
		// Leave the alternate screen, show the cursor, stop mouse
		// reporting and bracketed paste, as the TUI's own exit does.
		_, _ = os.Stdout.WriteString("\x1b[?1049l\x1b[?25h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\r\n")
	}
	slog.Info("exiting without finishing the cleanup", "why", why) // the log file; stderr hears it below
	fmt.Fprintf(os.Stderr, "otter: %s; exited without finishing the cleanup (MCP servers it started may still run)\n", why)
	os.Exit(128 + int(s))
}

// savedTerminal is the state of a terminal descriptor when otter started.
type savedTerminal struct {
	fd    uintptr
	state *term.State
}

// saveTerminal records the state of stdin and stdout where they are
// terminals, for forceExit.
func saveTerminal() []savedTerminal {
	var saved []savedTerminal
	for _, f := range []*os.File{os.Stdin, os.Stdout} {
		if !term.IsTerminal(f.Fd()) {
			continue
		}
		if st, err := term.GetState(f.Fd()); err == nil {
			saved = append(saved, savedTerminal{f.Fd(), st})
		}
	}
	return saved
}

// logGoroutines writes every goroutine's stack to the log (the TUI's log
// file): what SIGQUIT is for in a Go program, without the terminal.
func logGoroutines() {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	slog.Info("SIGQUIT: the goroutines", "stacks", string(buf))
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
