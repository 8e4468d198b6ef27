package safehttp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		blocked bool
	}{
		{"127.0.0.1", true},
		{"127.255.255.254", true},
		{"10.1.2.3", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"172.32.0.1", false},
		{"192.168.1.1", true},
		{"169.254.169.254", true},
		{"100.64.0.1", true},
		{"100.128.0.1", false},
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"224.0.0.1", true},
		{"255.255.255.255", true},
		{"::", true},
		{"::1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.0.0.1", true},
		{"::127.0.0.1", true},
		{"fe80::1", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"ff02::1", true},
		{"64:ff9b::a9fe:a9fe", true},
		// IPv6 forms that embed an IPv4 address, dialled by a relay or
		// translator: refused whole, whatever they embed.
		{"2002:7f00:1::", true},         // 6to4 of 127.0.0.1
		{"2002:808:808::1", true},       // 6to4 of 8.8.8.8
		{"2001:0:4136:e378::1", true},   // Teredo
		{"2001::80ff:fffe", true},       // Teredo, client 127.0.0.1 (inverted)
		{"::ffff:0:7f00:1", true},       // IPv4-translated 127.0.0.1 (RFC 2765)
		{"::ffff:0:a9fe:a9fe", true},    // IPv4-translated 169.254.169.254
		{"2001:4860:4860::8888", false}, // an ordinary 2001: address outside Teredo's /32
		{"2003:de:2016::1", false},      // just past 6to4
		{"8.8.8.8", false},
		{"93.184.216.34", false},
		{"2606:4700::6810:85e5", false},
		{"::ffff:8.8.8.8", false},
	} {
		got := Classify(netip.MustParseAddr(tc.addr))
		if (got != "") != tc.blocked {
			t.Errorf("Classify(%s) = %q, want blocked=%v", tc.addr, got, tc.blocked)
		}
	}
}

func TestPolicyExceptions(t *testing.T) {
	p, err := NewPolicy([]string{"127.0.0.1/32", "10.0.0.0/8", "::ffff:192.168.5.0/120", "fd00::1"})
	if err != nil {
		t.Fatal(err)
	}
	for addr, allowed := range map[string]bool{
		"127.0.0.1":          true,
		"::ffff:127.0.0.1":   true,
		"127.0.0.2":          false,
		"::1":                false,
		"10.200.0.1":         true,
		"192.168.5.9":        true,
		"192.168.6.1":        false,
		"fd00::1":            true,
		"fd00::2":            false,
		"169.254.169.254":    false,
		"8.8.8.8":            true,
		"::ffff:169.254.0.1": false,
		"2002:c0a8:501::1":   false,
		"2001::1":            false,
		"::ffff:0:a00:1":     false,
	} {
		err := p.CheckAddr(netip.MustParseAddr(addr))
		if (err == nil) != allowed {
			t.Errorf("CheckAddr(%s) = %v, want allowed=%v", addr, err, allowed)
		}
		if err != nil && !errors.Is(err, ErrBlocked) {
			t.Errorf("CheckAddr(%s) error %v does not match ErrBlocked", addr, err)
		}
	}
	// allow_private_networks can still let the embedded forms through.
	p6, err := NewPolicy([]string{"2002::/16", "2001::/32", "::ffff:0:0:0/96"})
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"2002:7f00:1::", "2001::80ff:fffe", "::ffff:0:7f00:1"} {
		if err := p6.CheckAddr(netip.MustParseAddr(addr)); err != nil {
			t.Errorf("CheckAddr(%s) with its range allowed = %v", addr, err)
		}
	}
	if _, err := NewPolicy([]string{"not-a-cidr"}); err == nil || !strings.Contains(err.Error(), "allow_private_networks") {
		t.Errorf("NewPolicy(bad) = %v, want an error naming the setting", err)
	}
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		raw, wantIn string // wantIn: "" means accepted
	}{
		{"https://example.com/a?b=c", ""},
		{"http://93.184.216.34:8080/", ""},
		{"http://[2606:4700::1]/", ""},
		{"file:///etc/passwd", `scheme "file"`},
		{"gopher://example.com:70/", `scheme "gopher"`},
		{"ftp://example.com/", `scheme "ftp"`},
		{"javascript:alert(1)", `scheme "javascript"`},
		{"example.com/path", "no scheme"},
		{"http://user:pw@example.com/", "user:password@"},
		{"http://example.com@127.0.0.1/", "user:password@"},
		{"http://2130706433/", "means 127.0.0.1"},
		{"http://0x7f000001/", "means 127.0.0.1"},
		{"http://0177.0.0.1/", "means 127.0.0.1"},
		{"http://127.1/", "means 127.0.0.1"},
		{"http://0x7f.0.0.1/", "means 127.0.0.1"},
		{"http://017700000001/", "means 127.0.0.1"},
		{"http://foo.0x10/", "non-standard form"},
		{"http://ex\\ample.com/", "backslash"},
		{"http:///path", "no host"},
	} {
		_, err := ParseURL(tc.raw)
		switch {
		case tc.wantIn == "" && err != nil:
			t.Errorf("ParseURL(%q) = %v, want accepted", tc.raw, err)
		case tc.wantIn != "" && err == nil:
			t.Errorf("ParseURL(%q) accepted, want refusal mentioning %q", tc.raw, tc.wantIn)
		case tc.wantIn != "" && (!strings.Contains(err.Error(), tc.wantIn) || !errors.Is(err, ErrInvalidURL)):
			t.Errorf("ParseURL(%q) = %v, want ErrInvalidURL mentioning %q", tc.raw, err, tc.wantIn)
		}
	}
}

// countingServer is an HTTP server whose listener counts accepted
// connections: a refused URL must not even connect.
type countingServer struct {
	*httptest.Server
	conns atomic.Int64
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func newCountingServer(t *testing.T, addr string, h http.Handler) *countingServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	cs := &countingServer{}
	cs.Server = httptest.NewUnstartedServer(h)
	cs.Listener.Close()
	cs.Listener = countingListener{ln, &cs.conns}
	cs.Start()
	t.Cleanup(cs.Close)
	return cs
}

func okHandler(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
}

func get(ctx context.Context, c *http.Client, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestClientRefusesPrivateAddressesWithoutConnecting(t *testing.T) {
	srv := newCountingServer(t, "127.0.0.1:0", okHandler("secret"))
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	p, _ := NewPolicy(nil)
	c, err := p.Client(ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, host := range []string{"127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "2130706433", "127.1"} {
		u := fmt.Sprintf("http://%s:%d/", host, port)
		body, err := get(ctx, c, u)
		if err == nil {
			t.Errorf("GET %s = %q, want refusal", u, body)
			continue
		}
		if !errors.Is(err, ErrBlocked) && !errors.Is(err, ErrInvalidURL) {
			t.Errorf("GET %s: %v, want ErrBlocked or ErrInvalidURL", u, err)
		}
	}
	if n := srv.conns.Load(); n != 0 {
		t.Errorf("the private server accepted %d connections, want 0", n)
	}
}

func TestClientChecksEveryRedirectHop(t *testing.T) {
	private := newCountingServer(t, "127.0.0.2:0", okHandler("secret"))
	var hops atomic.Int64
	public := newCountingServer(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hops.Add(1)
		switch r.URL.Path {
		case "/to-private":
			http.Redirect(w, r, private.URL+"/", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			io.WriteString(w, "public")
		}
	}))
	p, _ := NewPolicy([]string{"127.0.0.1/32"})
	c, _ := p.Client(ClientOptions{MaxRedirects: 3})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	if body, err := get(ctx, c, public.URL+"/"); err != nil || body != "public" {
		t.Fatalf("GET allowed host = %q, %v", body, err)
	}
	if _, err := get(ctx, c, public.URL+"/to-private"); !errors.Is(err, ErrBlocked) {
		t.Errorf("redirect to 127.0.0.2: %v, want ErrBlocked", err)
	}
	if _, err := get(ctx, c, public.URL+"/to-file"); !errors.Is(err, ErrInvalidURL) {
		t.Errorf("redirect to file: %v, want ErrInvalidURL", err)
	}
	hops.Store(0)
	if _, err := get(ctx, c, public.URL+"/loop"); !errors.Is(err, ErrTooManyRedirects) {
		t.Errorf("redirect loop: %v, want ErrTooManyRedirects", err)
	}
	if n := hops.Load(); n != 3 {
		t.Errorf("redirect loop made %d requests, want 3 (MaxRedirects)", n)
	}
	if n := private.conns.Load(); n != 0 {
		t.Errorf("the private server accepted %d connections, want 0", n)
	}
}

func TestBodyCap(t *testing.T) {
	big := strings.Repeat("x", 5000)
	srv := newCountingServer(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chunked" {
			w.(http.Flusher).Flush() // no Content-Length
		}
		io.WriteString(w, big)
	}))
	p, _ := NewPolicy([]string{"127.0.0.1/32"})
	c, _ := p.Client(ClientOptions{MaxBodyBytes: 1000})
	ctx := context.Background()
	for _, path := range []string{"/", "/chunked"} {
		_, err := get(ctx, c, srv.URL+path)
		var tl *BodyTooLargeError
		if !errors.As(err, &tl) || tl.Limit != 1000 {
			t.Errorf("GET %s: %v, want BodyTooLargeError{1000}", path, err)
		}
	}
	c2, _ := p.Client(ClientOptions{MaxBodyBytes: 5000})
	if body, err := get(ctx, c2, srv.URL+"/chunked"); err != nil || len(body) != 5000 {
		t.Errorf("body of exactly the limit: len %d, %v", len(body), err)
	}
}

func TestUserProxyIsChecked(t *testing.T) {
	var viaProxy atomic.Int64
	proxy := newCountingServer(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		viaProxy.Add(1)
		io.WriteString(w, "proxied "+r.URL.String())
	}))
	site := newCountingServer(t, "127.0.0.1:0", okHandler("direct"))

	strict, _ := NewPolicy(nil)
	if _, err := strict.Client(ClientOptions{Proxy: proxy.URL}); !errors.Is(err, ErrBlocked) {
		t.Errorf("proxy on loopback with no exception: %v, want ErrBlocked", err)
	}
	if _, err := strict.Client(ClientOptions{Proxy: "ftp://proxy.example:21"}); !errors.Is(err, ErrInvalidURL) {
		t.Errorf("ftp proxy: %v, want ErrInvalidURL", err)
	}
	// A proxy given by name is checked when dialled.
	port := proxy.Listener.Addr().(*net.TCPAddr).Port
	c, err := strict.Client(ClientOptions{Proxy: fmt.Sprintf("http://localhost:%d", port)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := get(context.Background(), c, "http://93.184.216.34/"); !errors.Is(err, ErrBlocked) {
		t.Errorf("proxy named localhost: %v, want ErrBlocked", err)
	}
	if n := proxy.conns.Load(); n != 0 {
		t.Errorf("the refused proxy accepted %d connections", n)
	}

	allowed, _ := NewPolicy([]string{"127.0.0.1/32"})
	c, err = allowed.Client(ClientOptions{Proxy: proxy.URL})
	if err != nil {
		t.Fatal(err)
	}
	body, err := get(context.Background(), c, site.URL+"/page")
	if err != nil || !strings.HasPrefix(body, "proxied "+site.URL) {
		t.Errorf("GET through allowed proxy = %q, %v", body, err)
	}
	// The proxy must not be asked for a private target either.
	if _, err := get(context.Background(), c, "http://127.0.0.2:9/"); !errors.Is(err, ErrBlocked) {
		t.Errorf("private target through proxy: %v, want ErrBlocked", err)
	}
	if n := viaProxy.Load(); n != 1 {
		t.Errorf("proxy saw %d requests, want 1", n)
	}
}

func TestForwardProxy(t *testing.T) {
	private := newCountingServer(t, "127.0.0.2:0", okHandler("secret"))
	site := newCountingServer(t, "127.0.0.1:0", okHandler("hello"))
	tlsSite := httptest.NewTLSServer(okHandler("hello tls"))
	defer tlsSite.Close()

	p, _ := NewPolicy([]string{"127.0.0.1/32"})
	var mu sync.Mutex
	var refused []string
	fp := &ForwardProxy{Policy: p, OnRefused: func(target string, err error) {
		mu.Lock()
		defer mu.Unlock()
		refused = append(refused, target)
	}}
	c := throughProxy(t, fp, &tls.Config{RootCAs: tlsSite.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs})
	ctx := context.Background()
	if body, err := get(ctx, c, site.URL+"/"); err != nil || body != "hello" {
		t.Errorf("plain request via forward proxy = %q, %v", body, err)
	}
	if body, err := get(ctx, c, tlsSite.URL+"/"); err != nil || body != "hello tls" {
		t.Errorf("CONNECT via forward proxy = %q, %v", body, err)
	}
	req, _ := http.NewRequest(http.MethodGet, private.URL+"/", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("private target via forward proxy: status %d, want 403", resp.StatusCode)
	}
	privTLS := "https://" + private.Listener.Addr().String() + "/"
	if _, err := get(ctx, c, privTLS); err == nil {
		t.Errorf("CONNECT to private target succeeded")
	}
	if n := private.conns.Load(); n != 0 {
		t.Errorf("private server accepted %d connections via the forward proxy", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(refused) != 2 {
		t.Errorf("OnRefused saw %v, want the two private targets", refused)
	}
}

// The refusal tells the user what to write, and where.
func TestBlockedErrorSaysHowToAllow(t *testing.T) {
	strict, _ := NewPolicy(nil)
	_, err := strict.CheckURL("http://127.0.0.1:8080/")
	msg := fmt.Sprint(err)
	for _, want := range []string{
		"refused to connect to 127.0.0.1: loopback address.",
		`allow_private_networks = ["127.0.0.1/32"]`,
		"[tools]",
		"~/.config/otter/config.toml",
		"$XDG_CONFIG_HOME/otter/config.toml",
		"untrusted project",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q lacks %q", msg, want)
		}
	}
	_, err = strict.CheckURL("http://[fd00::1]/")
	if msg := fmt.Sprint(err); !strings.Contains(msg, `allow_private_networks = ["fd00::1/128"]`) {
		t.Errorf("IPv6 refusal %q should suggest the /128", msg)
	}
	// A proxy's address is named once, as the proxy's.
	_, err = strict.CheckProxyURL("http://u:PROXYPW@10.9.9.9:3128")
	msg = fmt.Sprint(err)
	if !strings.Contains(msg, "refused to connect to proxy 10.9.9.9: private") || strings.Contains(msg, "(10.9.9.9)") || strings.Contains(msg, "PROXYPW") {
		t.Errorf("proxy refusal = %q, want the proxy named once and no password", msg)
	}
	// A proxy URL refused for its syntax hides its password and lone user name.
	for raw, hidden := range map[string]string{"ftp://u:PW2SECRET@proxy.example:21": "PW2SECRET", "ftp://TOKEN77@proxy.example:21": "TOKEN77"} {
		if _, err := strict.CheckProxyURL(raw); err == nil || strings.Contains(err.Error(), hidden) || !strings.Contains(err.Error(), "****@proxy.example") {
			t.Errorf("CheckProxyURL(%s) = %v, want the userinfo masked", raw, err)
		}
	}
}

// A proxy by host name (Allow and Dial, no Policy) lets through the names
// Allow accepts, plain and tunnelled, to wherever Dial takes them — a
// loopback test server here, which Policy would refuse — and refuses the
// others with 403 and Allow's words, connecting to nothing.
func TestForwardProxyByHostName(t *testing.T) {
	site := newCountingServer(t, "127.0.0.1:0", okHandler("hello"))
	tlsSite := httptest.NewTLSServer(okHandler("hello tls"))
	defer tlsSite.Close()
	var dialled atomic.Int64
	fp := &ForwardProxy{
		Allow: func(host string) error {
			if host != "allowed.test" {
				return fmt.Errorf("refused %s", host)
			}
			return nil
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dialled.Add(1)
			to := site.Listener.Addr().String()
			if strings.HasSuffix(addr, ":443") {
				to = tlsSite.Listener.Addr().String()
			}
			var d net.Dialer
			return d.DialContext(ctx, network, to)
		},
	}
	c := throughProxy(t, fp, &tls.Config{InsecureSkipVerify: true})
	ctx := context.Background()
	if body, err := get(ctx, c, "http://allowed.test/"); err != nil || body != "hello" {
		t.Errorf("plain request for an allowed name = %q, %v", body, err)
	}
	if body, err := get(ctx, c, "https://allowed.test/"); err != nil || body != "hello tls" {
		t.Errorf("CONNECT to an allowed name = %q, %v", body, err)
	}
	before := dialled.Load()
	if body, _ := get(ctx, c, "http://other.test/"); body != "refused other.test\n" {
		t.Errorf("plain request for another name: body %q, want Allow's refusal", body)
	}
	if _, err := get(ctx, c, "https://other.test/"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("CONNECT to another name: %v, want 403 Forbidden", err)
	}
	if n := dialled.Load() - before; n != 0 {
		t.Errorf("the refused requests dialled %d times", n)
	}
}

// throughProxy serves fp for the test's length and returns a client that
// goes through it, trusting what tc trusts.
func throughProxy(t *testing.T, fp *ForwardProxy, tc *tls.Config) *http.Client {
	t.Helper()
	proxySrv := httptest.NewServer(fp)
	t.Cleanup(proxySrv.Close)
	t.Cleanup(func() { fp.Close() })
	pu, _ := url.Parse(proxySrv.URL)
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: tc}}
	t.Cleanup(c.CloseIdleConnections)
	return c
}
