package safehttp

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// DefaultMaxBodyBytes caps response bodies when ClientOptions.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 10 << 20

// DefaultMaxRedirects is the redirect limit when ClientOptions.MaxRedirects is 0.
const DefaultMaxRedirects = 10

// ClientOptions configure Policy.Client.
type ClientOptions struct {
	// MaxBodyBytes caps every response body; reading past it fails with a
	// *BodyTooLargeError. 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxRedirects limits redirects; 0 means DefaultMaxRedirects, negative
	// means redirects are not followed (the 3xx response is returned).
	MaxRedirects int
	// Proxy is an optional proxy URL (http, https, socks5 or socks5h). Its
	// own address is checked like any other; the target of each proxied
	// request is resolved here and checked too (a proxy could otherwise be
	// asked for a private address on its side). The proxy resolves the name
	// again, so a proxy shares one weakness with the regex it replaces: a
	// name that rebinds between the two lookups is not caught. Use proxies
	// you trust not to reach private networks.
	Proxy string
	// UserAgent is sent when a request sets none.
	UserAgent string
}

func (o ClientOptions) bodyLimit() int64 {
	if o.MaxBodyBytes <= 0 {
		return DefaultMaxBodyBytes
	}
	return o.MaxBodyBytes
}

// Client returns an *http.Client that honours the policy: URLs are checked
// by CheckURL on every request and redirect hop, every dialled address by
// CheckAddr, bodies are capped, and proxies come only from opts (never from
// the environment). Close its idle connections (CloseIdleConnections) when
// you are done with a client made for a one-off proxy.
func (p *Policy) Client(opts ClientOptions) (*http.Client, error) {
	rt, err := p.Transport(opts)
	if err != nil {
		return nil, err
	}
	maxRedirects := opts.MaxRedirects
	if maxRedirects == 0 {
		maxRedirects = DefaultMaxRedirects
	}
	return &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if maxRedirects < 0 {
				return http.ErrUseLastResponse
			}
			if len(via) >= maxRedirects {
				return fmt.Errorf("%w: stopped after %d (last from %s)", ErrTooManyRedirects, maxRedirects, via[len(via)-1].URL.Redacted())
			}
			_, err := ParseURL(req.URL.String())
			return err
		},
	}, nil
}

// Transport returns the policy-checking http.RoundTripper that Client uses;
// it does not follow redirects.
func (p *Policy) Transport(opts ClientOptions) (http.RoundTripper, error) {
	base := &http.Transport{
		DialContext:            p.Dialer().DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           32,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    15 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
	t := &transport{policy: p, base: base, limit: opts.bodyLimit(), userAgent: opts.UserAgent}
	if opts.Proxy != "" {
		u, err := p.CheckProxyURL(opts.Proxy)
		if err != nil {
			return nil, err
		}
		base.Proxy = http.ProxyURL(u)
		t.proxied = true
	}
	return t, nil
}

// CheckProxyURL parses and checks a proxy URL: http, https, socks5 or
// socks5h, a host and port, and, if the host is an IP literal, an address
// the policy allows (a name is checked when it is dialled).
func (p *Policy) CheckProxyURL(raw string) (*url.URL, error) {
	bad := func(reason string) (*url.URL, error) {
		return nil, &URLError{URL: RedactURL(raw), Reason: "proxy " + reason}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad(err.Error())
	}
	switch u.Scheme {
	case "http", "https", "socks5", "socks5h":
	default:
		return bad(fmt.Sprintf("scheme %q is not supported; use http, https, socks5 or socks5h", u.Scheme))
	}
	host := u.Hostname()
	if host == "" {
		return bad("has no host")
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if err := p.CheckAddr(addr); err != nil {
			var be *BlockedError
			if errors.As(err, &be) {
				be.Host, be.Proxy = host, true
			}
			return nil, err
		}
	} else if numericIPv4Form(host) {
		return bad("host is an IPv4 address in a non-standard form; write it in dotted decimal")
	}
	return u, nil
}

// RedactURL returns raw with its userinfo masked, for messages: a password
// becomes "****" (http://user:****@host), and so does a user name given
// alone (http://****@host), which for proxies and APIs is usually a token.
// Anything that does not parse as a URL with userinfo is returned as it is.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "****")
	} else {
		u.User = url.User("****")
	}
	// String escapes '*' in userinfo; keep the mask readable.
	return strings.ReplaceAll(u.String(), "%2A%2A%2A%2A", "****")
}

type transport struct {
	policy    *Policy
	base      *http.Transport
	limit     int64
	userAgent string
	proxied   bool
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, err := t.policy.CheckURL(req.URL.String()); err != nil {
		closeBody(req)
		return nil, err
	}
	if t.proxied {
		if err := t.checkResolved(req); err != nil {
			closeBody(req)
			return nil, err
		}
	}
	if t.userAgent != "" && req.Header.Get("User-Agent") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("User-Agent", t.userAgent)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.limit {
		resp.Body.Close()
		return nil, &BodyTooLargeError{Limit: t.limit}
	}
	resp.Body = &cappedBody{rc: resp.Body, n: t.limit, limit: t.limit}
	return resp, nil
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// underlying transport.
func (t *transport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// checkResolved resolves a proxied request's host here and checks every
// address, since the proxy, not our dialer, connects to it.
func (t *transport) checkResolved(req *http.Request) error {
	host := req.URL.Hostname()
	if _, err := netip.ParseAddr(host); err == nil {
		return nil // literal: CheckURL has checked it
	}
	addrs, err := net.DefaultResolver.LookupNetIP(req.Context(), "ip", host)
	if err != nil {
		return fmt.Errorf("safehttp: resolving %s before sending it through the proxy: %w", host, err)
	}
	for _, a := range addrs {
		if err := t.policy.CheckAddr(a); err != nil {
			var be *BlockedError
			if errors.As(err, &be) {
				be.Host = host
			}
			return err
		}
	}
	return nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// cappedBody fails with a *BodyTooLargeError once more than limit bytes
// would be read.
type cappedBody struct {
	rc    io.ReadCloser
	n     int64 // bytes left before the limit
	limit int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.n <= 0 {
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, &BodyTooLargeError{Limit: b.limit}
		}
		return 0, err
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.rc.Read(p)
	b.n -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
