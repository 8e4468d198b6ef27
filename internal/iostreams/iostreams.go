// Package iostreams holds the standard streams a command reads and writes
// (In, Out, ErrOut) together with what a command needs to know about the
// terminal behind them: whether each is a terminal, its width, and how to
// reach the terminal itself when stdin carries data. Commands take an
// *IOStreams instead of reaching for os.Stdin, os.Stderr or /dev/tty, so
// that tests give them buffers and pretend to be a terminal when they need
// to (after the iostreams package of the GitHub CLI).
//
// It is a leaf: it imports no otter package.
package iostreams

import (
	"bytes"
	"errors"
	"io"
	"os"

	"github.com/charmbracelet/x/term"
)

// IOStreams are a command's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY, stdoutTTY, stderrTTY bool
	width                          func() int
	openTerminal                   func() (io.ReadCloser, error)
}

// System returns the process's streams: os.Stdin, os.Stdout and os.Stderr.
func System() *IOStreams {
	isTTY := func(f *os.File) bool { return term.IsTerminal(f.Fd()) }
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		stdinTTY: isTTY(os.Stdin), stdoutTTY: isTTY(os.Stdout), stderrTTY: isTTY(os.Stderr),
		width: func() int {
			for _, f := range []*os.File{os.Stdout, os.Stderr} {
				if w, _, err := term.GetSize(f.Fd()); err == nil && w > 0 {
					return w
				}
			}
			return 0
		},
		openTerminal: func() (io.ReadCloser, error) { return os.Open("/dev/tty") },
	}
}

// Test returns streams over buffers, none of them a terminal: in is what
// the command reads, out and errOut collect what it writes.
func Test() (s *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// IsStdinTTY reports whether In is a terminal.
func (s *IOStreams) IsStdinTTY() bool { return s.stdinTTY }

// IsStdoutTTY reports whether Out is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether ErrOut is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetStdinTTY says whether In counts as a terminal (for tests).
func (s *IOStreams) SetStdinTTY(b bool) { s.stdinTTY = b }

// SetStdoutTTY says whether Out counts as a terminal (for tests).
func (s *IOStreams) SetStdoutTTY(b bool) { s.stdoutTTY = b }

// SetStderrTTY says whether ErrOut counts as a terminal (for tests).
func (s *IOStreams) SetStderrTTY(b bool) { s.stderrTTY = b }

// TerminalWidth returns the width in columns of the terminal Out or ErrOut
// is, or 0 when neither is a terminal.
func (s *IOStreams) TerminalWidth() int {
	if s.width == nil {
		return 0
	}
	return s.width()
}

// ErrNoTerminal is returned by OpenTerminal when there is no terminal.
var ErrNoTerminal = errors.New("no terminal")

// OpenTerminal opens the controlling terminal for reading, to ask the
// person something while In carries data (the terminal is /dev/tty on
// Unix). The caller closes it.
func (s *IOStreams) OpenTerminal() (io.ReadCloser, error) {
	if s.openTerminal == nil {
		return nil, ErrNoTerminal
	}
	return s.openTerminal()
}

// SetTerminal makes OpenTerminal return what open returns (for tests).
func (s *IOStreams) SetTerminal(open func() (io.ReadCloser, error)) { s.openTerminal = open }
