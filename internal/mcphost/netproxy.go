package mcphost

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/otter-sh/otter/internal/safehttp"
	"github.com/otter-sh/otter/internal/sandbox"
)

// A stdio server whose sandbox lists the hosts it may reach (network =
// ["api.github.com", "*.example.org"]) reaches them through a proxy otter
// runs for it, in otter's process: HTTP CONNECT and plain HTTP forwarding,
// by host name, resolved and dialled here. The server is pointed at it by
// the proxy variables of its environment (proxyEnv), and the launcher lets
// it connect to the proxy's port and nowhere else (sandbox.Policy's
// ProxyPort, with its caveat: Landlock's rule is by port number). One
// proxy per server, so that each is held to its own list; started when the
// server first starts, kept across its restarts, closed when the server is
// shut down (Manager.Close, Reload, SetEnabled).

// hostProxy is one server's filtering proxy.
type hostProxy struct {
	port int
	http *http.Server
	fp   *safehttp.ForwardProxy
}

// Timeouts of the proxy's own connections: a client that opens one and
// sends no request, a host that does not answer.
const (
	proxyHeaderTimeout = 30 * time.Second
	proxyDialTimeout   = 30 * time.Second
)

// proxyFor returns the server's proxy for hosts, starting it the first
// time.
func (s *server) proxyFor(ctx context.Context, hosts []string) (*hostProxy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proxy != nil {
		return s.proxy, nil
	}
	dial := s.m.proxyDial
	if dial == nil {
		d := &net.Dialer{Timeout: proxyDialTimeout, KeepAlive: 30 * time.Second}
		dial = d.DialContext
	}
	fp := &safehttp.ForwardProxy{
		Allow: func(host string) error {
			if sandbox.AllowsHost(hosts, host) {
				return nil
			}
			return s.hostRefusal(host, hosts)
		},
		Dial: dial,
		OnRefused: func(target string, err error) {
			s.m.logger.Warn("the sandbox refused an MCP server's connection", "server", s.name, "to", target)
			s.mu.Lock()
			s.refused = err.Error()
			s.mu.Unlock()
		},
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the proxy through which MCP server %q reaches %s: %w", s.name, strings.Join(hosts, ", "), err)
	}
	px := &hostProxy{
		port: ln.Addr().(*net.TCPAddr).Port,
		fp:   fp,
		http: &http.Server{
			Handler:           fp,
			ReadHeaderTimeout: proxyHeaderTimeout,
			ErrorLog:          slog.NewLogLogger(s.m.logger.Handler(), slog.LevelDebug),
		},
	}
	go px.http.Serve(ln) // returns when closed
	s.m.logger.Debug("MCP server's proxy started", "server", s.name, "port", px.port, "hosts", hosts)
	s.proxy = px
	return px, nil
}

// closeProxy stops the server's proxy, its open tunnels with it.
func (s *server) closeProxy() {
	s.mu.Lock()
	px := s.proxy
	s.proxy = nil
	s.mu.Unlock()
	if px != nil {
		px.fp.Close()
		px.http.Close()
	}
}

// hostRefusal is what the proxy answers (403) for a host that is not on
// the server's list: which host, and the line that would allow it.
func (s *server) hostRefusal(host string, hosts []string) error {
	where := ""
	if s.cfg.File != "" {
		where = fmt.Sprintf(" (%s:%d)", s.cfg.File, s.cfg.Line)
	}
	quoted := make([]string, 0, len(hosts)+1)
	for _, h := range append(slices.Clip(hosts), host) {
		quoted = append(quoted, strconv.Quote(h))
	}
	return fmt.Errorf("otter's sandbox refused a connection to %s: MCP server %q may reach only %s. If it needs %s, add it to the network list of the server's sandbox table%s: network = [%s]",
		host, s.name, strings.Join(hosts, ", "), host, where, strings.Join(quoted, ", "))
}

// proxyEnv points a server's environment at its proxy on port: the proxy
// variables in both cases (programs read one or the other), none of
// otter's or the server's own proxy settings or exceptions left, and Node
// told to honour them (its fetch does not by default).
func proxyEnv(env []string, port int) []string {
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "NODE_USE_ENV_PROXY":
			return true
		}
		return false
	})
	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		out = append(out, name+"="+url, strings.ToLower(name)+"="+url)
	}
	return append(out, "NODE_USE_ENV_PROXY=1")
}
