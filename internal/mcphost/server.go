package mcphost

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth"
	"github.com/otter-sh/otter/internal/tool"
)

// latencyWindow is how many recent call durations the median is taken over.
const latencyWindow = 101

// server supervises one configured MCP server: it connects, keeps the
// connection healthy, reconnects after a drop and reports its state.
type server struct {
	m      *Manager
	name   string
	cfg    config.Server
	stderr *ring
	// mask hides the secrets cfg hands the server in what otter shows or
	// logs about it (config.SecretMasker).
	mask func(string) string

	// Settings from [mcp] and the server entry, defaults applied.
	mcpOn          bool
	startupTimeout time.Duration
	callTimeout    time.Duration
	healthInterval time.Duration // ≤ 0: no health check
	maxAttempts    int           // < 0: no reconnection
	reconnectDelay time.Duration

	runMu  sync.Mutex // serializes restart and shutdown
	cancel context.CancelFunc
	done   chan struct{}

	mu          sync.Mutex
	state       State
	reason      string
	transport   string
	cur         *conn
	attempts    int
	connectedAt time.Time
	override    *bool // SetEnabled for this session

	calls, errs atomic.Int64
	latMu       sync.Mutex
	lat         []time.Duration
	latNext     int
}

// conn is one live session with a server.
type conn struct {
	cs           *sdk.ClientSession
	proc         *process // stdio only
	transport    string
	instructions string
	serverInfo   string

	listMu sync.Mutex
	l      lists

	changes chan struct{} // a list_changed arrived (see kinds)
	kinds   atomic.Uint32

	inflight atomic.Int32 // tool calls under way

	// obs sees the connection's messages for the SDK work-arounds (see
	// sdkObserver); ended is closed when the session has ended (see serve).
	obs   *sdkObserver
	ended chan struct{}

	closeOnce sync.Once
}

type lists struct {
	tools     []*sdk.Tool // as the server lists them (unfiltered)
	prompts   []*sdk.Prompt
	resources []*sdk.Resource
	templates []*sdk.ResourceTemplate
}

// List kinds, for refreshes.
const (
	kindTools uint32 = 1 << iota
	kindPrompts
	kindResources
	kindAll = kindTools | kindPrompts | kindResources
)

func (c *conn) lists() lists {
	c.listMu.Lock()
	defer c.listMu.Unlock()
	return c.l
}

func (c *conn) listChanged(kind uint32) {
	c.kinds.Or(kind)
	select {
	case c.changes <- struct{}{}:
	default:
	}
}

// close ends the session and stops the process group. The
// notifications/cancelled of requests that ended just before get up to
// cancelFlushTimeout to go out first (see cancelWatch); without a session
// (the SDK closes the one whose initialization failed) there is nothing to
// send them on. The process is stopped concurrently with the SDK's graceful
// close, which could otherwise wait on a server that never answers.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		if c.cs != nil {
			var exited <-chan struct{}
			if c.proc != nil {
				exited = c.proc.exited
			}
			c.obs.flushCancels(cancelFlushTimeout, c.ended, exited)
		}
		var wg sync.WaitGroup
		if c.proc != nil {
			wg.Go(c.proc.stop)
		}
		if c.cs != nil {
			closed := make(chan struct{})
			go func() {
				c.cs.Close()
				close(closed)
			}()
			select {
			case <-closed:
			case <-time.After(2 * stopGrace):
			}
		}
		wg.Wait()
	})
}

func newServer(m *Manager, sc config.Server, mc config.MCP) *server {
	s := &server{
		m:              m,
		name:           sc.Name,
		cfg:            sc,
		stderr:         newRing(stderrLines),
		mask:           config.SecretMasker(sc),
		mcpOn:          mc.IsEnabled(),
		startupTimeout: orDefault(sc.StartupTimeout.Duration, config.DefaultStartupTimeout),
		callTimeout:    orDefault(sc.Timeout.Duration, config.DefaultTimeout),
		healthInterval: orDefault(mc.HealthCheckInterval.Duration, config.DefaultHealthCheckInterval),
		maxAttempts:    mc.MaxReconnectAttempts,
		reconnectDelay: orDefault(mc.ReconnectDelay.Duration, config.DefaultReconnectDelay),
		transport:      transportName(sc),
		lat:            make([]time.Duration, 0, latencyWindow),
	}
	if s.maxAttempts == 0 {
		s.maxAttempts = config.DefaultMaxReconnectAttempts
	}
	s.state, s.reason = s.idleState()
	return s
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// shouldRun reports whether the server is to run: enabled (config, trust,
// [mcp] enabled and SetEnabled overrides considered) and free of a
// configuration problem.
func (s *server) shouldRun() bool {
	st, _ := s.idleState()
	return st == StatePending
}

// idleState is the state of a server that is not running: pending (about
// to start), disabled with the reason, or failed with its configuration's
// Problem (an unexpanded ${VAR}), which no restart can cure.
func (s *server) idleState() (State, string) {
	s.mu.Lock()
	override := s.override
	s.mu.Unlock()
	switch {
	case s.cfg.DisabledReason != "":
		return StateDisabled, s.cfg.DisabledReason
	case !s.mcpOn:
		return StateDisabled, "MCP is turned off ([mcp] enabled = false)"
	case override != nil && !*override:
		return StateDisabled, "disabled for this session"
	case override == nil && !s.cfg.IsEnabled():
		where := "the configuration"
		if s.cfg.File != "" {
			where = s.cfg.File
		}
		return StateDisabled, fmt.Sprintf("enabled = false in %s", where)
	case s.cfg.Problem != nil:
		return StateFailed, s.cfg.Problem.Error()
	}
	return StatePending, ""
}

func (s *server) setOverride(on bool) {
	s.mu.Lock()
	s.override = &on
	s.mu.Unlock()
}

// announce sets and reports the idle state.
func (s *server) announce() {
	st, reason := s.idleState()
	s.update(func() { s.state, s.reason, s.attempts = st, reason, 0 })
}

// update changes the server's fields under its lock and reports the new
// status.
func (s *server) update(fn func()) {
	s.mu.Lock()
	fn()
	st := s.statusLocked()
	s.mu.Unlock()
	s.addNotOffered(&st)
	s.m.notifyChanged()
	s.m.emit(StateChanged{Status: st})
}

func (s *server) status() Status {
	s.mu.Lock()
	st := s.statusLocked()
	s.mu.Unlock()
	s.addNotOffered(&st)
	if s.m.opts.Auth != nil && st.Transport != config.TransportStdio {
		st.TokenExpiry = s.m.opts.Auth.TokenExpiry(s.cfg)
	}
	return st
}

// addNotOffered fills in the server's tools the tool set does not offer
// because another tool holds their name. Called without s.mu held.
func (s *server) addNotOffered(st *Status) {
	if s.m.opts.Tools == nil {
		return
	}
	for _, c := range s.m.opts.Tools.Collisions() {
		if c.Dropped.Server == s.name {
			st.NotOffered = append(st.NotOffered, c)
		}
	}
}

// maskAll masks each of lines in place.
func (s *server) maskAll(lines []string) []string {
	for i, l := range lines {
		lines[i] = s.mask(l)
	}
	return lines
}

func (s *server) statusLocked() Status {
	st := Status{
		Name:        s.name,
		Transport:   s.transport,
		Scope:       string(s.cfg.Scope),
		State:       s.state,
		Error:       s.mask(s.reason),
		StderrTail:  s.maskAll(s.stderr.tail()),
		ConnectedAt: s.connectedAt,
		Attempts:    s.attempts,
		Calls:       s.calls.Load(),
		Errors:      s.errs.Load(),
	}
	if c := s.cur; c != nil {
		l := c.lists()
		st.Tools = len(s.filterTools(l.tools))
		st.Prompts = len(l.prompts)
		st.Resources = len(l.resources)
		st.Templates = len(l.templates)
		st.Instructions = c.instructions
		st.ServerInfo = c.serverInfo
	}
	st.MedianLatency = s.median()
	return st
}

func (s *server) current() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur // set only while a connection is live
}

func (s *server) notConnectedError() error {
	s.mu.Lock()
	state, reason := s.state, s.reason
	s.mu.Unlock()
	if reason == "" {
		return fmt.Errorf("MCP server %q is %s", s.name, state)
	}
	return fmt.Errorf("MCP server %q is %s: %s", s.name, state, reason)
}

// restart stops the supervisor if one runs and starts a new one.
func (s *server) restart(interactive bool) {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	s.stopLocked()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.cancel, s.done = cancel, done
	// Pending from now on; the supervisor reports it, so that a server's
	// events come from one goroutine, in order, and none while runMu is held.
	s.mu.Lock()
	s.state, s.reason, s.attempts = StatePending, "", 0
	s.mu.Unlock()
	go s.run(ctx, interactive, done)
}

// shutdown stops the supervisor, which closes the connection and stops the
// process; it returns when that is done.
func (s *server) shutdown(removeTools bool) {
	s.runMu.Lock()
	s.stopLocked()
	s.runMu.Unlock()
	if removeTools && s.m.opts.Tools != nil {
		s.m.opts.Tools.SetServerTools(s.name, nil)
	}
}

func (s *server) stopLocked() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done
	s.cancel, s.done = nil, nil
}

// awaitSettled waits until the server is no longer pending and returns its
// error if it did not connect.
func (s *server) awaitSettled(ctx context.Context) error {
	for {
		ch := s.m.changedChan()
		s.mu.Lock()
		state, reason := s.state, s.reason
		s.mu.Unlock()
		switch state {
		case StateConnected:
			return nil
		case StateFailed, StateNeedsAuth, StateDisabled:
			return fmt.Errorf("MCP server %q is %s: %s", s.name, state, reason)
		}
		s.m.mu.Lock()
		closed := s.m.closed
		s.m.mu.Unlock()
		if closed {
			return errors.New("mcp: the manager is closed")
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// run is the supervisor: connect, serve, reconnect after a drop.
func (s *server) run(ctx context.Context, interactive bool, done chan struct{}) {
	defer close(done)
	s.update(func() {}) // report pending
	c, err := s.connect(ctx, interactive)
	if err != nil {
		if ctx.Err() == nil {
			s.fail(err)
		}
		return
	}
	var lastDrop error
	for {
		s.connected(c, lastDrop)
		drop := s.serve(ctx, c)
		s.mu.Lock()
		s.cur = nil
		s.mu.Unlock()
		if ctx.Err() != nil {
			s.removeTools()
			return
		}
		lastDrop = drop
		s.m.logger.Warn("MCP server connection lost", "server", s.name, "err", s.mask(drop.Error()))
		c = nil
		if s.maxAttempts < 0 {
			s.removeTools()
			s.update(func() {
				s.state, s.reason = StateFailed, fmt.Sprintf("connection lost: %v (reconnection is off: max_reconnect_attempts < 0)", drop)
			})
			return
		}
		var lastErr error
		for attempt := 1; c == nil; attempt++ {
			if attempt > s.maxAttempts {
				s.removeTools()
				s.update(func() {
					s.state = StateFailed
					s.reason = fmt.Sprintf("connection lost: %v; %d reconnect attempts failed, the last with: %v (retry with /mcp reconnect %s)",
						drop, s.maxAttempts, lastErr, s.name)
				})
				return
			}
			s.update(func() {
				s.state, s.attempts = StatePending, attempt
				s.reason = fmt.Sprintf("connection lost: %v; reconnecting (attempt %d of %d)", drop, attempt, s.maxAttempts)
			})
			delay := s.reconnectDelay * time.Duration(attempt)
			if attempt == 1 && errors.Is(drop, sdk.ErrSessionMissing) {
				delay = 0 // the server ended the HTTP session: initialize a new one now
			}
			if !sleep(ctx, delay) {
				s.removeTools()
				return
			}
			c, lastErr = s.connect(ctx, false)
			if lastErr != nil {
				if ctx.Err() != nil {
					s.removeTools()
					return
				}
				if errors.Is(lastErr, oauth.ErrLoginRequired) {
					s.removeTools()
					s.fail(lastErr)
					return
				}
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *server) removeTools() {
	if s.m.opts.Tools != nil {
		s.m.opts.Tools.SetServerTools(s.name, nil)
	}
	s.m.emit(ToolsChanged{Server: s.name})
}

// fail records a connection error as failed or needs-auth.
func (s *server) fail(err error) {
	s.m.logger.Info("MCP server not connected", "server", s.name, "err", s.mask(err.Error()))
	s.update(func() {
		s.state, s.reason = StateFailed, err.Error()
		if errors.Is(err, oauth.ErrLoginRequired) {
			s.state = StateNeedsAuth
		}
	})
}

func (s *server) connected(c *conn, lastDrop error) {
	// Tools are in the set before anyone sees the server connected.
	s.mu.Lock()
	s.cur = c
	s.mu.Unlock()
	s.pushTools(c)
	s.update(func() {
		s.state, s.attempts = StateConnected, 0
		s.transport = c.transport
		s.connectedAt = time.Now()
		s.reason = ""
		if lastDrop != nil {
			s.reason = "reconnected after: " + lastDrop.Error()
		}
	})
}

// pushTools hands the server's (filtered) tools to the tool set.
func (s *server) pushTools(c *conn) {
	if s.m.opts.Tools != nil {
		ts := s.filterTools(c.lists().tools)
		out := make([]tool.Tool, 0, len(ts))
		for _, t := range ts {
			mt := newMCPTool(s, t)
			if c.obs.requiresTasks(t.Name) {
				info := mt.Info()
				info.Unsupported = NeedsTasks
				out = append(out, &unsupportedTool{info})
				continue
			}
			out = append(out, mt)
		}
		s.m.opts.Tools.SetServerTools(s.name, out)
	}
	s.m.emit(ToolsChanged{Server: s.name})
}

func (s *server) filterTools(ts []*sdk.Tool) []*sdk.Tool {
	if len(s.cfg.AllowedTools) == 0 && len(s.cfg.DeniedTools) == 0 {
		return ts
	}
	return slices.DeleteFunc(slices.Clone(ts), func(t *sdk.Tool) bool {
		return !tool.AllowedByFilter(s.cfg.AllowedTools, s.cfg.DeniedTools, t.Name)
	})
}

// connect starts a session: the transport, initialize and the first lists,
// all within startup_timeout.
func (s *server) connect(ctx context.Context, interactive bool) (*conn, error) {
	if s.cfg.Problem != nil {
		// Never reached through the manager, which does not run such a
		// server; a safeguard that nothing is started with a ${VAR} unexpanded.
		return nil, configError{s.cfg.Problem}
	}
	// The clock stops while the person answers a login prompt the server's
	// 401 caused (oauth pauses it): startup_timeout is for the server.
	startCtx, cancel := ask.WithPausableTimeout(ctx, s.startupTimeout)
	defer cancel()
	c := &conn{changes: make(chan struct{}, 1), transport: s.transport, obs: newSDKObserver(), ended: make(chan struct{})}
	client := s.newClient(c)
	var (
		cs  *sdk.ClientSession
		err error
	)
	switch s.transport {
	case config.TransportStdio:
		c.proc, err = startProcess(s.cfg, s.stderr)
		if err != nil {
			return nil, err
		}
		t := &sdk.IOTransport{
			Reader: newStdoutFilter(c.proc.stdout, s.stderr, maxMessageBytes),
			Writer: c.proc.stdin,
			// The filter refuses a longer line first, holding less of it.
			MaxLineLength: maxMessageBytes + 1<<20,
		}
		cs, err = client.Connect(startCtx, c.obs.wrap(t), nil)
	default:
		var h auth.OAuthHandler
		if s.m.opts.Auth != nil {
			h = s.m.opts.Auth.Handler(s.cfg, interactive)
		}
		cs, c.transport, err = connectRemote(startCtx, ctx, client, s.cfg, s.transport, h, c.obs)
	}
	if err != nil {
		c.close()
		return nil, s.startupError(ctx, startCtx, c, "initialize", err)
	}
	c.cs = cs
	if res := cs.InitializeResult(); res != nil {
		c.instructions = res.Instructions
		if res.ServerInfo != nil {
			c.serverInfo = strings.TrimSpace(res.ServerInfo.Name + " " + res.ServerInfo.Version)
		}
	}
	if err := s.fetch(startCtx, c, kindAll); err != nil {
		c.close()
		return nil, s.startupError(ctx, startCtx, c, "tools/list", err)
	}
	if caps := capabilities(cs); caps.Logging != nil {
		if err := cs.SetLoggingLevel(startCtx, &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
			s.m.logger.Debug("MCP server refused logging/setLevel", "server", s.name, "err", err)
		}
	}
	return c, nil
}

func capabilities(cs *sdk.ClientSession) *sdk.ServerCapabilities {
	if res := cs.InitializeResult(); res != nil && res.Capabilities != nil {
		return res.Capabilities
	}
	return &sdk.ServerCapabilities{}
}

// loginError words err, which wraps oauth.ErrLoginRequired, for the
// server's status: why a login is needed and the command that logs in, for
// an ad hoc server (which has no name to log in by) with its URL; without
// the SDK's layers ("calling initialize: sending initialize: …").
func (s *server) loginError(err error) error {
	why, command, where := "", oauth.LoginCommand(s.cfg), ""
	var le *oauth.LoginRequiredError
	if errors.As(err, &le) {
		why, command, where = le.Reason+"; ", le.Command, le.Where
	}
	msg := "authorization required: " + why + "run `" + command + "`" + where
	if s.cfg.File != "" {
		msg += " (or, in the TUI, select it in /mcp and press l)"
	}
	return &loginRequired{msg: msg, err: err}
}

// loginRequired is a needs-auth reason that still wraps the original error.
type loginRequired struct {
	msg string
	err error
}

func (e *loginRequired) Error() string { return e.msg }
func (e *loginRequired) Unwrap() error { return e.err }

// startupError explains why a connection attempt failed, for a person.
func (s *server) startupError(ctx, startCtx context.Context, c *conn, phase string, err error) error {
	if errors.Is(err, oauth.ErrLoginRequired) {
		return s.loginError(err)
	}
	var ce configError
	if errors.As(err, &ce) {
		return err
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("cannot connect to %s: %w; is the server running?", s.cfg.URL, syscall.ECONNREFUSED)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return fmt.Errorf("cannot connect to %s: %w", s.cfg.URL, dnsErr)
	}
	var msg string
	exited := ""
	if c.proc != nil {
		c.proc.awaitExit()
		exited = c.proc.exitDescription()
	}
	explained := true // msg says all the SDK's error would (a closed pipe, a deadline)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case exited != "" && !errors.Is(startCtx.Err(), context.DeadlineExceeded):
		msg = fmt.Sprintf("the server process %s before answering %s", exited, phase)
	case errors.Is(startCtx.Err(), context.DeadlineExceeded):
		msg = fmt.Sprintf("no answer to %s within %s (startup_timeout)", phase, s.startupTimeout)
	default:
		msg = phase + " failed"
		explained = false
	}
	if c.proc != nil {
		if note := s.stderr.stderrNote(); note != "" {
			msg += "; " + note
		}
	}
	if explained {
		return explainedError{msg: msg, err: err}
	}
	return fmt.Errorf("%s: %w", msg, err)
}

// explainedError says in msg what went wrong, without the text of err
// ("connection closed: calling "initialize": client is closing: EOF"),
// which it still wraps.
type explainedError struct {
	msg string
	err error
}

func (e explainedError) Error() string { return e.msg }
func (e explainedError) Unwrap() error { return e.err }

// serve watches a live connection until it drops or ctx ends: it refreshes
// lists on list_changed and pings every health check interval. It closes
// the connection before returning the reason it ended.
func (s *server) serve(ctx context.Context, c *conn) error {
	defer c.close()
	ended := make(chan error, 1)
	go func() {
		err := c.cs.Wait()
		close(c.ended)
		ended <- err
	}()
	var exited <-chan struct{}
	if c.proc != nil {
		exited = c.proc.exited
	}
	var tick <-chan time.Time
	if s.healthInterval > 0 {
		t := time.NewTicker(s.healthInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-ended:
			return s.dropError(c, err)
		case <-exited:
			return s.dropError(c, nil)
		case <-c.changes:
			kinds := c.kinds.Swap(0)
			rctx, cancel := context.WithTimeout(ctx, s.startupTimeout)
			err := s.fetch(rctx, c, kinds)
			cancel()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, context.Canceled) {
				continue // the connection is closing; its end is reported below
			}
			if err != nil {
				s.m.logger.Warn("refreshing an MCP server's lists failed", "server", s.name, "err", err)
				continue
			}
			if kinds&kindTools != 0 {
				s.pushTools(c)
			}
			s.update(func() {})
		case <-tick:
			if c.inflight.Load() > 0 {
				// Calls in flight have their own timeouts; a server that
				// works on one request at a time must not be restarted
				// under a long call because it did not answer a ping.
				continue
			}
			timeout := min(max(s.healthInterval, 2*time.Second), 10*time.Second)
			pctx, cancel := context.WithTimeout(ctx, timeout)
			err := c.cs.Ping(pctx, nil)
			cancel()
			if err != nil && ctx.Err() == nil && !answeredWithError(err) {
				return fmt.Errorf("health check failed: no answer to ping within %s: %w", timeout, err)
			}
		}
	}
}

// codeRejected is the code the go-sdk gives a request its transport could
// not deliver (jsonrpc2.ErrRejected: connection refused, HTTP errors on
// POST). It arrives as a *jsonrpc.Error but is not an answer from the server.
const codeRejected = -32005

// answeredWithError reports whether err is the server's own error answer
// (say, "method not found" for ping), which proves it is alive, rather than
// a failure to reach it.
func answeredWithError(err error) bool {
	var rpcErr *jsonrpc.Error
	return errors.As(err, &rpcErr) && rpcErr.Code != codeRejected
}

// dropError says why a live connection ended.
func (s *server) dropError(c *conn, err error) error {
	if c.proc != nil {
		c.proc.awaitExit()
		if d := c.proc.exitDescription(); d != "" {
			msg := "the server process " + d
			if note := s.stderr.stderrNote(); note != "" {
				msg += " (" + note + ")"
			}
			return errors.New(msg)
		}
	}
	if err == nil {
		return errors.New("the server closed the connection")
	}
	return err
}

// fetch lists the given kinds (all pages) and stores them in c.
func (s *server) fetch(ctx context.Context, c *conn, kinds uint32) error {
	caps := capabilities(c.cs)
	l := c.lists()
	if kinds&kindTools != 0 {
		tools, err := collect(c.cs.Tools(ctx, nil))
		switch {
		case err != nil && caps.Tools != nil:
			return err
		case err != nil:
			tools = nil // the server did not declare tools
		}
		l.tools = tools
	}
	if kinds&kindPrompts != 0 && caps.Prompts != nil {
		prompts, err := collect(c.cs.Prompts(ctx, nil))
		if err != nil {
			s.m.logger.Warn("listing an MCP server's prompts failed", "server", s.name, "err", err)
		}
		l.prompts = prompts
	}
	if kinds&kindResources != 0 && caps.Resources != nil {
		res, err := collect(c.cs.Resources(ctx, nil))
		if err != nil {
			s.m.logger.Warn("listing an MCP server's resources failed", "server", s.name, "err", err)
		}
		l.resources = res
		l.templates = s.fetchTemplates(ctx, c)
	}
	c.listMu.Lock()
	c.l = l
	c.listMu.Unlock()
	return nil
}

func collect[T any](seq func(yield func(*T, error) bool)) ([]*T, error) {
	var out []*T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// record adds one call to the live figures.
func (s *server) record(d time.Duration, failed bool) {
	s.calls.Add(1)
	if failed {
		s.errs.Add(1)
	}
	s.latMu.Lock()
	if len(s.lat) < latencyWindow {
		s.lat = append(s.lat, d)
	} else {
		s.lat[s.latNext] = d
		s.latNext = (s.latNext + 1) % latencyWindow
	}
	s.latMu.Unlock()
}

func (s *server) median() time.Duration {
	s.latMu.Lock()
	l := slices.Clone(s.lat)
	s.latMu.Unlock()
	if len(l) == 0 {
		return 0
	}
	slices.Sort(l)
	return l[len(l)/2]
}
