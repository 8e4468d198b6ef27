package mcphost

// The supervisor: a server runs, for one configured MCP server, the loop
// that connects (conn.go), watches the connection, reconnects after a drop
// with backoff and reports the server's state and figures. Why a
// connection failed, in words for a person, is errors.go's.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth"
	"github.com/otter-sh/otter/internal/servers"
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
	lazy           bool          // may stay idle until needed (config.MCP.StartsLazily)
	idleTimeout    time.Duration // a server started from idle stops again after this long unused; 0: never

	runMu  sync.Mutex // serializes restart and shutdown
	cancel context.CancelFunc
	done   chan struct{}

	mu          sync.Mutex
	state       servers.State
	reason      string
	transport   string
	cur         *conn
	attempts    int
	connectedAt time.Time
	override    *bool                  // SetEnabled for this session
	sandbox     *servers.SandboxStatus // how the stdio server last started
	proxy       *hostProxy             // its sandbox's filtering proxy (netproxy.go), once started
	refused     string                 // the proxy's last refusal, for a failed start's hint
	pins        pinState
	// While idle: the known tools (from its pins) in the tool set, and its
	// pinned instructions (see lazy.go).
	known      []tool.Tool
	knownInstr string
	// pushed are the tools pushTools last handed the tool set, by the
	// server's own name: what a call of a known tool runs once connected.
	pushed map[string]tool.Tool

	pushMu sync.Mutex // serializes pushTools

	calls, errs atomic.Int64
	lastUse     atomic.Int64 // unix nanoseconds of the last call, read or prompt
	latMu       sync.Mutex
	lat         []time.Duration
	latNext     int
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
		lazy:           mc.StartsLazily(sc),
		idleTimeout:    mc.IdleTimeoutOf(sc),
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
	return st == servers.StatePending
}

// idleState is the state of a server that is not running: pending (about
// to start), disabled with the reason, or failed with its configuration's
// Problem (an unexpanded ${VAR}), which no restart can cure.
func (s *server) idleState() (servers.State, string) {
	s.mu.Lock()
	override := s.override
	s.mu.Unlock()
	switch {
	case s.cfg.DisabledReason != "":
		return servers.StateDisabled, s.cfg.DisabledReason
	case !s.mcpOn:
		return servers.StateDisabled, "MCP is turned off ([mcp] enabled = false)"
	case override != nil && !*override:
		return servers.StateDisabled, "disabled for this session"
	case override == nil && !s.cfg.IsEnabled():
		where := "the configuration"
		if s.cfg.File != "" {
			where = s.cfg.File
		}
		return servers.StateDisabled, fmt.Sprintf("enabled = false in %s", where)
	case s.cfg.Problem != nil:
		return servers.StateFailed, s.cfg.Problem.Error()
	}
	return servers.StatePending, ""
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
	s.m.emit(servers.StateChanged{Status: st})
}

func (s *server) status() servers.Status {
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
func (s *server) addNotOffered(st *servers.Status) {
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

func (s *server) statusLocked() servers.Status {
	st := servers.Status{
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
		st.Pinned = s.pins.pinned
		st.HeldBack = s.pins.heldTools()
		if st.InstructionsHeldBack = s.pins.instrHeld; st.InstructionsHeldBack {
			st.Instructions = "" // not sent to a model until approved
		}
	} else if s.state == servers.StateIdle {
		st.Tools = len(s.known) // pinned, allowed_tools and denied_tools applied
		st.Instructions = s.knownInstr
		st.Pinned = true
	}
	st.Roots, st.RootsByDefault = s.rootDirs()
	st.Sandbox = s.sandbox
	st.MedianLatency = s.median()
	return st
}

func (s *server) current() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur // set only while a connection is live
}

// restart stops the supervisor if one runs and starts a new one.
func (s *server) restart(interactive bool) {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	s.restartLocked(interactive, false)
}

// restartLocked is restart with runMu held; fromIdle: the server starts
// because it was needed while idle (so idle_timeout may stop it again).
func (s *server) restartLocked(interactive, fromIdle bool) {
	s.stopLocked()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.cancel, s.done = cancel, done
	// Pending from now on; the supervisor reports it, so that a server's
	// events come from one goroutine, in order, and none while runMu is held.
	s.mu.Lock()
	s.state, s.reason, s.attempts = servers.StatePending, "", 0
	s.mu.Unlock()
	go s.run(ctx, interactive, fromIdle, done)
	if fromIdle && s.idleTimeout > 0 {
		go s.watchIdle(ctx)
	}
}

// shutdown stops the supervisor, which closes the connection and stops the
// process; it returns when that is done.
func (s *server) shutdown(removeTools bool) {
	s.runMu.Lock()
	s.stopLocked()
	s.runMu.Unlock()
	s.closeProxy()
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
		case servers.StateConnected:
			return nil
		case servers.StateFailed, servers.StateNeedsAuth, servers.StateDisabled:
			return fmt.Errorf("MCP server %q is %s: %s", s.name, state, s.mask(reason))
		case servers.StateIdle:
			return fmt.Errorf("MCP server %q is idle: it stopped again before it was used", s.name)
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
func (s *server) run(ctx context.Context, interactive, fromIdle bool, done chan struct{}) {
	defer close(done)
	s.update(func() {}) // report pending
	c, err := s.connect(ctx, interactive)
	if err != nil {
		if fromIdle {
			s.removeTools() // the known tools: none can be called now
		}
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
				s.state, s.reason = servers.StateFailed, fmt.Sprintf("connection lost: %v (reconnection is off: max_reconnect_attempts < 0)", drop)
			})
			return
		}
		var lastErr error
		for attempt := 1; c == nil; attempt++ {
			if attempt > s.maxAttempts {
				s.removeTools()
				s.update(func() {
					s.state = servers.StateFailed
					// Attempts stays at the count: the front end words how to retry.
					s.reason = fmt.Sprintf("connection lost: %v; %d reconnect attempts failed, the last with: %v",
						drop, s.maxAttempts, lastErr)
				})
				return
			}
			s.update(func() {
				s.state, s.attempts = servers.StatePending, attempt
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
	s.m.emit(servers.ToolsChanged{Server: s.name})
}

// fail records a connection error as failed or needs-auth.
func (s *server) fail(err error) {
	s.m.logger.Info("MCP server not connected", "server", s.name, "err", s.mask(err.Error()))
	s.update(func() {
		s.state, s.reason = servers.StateFailed, err.Error()
		if errors.Is(err, oauth.ErrLoginRequired) {
			s.state = servers.StateNeedsAuth
		}
	})
}

func (s *server) connected(c *conn, lastDrop error) {
	// Tools are in the set before anyone sees the server connected.
	s.mu.Lock()
	s.cur = c
	s.known, s.knownInstr = nil, ""
	s.mu.Unlock()
	s.touch() // idle_timeout counts from here: whoever woke it calls now
	s.pushTools(c)
	s.update(func() {
		s.state, s.attempts = servers.StateConnected, 0
		s.transport = c.transport
		s.connectedAt = time.Now()
		s.reason = ""
		if lastDrop != nil {
			s.reason = "reconnected after: " + lastDrop.Error()
		}
	})
}

// pushTools hands the server's (filtered) tools to the tool set, those
// that differ from their pins held back (see pins.go).
func (s *server) pushTools(c *conn) {
	s.pushMu.Lock()
	defer s.pushMu.Unlock()
	all := c.lists().tools
	filtered := s.filterTools(all)
	tools := s.toolsOf(filtered)
	var allTools []*mcpTool
	if len(filtered) == len(all) {
		allTools = tools
	} else {
		allTools = s.toolsOf(all)
	}
	pinned := s.comparePins(c, allTools, tools)
	out := make([]tool.Tool, 0, len(tools))
	pushed := make(map[string]tool.Tool, len(tools))
	for _, mt := range tools {
		t := mt.info
		var offered tool.Tool = mt
		switch info := mt.Info(); {
		case pinned.held[t.Name] != "":
			info.HeldBack = pinned.held[t.Name]
			offered = &heldTool{info}
		case c.obs.requiresTasks(t.Name):
			info.Unsupported = NeedsTasks
			offered = &unsupportedTool{info}
		}
		out = append(out, offered)
		pushed[t.Name] = offered
	}
	s.mu.Lock()
	s.pins, s.pushed = pinned, pushed
	s.mu.Unlock()
	if s.m.opts.Tools != nil {
		s.m.opts.Tools.SetServerTools(s.name, out)
	}
	s.m.emit(servers.ToolsChanged{Server: s.name})
}

func (s *server) filterTools(ts []*sdk.Tool) []*sdk.Tool {
	if len(s.cfg.AllowedTools) == 0 && len(s.cfg.DeniedTools) == 0 {
		return ts
	}
	return slices.DeleteFunc(slices.Clone(ts), func(t *sdk.Tool) bool {
		return !tool.AllowedByFilter(s.cfg.AllowedTools, s.cfg.DeniedTools, t.Name)
	})
}

// record adds one call to the live figures.
func (s *server) record(d time.Duration, failed bool) {
	s.touch()
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
