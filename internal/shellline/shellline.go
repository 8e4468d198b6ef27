// Package shellline runs a shell line — a person's own (the TUI's "!ls
// -la", in $SHELL) and the model's run_command (in bash, confined by the
// sandbox launcher through Options.Wrap): with -c in a working directory,
// in a process group of its own so that stopping it stops everything it
// started, its output (stdout and stderr, interleaved as written) streamed
// while it runs and kept within a cap, the whole of a longer output
// spilled to a file, like a tool's. Run waits for the line; Start returns
// at once, for a line that runs in the background while its output so far
// is read (Running.Since).
//
// Nothing here asks for permission: the caller has. The output is bounded
// in memory whatever the command writes (the first and last halves of the
// cap are kept; the rest goes to the spill file only).
//
// It imports nothing of otter's.
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
	// Wrap, when set, turns the program to start (the shell's path) and
	// its argv (shell, "-c", line) into the ones started instead: otter's
	// sandbox launcher, which confines itself and then execs the shell.
	Wrap func(path string, argv []string) (string, []string, error)
	// Prepare, when set, adjusts the command before it starts (the
	// sandbox's namespaces) and returns what to call once it started or
	// failed to.
	Prepare func(cmd *exec.Cmd) (started func(), err error)
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
	r, err := Start(line, o)
	if err != nil {
		return Result{Line: line}, err
	}
	return r.Wait(ctx), nil
}

// Running is a line started by Start.
type Running struct {
	line  string
	pgid  int
	start time.Time
	out   *capped

	stopOnce sync.Once
	stop     chan struct{} // closed by Stop
	done     chan struct{} // closed once the line is over and res is set
	res      Result
	err      error // the wait's, for an end Result cannot word
}

// Start starts line and returns at once; the line runs until it ends, or
// Stop (or Wait's ctx) stops it, as Run describes. OnOutput, when set, is
// called from a goroutine of the line's.
func Start(line string, o Options) (*Running, error) {
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
	path, err := exec.LookPath(shell)
	if err != nil {
		return nil, fmt.Errorf("running %q: the shell %s: %w", line, shell, err)
	}
	argv := []string{shell, "-c", line}
	if o.Wrap != nil {
		if path, argv, err = o.Wrap(path, argv); err != nil {
			return nil, fmt.Errorf("running %q: %w", line, err)
		}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("running %q: %w", line, err)
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Dir: o.Dir, Env: o.Env}
	cmd.Stdout, cmd.Stderr = pw, pw // one pipe: the order they were written in
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r := &Running{line: line, start: time.Now(), out: &capped{max: max, spillDir: o.SpillDir},
		stop: make(chan struct{}), done: make(chan struct{})}
	started := func() {}
	if o.Prepare != nil {
		if started, err = o.Prepare(cmd); err != nil {
			pr.Close()
			pw.Close()
			return nil, fmt.Errorf("running %q: %w", line, err)
		}
	}
	err = cmd.Start()
	started()
	if err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("running %q with %s: %w", line, shell, err)
	}
	pw.Close() // the child holds the write end now
	r.pgid = cmd.Process.Pid

	readDone := make(chan error, 1)
	go func() { readDone <- r.out.readFrom(pr, o.OnOutput, interval) }()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()
	go r.finish(pr, readDone, waitDone)
	return r, nil
}

// finish waits for the line to end or be stopped, stops what is left of
// its group, and sets the result.
func (r *Running) finish(pr *os.File, readDone, waitDone chan error) {
	pgid := r.pgid
	var waitErr error
	res := Result{Line: r.line}
	select {
	case waitErr = <-waitDone:
		// The line is over; what it started in the background (sleep 300 &)
		// is stopped with its group, as on a stop.
		stopGroup(pgid, KillGrace)
	case <-r.stop:
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
	res.Duration = time.Since(r.start)
	res.Output, res.Bytes, res.Spill = r.out.view(), r.out.total, r.out.spillPath
	if err := r.out.closeSpill(); err != nil && res.Spill != "" {
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
		r.err = fmt.Errorf("running %q: %w", r.line, waitErr)
		res.ExitCode = -1
	}
	r.res = res
	close(r.done)
}

// Stop stops the line (and everything of its group) unless it is over;
// Done is closed once it is gone.
func (r *Running) Stop() { r.stopOnce.Do(func() { close(r.stop) }) }

// Done is closed once the line is over.
func (r *Running) Done() <-chan struct{} { return r.done }

// Wait waits for the line to end, stopping it if ctx is done first, and
// returns how it ended.
func (r *Running) Wait(ctx context.Context) Result {
	select {
	case <-r.done:
	case <-ctx.Done():
		r.Stop()
		<-r.done
	}
	return r.res
}

// Result is how the line ended, once Done is closed; ok is false while
// it runs.
func (r *Running) Result() (res Result, ok bool) {
	select {
	case <-r.done:
		return r.res, true
	default:
		return Result{}, false
	}
}

// Since is what the line wrote after the first off bytes of its output,
// within the cap (what was cut is noted, with the spill file that holds
// it), and the offset to ask from next time.
func (r *Running) Since(off int64) (string, int64) { return r.out.since(off) }

// Pgid is the line's process group.
func (r *Running) Pgid() int { return r.pgid }

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

// since is what was written after the first off bytes, within max: what
// head and tail still hold of it, with a note for what only the spill file
// has; and the total written, the offset to ask from next.
func (c *capped) since(off int64) (string, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b bytes.Buffer
	if off < int64(len(c.head)) {
		b.Write(c.head[max(off, 0):])
		off = int64(len(c.head))
	}
	tailStart := c.total - int64(len(c.tail))
	tail := c.tail
	if off > tailStart {
		tail = tail[off-tailStart:]
	}
	if half := c.max / 2; len(tail) > half {
		tail = tail[len(tail)-half:]
	}
	if gap := c.total - int64(len(tail)) - off; gap > 0 {
		where := "not kept"
		if c.spillPath != "" {
			where = "the whole output is in " + c.spillPath
		}
		fmt.Fprintf(&b, "\n[… %d bytes cut; %s …]\n", gap, where)
	}
	b.Write(tail)
	return b.String(), c.total
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
