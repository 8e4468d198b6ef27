package mcphost

// The connection: one live session with a server — starting it over the
// server's transport (transport.go, process.go), its lists, its watch loop
// (list_changed, health checks) and its close.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/sandbox"
)

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
	c.obs.spill = s.m.spillFile
	client := s.newClient(c)
	var (
		cs  *sdk.ClientSession
		err error
	)
	switch s.transport {
	case config.TransportStdio:
		policy, confined, serr := s.sandboxFor(startCtx) // not :=-ing err: Connect's is read below the switch
		if serr != nil {
			return nil, serr
		}
		s.mu.Lock()
		s.sandbox = confined
		s.mu.Unlock()
		var launcher string
		var serve func(*sandbox.Isolation, <-chan struct{})
		if policy != nil {
			launcher = s.m.opts.Sandbox.Launcher
			if px := s.currentProxy(); px != nil {
				serve = func(iso *sandbox.Isolation, exited <-chan struct{}) { s.serveIsolated(px, iso, exited) }
			}
		}
		c.proc, err = startProcess(s.cfg, s.stderr, policy, launcher, serve)
		if err != nil {
			return nil, err
		}
		if policy != nil {
			s.m.logger.Debug("MCP server started in the sandbox", "server", s.name, "pid", c.proc.cmd.Process.Pid,
				"launcher", c.proc.cmd.Path)
		} else {
			s.m.logger.Debug("MCP server started", "server", s.name, "pid", c.proc.cmd.Process.Pid)
		}
		t := &sdk.IOTransport{
			Reader: newStdoutFilter(c.proc.stdout, s.stderr, s.m.spillFile),
			Writer: c.proc.stdin,
			// The filter hands on no longer line (a longer one shrunk).
			MaxLineLength: keepMessageBytes + 1<<20,
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
			s.m.logger.Debug("MCP server refused logging/setLevel", "server", s.name, "err", s.mask(err.Error()))
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
				s.m.logger.Warn("refreshing an MCP server's lists failed", "server", s.name, "err", s.mask(err.Error()))
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
			s.m.logger.Warn("listing an MCP server's prompts failed", "server", s.name, "err", s.mask(err.Error()))
		}
		l.prompts = prompts
	}
	if kinds&kindResources != 0 && caps.Resources != nil {
		res, err := collect(c.cs.Resources(ctx, nil))
		if err != nil {
			s.m.logger.Warn("listing an MCP server's resources failed", "server", s.name, "err", s.mask(err.Error()))
		}
		l.resources = res
		l.templates = s.fetchTemplates(ctx, c)
	}
	capDescriptions(&l)
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
