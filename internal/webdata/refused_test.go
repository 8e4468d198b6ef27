package webdata

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/config"
)

// TestRefusedURLs checks that URLs naming the machine itself or its
// private networks, in every spelling, are refused by every network tool
// before anything is fetched: a server listening at the address must see
// no connection at all.
func TestRefusedURLs(t *testing.T) {
	srv4, conns4 := countingServer(t, "127.0.0.1:0")
	port := srv4.Listener.Addr().(*net.TCPAddr).Port
	var conns6 func() int64
	if srv6, n := countingServerIfIPv6(t, fmt.Sprintf("[::1]:%d", port)); srv6 {
		conns6 = func() int64 { return n() }
	}

	// No exceptions at all: nothing private may be reached.
	ts := newTools(t, config.Tools{RateLimits: loopbackOnly().RateLimits})
	p := fmt.Sprint(port)
	cases := []struct {
		name, url string
		code      string
	}{
		{"plain loopback", "http://127.0.0.1:" + p + "/", CodeForbidden},
		{"decimal", "http://2130706433:" + p + "/", CodeInvalidParams},
		{"hex", "http://0x7f000001:" + p + "/", CodeInvalidParams},
		{"octal", "http://0177.0.0.1:" + p + "/", CodeInvalidParams},
		{"short", "http://127.1:" + p + "/", CodeInvalidParams},
		{"mixed short hex", "http://0x7f.1:" + p + "/", CodeInvalidParams},
		{"localhost", "http://localhost:" + p + "/", CodeForbidden},
		{"localhost with dot", "http://localhost.:" + p + "/", CodeForbidden},
		{"name under localhost", "http://api.localhost:" + p + "/", CodeForbidden},
		{"IPv6 loopback", "http://[::1]:" + p + "/", CodeForbidden},
		{"IPv4-mapped IPv6", "http://[::ffff:127.0.0.1]:" + p + "/", CodeForbidden},
		{"IPv4-mapped IPv6, hex", "http://[::ffff:7f00:1]:" + p + "/", CodeForbidden},
		{"unspecified", "http://0.0.0.0:" + p + "/", CodeForbidden},
		{"cloud metadata", "http://169.254.169.254/latest/meta-data/", CodeForbidden},
		{"metadata, NAT64", "http://[64:ff9b::a9fe:a9fe]/", CodeForbidden},
		{"loopback, 6to4", "http://[2002:7f00:1::]:" + p + "/", CodeForbidden},
		{"metadata, 6to4", "http://[2002:a9fe:a9fe::1]/", CodeForbidden},
		{"loopback, Teredo", "http://[2001::80ff:fffe]:" + p + "/", CodeForbidden},
		{"loopback, IPv4-translated", "http://[::ffff:0:7f00:1]:" + p + "/", CodeForbidden},
		{"metadata, IPv4-translated", "http://[::ffff:0:a9fe:a9fe]/", CodeForbidden},
		{"private 10/8", "http://10.0.0.1/", CodeForbidden},
		{"private 192.168", "http://192.168.1.1/", CodeForbidden},
		{"CGNAT", "http://100.64.0.1/", CodeForbidden},
		{"userinfo trick", "http://example.com@127.0.0.1:" + p + "/", CodeInvalidParams},
		{"file", "file:///etc/passwd", CodeInvalidParams},
		{"gopher", "gopher://127.0.0.1:" + p + "/_GET%20/", CodeInvalidParams},
		{"no scheme", "127.0.0.1:" + p, CodeInvalidParams},
	}
	for _, tc := range cases {
		for _, name := range []string{NameScrapePage, NameScrapeAPI, NameAnalyzeSite} {
			res, env := ts.call(t, context.Background(), name, map[string]any{"url": tc.url})
			if !res.IsError || len(env.Errors) != 1 || env.Errors[0].Code != tc.code {
				t.Errorf("%s %s (%s): errors %+v, want %s", name, tc.name, tc.url, env.Errors, tc.code)
				continue
			}
			e := env.Errors[0]
			if tc.code == CodeForbidden && (!strings.Contains(e.Message, "allow_private_networks") || e.Details["reason"] != ReasonBlockedAddress) {
				t.Errorf("%s %s: %+v does not say how to allow the address, or lacks reason %s", name, tc.name, e, ReasonBlockedAddress)
			}
			if tc.code == CodeInvalidParams && e.Details["reason"] != ReasonInvalidURL {
				t.Errorf("%s %s: details %v, want reason %s", name, tc.name, e.Details, ReasonInvalidURL)
			}
		}
	}
	if n := conns4.Load(); n != 0 {
		t.Errorf("the server on 127.0.0.1 accepted %d connections, want 0", n)
	}
	if conns6 != nil && conns6() != 0 {
		t.Errorf("the server on [::1] accepted %d connections, want 0", conns6())
	}
}

// countingServerIfIPv6 starts a counting server on addr if IPv6 loopback is
// available.
func countingServerIfIPv6(t *testing.T, addr string) (bool, func() int64) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Logf("no IPv6 loopback (%v): [::1] is checked without a listener", err)
		return false, nil
	}
	ln.Close()
	_, n := countingServer(t, addr)
	return true, n.Load
}

// TestRedirectIntoPrivateNetwork allows only the test site's exact address
// and checks that a redirect from it to another loopback address is refused
// without connecting there.
func TestRedirectIntoPrivateNetwork(t *testing.T) {
	private, privConns := countingServer(t, "127.0.0.2:0")
	targets := map[string]string{"/to-127.0.0.2": private.URL + "/"}
	ln6, err := net.Listen("tcp", "[::1]:0")
	var v6Conns func() int64
	if err == nil {
		ln6.Close()
		srv6, n6 := countingServer(t, "[::1]:0")
		targets["/to-ipv6-loopback"] = srv6.URL + "/"
		v6Conns = n6.Load
	}
	routes := map[string]http.HandlerFunc{
		"/to-file": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		},
	}
	for path, target := range targets {
		routes[path] = func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, target, http.StatusFound) }
	}
	s := newSite(t, routes)
	ts := newTools(t, loopbackOnly()) // 127.0.0.1/32 only
	paths := []string{"/to-127.0.0.2", "/to-file"}
	if v6Conns != nil {
		paths = append(paths, "/to-ipv6-loopback")
	}
	for _, path := range paths {
		for _, name := range []string{NameScrapePage, NameScrapeAPI} {
			res, env := ts.call(t, context.Background(), name, map[string]any{"url": s.URL + path})
			if !res.IsError || !(env.hasCode(CodeForbidden) || path == "/to-file" && env.hasCode(CodeInvalidParams)) {
				t.Errorf("%s %s: %+v, want a refusal", name, path, env.Errors)
			}
			if s.count(path) == 0 {
				t.Errorf("%s %s: the allowed first hop was not fetched", name, path)
			}
		}
	}
	if n := privConns.Load(); n != 0 {
		t.Errorf("127.0.0.2 accepted %d connections, want 0", n)
	}
	if v6Conns != nil && v6Conns() != 0 {
		t.Errorf("[::1] accepted %d connections, want 0", v6Conns())
	}
}
