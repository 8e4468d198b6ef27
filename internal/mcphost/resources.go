package mcphost

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/otter-sh/otter/internal/servers"
)

// ErrNoCompletions is wrapped by Complete's error for a server that does
// not offer completion/complete.
var ErrNoCompletions = errors.New("the server does not offer completions")

// fetchTemplates lists a connection's resource templates (all pages). A
// server may offer resources without templates: a failure is logged, not
// fatal.
func (s *server) fetchTemplates(ctx context.Context, c *conn) []*sdk.ResourceTemplate {
	ts, err := collect(c.cs.ResourceTemplates(ctx, nil))
	if err != nil {
		s.m.logger.Debug("listing an MCP server's resource templates failed", "server", s.name, "err", s.mask(err.Error()))
	}
	return ts
}

// ResourceTemplates returns the resource templates of every connected
// server, sorted by server and URI template.
func (m *Manager) ResourceTemplates() []servers.ResourceTemplate {
	var out []servers.ResourceTemplate
	for _, s := range m.list() {
		c := s.current()
		if c == nil {
			continue
		}
		for _, t := range c.lists().templates {
			out = append(out, servers.ResourceTemplate{Server: s.name, ResourceTemplate: t})
		}
	}
	slices.SortStableFunc(out, func(a, b servers.ResourceTemplate) int {
		return cmp.Or(cmp.Compare(a.Server, b.Server), cmp.Compare(a.URITemplate, b.URITemplate))
	})
	return out
}

// HasResources reports whether a connected server offers resources or
// resource templates.
func (m *Manager) HasResources() bool {
	for _, s := range m.list() {
		if c := s.current(); c != nil {
			if l := c.lists(); len(l.resources) > 0 || len(l.templates) > 0 {
				return true
			}
		}
	}
	return false
}

// Complete asks a server for completions of one argument (completion/
// complete): of prompt name's argument arg when ref is "ref/prompt", of a
// URI template's variable when ref is "ref/resource" (name is then the
// template). resolved holds the arguments already given. A server that does
// not offer completions gives an error wrapping ErrNoCompletions.
func (m *Manager) Complete(ctx context.Context, server, ref, name, arg, value string, resolved map[string]string) ([]string, error) {
	s, c, err := m.ready(ctx, server)
	if err != nil {
		return nil, err
	}
	if capabilities(c.cs).Completions == nil {
		return nil, fmt.Errorf("completing %s of MCP server %q: %w", arg, server, ErrNoCompletions)
	}
	r := &sdk.CompleteReference{Type: ref}
	switch ref {
	case "ref/prompt":
		r.Name = name
	case "ref/resource":
		r.URI = name
	default:
		return nil, fmt.Errorf("completion reference %q: want ref/prompt or ref/resource", ref)
	}
	params := &sdk.CompleteParams{Ref: r, Argument: sdk.CompleteParamsArgument{Name: arg, Value: value}}
	if len(resolved) > 0 {
		params.Context = &sdk.CompleteContext{Arguments: resolved}
	}
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout)
	defer cancel()
	res, err := c.cs.Complete(ctx, params)
	if err != nil {
		return nil, s.maskErr(fmt.Errorf("completing %s of %s on MCP server %q: %w", arg, name, server, err))
	}
	return res.Completion.Values, nil
}

// CanSubscribe reports whether a connected server supports
// resources/subscribe.
func (m *Manager) CanSubscribe(server string) bool {
	_, c, err := m.connected(server)
	if err != nil {
		return false
	}
	caps := capabilities(c.cs)
	return caps.Resources != nil && caps.Resources.Subscribe
}

// Subscribe asks a server to report changes of the resource uri; each
// arrives as a ResourceUpdated event. A server that does not support
// subscriptions gives an error.
func (m *Manager) Subscribe(ctx context.Context, server, uri string) error {
	s, c, err := m.ready(ctx, server)
	if err != nil {
		return err
	}
	if caps := capabilities(c.cs); caps.Resources == nil || !caps.Resources.Subscribe {
		return fmt.Errorf("MCP server %q does not support resource subscriptions", server)
	}
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout)
	defer cancel()
	if err := c.cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		return s.maskErr(fmt.Errorf("subscribing to %s on MCP server %q: %w", uri, server, err))
	}
	return nil
}

// Unsubscribe ends a subscription Subscribe started.
func (m *Manager) Unsubscribe(ctx context.Context, server, uri string) error {
	s, c, err := m.connected(server)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout)
	defer cancel()
	if err := c.cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri}); err != nil {
		return s.maskErr(fmt.Errorf("unsubscribing from %s on MCP server %q: %w", uri, server, err))
	}
	return nil
}
