package mcphost

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

// Manager starts and supervises the configured MCP servers. Its methods are
// safe for concurrent use.
type Manager struct {
	opts   servers.Options
	logger *slog.Logger
	roots  []string // absolute: the directories offered by default

	mu      sync.Mutex
	cfg     config.MCP
	servers map[string]*server
	started bool
	closed  bool

	chMu    sync.Mutex
	changed chan struct{} // closed and replaced whenever a status changes

	progressMu sync.Mutex
	progress   map[int64]context.Context // progress token → the calling context
	nextToken  atomic.Int64

	closeOnce sync.Once

	// proxyDial, when set (by tests), is how the servers' filtering
	// proxies reach a host, in place of resolving and dialling it.
	proxyDial func(ctx context.Context, network, addr string) (net.Conn, error)
	// isolatedProxyPort, when set (by tests), is the proxy's port in a
	// server's own network namespace instead of isolatedProxyPort.
	isolatedProxyPort int
	// canIsolate, when set (by tests), replaces sandbox.CanIsolate.
	canIsolate func(launcher string) error
}

// New returns a Manager for cfg. No server starts before Start.
func New(cfg config.MCP, opts servers.Options) *Manager {
	m := &Manager{
		opts:     opts,
		logger:   cmp.Or(opts.Logger, slog.Default()).With("component", "mcp"),
		servers:  make(map[string]*server),
		changed:  make(chan struct{}),
		progress: make(map[int64]context.Context),
	}
	dirs := opts.Roots
	if len(dirs) == 0 {
		if wd, err := os.Getwd(); err == nil {
			dirs = []string{wd}
		}
	}
	for _, d := range dirs {
		m.roots = append(m.roots, absDir(d))
	}
	m.cfg = cfg
	for _, sc := range cfg.Servers {
		if _, dup := m.servers[sc.Name]; dup {
			m.logger.Warn("MCP server defined twice; the last definition is used", "server", sc.Name)
		}
		m.servers[sc.Name] = newServer(m, sc, cfg)
	}
	return m
}

// Start starts every enabled server in the background and returns at once.
// The servers run until Close (or Reload, SetEnabled) stops them; ctx is not
// retained.
func (m *Manager) Start(ctx context.Context) {
	m.mu.Lock()
	if m.started || m.closed {
		m.mu.Unlock()
		return
	}
	m.started = true
	m.mu.Unlock()
	// Outside the lock: restart reports events, and a front end may call
	// back into the manager from OnEvent.
	all := m.list()
	idle := m.chooseIdle(all)
	m.goIdle(idle)
	for _, s := range all {
		if _, ok := idle[s]; !ok && s.shouldRun() {
			s.restart(false)
		}
	}
}

// WaitSettled returns once no server is pending (each is bounded by its
// startup_timeout), or with ctx's error. Idle servers are not waited for.
func (m *Manager) WaitSettled(ctx context.Context) error {
	m.mu.Lock()
	started := m.started
	m.mu.Unlock()
	if !started {
		return errors.New("mcp: WaitSettled called before Start")
	}
	for {
		ch := m.changedChan()
		m.mu.Lock()
		closed := m.closed
		m.mu.Unlock()
		if closed {
			return nil
		}
		pending := false
		for _, st := range m.Statuses() {
			if st.State == servers.StatePending {
				pending = true
				break
			}
		}
		if !pending {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (m *Manager) changedChan() chan struct{} {
	m.chMu.Lock()
	defer m.chMu.Unlock()
	return m.changed
}

func (m *Manager) notifyChanged() {
	m.chMu.Lock()
	close(m.changed)
	m.changed = make(chan struct{})
	m.chMu.Unlock()
}

// spillFile creates the file a server's message too large to keep whole
// is written to: beside the tool set's long outputs.
func (m *Manager) spillFile() (*os.File, error) {
	if m.opts.Tools != nil {
		return m.opts.Tools.SpillFile(".json")
	}
	return tool.CreateSpillFile("", ".json")
}

func (m *Manager) emit(e servers.Event) {
	if m.opts.OnEvent != nil {
		m.opts.OnEvent(e)
	}
}

func (m *Manager) list() []*server {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *server) int { return cmp.Compare(a.name, b.name) })
	return out
}

func (m *Manager) server(name string) (*server, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("mcp: the manager is closed")
	}
	s, ok := m.servers[name]
	if !ok {
		names := make([]string, 0, len(m.servers))
		for n := range m.servers {
			names = append(names, n)
		}
		slices.Sort(names)
		if len(names) == 0 {
			return nil, fmt.Errorf("no MCP server named %q: none is configured", name)
		}
		return nil, fmt.Errorf("no MCP server named %q (configured: %v)", name, names)
	}
	return s, nil
}

// Statuses returns a snapshot of every configured server, sorted by name.
func (m *Manager) Statuses() []servers.Status {
	all := m.list()
	out := make([]servers.Status, len(all))
	for i, s := range all {
		out[i] = s.status()
	}
	return out
}

// Status returns the snapshot of one server.
func (m *Manager) Status(name string) (servers.Status, bool) {
	m.mu.Lock()
	s, ok := m.servers[name]
	m.mu.Unlock()
	if !ok {
		return servers.Status{}, false
	}
	return s.status(), true
}

// Session returns the live SDK session of a connected server, for raw
// access (the headless CLI's ad hoc servers).
func (m *Manager) Session(name string) (*sdk.ClientSession, bool) {
	m.mu.Lock()
	s, ok := m.servers[name]
	m.mu.Unlock()
	if !ok {
		return nil, false
	}
	c := s.current()
	if c == nil {
		return nil, false
	}
	return c.cs, true
}

// Reload applies a new configuration: servers are matched by name, and only
// those added, removed or changed in any field are started or stopped.
// Turning [mcp] enabled on or off counts as a change of every server; the
// other [mcp] settings (health checks, reconnection) apply to servers
// started from then on.
func (m *Manager) Reload(ctx context.Context, cfg config.MCP) servers.ReloadDiff {
	var diff servers.ReloadDiff
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return diff
	}
	globalChanged := m.cfg.IsEnabled() != cfg.IsEnabled()
	m.cfg = cfg
	next := make(map[string]config.Server, len(cfg.Servers))
	for _, sc := range cfg.Servers {
		next[sc.Name] = sc
	}
	var stop, start []*server
	for name, s := range m.servers {
		sc, ok := next[name]
		switch {
		case !ok:
			diff.Removed = append(diff.Removed, name)
			delete(m.servers, name)
			stop = append(stop, s)
		case globalChanged || !sameServer(s.cfg, sc):
			diff.Changed = append(diff.Changed, name)
			ns := newServer(m, sc, cfg)
			m.servers[name] = ns
			stop = append(stop, s)
			start = append(start, ns)
		default:
			diff.Unchanged = append(diff.Unchanged, name)
		}
	}
	for name, sc := range next {
		if _, ok := m.servers[name]; !ok {
			diff.Added = append(diff.Added, name)
			ns := newServer(m, sc, cfg)
			m.servers[name] = ns
			start = append(start, ns)
		}
	}
	started := m.started
	m.mu.Unlock()

	var wg sync.WaitGroup
	for _, s := range stop {
		wg.Go(func() { s.shutdown(true) })
	}
	wg.Wait()
	for _, s := range start {
		if started && s.shouldRun() {
			s.restart(false)
		} else {
			s.announce()
		}
	}
	for _, l := range []*[]string{&diff.Added, &diff.Removed, &diff.Changed, &diff.Unchanged} {
		slices.Sort(*l)
	}
	m.notifyChanged()
	return diff
}

// sameServer reports whether two definitions run the same server. The line
// number is not part of it: editing an unrelated part of a file moves it.
func sameServer(a, b config.Server) bool {
	a.Line, b.Line = 0, 0
	return reflect.DeepEqual(a, b)
}

// Reconnect restarts one server and waits until it is connected or failed.
func (m *Manager) Reconnect(ctx context.Context, name string) error {
	return m.reconnect(ctx, name, false)
}

// Login reconnects a remote server with interactive authorization (which may
// open a browser) and waits until it is connected or failed.
func (m *Manager) Login(ctx context.Context, name string) error {
	s, err := m.server(name)
	if err != nil {
		return err
	}
	if m.opts.Auth == nil {
		return errors.New("OAuth is not available in this mode")
	}
	if transportName(s.cfg) == config.TransportStdio {
		return fmt.Errorf("server %q runs over stdio and does not use OAuth", name)
	}
	return m.reconnect(ctx, name, true)
}

func (m *Manager) reconnect(ctx context.Context, name string, interactive bool) error {
	s, err := m.server(name)
	if err != nil {
		return err
	}
	if st, why := s.idleState(); st != servers.StatePending {
		if s.cfg.Problem != nil && st == servers.StateFailed {
			return fmt.Errorf("server %q cannot start until its configuration is fixed: %w", name, s.cfg.Problem)
		}
		return fmt.Errorf("server %q is %s: %s", name, st, s.mask(why))
	}
	m.mu.Lock()
	m.started = true
	m.mu.Unlock()
	s.restart(interactive)
	return s.awaitSettled(ctx)
}

// SetEnabled turns a server on or off for this session (the configuration
// is not changed).
func (m *Manager) SetEnabled(ctx context.Context, name string, on bool) error {
	s, err := m.server(name)
	if err != nil {
		return err
	}
	if on {
		if s.cfg.DisabledReason != "" {
			return fmt.Errorf("server %q cannot be enabled: %s", name, s.cfg.DisabledReason)
		}
		if !s.mcpOn {
			return errors.New("MCP is turned off in the configuration ([mcp] enabled = false)")
		}
	}
	s.setOverride(on)
	if on && s.cfg.Problem != nil {
		// Enabled, but it cannot start: show it failed with the reason.
		s.announce()
		return fmt.Errorf("server %q cannot start until its configuration is fixed: %w", name, s.cfg.Problem)
	}
	if on {
		m.mu.Lock()
		started := m.started
		m.mu.Unlock()
		if started {
			s.restart(false)
		}
		return nil
	}
	s.shutdown(true)
	s.announce()
	return nil
}

// Instructions returns the instructions of each connected server that gave
// any, by server name, and the pinned ones of each idle server;
// instructions that differ from the pinned ones are held back until
// approved.
func (m *Manager) Instructions() map[string]string {
	out := make(map[string]string)
	for _, s := range m.list() {
		s.mu.Lock()
		held, idle, known := s.pins.instrHeld, s.state == servers.StateIdle, s.knownInstr
		s.mu.Unlock()
		switch c := s.current(); {
		case c != nil && c.instructions != "" && !held:
			out[s.name] = c.instructions
		case c == nil && idle && known != "":
			out[s.name] = known
		}
	}
	return out
}

// Prompts returns the prompts of every connected server, sorted by server
// and name.
func (m *Manager) Prompts() []servers.Prompt {
	var out []servers.Prompt
	for _, s := range m.list() {
		c := s.current()
		if c == nil {
			continue
		}
		for _, p := range c.lists().prompts {
			out = append(out, servers.Prompt{Server: s.name, Name: p.Name, Description: p.Description, Arguments: p.Arguments})
		}
	}
	slices.SortStableFunc(out, func(a, b servers.Prompt) int {
		return cmp.Or(cmp.Compare(a.Server, b.Server), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// GetPrompt gets a prompt from a server.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*sdk.GetPromptResult, error) {
	s, c, err := m.ready(ctx, server)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout)
	defer cancel()
	res, err := c.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		if uerr := s.urlElicitation(ctx, err, fmt.Sprintf("prompt %q of MCP server %q", name, server), "try again"); uerr != nil {
			return nil, uerr
		}
		return nil, s.maskErr(fmt.Errorf("getting prompt %q from MCP server %q: %w", name, server, err))
	}
	return res, nil
}

// Resources returns the resources of every connected server, sorted by
// server and URI.
func (m *Manager) Resources() []servers.Resource {
	var out []servers.Resource
	for _, s := range m.list() {
		c := s.current()
		if c == nil {
			continue
		}
		for _, r := range c.lists().resources {
			out = append(out, servers.Resource{Server: s.name, Resource: r})
		}
	}
	slices.SortStableFunc(out, func(a, b servers.Resource) int {
		return cmp.Or(cmp.Compare(a.Server, b.Server), cmp.Compare(a.URI, b.URI))
	})
	return out
}

// ReadResource reads a resource from a server.
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (*sdk.ReadResourceResult, error) {
	s, c, err := m.ready(ctx, server)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout)
	defer cancel()
	res, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		if uerr := s.urlElicitation(ctx, err, fmt.Sprintf("resource %s of MCP server %q", uri, server), "try again"); uerr != nil {
			return nil, uerr
		}
		return nil, s.maskErr(fmt.Errorf("reading %s from MCP server %q: %w", uri, server, err))
	}
	return res, nil
}

func (m *Manager) connected(name string) (*server, *conn, error) {
	s, err := m.server(name)
	if err != nil {
		return nil, nil, err
	}
	c := s.current()
	if c == nil {
		return nil, nil, s.notConnectedError()
	}
	return s, c, nil
}

// Close stops every server; no process it started outlives it. It is safe
// to call more than once.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.closed = true
		all := make([]*server, 0, len(m.servers))
		for _, s := range m.servers {
			all = append(all, s)
		}
		m.mu.Unlock()
		m.notifyChanged() // wakes Reconnect and Login waiting on a server
		var wg sync.WaitGroup
		for _, s := range all {
			wg.Go(func() { s.shutdown(false) })
		}
		wg.Wait()
		if m.opts.Tools != nil { // every server's tools at once: one rebuild
			gone := make(map[string][]tool.Tool, len(all))
			for _, s := range all {
				gone[s.name] = nil
			}
			m.opts.Tools.SetServersTools(gone)
		}
	})
	return nil
}

// progressToken registers ctx for progress notifications and returns the
// token to send with a request; release unregisters it.
func (m *Manager) progressToken(ctx context.Context) int64 {
	tok := m.nextToken.Add(1)
	m.progressMu.Lock()
	m.progress[tok] = ctx
	m.progressMu.Unlock()
	return tok
}

func (m *Manager) releaseToken(tok int64) {
	m.progressMu.Lock()
	delete(m.progress, tok)
	m.progressMu.Unlock()
}

func (m *Manager) routeProgress(p *sdk.ProgressNotificationParams) {
	var tok int64
	switch t := p.ProgressToken.(type) { // a JSON number, as decoded into any
	case float64:
		tok = int64(t)
	case int64:
		tok = t
	case int:
		tok = int64(t)
	default:
		return
	}
	m.progressMu.Lock()
	ctx, ok := m.progress[tok]
	m.progressMu.Unlock()
	if ok {
		tool.ReportProgress(ctx, tool.Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}
