package safehttp

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// ForwardProxy is an HTTP forward proxy (absolute-form requests and CONNECT
// tunnels) that dials only what its Policy allows. A headless browser has
// its own network stack; started with --proxy-server pointing here (and
// without the implicit loopback bypass), every page load, subresource,
// redirect and WebSocket it makes is held to the same rules as Client.
//
// With Allow and Dial set and no Policy it is instead a proxy by host
// name (a sandboxed MCP server's, see internal/mcphost): Allow decides on
// the name the client asked for, and Dial reaches it.
type ForwardProxy struct {
	Policy  *Policy
	Options ClientOptions // MaxBodyBytes, UserAgent; Proxy must be empty
	// OnRefused, if set, is called for every request the policy refused.
	OnRefused func(target string, err error)
	// Allow, if set, is asked first about each request's host (a name or
	// an IP address, as the client wrote it, without the port); an error
	// refuses the request with 403 Forbidden and the error's text as the
	// body.
	Allow func(host string) error
	// Dial, if set, opens the connections upstream in place of Policy's
	// dialer; a nil Policy then checks no address.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	once   sync.Once
	rt     http.RoundTripper
	rtErr  error
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

func (fp *ForwardProxy) transport() (http.RoundTripper, error) {
	fp.once.Do(func() {
		if fp.Policy == nil {
			fp.rt = &http.Transport{
				DialContext:            fp.Dial,
				MaxIdleConns:           32,
				IdleConnTimeout:        90 * time.Second,
				TLSHandshakeTimeout:    15 * time.Second,
				ResponseHeaderTimeout:  5 * time.Minute,
				ExpectContinueTimeout:  time.Second,
				MaxResponseHeaderBytes: 1 << 20,
			}
			return
		}
		opts := fp.Options
		opts.Proxy = ""
		fp.rt, fp.rtErr = fp.Policy.Transport(opts)
	})
	return fp.rt, fp.rtErr
}

// dial opens a tunnel's upstream connection.
func (fp *ForwardProxy) dial(ctx context.Context, addr string) (net.Conn, error) {
	if fp.Dial != nil {
		return fp.Dial(ctx, "tcp", addr)
	}
	return fp.Policy.Dialer().DialContext(ctx, "tcp", addr)
}

// allow asks Allow about the host of target (host:port or a URL's host);
// a refusal is answered with 403.
func (fp *ForwardProxy) allow(w http.ResponseWriter, target, host string) bool {
	if fp.Allow == nil {
		return true
	}
	if err := fp.Allow(host); err != nil {
		fp.refused(target, err)
		http.Error(w, err.Error(), http.StatusForbidden)
		return false
	}
	return true
}

func (fp *ForwardProxy) refused(target string, err error) {
	if fp.OnRefused != nil {
		fp.OnRefused(target, err)
	}
}

// ServeHTTP implements http.Handler.
func (fp *ForwardProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		fp.tunnel(w, r)
		return
	}
	if r.URL.Host == "" || (r.URL.Scheme != "http" && r.URL.Scheme != "https") {
		http.Error(w, "otter's forward proxy takes absolute http(s) URLs only", http.StatusBadRequest)
		return
	}
	if !fp.allow(w, r.URL.String(), r.URL.Hostname()) {
		return
	}
	rt, err := fp.transport()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	resp, err := rt.RoundTrip(out)
	if err != nil {
		fp.fail(w, r.URL.String(), err)
		return
	}
	defer resp.Body.Close()
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body) // a cut body (size cap, peer gone) ends the response early
}

func (fp *ForwardProxy) fail(w http.ResponseWriter, target string, err error) {
	if errors.Is(err, ErrBlocked) || errors.Is(err, ErrInvalidURL) {
		fp.refused(target, err)
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	http.Error(w, err.Error(), http.StatusBadGateway)
}

// hopHeaders are connection-scoped and never forwarded.
var hopHeaders = []string{
	"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

func (fp *ForwardProxy) tunnel(w http.ResponseWriter, r *http.Request) {
	target := r.Host
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		http.Error(w, "CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	if !fp.allow(w, target, host) {
		return
	}
	addr, err := netip.ParseAddr(host)
	if err != nil && isLocalhostName(host) {
		addr, err = netip.MustParseAddr("127.0.0.1"), nil
	}
	if err == nil && fp.Policy != nil {
		if err := fp.Policy.CheckAddr(addr); err != nil {
			fp.fail(w, target, err)
			return
		}
	} else if err != nil && numericIPv4Form(host) {
		fp.fail(w, target, &URLError{URL: target, Reason: "non-standard IPv4 form"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	upstream, err := fp.dial(ctx, target)
	if err != nil {
		fp.fail(w, target, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "tunnelling not supported on this connection", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	if !fp.track(client, upstream) {
		client.Close()
		upstream.Close()
		return
	}
	defer fp.untrack(client, upstream)
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		if n := buf.Reader.Buffered(); n > 0 {
			pending, _ := buf.Reader.Peek(n)
			upstream.Write(pending)
		}
		io.Copy(upstream, client)
		done <- struct{}{}
	}()
	go func() {
		io.Copy(client, upstream)
		done <- struct{}{}
	}()
	<-done // either side finished: tear both down
}

func (fp *ForwardProxy) track(conns ...net.Conn) bool {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	if fp.closed {
		return false
	}
	if fp.conns == nil {
		fp.conns = make(map[net.Conn]struct{})
	}
	for _, c := range conns {
		fp.conns[c] = struct{}{}
	}
	return true
}

func (fp *ForwardProxy) untrack(conns ...net.Conn) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(fp.conns, c)
	}
}

// Close ends every open CONNECT tunnel (http.Server.Close does not reach
// hijacked connections), closes the idle connections of its forwarding
// and refuses new tunnels.
func (fp *ForwardProxy) Close() error {
	if rt, _ := fp.transport(); rt != nil {
		if ic, ok := rt.(interface{ CloseIdleConnections() }); ok {
			ic.CloseIdleConnections()
		}
	}
	fp.mu.Lock()
	defer fp.mu.Unlock()
	fp.closed = true
	for c := range fp.conns {
		c.Close()
	}
	fp.conns = nil
	return nil
}
