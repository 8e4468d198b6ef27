package mcphost

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/otter-sh/otter/internal/safehttp"
	"github.com/otter-sh/otter/internal/sandbox"
)

// A stdio server whose sandbox lists the hosts it may reach (network =
// ["api.github.com", "*.example.org"]) reaches them through a proxy otter
// runs for it, in otter's process: HTTP CONNECT and plain HTTP forwarding,
// by host name, resolved and dialled here. The server is pointed at it by
// the proxy variables of its environment (proxyEnv).
//
// The server runs in a network namespace of its own (sandbox.Isolate),
// where nothing but loopback exists: the launcher listens on
// 127.0.0.1:isolatedProxyPort there and hands the listener to otter, and
// the proxy serves it (serveIsolated) — the server's one way out. Where
// the system makes no such namespace, the proxy listens on a port of
// otter's own 127.0.0.1 and the launcher lets the server connect to that
// port number only (sandbox.Policy's ProxyPort, with its caveat: on any
// address), and the server's status says its list is weaker.
//
// One proxy per server, so that each is held to its own list; made when
// the server first starts, kept across its restarts, closed when the
// server is shut down (Manager.Close, Reload, SetEnabled).

// isolatedProxyPort is the port of the proxy in a server's own network
// namespace: any would do (nothing else listens there); this is the one
// HTTP proxies customarily use, which reads as such in the server's
// HTTP_PROXY.
const isolatedProxyPort = 3128

// hostProxy is one server's filtering proxy.
type hostProxy struct {
	http *http.Server
	fp   *safehttp.ForwardProxy
	port int // of its listener on otter's 127.0.0.1, once listenTCP made it
}

// Timeouts of the proxy's own connections: a client that opens one and
// sends no request, a host that does not answer; and how long the proxy
// waits for the launcher to hand over the listener in the namespace.
const (
	proxyHeaderTimeout = 30 * time.Second
	proxyDialTimeout   = 30 * time.Second
	proxyHandOver      = time.Minute
)

// proxyFor returns the server's proxy for hosts, making it the first
// time. It listens nowhere yet: see serveIsolated and listenTCP.
func (s *server) proxyFor(hosts []string) *hostProxy {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proxy != nil {
		return s.proxy
	}
	dial := s.m.proxyDial
	if dial == nil {
		d := &net.Dialer{Timeout: proxyDialTimeout, KeepAlive: 30 * time.Second,
			Control: func(_, address string, _ syscall.RawConn) error { return s.checkProxyAddr(hosts, address) }}
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
	s.proxy = &hostProxy{
		fp: fp,
		http: &http.Server{
			Handler:           fp,
			ReadHeaderTimeout: proxyHeaderTimeout,
			ErrorLog:          slog.NewLogLogger(s.m.logger.Handler(), slog.LevelDebug),
		},
	}
	s.m.logger.Debug("MCP server's proxy made", "server", s.name, "hosts", hosts)
	return s.proxy
}

// listenTCP has the proxy listen on a port of otter's 127.0.0.1 (once),
// for a server that cannot have a namespace of its own, and returns it.
func (s *server) listenTCP(ctx context.Context, px *hostProxy) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if px.port != 0 {
		return px.port, nil
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("starting the proxy through which MCP server %q reaches the hosts of its list: %w", s.name, err)
	}
	px.port = ln.Addr().(*net.TCPAddr).Port
	go px.http.Serve(ln) // returns when closed
	s.m.logger.Debug("MCP server's proxy listens in otter's network namespace", "server", s.name, "port", px.port)
	return px.port, nil
}

// serveIsolated waits for the listener the launcher of the server's
// process opens in its namespace and serves it until the process exits
// (or the proxy is closed). If the launcher hands nothing over, it failed
// and said why on the server's stderr: the start fails with that.
func (s *server) serveIsolated(px *hostProxy, iso *sandbox.Isolation, exited <-chan struct{}) {
	ln, err := iso.Listener(proxyHandOver)
	iso.Close()
	if err != nil {
		s.m.logger.Warn("MCP server's proxy got no listener from the sandbox", "server", s.name, "err", err)
		return
	}
	go px.http.Serve(ln) // returns when ln or the proxy is closed
	<-exited
	ln.Close() // the last hold on the server's namespace
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

// checkProxyAddr is the proxy's check of the address a host of the list
// resolved to, as it connects (so a name that resolves again differently
// is checked again): an address of this machine (loopback, unspecified),
// a link-local one (169.254.0.0/16, where clouds serve their metadata and
// its credentials; fe80::/10) or a multicast one is reached only if the
// list names it as an IP address — else an allowed wildcard whose DNS the
// server's author controls would lead the proxy to otter's own machine.
// Private networks' addresses (10.0.0.0/8, fd00::/8, …) are reached by
// name: a list names intranet hosts so.
func (s *server) checkProxyAddr(hosts []string, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("otter's sandbox cannot check the address %q", address)
	}
	addr := ap.Addr().Unmap().WithZone("")
	switch {
	case addr.IsLoopback(), addr.IsUnspecified(), addr.IsLinkLocalUnicast(), addr.IsMulticast(),
		addr.IsLinkLocalMulticast(), addr.IsInterfaceLocalMulticast():
	default:
		return nil
	}
	for _, h := range hosts {
		if a, err := netip.ParseAddr(h); err == nil && a.Unmap().WithZone("") == addr {
			return nil
		}
	}
	where := ""
	if s.cfg.File != "" {
		where = fmt.Sprintf(" (%s:%d)", s.cfg.File, s.cfg.Line)
	}
	return blockedAddr(fmt.Sprintf("otter's sandbox refused a connection to %s, a %s address: MCP server %q reaches this machine or its local link only at an IP address its network list names%s: network = [%q]",
		addr, safehttp.Classify(addr), s.name, where, addr.String()))
}

// blockedAddr is the proxy's refusal of an address (checkProxyAddr); as
// safehttp.ErrBlocked, it is answered 403 with its text and counts as the
// sandbox's refusal (the server's hint).
type blockedAddr string

func (e blockedAddr) Error() string        { return string(e) }
func (e blockedAddr) Is(target error) bool { return target == safehttp.ErrBlocked }

// currentProxy is the server's proxy, nil if it has none.
func (s *server) currentProxy() *hostProxy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proxy
}
