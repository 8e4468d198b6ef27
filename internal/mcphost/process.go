package mcphost

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/sandbox"
)

// stopGrace is how long a stdio server's process group gets between SIGTERM
// and SIGKILL.
const stopGrace = 2 * time.Second

// stderrLines is how many of a server's last stderr lines are kept.
const stderrLines = 50

// maxLineBytes bounds one kept stderr line (the rest is cut).
const maxLineBytes = 2048

// process is a stdio server's process, run in its own process group so that
// stopping it also stops whatever it started (npx and uvx run the real
// server as a grandchild).
type process struct {
	cmd    *exec.Cmd
	pgid   int
	stdin  *os.File // write end of the child's stdin
	stdout *os.File // read end of the child's stdout

	exited     chan struct{} // closed once the leader was reaped
	waitErr    error         // the leader's exit, valid after exited
	stderrDone chan struct{} // closed once stderr reached its end

	stopOnce sync.Once
	stopping atomic.Bool // otter signalled the group (stop)

	tail      *ring // the server's stderr, kept across its processes
	tailStart int   // tail's count of lines when this process started
}

// startProcess starts srv's command. Its stderr is drained into tail until
// the last writer closes it; stdout lines that are not JSON go there too.
//
// With a policy, the process is the launcher (sandbox.Launcher: the
// otter-sandbox built with otter, or otter itself) confining itself by it
// and then exec'ing the server (package sandbox): the same process,
// so its group and its exit are the server's.
//
// A policy that isolates the server (Policy.Isolated) starts the launcher
// in a network namespace of its own; with a proxy port, serve gets the
// launcher's hand-over of the proxy's listener there and the process's
// exit (serveIsolated).
func startProcess(srv config.Server, tail *ring, policy *sandbox.Policy, launcher string, serve func(*sandbox.Isolation, <-chan struct{})) (*process, error) {
	path, err := lookCommand(srv)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, srv.Args...)
	cmd.Args[0] = srv.Command
	if policy != nil {
		exe, argv, err := sandbox.Command(launcher, *policy, path, srv.Command, srv.Args)
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(exe)
		cmd.Args = argv
	}
	cmd.Env = serverEnv(os.Environ(), srv.Env) // not otter's keys (env.go)
	if policy != nil && policy.ProxyPort > 0 {
		cmd.Env = proxyEnv(cmd.Env, policy.ProxyPort) // its only way out (netproxy.go)
	}
	cmd.Dir = srv.Cwd
	cmd.SysProcAttr = sysProcAttr()

	// Plain pipes given as *os.File: exec starts no copying goroutines of its
	// own, so Wait returns when the leader exits even if a grandchild still
	// holds a pipe open.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	var iso *sandbox.Isolation
	if policy != nil && policy.Namespaced() {
		if iso, err = sandbox.Isolate(cmd, *policy); err != nil {
			closeAll(inR, inW, outR, outW, errR, errW)
			return nil, err
		}
	}
	err = cmd.Start()
	if iso != nil {
		iso.Started()
	}
	if err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		if iso != nil {
			iso.Close()
		}
		return nil, startError(srv, err)
	}
	closeAll(inR, outW, errW) // the child's ends
	p := &process{cmd: cmd, pgid: cmd.Process.Pid, stdin: inW, stdout: outR,
		exited: make(chan struct{}), stderrDone: make(chan struct{}),
		tail: tail, tailStart: tail.count()}
	if iso != nil {
		if policy.ProxyPort > 0 && serve != nil {
			go serve(iso, p.exited)
		} else {
			iso.Close()
		}
	}
	go func() {
		drainLines(errR, tail, "")
		close(p.stderrDone)
	}()
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// lookCommand resolves srv.Command like exec.LookPath, relative to the
// server's cwd for relative paths, with a hint a person can act on.
func lookCommand(srv config.Server) (string, error) {
	name := srv.Command
	if name == "" {
		return "", errors.New("no command configured: set command (stdio) or url (http, sse)")
	}
	if filepath.Base(name) != name { // a path
		p := name
		if !filepath.IsAbs(p) && srv.Cwd != "" {
			p = filepath.Join(srv.Cwd, p)
		}
		st, err := os.Stat(p)
		switch {
		case err != nil:
			return "", fmt.Errorf("command %q not found: %w", name, err)
		case st.IsDir():
			return "", fmt.Errorf("command %q is a directory, not a program", name)
		case st.Mode()&0o111 == 0:
			return "", fmt.Errorf("command %q is not executable: chmod +x it or run it through its interpreter", name)
		}
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		msg := fmt.Sprintf("command %q not found on PATH", name)
		if hint := installHint(name); hint != "" {
			return "", fmt.Errorf("%s: %s or give the full path in command", msg, hint)
		}
		return "", fmt.Errorf("%s: install it or give the full path in command", msg)
	}
	return p, nil
}

// installHint names what provides a command commonly used to run MCP servers.
func installHint(cmd string) string {
	switch cmd {
	case "npx", "npm":
		return "install Node.js (" + cmd + " ships with npm)"
	case "node":
		return "install Node.js"
	case "uvx", "uv":
		return "install uv (https://docs.astral.sh/uv/; uvx ships with it)"
	case "python", "python3", "pip", "pipx":
		return "install Python 3"
	case "docker":
		return "install Docker"
	case "bunx", "bun":
		return "install Bun"
	case "deno":
		return "install Deno"
	case "go":
		return "install Go"
	}
	return ""
}

func startError(srv config.Server, err error) error {
	if srv.Cwd != "" && errors.Is(err, os.ErrNotExist) {
		if _, statErr := os.Stat(srv.Cwd); statErr != nil {
			return fmt.Errorf("cannot start %q: working directory %q does not exist: fix cwd", srv.Command, srv.Cwd)
		}
	}
	return fmt.Errorf("cannot start %q: %w", srv.Command, err)
}

// stop ends the process group: stdin is closed and the group gets SIGTERM,
// then SIGKILL after stopGrace if any member is still there. It returns once
// the leader is reaped (or a further grace passed) and is safe to call more
// than once and concurrently.
func (p *process) stop() {
	p.stopOnce.Do(func() {
		p.stopping.Store(true)
		p.stdin.Close()
		_ = syscall.Kill(-p.pgid, syscall.SIGTERM)
		_ = syscall.Kill(-p.pgid, syscall.SIGCONT) // a stopped process must run to see SIGTERM
		deadline := time.Now().Add(stopGrace)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for time.Now().Before(deadline) && !p.groupGone() {
			<-tick.C
		}
		_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
		select {
		case <-p.exited:
		case <-time.After(stopGrace):
		}
		p.stdout.Close()
	})
}

// groupGone reports whether the leader exited and no member of the group
// is left (zombies that wait for init count as gone).
func (p *process) groupGone() bool {
	select {
	case <-p.exited:
	default:
		return false
	}
	if syscall.Kill(-p.pgid, 0) == syscall.ESRCH {
		return true
	}
	return !groupHasLiveMember(p.pgid)
}

// awaitExit waits a moment for the leader to exit and its last stderr
// lines to be read, so that an error message can quote them.
func (p *process) awaitExit() {
	t := time.NewTimer(200 * time.Millisecond)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		return
	}
	select {
	case <-p.stderrDone:
	case <-t.C: // a grandchild may hold stderr open
	}
}

// exitDescription says how the leader exited, for error messages.
// signalDescription says which signal ended a server and who sent it:
// otter (stopping the server at shutdown, a reload or a startup timeout)
// or something else (the OOM killer, a person's kill, the server itself).
func signalDescription(sig syscall.Signal, byOtter bool) string {
	name := unix.SignalName(sig)
	if name == "" {
		name = fmt.Sprintf("signal %d", int(sig))
	}
	if byOtter {
		return fmt.Sprintf("was stopped by otter with %s", name)
	}
	return fmt.Sprintf("was killed by %s (%s), sent by something other than otter", name, sig)
}

func (p *process) exitDescription() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return signalDescription(ws.Signal(), p.stopping.Load())
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	if p.waitErr != nil {
		return "exited: " + p.waitErr.Error()
	}
	return "exited with status 0"
}

// ring keeps the last lines written to it. It is safe for concurrent use.
type ring struct {
	mu    sync.Mutex
	lines []string
	next  int
	full  bool
	added int // lines ever added
}

func newRing(n int) *ring { return &ring{lines: make([]string, n)} }

func (r *ring) add(line string) {
	r.mu.Lock()
	r.lines[r.next] = line
	r.added++
	r.next = (r.next + 1) % len(r.lines)
	if r.next == 0 {
		r.full = true
	}
	r.mu.Unlock()
}

// count returns how many lines were ever added.
func (r *ring) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.added
}

// since returns the kept lines added after the first n ever added, oldest
// first.
func (r *ring) since(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.kept()
	return t[max(len(t)-(r.added-n), 0):]
}

// tail returns the kept lines, oldest first.
func (r *ring) tail() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.kept()
}

// kept returns the kept lines, oldest first; r.mu is held.
func (r *ring) kept() []string {
	if !r.full {
		return append([]string(nil), r.lines[:r.next]...)
	}
	return append(append([]string(nil), r.lines[r.next:]...), r.lines[:r.next]...)
}

// Bounds of the stderr tail quoted in an error message.
const (
	noteLines     = 5   // lines quoted
	noteLineBytes = 300 // each cut to this
)

// stderrNote quotes the last few non-empty lines this process wrote on
// stderr for an error message, oldest first, or returns "" when there are
// none. A crashing server's last line is often a trailer ("Node.js
// v22.11.0", "exit status 2") and the cause is a line or two above it, so
// one line is not enough. Only this process's lines: the tail is kept
// across reconnects, and a server that fails the same way on each attempt
// would otherwise have its line quoted once per attempt.
func (p *process) stderrNote() string {
	var lines []string
	t := p.tail.since(p.tailStart)
	for i := len(t) - 1; i >= 0 && len(lines) < noteLines; i-- {
		if strings.TrimSpace(t[i]) == "" {
			continue
		}
		l := t[i]
		if len(l) > noteLineBytes {
			l = strings.ToValidUTF8(l[:noteLineBytes], "") + "…"
		}
		lines = append(lines, strconv.Quote(l))
	}
	switch len(lines) {
	case 0:
		return ""
	case 1:
		return "its last stderr line: " + lines[0]
	}
	slices.Reverse(lines)
	return "its last stderr lines: " + strings.Join(lines, " | ")
}

// drainLines reads rc to its end, keeping each line (cut to maxLineBytes)
// in tail with prefix. It never stops reading early, so a writer that
// floods can never block on a full pipe.
func drainLines(rc io.ReadCloser, tail *ring, prefix string) {
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line) < maxLineBytes {
			line = append(line, chunk[:min(len(chunk), maxLineBytes-len(line))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 || err == nil {
			tail.add(prefix + string(bytes.TrimRight(line, "\r\n")))
		}
		line = line[:0]
		if err != nil {
			return
		}
	}
}

// stdoutFilter passes a stdio server's JSON-RPC messages through and
// diverts any other line (a banner, a stray print, "{not json") to the
// stderr tail, so that a server that prints to stdout still works: the SDK
// closes the connection on the first line it cannot decode. A line goes
// through when it is valid JSON (or, past validateBytes, starts like it);
// so it is read whole first — up to keepMessageBytes. A longer line is
// never held whole: it goes to a file and through a shrinker as it is read
// (see bigMessage), and the SDK gets the shrunk message.
type stdoutFilter struct {
	br     *bufio.Reader
	f      io.Closer
	tail   *ring
	create func() (*os.File, error) // a file for a big message
	line   []byte                   // the JSON line being handed out
	off    int                      // how much of line Read has returned
}

func newStdoutFilter(f io.ReadCloser, tail *ring, create func() (*os.File, error)) *stdoutFilter {
	return &stdoutFilter{br: bufio.NewReaderSize(f, 64<<10), f: f, tail: tail, create: create}
}

// validateBytes is the longest line the filter checks for valid JSON; a
// longer one that starts like JSON goes to the SDK unchecked. Stray prints
// are short, and checking a 10 MB result twice would double its cost.
const validateBytes = 64 << 10

func (s *stdoutFilter) Read(p []byte) (int, error) {
	for s.off >= len(s.line) {
		if err := s.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, s.line[s.off:])
	s.off += n
	return n, nil
}

// next reads lines until one is JSON and makes it s.line.
func (s *stdoutFilter) next() error {
	if cap(s.line) > 1<<20 {
		s.line = nil // do not keep a large message's buffer for small ones
	}
	s.line, s.off = s.line[:0], 0
	var big *bigMessage
	for {
		chunk, err := s.br.ReadSlice('\n')
		if big == nil && len(s.line)+len(chunk) > keepMessageBytes {
			big = newBigMessage(s.create)
			_, _ = big.Write(s.line)
			s.line = nil
		}
		if big != nil {
			_, _ = big.Write(chunk)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && err != io.EOF {
				return err
			}
			msg, note, ferr := big.finish()
			if ferr == nil {
				s.tail.add("stdout: " + note)
				s.line = append(msg, '\n')
				return nil
			}
			s.tail.add("stdout (not JSON-RPC, ignored): a line of " + mib(big.total) + ": " + ferr.Error())
			big = nil
			if err != nil {
				return err
			}
			continue
		}
		if len(s.line)+len(chunk) > cap(s.line) {
			s.line = slices.Grow(s.line, min(max(2*cap(s.line), len(s.line)+len(chunk)), keepMessageBytes+1)-len(s.line))
		}
		s.line = append(s.line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && (err != io.EOF || len(s.line) == 0) {
			return err
		}
		msg := bytes.TrimSpace(s.line)
		switch {
		case len(msg) == 0:
		case len(msg) > validateBytes && (msg[0] == '{' || msg[0] == '['), json.Valid(msg):
			if s.line[len(s.line)-1] != '\n' {
				s.line = append(s.line, '\n')
			}
			return nil
		default:
			cut := msg[:min(len(msg), maxLineBytes)]
			s.tail.add("stdout (not JSON-RPC, ignored): " + string(cut))
		}
		if err != nil {
			return err
		}
		s.line = s.line[:0]
	}
}

// Close closes the server's stdout.
func (s *stdoutFilter) Close() error { return s.f.Close() }
