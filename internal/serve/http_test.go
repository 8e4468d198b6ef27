package serve

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends one raw MCP POST to url with the given extra headers.
func post(t *testing.T, url, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// bearer is an http.RoundTripper adding an Authorization header.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP connects an MCP client to the streamable endpoint, with key
// as its bearer key ("" for none).
func connectHTTP(t *testing.T, base, key string, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{}
	if key != "" {
		hc.Transport = bearer{key}
	}
	tr := &mcp.StreamableClientTransport{Endpoint: base + PathMCP, HTTPClient: hc}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, copts).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatalf("connect over HTTP: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func startHTTP(t *testing.T, s *Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(s.Handler()) // listens on 127.0.0.1
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, url, key string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func TestBearerAuth(t *testing.T) {
	const key = "k-0123456789abcdef"
	s := newTestServer(t, Options{APIKeys: []string{"another-key", key}})
	ts := startHTTP(t, s)

	for _, tc := range []struct {
		name, auth string
		wantError  bool
	}{
		{"no key", "", false},
		{"wrong key", "Bearer not-the-key", true},
		{"not bearer", "Basic " + key, false},
	} {
		h := map[string]string{}
		if tc.auth != "" {
			h["Authorization"] = tc.auth
		}
		resp := post(t, ts.URL+PathMCP, initializeBody, h)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", tc.name, resp.StatusCode)
		}
		challenge := resp.Header.Get("WWW-Authenticate")
		if !strings.HasPrefix(challenge, "Bearer") || strings.Contains(challenge, "invalid_token") != tc.wantError {
			t.Errorf("%s: WWW-Authenticate = %q", tc.name, challenge)
		}
	}
	if resp, _ := get(t, ts.URL+PathMetrics, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/metrics without key: %d, want 401", resp.StatusCode)
	}
	if resp, _ := get(t, ts.URL+PathHealth, ""); resp.StatusCode != http.StatusOK {
		t.Errorf("/health without key: %d, want 200 (health is public)", resp.StatusCode)
	}

	resp := post(t, ts.URL+PathMCP, initializeBody, map[string]string{"Authorization": "Bearer " + key})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with the key: status %d, want 200", resp.StatusCode)
	}
	cs := connectHTTP(t, ts.URL, key, nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	// The client is a short hash of the key, never the key itself.
	got := callText(t, res)
	if !strings.HasPrefix(got, "hi (client key:") || strings.Contains(got, key) {
		t.Errorf("echo over HTTP = %q, want the client named by a hash of its key", got)
	}
	recs := readAudit(t, s.ledger.Path())
	if len(recs) != 1 || !strings.HasPrefix(recs[0].Client, "key:") || recs[0].Session == "" {
		t.Errorf("audit = %+v, want one record with the key's hash and the session", recs)
	}
}

func TestRefusesNonLoopbackWithoutKeys(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "192.168.1.10:80", "[::]:8080", "example.com:80"} {
		err := CheckAddr(addr, false)
		if err == nil || !strings.Contains(err.Error(), "api_keys") || !strings.Contains(err.Error(), "OTTER_SERVE_KEY") {
			t.Errorf("CheckAddr(%q, no keys) = %v, want a refusal saying how to set keys", addr, err)
		}
		if err := CheckAddr(addr, true); err != nil {
			t.Errorf("CheckAddr(%q, keys) = %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:8080", "localhost:0", "[::1]:9000", "127.0.0.2:1"} {
		if err := CheckAddr(addr, false); err != nil {
			t.Errorf("CheckAddr(%q) = %v, want loopback allowed", addr, err)
		}
	}
	s := newTestServer(t, Options{})
	if err := s.ListenAndServe(t.Context(), "0.0.0.0:0"); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("ListenAndServe(0.0.0.0:0) without keys = %v, want a refusal", err)
	}
}

func TestHostAndOriginChecks(t *testing.T) {
	s := newTestServer(t, Options{AllowedOrigins: []string{"https://app.example.org"}})
	ts := startHTTP(t, s)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.URL, "http://"))

	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"rebound host", map[string]string{"Host": "evil.example.com:" + port}, http.StatusForbidden},
		{"rebound host and origin", map[string]string{"Host": "evil.example.com", "Origin": "http://evil.example.com"}, http.StatusForbidden},
		{"foreign origin", map[string]string{"Origin": "http://evil.example.com"}, http.StatusForbidden},
		{"null origin", map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"localhost host", map[string]string{"Host": "localhost:" + port}, http.StatusOK},
		{"same origin", map[string]string{"Origin": ts.URL}, http.StatusOK},
		{"allowed origin", map[string]string{"Origin": "https://app.example.org"}, http.StatusOK},
	} {
		resp := post(t, ts.URL+PathMCP, initializeBody, tc.headers)
		if resp.StatusCode != tc.want {
			body, _ := io.ReadAll(resp.Body)
			t.Errorf("%s: status %d, want %d (%s)", tc.name, resp.StatusCode, tc.want, body)
		}
	}
	// /health and /metrics are guarded too.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+PathHealth, nil)
	req.Host = "evil.example.com"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("/health with a rebound Host: %d, want 403", resp.StatusCode)
	}
	_, metrics := get(t, ts.URL+PathMetrics, "")
	for _, want := range []string{`otter_serve_errors_total{kind="forbidden_host"} 3`, `otter_serve_errors_total{kind="forbidden_origin"} 2`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestAllowedHostsAcceptAProxyName(t *testing.T) {
	s := newTestServer(t, Options{AllowedHosts: []string{"otter.internal"}})
	ts := startHTTP(t, s)
	if resp := post(t, ts.URL+PathMCP, initializeBody, map[string]string{"Host": "otter.internal"}); resp.StatusCode != http.StatusOK {
		t.Errorf("allowed host: %d, want 200", resp.StatusCode)
	}
	if resp := post(t, ts.URL+PathMCP, initializeBody, map[string]string{"Host": "evil.example.com"}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("other host: %d, want 403", resp.StatusCode)
	}
}

func TestCORSPreflight(t *testing.T) {
	s := newTestServer(t, Options{AllowedOrigins: []string{"https://app.example.org"}, APIKeys: []string{"k1"}})
	ts := startHTTP(t, s)
	preflight := func(origin string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodOptions, ts.URL+PathMCP, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, mcp-session-id")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := preflight("https://app.example.org")
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("preflight from an allowed origin: %d, want 204 (before auth: preflights carry no key)", resp.StatusCode)
	}
	h := resp.Header
	if h.Get("Access-Control-Allow-Origin") != "https://app.example.org" ||
		!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "authorization") ||
		!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "mcp-session-id") {
		t.Errorf("preflight headers = %v", h)
	}
	if resp := preflight("https://evil.example.com"); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight from a foreign origin: %d %v, want 403 without CORS headers", resp.StatusCode, resp.Header)
	}
	// The actual request exposes the session header to the page.
	resp = post(t, ts.URL+PathMCP, initializeBody, map[string]string{"Origin": "https://app.example.org", "Authorization": "Bearer k1"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.org" ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Errorf("CORS request: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestHealth(t *testing.T) {
	s := newTestServer(t, Options{})
	ts := startHTTP(t, s)
	resp, body := get(t, ts.URL+PathHealth, "")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("/health: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var h struct {
		Status  string   `json:"status"`
		Version string   `json:"version"`
		Uptime  string   `json:"uptime"`
		Tools   []string `json:"tools"`
	}
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatalf("/health body %q: %v", body, err)
	}
	if h.Status != "ok" || h.Version != "1.2.3-test" || h.Uptime == "" || strings.Join(h.Tools, ",") != "echo,fail,limited,scrape_page,slow" {
		t.Errorf("/health = %+v", h)
	}
}

func TestMetricsAndAuditAfterCalls(t *testing.T) {
	keys := []string{"key-one", "key-two"}
	s := newTestServer(t, Options{APIKeys: keys})
	ts := startHTTP(t, s)
	one := connectHTTP(t, ts.URL, keys[0], nil)
	two := connectHTTP(t, ts.URL, keys[1], nil)
	ctx := t.Context()
	call := func(cs *mcp.ClientSession, name string) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	if _, err := one.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := one.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// limited allows one call per client: the second call of key one is
	// refused, key two has its own bucket.
	if res := call(one, "limited"); res.IsError {
		t.Fatalf("first limited call refused: %s", callText(t, res))
	}
	if res := call(one, "limited"); !res.IsError || !strings.Contains(callText(t, res), "RATE_LIMITED") {
		t.Fatalf("second limited call of the same client: %s, want RATE_LIMITED", callText(t, res))
	}
	if res := call(two, "limited"); res.IsError {
		t.Fatalf("another client's first call refused: %s", callText(t, res))
	}
	call(two, "fail")

	_, metrics := get(t, ts.URL+PathMetrics, keys[0])
	for _, want := range []string{
		`otter_serve_tool_calls_total{outcome="ok",tool="limited"} 2`,
		`otter_serve_tool_calls_total{outcome="rate_limited",tool="limited"} 1`,
		`otter_serve_tool_calls_total{outcome="error",tool="fail"} 1`,
		`otter_serve_rate_limited_total{tool="limited"} 1`,
		`otter_serve_errors_total{kind="tool"} 1`,
		`otter_serve_requests_total{method="tools/list",status="ok"} 1`,
		`otter_serve_requests_total{method="ping",status="ok"} 1`,
		`otter_serve_requests_total{method="tools/call",status="ok"} 4`,
		`otter_serve_request_duration_seconds_count{method="tools/call"} 4`,
		`otter_serve_http_requests_total{code="200",method="post"}`,
		`go_goroutines`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(metrics)
	}

	recs := readAudit(t, s.ledger.Path())
	var outcomes []string
	clients := map[string]bool{}
	for _, r := range recs {
		outcomes = append(outcomes, r.Tool+":"+r.Outcome)
		clients[r.Client] = true
	}
	if strings.Join(outcomes, " ") != "limited:ok limited:rate_limited limited:ok fail:error" {
		t.Errorf("audit outcomes = %v", outcomes)
	}
	if len(clients) != 2 {
		t.Errorf("audit clients = %v, want one per key", clients)
	}
	if recs[1].Code != "RATE_LIMITED" || recs[1].Error != "rate limit exceeded" {
		t.Errorf("rate-limited record code/error = %q/%q, want the envelope's code and message", recs[1].Code, recs[1].Error)
	}
}

func TestSessionBelongsToItsKey(t *testing.T) {
	keys := []string{"key-one", "key-two"}
	s := newTestServer(t, Options{APIKeys: keys})
	ts := startHTTP(t, s)
	resp := post(t, ts.URL+PathMCP, initializeBody, map[string]string{"Authorization": "Bearer key-one"})
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session ID")
	}
	// Another key cannot use key one's session.
	resp = post(t, ts.URL+PathMCP, `{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		map[string]string{"Authorization": "Bearer key-two", "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	if resp.StatusCode < 400 {
		t.Errorf("ping on another key's session: %d, want refused", resp.StatusCode)
	}
}

func TestProgressOverHTTP(t *testing.T) {
	s := newTestServer(t, Options{})
	ts := startHTTP(t, s)
	got := make(chan float64, 10)
	cs := connectHTTP(t, ts.URL, "", &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			got <- req.Params.Progress
		},
	})
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}}
	params.SetProgressToken(7)
	if _, err := cs.CallTool(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	for want := 1.0; want <= 3; want++ {
		select {
		case p := <-got:
			if p != want {
				t.Errorf("progress %v, want %v", p, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("progress %v never arrived", want)
		}
	}
}
