package mcphost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/sandbox"
	"github.com/otter-sh/otter/internal/servers"
)

// ErrSandboxRequired is wrapped by the error of a stdio server that was not
// started because it cannot be confined here and [sandbox] required is
// set.
var ErrSandboxRequired = errors.New("the sandbox is required but not available")

// sandboxFor decides how the stdio server s runs: confined by the returned
// policy, or unconfined (nil) with the reason in its status. With
// [sandbox] required and no sandbox on this system, it is an error.
func (s *server) sandboxFor(ctx context.Context) (*sandbox.Policy, *servers.SandboxStatus, error) {
	opts := s.m.opts.Sandbox
	if opts == nil || s.cfg.Transport != config.TransportStdio {
		return nil, nil, nil
	}
	sb := s.cfg.Sandbox
	if !sb.IsEnabled() {
		return nil, &servers.SandboxStatus{Off: "sandbox.enabled = false"}, nil
	}
	if err := sandbox.Available(); err != nil {
		if opts.Required {
			return nil, nil, fmt.Errorf("%w: %v", ErrSandboxRequired, err)
		}
		// Never silently: the log (stderr for headless commands) and the
		// server's status (/mcp, otter mcp list --json) say so.
		s.m.logger.Warn("MCP server runs without a sandbox", "server", s.name, "why", err.Error())
		return nil, &servers.SandboxStatus{Off: err.Error()}, nil
	}
	home, _ := os.UserHomeDir()
	project, _ := s.rootDirs()
	p := sandbox.Default(home, opts.Deny, project, s.cfg.Command)
	hosts := sb.NetworkHosts()
	if sb != nil {
		p.Read = append(p.Read, sb.Read...)
		p.Write = append(p.Write, sb.Write...)
		p.Network = sb.NetworkAllowed()
		// A path the user names to read is theirs to give, a secret
		// folder included: it leaves the deny list.
		p.Deny = without(p.Deny, sb.Read)
		p.Deny = without(p.Deny, sb.Write)
	}
	s.mu.Lock()
	s.refused = "" // a new start
	s.mu.Unlock()
	var weaker string
	if err := sandbox.SeparateRoot(&p); err != nil { // root's servers do not keep CAP_SYS_PTRACE over otter
		s.m.logger.Warn("MCP server runs as root beside otter", "server", s.name, "why", err.Error())
	}
	if !p.Network {
		// No network or a host list: a network namespace of its own where
		// the system makes one (sandbox/isolate_linux.go).
		canIsolate := s.m.canIsolate
		if canIsolate == nil {
			canIsolate = sandbox.CanIsolate
		}
		if err := canIsolate(opts.Launcher); err == nil {
			p.Isolated = true
		} else {
			weaker = err.Error()
			s.m.logger.Warn("MCP server's network is confined less", "server", s.name, "why", weaker)
		}
	}
	if len(hosts) > 0 {
		px := s.proxyFor(hosts)
		switch {
		case p.Isolated:
			p.ProxyPort = s.m.isolatedProxyPort
			if p.ProxyPort == 0 {
				p.ProxyPort = isolatedProxyPort
			}
		default:
			port, err := s.listenTCP(ctx, px)
			if err != nil {
				return nil, nil, err
			}
			p.ProxyPort = port
			if err := sandbox.NetworkByPort(); err != nil {
				weaker = err.Error() // the list is not enforced at all
				s.m.logger.Warn("MCP server's host list is not enforced", "server", s.name, "why", weaker)
			}
		}
	}
	return &p, &servers.SandboxStatus{On: true, Write: p.Write, Network: p.Network, Hosts: hosts, Weaker: weaker}, nil
}

// without is list without the entries of drop.
func without(list, drop []string) []string {
	out := list[:0:0]
	for _, l := range list {
		keep := true
		for _, d := range drop {
			if l == d {
				keep = false
			}
		}
		if keep {
			out = append(out, l)
		}
	}
	return out
}

// sandboxHint is what to say of a sandboxed server that failed after a
// refusal: the host its proxy refused, or the path its stderr names, with
// the line that would allow it.
func (s *server) sandboxHint(lines []string) string {
	s.mu.Lock()
	sb, refused := s.sandbox, s.refused
	s.mu.Unlock()
	if sb == nil || !sb.On {
		return ""
	}
	if refused != "" {
		// The proxy said no to a host in this start: that is the likelier
		// cause, and otter knows it without reading stderr.
		return refused
	}
	m := sandbox.RefusedPath(lines)
	if m == "" {
		return ""
	}
	where := ""
	if s.cfg.File != "" {
		where = fmt.Sprintf(" (%s:%d)", s.cfg.File, s.cfg.Line)
	}
	for _, d := range s.m.opts.Sandbox.Deny {
		if d != "" && (m == d || strings.HasPrefix(m, d+"/")) {
			return fmt.Sprintf("the sandbox keeps otter's own folder %s from servers", d)
		}
	}
	home, _ := os.UserHomeDir()
	if d := sandbox.SecretOf(home, m); d != "" {
		return fmt.Sprintf("the sandbox keeps %s from servers; if this server needs it, add sandbox = { read = [%q] } to its entry%s", m, d, where)
	}
	return fmt.Sprintf("the sandbox may have refused %s: a server writes only in the project, the temporary directory and its package runner's caches; to let it write there, add sandbox = { write = [%q] } to its entry%s", m, filepath.Dir(m), where)
}
