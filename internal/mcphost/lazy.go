package mcphost

// Lazy start: a server whose tools are deferred behind tool_search and
// known from an earlier connection (its pins) need not run until it is
// needed. At Start such a server goes idle: its known tools go into the
// tool set as idleTools, found by tool_search like any other, and the
// server starts when tool_search returns one of them (Prepare), when one
// is called, when its resources or prompts are asked for, or when a front
// end wakes it (Manager.Wake). Once connected, its tools are compared with
// its pins as on any connection: what changed is held back. A server that
// started from idle and then sits unused for its idle_timeout is stopped
// and goes idle again.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/pins"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/toolname"
)

// idleTool is a tool of an idle server as its pins know it. Calling it
// starts the server and, once it is connected, calls the tool the server
// lists now (held back if its definition changed).
type idleTool struct {
	s    *server
	info tool.Info
}

func (t *idleTool) Info() tool.Info { return t.info }

// Prepare starts the idle server in the background: tool_search found the
// tool, so a call of it is likely next.
func (t *idleTool) Prepare() { t.s.startIfIdle() }

func (t *idleTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	s := t.s
	if err := s.wake(ctx); err != nil {
		return nil, fmt.Errorf("calling %s: %w", t.info.Name, err)
	}
	s.mu.Lock()
	live := s.pushed[t.info.Name]
	s.mu.Unlock()
	if live == nil {
		return nil, fmt.Errorf("MCP server %q no longer lists the tool %s, which it had when otter last connected to it", s.name, t.info.Name)
	}
	return live.Call(ctx, args)
}

// known returns the server's tools as pinned — those that pass
// allowed_tools and denied_tools — as idle tools, with its pinned
// instructions; none when it has no pins (it was never connected, or its
// tools are not pinned).
func (s *server) loadKnown() ([]tool.Tool, string) {
	store := s.m.opts.Pins
	k, ok := store.Key(s.cfg)
	if !ok {
		return nil, ""
	}
	p, err := store.Known(k)
	if err != nil {
		s.m.logger.Warn("the MCP server's pinned tool definitions cannot be read; it starts at launch", "server", s.name, "err", err)
		return nil, ""
	}
	if p == nil {
		return nil, ""
	}
	var out []tool.Tool
	for _, name := range slices.Sorted(maps.Keys(p.Tools)) {
		if !tool.AllowedByFilter(s.cfg.AllowedTools, s.cfg.DeniedTools, name) {
			continue
		}
		out = append(out, &idleTool{s: s, info: s.knownInfo(p.Tools[name])})
	}
	return out, p.Instructions
}

// knownInfo is a pinned definition as the tool set lists it.
func (s *server) knownInfo(p pins.Tool) tool.Info {
	info := tool.Info{Name: p.Name, Server: s.name, Title: p.Title, Description: p.Description,
		InputSchema: p.InputSchema, OutputSchema: p.OutputSchema}
	if len(info.InputSchema) == 0 {
		info.InputSchema = emptySchema
	}
	if len(p.Annotations) > 0 {
		var a sdk.ToolAnnotations
		if json.Unmarshal(p.Annotations, &a) == nil {
			info.Annotations = &a
		}
	}
	return info
}

// goIdle makes the servers of idle, which do not run, idle at once:
// their known tools in the tool set (one rebuild for all), their state
// idle, reported.
func (m *Manager) goIdle(idle map[*server]knownTools) {
	byServer := make(map[string][]tool.Tool, len(idle))
	for s, k := range idle {
		s.mu.Lock()
		s.state, s.reason, s.attempts = servers.StateIdle, "", 0
		s.known, s.knownInstr = k.tools, k.instructions
		s.mu.Unlock()
		byServer[s.name] = k.tools
	}
	if m.opts.Tools != nil {
		m.opts.Tools.SetServersTools(byServer)
	}
	for s := range idle {
		s.update(func() {})
		m.emit(servers.ToolsChanged{Server: s.name})
	}
}

// pushIdle hands the tool set the known tools, unless the server started
// meanwhile (pushTools and pushIdle exclude each other).
func (s *server) pushIdle() {
	s.pushMu.Lock()
	defer s.pushMu.Unlock()
	s.mu.Lock()
	idle, known := s.state == servers.StateIdle, s.known
	s.mu.Unlock()
	if !idle {
		return
	}
	if s.m.opts.Tools != nil {
		s.m.opts.Tools.SetServerTools(s.name, known)
	}
	s.m.emit(servers.ToolsChanged{Server: s.name})
}

// touch marks the server used now (for idle_timeout).
func (s *server) touch() { s.lastUse.Store(time.Now().UnixNano()) }

// startIfIdle starts the server if it is idle, in the background, and
// reports whether it did.
func (s *server) startIfIdle() bool {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	s.mu.Lock()
	idle := s.state == servers.StateIdle
	s.mu.Unlock()
	if !idle || s.m.isClosed() {
		return false
	}
	s.m.logger.Info("starting an idle MCP server: it is needed", "server", s.name)
	s.touch()
	s.restartLocked(false, true)
	return true
}

// wake starts the server if it is idle and waits until it is connected
// (nil) or has failed (its error).
func (s *server) wake(ctx context.Context) error {
	s.touch()
	s.startIfIdle()
	return s.awaitSettled(ctx)
}

// watchIdle stops the server, which started from idle, once it has been
// unused for its idle_timeout and no call of it runs; it is idle again.
// It ends with ctx, the supervisor's.
func (s *server) watchIdle(ctx context.Context) {
	for {
		wait := time.Until(time.Unix(0, s.lastUse.Load()).Add(s.idleTimeout))
		if wait <= 0 {
			// Only a connected server with no call running: one that is
			// still starting (or reconnecting) has callers waiting for it.
			if c := s.current(); c == nil || c.inflight.Load() > 0 {
				wait = s.idleTimeout
			} else if s.sleepAgain(ctx) {
				return
			} else {
				wait = s.idleTimeout
			}
		}
		if !sleep(ctx, wait) {
			return
		}
	}
}

// sleepAgain stops the server, started from idle by the supervisor of
// ctx, and makes it idle again; it reports whether it did (not when the
// supervisor was replaced meanwhile, or the server's pins are gone).
func (s *server) sleepAgain(ctx context.Context) bool {
	known, instr := s.loadKnown()
	if len(known) == 0 {
		return false
	}
	s.runMu.Lock()
	if ctx.Err() != nil { // stopped or restarted meanwhile
		s.runMu.Unlock()
		return true
	}
	s.m.logger.Info("stopping an MCP server unused for its idle_timeout; it starts again when it is needed",
		"server", s.name, "idle_timeout", s.idleTimeout)
	s.stopLocked()
	// Idle before runMu is released: a wake from then on sees it idle and
	// starts it; pushIdle leaves the tool set alone if one did.
	s.mu.Lock()
	s.state, s.reason, s.attempts = servers.StateIdle, "", 0
	s.known, s.knownInstr = known, instr
	s.mu.Unlock()
	s.runMu.Unlock()
	s.pushIdle()
	s.update(func() {})
	return true
}

// chooseIdle returns the servers of all that stay idle at Start, with
// their known tools and instructions: those that may start lazily and
// whose tools are known, when Options.Lazy says tools like the known ones
// are deferred.
func (m *Manager) chooseIdle(all []*server) map[*server]knownTools {
	if m.opts.Lazy == nil || m.opts.Pins == nil {
		return nil
	}
	// Each server's pins file, read at once: a dozen files of 15 KB take
	// a few milliseconds to decode, on every start.
	known := make([]knownTools, len(all))
	var wg sync.WaitGroup
	for i, s := range all {
		if s.shouldRun() {
			wg.Go(func() { known[i].tools, known[i].instructions = s.loadKnown() })
		}
	}
	wg.Wait()
	var entries []tool.Entry
	idle := map[*server]knownTools{}
	for i, s := range all {
		tools, instr := known[i].tools, known[i].instructions
		if len(tools) == 0 {
			continue
		}
		for _, t := range tools {
			info := t.Info()
			entries = append(entries, tool.Entry{Name: toolname.Qualified(s.name, info.Name), Info: info, Tool: t})
		}
		if s.lazy {
			idle[s] = knownTools{tools, instr}
		}
	}
	if len(idle) == 0 || !m.opts.Lazy(entries) {
		return nil
	}
	return idle
}

// knownTools are an idle server's known tools and instructions.
type knownTools struct {
	tools        []tool.Tool
	instructions string
}

// ready returns the server called name and its live connection, starting
// it first when it is idle and waiting while it starts.
func (m *Manager) ready(ctx context.Context, name string) (*server, *conn, error) {
	s, err := m.server(name)
	if err != nil {
		return nil, nil, err
	}
	if err := s.wake(ctx); err != nil {
		return nil, nil, err
	}
	c := s.current()
	if c == nil {
		return nil, nil, s.notConnectedError()
	}
	return s, c, nil
}

// Wake starts an idle server and waits until it is connected or has
// failed; for another server it waits while it is starting (see
// servers.Host).
func (m *Manager) Wake(ctx context.Context, name string) error {
	s, err := m.server(name)
	if err != nil {
		return err
	}
	return s.wake(ctx)
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}
