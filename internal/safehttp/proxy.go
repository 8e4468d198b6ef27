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
type ForwardProxy struct {
	Policy  *Policy
	Options ClientOptions // MaxBodyBytes, UserAgent; Proxy must be empty
	// OnRefused, if set, is called for every request the policy refused.
	OnRefused func(target string, err error)

	once   sync.Once
	rt     http.RoundTripper
	rtErr  error
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

func (fp *ForwardProxy) transport() (http.RoundTripper, error) {
	fp.once.Do(func() {
		opts := fp.Options
		opts.Proxy = ""
		fp.rt, fp.rtErr = fp.Policy.Transport(opts)
	})
	return fp.rt, fp.rtErr
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
	addr, err := netip.ParseAddr(host)
	if err != nil && isLocalhostName(host) {
		addr, err = netip.MustParseAddr("127.0.0.1"), nil
	}
	if err == nil {
		if err := fp.Policy.CheckAddr(addr); err != nil {
			fp.fail(w, target, err)
			return
		}
	} else if numericIPv4Form(host) {
		fp.fail(w, target, &URLError{URL: target, Reason: "non-standard IPv4 form"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	upstream, err := fp.Policy.Dialer().DialContext(ctx, "tcp", target)
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
// hijacked connections) and refuses new ones.
func (fp *ForwardProxy) Close() error {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	fp.closed = true
	for c := range fp.conns {
		c.Close()
	}
	fp.conns = nil
	return nil
}
