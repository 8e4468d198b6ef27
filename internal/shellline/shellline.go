// Package shellline runs a person's own shell line (the TUI's "!ls -la"):
// in $SHELL -c in the working directory, in a process group of its own so
// that stopping it stops everything it started, its output (stdout and
// stderr, interleaved as written) streamed while it runs and kept within a
// cap, the whole of a longer output spilled to a file, like a tool's.
//
// These lines are the person's, never the model's: nothing here asks for
// permission. The output is bounded in memory whatever the command writes
// (the first and last halves of the cap are kept; the rest goes to the
// spill file only).
package shellline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultMaxBytes caps the output kept when Options.MaxBytes is 0, as
// [tools] max_output_chars caps a tool's.
const DefaultMaxBytes = 100_000

// KillGrace is how long a stopped line's process group has between SIGTERM
// and SIGKILL.
const KillGrace = 2 * time.Second

// Options say how to run a line.
type Options struct {
	// Shell runs the line as Shell -c LINE; "" means $SHELL, else /bin/sh.
	Shell string
	Dir   string // the working directory
	Env   []string
	// MaxBytes caps the output kept (half from its start, half from its
	// end); 0 means DefaultMaxBytes.
	MaxBytes int
	// SpillDir receives the whole output of a line that wrote more than
	// MaxBytes; "" keeps no copy.
	SpillDir string
	// OnOutput, when set, receives the output so far (within MaxBytes, as
	// Result.Output would give it) as it grows, at most every Interval. It
	// is called from Run's goroutine.
	OnOutput func(view string)
	// Interval between OnOutput calls; 0 means 100ms.
	Interval time.Duration
}

// Result is how a line ended.
type Result struct {
	Line     string
	ExitCode int    // -1 when a signal ended it
	Signal   string // the signal that ended it, "" otherwise
	Stopped  bool   // the context was canceled and the line stopped
	Output   string // within MaxBytes; a note marks what was cut
	Bytes    int64  // everything it wrote
	Spill    string // the file holding the whole output, "" if not cut
	Duration time.Duration
}

// Status words how the line ended: "exit 0", "exit 2", "stopped",
// "killed by SIGSEGV".
func (r Result) Status() string {
	switch {
	case r.Stopped:
		return "stopped"
	case r.Signal != "":
		return "killed by " + r.Signal
	}
	return fmt.Sprintf("exit %d", r.ExitCode)
}

// ForModel is the line and its output as context for the model's next
// message.
func (r Result) ForModel() string {
	return fmt.Sprintf("<shell_command status=%q>\n$ %s\n%s</shell_command>", r.Status(), r.Line, ensureNewline(r.Output))
}

func ensureNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// Run runs line and waits for it to end, or for ctx to be done: then the
// whole process group gets SIGTERM and, KillGrace later, SIGKILL, and Run
// returns once the shell is gone. When the line ends by itself, what it
// left running in its group (a background job) is stopped the same way:
// a `!` line leaves nothing behind. The error is for a line that could not
// start; how a started line ended is in Result.
func Run(ctx context.Context, line string, o Options) (Result, error) {
	shell := o.Shell
	if shell == "" {
		shell = os.Getenv("SHELL")
	}
	if shell == "" {
		shell = "/bin/sh"
	}
	max := o.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	interval := o.Interval
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	res := Result{Line: line}
	pr, pw, err := os.Pipe()
	if err != nil {
		return res, fmt.Errorf("running %q: %w", line, err)
	}
	cmd := exec.Command(shell, "-c", line)
	cmd.Dir, cmd.Env = o.Dir, o.Env
	cmd.Stdout, cmd.Stderr = pw, pw // one pipe: the order they were written in
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return res, fmt.Errorf("running %q with %s: %w", line, shell, err)
	}
	pw.Close() // the child holds the write end now
	pgid := cmd.Process.Pid

	out := &capped{max: max, spillDir: o.SpillDir}
	readDone := make(chan error, 1)
	go func() { readDone <- out.readFrom(pr, o.OnOutput, interval) }()

	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	var waitErr error
	select {
	case waitErr = <-waitDone:
		// The line is over; what it started in the background (sleep 300 &)
		// is stopped with its group, as on a stop.
		stopGroup(pgid, KillGrace)
	case <-ctx.Done():
		res.Stopped = true
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case waitErr = <-waitDone:
		case <-time.After(KillGrace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			waitErr = <-waitDone
		}
		// What it started in the background goes too.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	// A child that left the group (setsid) may hold the pipe open: read
	// what it wrote for a moment, then stop reading.
	select {
	case <-readDone:
	case <-time.After(time.Second):
		pr.Close()
		<-readDone
	}
	pr.Close()
	res.Duration = time.Since(start)
	res.Output, res.Bytes, res.Spill = out.view(), out.total, out.spillPath
	if err := out.closeSpill(); err != nil && res.Spill != "" {
		res.Output += fmt.Sprintf("\n[otter could not finish writing %s: %v]\n", res.Spill, err)
	}
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &ee):
		res.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.ExitCode, res.Signal = -1, signalName(ws.Signal())
		}
	default:
		return res, fmt.Errorf("running %q: %w", line, waitErr)
	}
	return res, nil
}

// stopGroup ends what is left of process group pgid once its leader has
// exited: SIGTERM, then SIGKILL to what still runs after grace. A group
// with no process left is not signalled.
func stopGroup(pgid int, grace time.Duration) {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return // ESRCH: nothing was left
	}
	deadline := time.Now().Add(grace)
	for groupRuns(pgid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// groupRuns reports whether a process of group pgid still runs. The
// children a line left behind were handed to init, which may be slow to
// reap them, so a group of zombies (which kill(-pgid, 0) still finds) does
// not count: /proc says which members are zombies. Without /proc, any
// member counts.
func groupRuns(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range dir {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return s.String()
}

// capped keeps the first and last max/2 bytes of a stream, and the whole
// of it in a spill file once it passes max.
type capped struct {
	max      int
	spillDir string

	mu        sync.Mutex
	head      []byte
	tail      []byte // a window of the last max/2 bytes once past max
	total     int64
	spill     *os.File
	spillPath string
	spillErr  error
}

func (c *capped) readFrom(r io.Reader, onOutput func(string), interval time.Duration) error {
	buf := make([]byte, 32<<10)
	last := time.Time{}
	dirty := false
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.write(buf[:n])
			dirty = true
			if onOutput != nil && time.Since(last) >= interval {
				onOutput(c.view())
				last, dirty = time.Now(), false
			}
		}
		if err != nil {
			if onOutput != nil && dirty {
				onOutput(c.view())
			}
			if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
				return nil
			}
			return err
		}
	}
}

func (c *capped) write(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if c.total > int64(c.max) && c.spill == nil && c.spillErr == nil && c.spillDir != "" {
		c.startSpill()
	}
	if c.spill != nil {
		if _, err := c.spill.Write(p); err != nil {
			c.spillErr = err
		}
	}
	half := c.max / 2
	if room := half - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*half { // trim now and then, not on every write
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-half:]...)
	}
}

// startSpill opens the spill file with what was kept so far (at this point
// nothing was dropped: head and tail hold it all).
func (c *capped) startSpill() {
	if err := os.MkdirAll(c.spillDir, 0o700); err != nil {
		c.spillErr = err
		return
	}
	f, err := os.CreateTemp(c.spillDir, "shell-*.txt")
	if err != nil {
		c.spillErr = err
		return
	}
	c.spill, c.spillPath = f, f.Name()
	if _, err := f.Write(c.head); err != nil {
		c.spillErr = err
	}
	if _, err := f.Write(c.tail); err != nil {
		c.spillErr = err
	}
}

func (c *capped) closeSpill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.spill == nil {
		return nil
	}
	err := c.spill.Close()
	return errors.Join(c.spillErr, err)
}

// view is the output within max: all of it when it fits, else its start, a
// note of what was cut and where the whole is, and its end.
func (c *capped) view() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total <= int64(c.max) {
		return string(c.head) + string(c.tail)
	}
	half := c.max / 2
	tail := c.tail
	if len(tail) > half {
		tail = tail[len(tail)-half:]
	}
	cut := c.total - int64(len(c.head)) - int64(len(tail))
	where := "not kept"
	if c.spillPath != "" {
		where = "the whole output is in " + c.spillPath
	}
	var b bytes.Buffer
	b.Write(c.head)
	fmt.Fprintf(&b, "\n[… %d bytes cut (%d in all); %s …]\n", cut, c.total, where)
	b.Write(tail)
	return b.String()
}
