package mcphost

// Pinned tool definitions (internal/pins): each time a server's tools are
// handed to the tool set — on connecting, after list_changed, after an
// approval — they are compared with the server's pins, and a tool whose
// definition differs from its pin, or that has none, goes in marked held
// back (tool.Info.HeldBack): listed, never offered, refused when called.
// A server without pins yet gets its whole first listing pinned at once.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/pins"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

// pinState is what the server's last comparison with its pins held back.
type pinState struct {
	pinned    bool              // the server's tools are pinned
	held      map[string]string // tool name → tool.HeldBackChanged or HeldBackNew
	instrHeld bool              // its instructions differ from the pinned ones
}

// pinTool is t's definition as pins keeps it: what a model is shown.
func pinTool(t *mcpTool) pins.Tool {
	info := t.info
	p := pins.Tool{Name: info.Name, Title: info.Title, Description: info.Description,
		InputSchema: info.InputSchema, OutputSchema: info.OutputSchema}
	if info.Annotations != nil {
		if raw, err := json.Marshal(info.Annotations); err == nil {
			p.Annotations = raw
		}
	}
	return p
}

func pinTools(ts []*mcpTool) []pins.Tool {
	out := make([]pins.Tool, len(ts))
	for i, t := range ts {
		out[i] = pinTool(t)
	}
	return out
}

// toolsOf makes the server's tools tool.Tools, as pushTools offers them.
func (s *server) toolsOf(ts []*sdk.Tool) []*mcpTool {
	out := make([]*mcpTool, len(ts))
	for i, t := range ts {
		out[i] = newMCPTool(s, t)
	}
	return out
}

// comparePins compares the server's tools on c (filtered: those that pass
// allowed_tools and denied_tools) with its pins, pinning all of them first
// when it has none. A pins file that cannot be read or written is logged
// and holds nothing back.
func (s *server) comparePins(c *conn, all, filtered []*mcpTool) pinState {
	store := s.m.opts.Pins
	k, ok := store.Key(s.cfg)
	if !ok {
		return pinState{}
	}
	p, first, err := store.PinFirst(k, pinTools(all), c.instructions)
	if err != nil {
		s.m.logger.Warn("the MCP server's pinned tool definitions cannot be used; its tools are offered unchecked",
			"server", s.name, "err", err)
		return pinState{}
	}
	st := pinState{pinned: true}
	if first {
		s.m.logger.Info("pinned the MCP server's tool definitions", "server", s.name, "tools", len(p.Tools), "file", store.File(k))
		return st
	}
	for _, ch := range pins.Compare(p, pinTools(filtered), c.instructions) {
		switch ch.Kind {
		case pins.Instructions:
			st.instrHeld = true
		case pins.Added:
			st.held = mapSet(st.held, ch.Tool, tool.HeldBackNew)
		default:
			st.held = mapSet(st.held, ch.Tool, tool.HeldBackChanged)
		}
	}
	if len(st.held) > 0 || st.instrHeld {
		s.m.logger.Info("an MCP server's tools changed since they were pinned; the changes are held back until approved",
			"server", s.name, "tools", len(st.held), "instructions", st.instrHeld)
	}
	return st
}

func mapSet(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = make(map[string]string)
	}
	m[k] = v
	return m
}

// heldTools lists st's held-back tools by name, for Status.
func (st pinState) heldTools() []servers.HeldTool {
	out := make([]servers.HeldTool, 0, len(st.held))
	for name, why := range st.held {
		out = append(out, servers.HeldTool{Name: name, New: why == tool.HeldBackNew})
	}
	slices.SortFunc(out, func(a, b servers.HeldTool) int { return cmpString(a.Name, b.Name) })
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// heldTool is a server tool held back until the person approves it:
// calling it returns a *tool.HeldBackError, without a request to the
// server. (tool.Set refuses it before it gets here.)
type heldTool struct {
	info tool.Info
}

func (t *heldTool) Info() tool.Info { return t.info }

func (t *heldTool) Call(context.Context, json.RawMessage) (*tool.Result, error) {
	return nil, &tool.HeldBackError{Server: t.info.Server, Name: t.info.Name, Reason: t.info.HeldBack,
		Tool: fmt.Sprintf("the tool %s of MCP server %q", t.info.Name, t.info.Server)}
}

// notPinnedError says why a server's tools are not pinned.
func (s *server) notPinnedError() error {
	switch {
	case s.m.opts.Pins == nil:
		return fmt.Errorf("tool definitions are not pinned in this run")
	case s.cfg.PinTools != nil && !*s.cfg.PinTools:
		return fmt.Errorf("the tools of MCP server %q are not pinned: its entry in %s says pin_tools = false", s.name, s.cfg.File)
	}
	return fmt.Errorf("the tools of MCP server %q are not pinned: it is not defined in a config file", s.name)
}

// ToolChanges returns what the server's tools and instructions changed
// since they were pinned, as the server lists them now (see
// servers.Host).
func (m *Manager) ToolChanges(name string) ([]servers.ToolChange, error) {
	_, c, k, now, err := m.pinnedNow(name)
	if err != nil {
		return nil, err
	}
	p, err := m.opts.Pins.Load(k)
	if err != nil || p == nil {
		return nil, err
	}
	return pins.Compare(p, now, c.instructions), nil
}

// pinnedNow is the connected server name, its connection, its pins' key
// and its tools as it lists them now (allowed_tools and denied_tools
// applied), or why it has none.
func (m *Manager) pinnedNow(name string) (*server, *conn, pins.Key, []pins.Tool, error) {
	s, c, err := m.connected(name)
	if err != nil {
		return nil, nil, pins.Key{}, nil, err
	}
	k, ok := m.opts.Pins.Key(s.cfg)
	if !ok {
		return nil, nil, pins.Key{}, nil, s.notPinnedError()
	}
	return s, c, k, pinTools(s.toolsOf(s.filterTools(c.lists().tools))), nil
}

// ApproveTools takes the server's current definitions of the named tools
// (every held-back tool and the instructions when none is named) as their
// pins, and offers them at once (see servers.Host).
func (m *Manager) ApproveTools(ctx context.Context, name string, names []string) ([]servers.ToolChange, error) {
	s, c, k, now, err := m.pinnedNow(name)
	if err != nil {
		return nil, err
	}
	taken, err := m.opts.Pins.Approve(k, now, c.instructions, names)
	if err != nil {
		return nil, err
	}
	if len(taken) > 0 {
		s.pushTools(c)
		s.update(func() {})
	}
	return taken, nil
}
