package mcphost

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/sandbox"
	"github.com/otter-sh/otter/internal/servers"

	"github.com/otter-sh/otter/internal/testpeer"
)

// netProbeInput names what the probe server's tool tries: two URLs to
// fetch the way programs do (the proxy variables of its environment), a
// TCP listener to connect to directly and a UDP listener to send a
// datagram to.
type netProbeInput struct {
	Allowed    string `json:"allowed"`     // http://allowed.test/…, through the proxy's forwarding
	AllowedTLS string `json:"allowed_tls"` // https://allowed.test/…, through a CONNECT tunnel
	Other      string `json:"other"`       // http://other.test/…
	OtherTLS   string `json:"other_tls"`   // https://other.test/…
	TCP        string `json:"tcp"`
	UDP        string `json:"udp"`
	Payload    string `json:"payload"`
	// SamePort are addresses to connect to directly on the port of the
	// proxy (read from HTTP_PROXY), as a server that knows Landlock's rule
	// is by port would.
	SamePort []string `json:"same_port"`
	// ForceProxy sends every fetch through the proxy, this machine's
	// names and addresses too (Go's client does not proxy those by itself).
	ForceProxy bool `json:"force_proxy,omitempty"`
}

// runNetProbe is the stdio server of mode "netprobe": its tool probe
// reports each attempt on a line, "what: ok …" or "what: refused (…)".
func runNetProbe() int {
	s := sdk.NewServer(&sdk.Implementation{Name: "netprobe", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "probe"}, func(ctx context.Context, _ *sdk.CallToolRequest, in netProbeInput) (*sdk.CallToolResult, any, error) {
		var lines []string
		say := func(what, ok string, err error) {
			if err != nil {
				lines = append(lines, fmt.Sprintf("%s: refused (%v)", what, err))
			} else {
				lines = append(lines, what+": ok "+ok)
			}
		}
		proxy := http.ProxyFromEnvironment
		if in.ForceProxy {
			proxy = func(*http.Request) (*url.URL, error) { return url.Parse(os.Getenv("HTTP_PROXY")) }
		}
		c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{
			Proxy:           proxy,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the test's TLS server
		}}
		fetch := func(what, url string) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err == nil {
				var resp *http.Response
				if resp, err = c.Do(req); err == nil {
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					say(what, fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body))), nil)
					return
				}
			}
			say(what, "", err)
		}
		fetch("allowed", in.Allowed)
		fetch("allowed tls", in.AllowedTLS)
		fetch("other", in.Other)
		fetch("other tls", in.OtherTLS)
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", in.TCP)
		if err == nil {
			conn.Close()
		}
		say("tcp", "", err)
		conn, err = d.DialContext(ctx, "udp", in.UDP)
		if err == nil {
			_, err = conn.Write([]byte(in.Payload))
			conn.Close()
		}
		say("udp", "", err)
		if u, err := url.Parse(os.Getenv("HTTP_PROXY")); err == nil && u.Port() != "" {
			for _, host := range in.SamePort {
				conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, u.Port()))
				if err == nil {
					conn.Close()
				}
				say("same port "+host, "", err)
			}
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(lines, "\n")}}}, nil, nil
	})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		return 1
	}
	return 0
}

// netTargets are the peers the probe tries, all on this machine: a web
// server and a TLS one that the proxy's dialer maps allowed.test to (and
// nothing else), a TCP listener and a UDP one.
type netTargets struct {
	site, tlsSite *httptest.Server
	tcp           net.Listener
	udp           net.PacketConn
	// samePort listens on every address of this machine on the port the
	// proxy has in a server's namespace (the manager is told so):
	// reached, it counts in samePortHits.
	samePort     net.Listener
	samePortHits atomic.Int32
}

func newNetTargets(t *testing.T) *netTargets {
	t.Helper()
	n := &netTargets{
		site:    httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello from allowed.test") })),
		tlsSite: httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello over tls") })),
	}
	t.Cleanup(n.site.Close)
	t.Cleanup(n.tlsSite.Close)
	var err error
	if n.tcp, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.tcp.Close() })
	go func() {
		for {
			c, err := n.tcp.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if n.udp, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.udp.Close() })
	if n.samePort, err = net.Listen("tcp4", "0.0.0.0:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.samePort.Close() })
	go func() {
		for {
			c, err := n.samePort.Accept()
			if err != nil {
				return
			}
			n.samePortHits.Add(1)
			c.Close()
		}
	}()
	return n
}

// dial is the proxy's dialer in these tests: allowed.test is the web
// server (port 80) or the TLS one (443); any other name fails here, so a
// proxy that let one through could not reach it either.
func (n *netTargets) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "allowed.test" {
		return nil, fmt.Errorf("the test's dialer knows only allowed.test, not %q", addr)
	}
	to := n.site.Listener.Addr().String()
	if port == "443" {
		to = n.tlsSite.Listener.Addr().String()
	}
	var d net.Dialer
	return d.DialContext(ctx, network, to)
}

func (n *netTargets) args(payload string) string {
	same := []string{"127.0.0.2"}
	if ip := testpeer.ExternalIPv4(); ip != "" {
		same = append(same, ip)
	}
	quoted, _ := json.Marshal(same)
	return fmt.Sprintf(`{"allowed":"http://allowed.test/x","allowed_tls":"https://allowed.test/x","other":"http://other.test/x","other_tls":"https://other.test/x","tcp":%q,"udp":%q,"payload":%q,"same_port":%s}`,
		n.tcp.Addr().String(), n.udp.LocalAddr().String(), payload, quoted)
}

// firstDatagram sends a sentinel to the UDP listener after the probe's
// attempt and returns the first datagram the listener got: the probe's
// payload if it went through (sent before the sentinel), else the
// sentinel — so that "nothing arrived" needs no waiting for nothing.
func (n *netTargets) firstDatagram(t *testing.T) string {
	t.Helper()
	c, err := net.Dial("udp", n.udp.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("sentinel")); err != nil {
		t.Fatal(err)
	}
	n.udp.SetReadDeadline(time.Now().Add(liveness))
	buf := make([]byte, 64)
	k, _, err := n.udp.ReadFrom(buf)
	if err != nil {
		t.Fatalf("the UDP listener got nothing, not even the sentinel: %v", err)
	}
	return string(buf[:k])
}

func requireLandlock(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is Linux's Landlock")
	}
	if err := sandbox.Available(); err != nil {
		t.Fatalf("this machine's kernel must have Landlock for this test: %v", err)
	}
}

// probeLines runs a netprobe server (through the real launcher: this test
// binary as otter's, see TestMain) with the given sandbox table, calls its
// probe and returns what it reported, one line per attempt.
func probeLines(t *testing.T, n *netTargets, sb *config.ServerSandbox, payload string, canIsolate func(string) error) (map[string]string, *harness) {
	t.Helper()
	srv := stdioServer(t, "net", "netprobe")
	srv.Sandbox = sb
	h := newHarness(t, configOf(srv), servers.Options{Sandbox: &servers.SandboxOptions{Launcher: os.Args[0]}})
	h.m.proxyDial = n.dial
	h.m.isolatedProxyPort = n.samePort.Addr().(*net.TCPAddr).Port
	h.m.canIsolate = canIsolate
	h.m.Start(context.Background())
	st := h.waitState("net", servers.StateConnected)
	if st.Sandbox == nil || !st.Sandbox.On {
		t.Fatalf("the server does not run in the sandbox: %+v", st.Sandbox)
	}
	out := h.callText("net", "probe", n.args(payload))
	lines := map[string]string{}
	for l := range strings.Lines(out) {
		what, result, _ := strings.Cut(strings.TrimSpace(l), ": ")
		lines[what] = result
	}
	return lines, h
}

// With network = ["allowed.test"], a server in the sandbox reaches
// allowed.test through otter's proxy, plain and over a CONNECT tunnel; is
// refused other.test with 403 and a body that names the host and the
// line to add; cannot connect directly to a TCP listener on another port,
// nor send a datagram to a UDP listener (which receives nothing), nor
// connect to the proxy's own port on another address of this machine —
// which Landlock's rule, by port, would let through: the server runs in a
// network namespace of its own. Its status lists the hosts, and its proxy
// ends with the manager.
func TestSandboxHostListGoesThroughTheProxyOnly(t *testing.T) {
	requireLandlock(t)
	n := newNetTargets(t)
	hosts := []string{"allowed.test"}
	lines, h := probeLines(t, n, &config.ServerSandbox{Network: &config.SandboxNetwork{Hosts: hosts}}, "leaked", nil)
	for what, want := range map[string]string{
		"allowed":     "ok 200 hello from allowed.test",
		"allowed tls": "ok 200 hello over tls",
		"other":       `ok 403 otter's sandbox refused a connection to other.test: MCP server "net" may reach only allowed.test. If it needs other.test, add it to the network list of the server's sandbox table: network = ["allowed.test", "other.test"]`,
	} {
		if lines[what] != want {
			t.Errorf("%s: %q, want %q", what, lines[what], want)
		}
	}
	for what, want := range map[string]string{"other tls": "Forbidden", "tcp": "permission denied", "udp": "permission denied", "same port 127.0.0.2": "refused"} {
		if !strings.HasPrefix(lines[what], "refused") || !strings.Contains(lines[what], want) {
			t.Errorf("%s: %q, want refused (%s)", what, lines[what], want)
		}
	}
	if ip := testpeer.ExternalIPv4(); ip != "" && !strings.HasPrefix(lines["same port "+ip], "refused") {
		t.Errorf("same port %s: %q, want refused", ip, lines["same port "+ip])
	}
	if k := n.samePortHits.Load(); k != 0 {
		t.Errorf("the server connected %d times straight to a listener on the proxy's port", k)
	}
	if got := n.firstDatagram(t); got != "sentinel" {
		t.Errorf("the UDP listener received %q from the sandboxed server", got)
	}
	st, _ := h.m.Status("net")
	if sb := st.Sandbox; sb.Network || len(sb.Hosts) != 1 || sb.Hosts[0] != "allowed.test" || sb.Weaker != "" {
		t.Errorf("status: network %v, hosts %v, weaker %q; want only allowed.test, not weaker", sb.Network, sb.Hosts, sb.Weaker)
	}
	h.m.mu.Lock()
	px := h.m.servers["net"].proxy
	h.m.mu.Unlock()
	if px == nil {
		t.Fatal("no proxy")
	}
	if px.port != 0 {
		t.Errorf("the proxy listens on otter's 127.0.0.1:%d too", px.port)
	}
	h.m.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := px.http.Serve(ln); err != http.ErrServerClosed {
		t.Errorf("the proxy still serves after the manager closed: %v", err)
	}
}

// Where the system makes no network namespace (user namespaces off), a
// host list still goes through the proxy, which then listens on otter's
// 127.0.0.1, and the server's status says its list is weaker and why.
func TestSandboxHostListWithoutANamespaceSaysItIsWeaker(t *testing.T) {
	requireLandlock(t)
	n := newNetTargets(t)
	none := func(string) error { return fmt.Errorf("%w here (user namespaces are off)", sandbox.ErrNoIsolation) }
	lines, h := probeLines(t, n, &config.ServerSandbox{Network: &config.SandboxNetwork{Hosts: []string{"allowed.test"}}}, "leaked", none)
	if lines["allowed"] != "ok 200 hello from allowed.test" {
		t.Errorf("allowed: %q", lines["allowed"])
	}
	for _, what := range []string{"tcp", "udp"} {
		if !strings.HasPrefix(lines[what], "refused") {
			t.Errorf("%s: %q, want refused", what, lines[what])
		}
	}
	st, _ := h.m.Status("net")
	if !strings.Contains(st.Sandbox.Weaker, "user namespaces are off") {
		t.Errorf("status: weaker %q, want the reason", st.Sandbox.Weaker)
	}
	h.m.mu.Lock()
	px := h.m.servers["net"].proxy
	h.m.mu.Unlock()
	h.m.Close()
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", px.port), liveness); err == nil {
		c.Close()
		t.Error("the proxy still listens after the manager closed")
	}
}

// With network = false the server connects nowhere: no TCP, and no UDP
// (the seccomp filter), the listener receiving nothing; and no proxy is
// started for it.
func TestSandboxNetworkFalseRefusesUDPToo(t *testing.T) {
	requireLandlock(t)
	n := newNetTargets(t)
	lines, h := probeLines(t, n, &config.ServerSandbox{Network: &config.SandboxNetwork{}}, "leaked", nil)
	for _, what := range []string{"tcp", "udp"} {
		if !strings.HasPrefix(lines[what], "refused") || !strings.Contains(lines[what], "permission denied") {
			t.Errorf("%s: %q, want refused (permission denied)", what, lines[what])
		}
	}
	if strings.HasPrefix(lines["allowed"], "ok") {
		t.Errorf("allowed.test was reached with network = false: %q", lines["allowed"])
	}
	if got := n.firstDatagram(t); got != "sentinel" {
		t.Errorf("the UDP listener received %q from the sandboxed server", got)
	}
	h.m.mu.Lock()
	px := h.m.servers["net"].proxy
	h.m.mu.Unlock()
	if px != nil {
		t.Error("a proxy was started for a server with network = false")
	}
}

// With the default sandbox the server reaches the network as before the
// filter: a TCP connection and a datagram that arrives.
func TestSandboxDefaultNetworkKeepsTCPAndUDP(t *testing.T) {
	requireLandlock(t)
	n := newNetTargets(t)
	lines, _ := probeLines(t, n, nil, "hello udp", nil)
	if lines["tcp"] != "ok" {
		t.Errorf("tcp: %q, want ok", lines["tcp"])
	}
	if lines["udp"] != "ok" {
		t.Errorf("udp: %q, want ok", lines["udp"])
	}
	if got := n.firstDatagram(t); got != "hello udp" {
		t.Errorf("the UDP listener's first datagram is %q, want the server's", got)
	}
}

// runNetFail is the stdio server of mode "netfail": one that fetches
// http://other.test/ at start, through the proxy variables, and exits on
// anything but 200 — as an npx server whose registry is not on its list.
func runNetFail() int {
	resp, err := http.Get("http://other.test/")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return runNetProbe()
		}
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	fmt.Fprintln(os.Stderr, "Error: fetching http://other.test/:", err)
	return 1
}

// A server that fails to start because the proxy refused it a host says
// so in its error: the host and the line that would allow it.
func TestSandboxRefusedHostExplainsAFailedStart(t *testing.T) {
	requireLandlock(t)
	n := newNetTargets(t)
	srv := stdioServer(t, "npxish", "netfail")
	srv.Sandbox = &config.ServerSandbox{Network: &config.SandboxNetwork{Hosts: []string{"allowed.test"}}}
	srv.File, srv.Line = "/home/me/.config/otter/config.toml", 7
	h := newHarness(t, configOf(srv), servers.Options{Sandbox: &servers.SandboxOptions{Launcher: os.Args[0]}})
	h.m.proxyDial = n.dial
	h.m.Start(context.Background())
	st := h.waitState("npxish", servers.StateFailed)
	want := `otter's sandbox refused a connection to other.test: MCP server "npxish" may reach only allowed.test. If it needs other.test, add it to the network list of the server's sandbox table (/home/me/.config/otter/config.toml:7): network = ["allowed.test", "other.test"]`
	if !strings.Contains(st.Error, want) {
		t.Errorf("the failed server's error lacks %q:\n%s", want, st.Error)
	}
}

// The proxy checks the address a listed name resolves to: a name that
// leads to this machine (localhost, or an allowed wildcard whose DNS the
// server's author controls) is refused with 403, the address and the line
// that would allow it; the same address named in the list is reached.
func TestSandboxProxyRefusesThisMachineByName(t *testing.T) {
	requireLandlock(t)
	n := newNetTargets(t)
	_, port, _ := net.SplitHostPort(n.site.Listener.Addr().String())
	for _, tc := range []struct {
		hosts []string
		url   string
		want  string
	}{
		{[]string{"localhost"}, "http://localhost:" + port + "/x",
			`ok 403 dial tcp 127.0.0.1:` + port + `: otter's sandbox refused a connection to 127.0.0.1, a loopback address: MCP server "net" reaches this machine or its local link only at an IP address its network list names: network = ["127.0.0.1"]`},
		{[]string{"127.0.0.1"}, "http://127.0.0.1:" + port + "/x", "ok 200 hello from allowed.test"},
	} {
		srv := stdioServer(t, "net", "netprobe")
		srv.Sandbox = &config.ServerSandbox{Network: &config.SandboxNetwork{Hosts: tc.hosts}}
		h := newHarness(t, configOf(srv), servers.Options{Sandbox: &servers.SandboxOptions{Launcher: os.Args[0]}})
		h.m.Start(context.Background())
		h.waitState("net", servers.StateConnected)
		args, _ := json.Marshal(map[string]any{"allowed": tc.url, "allowed_tls": "", "other": "", "other_tls": "", "tcp": "", "udp": "", "payload": "", "same_port": []string{}, "force_proxy": true})
		out := h.callText("net", "probe", string(args))
		got, _, _ := strings.Cut(out, "\n")
		if got != "allowed: "+tc.want {
			t.Errorf("%v, %s: %q, want %q", tc.hosts, tc.url, got, "allowed: "+tc.want)
		}
		h.m.Close()
	}
}
