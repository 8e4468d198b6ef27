package conformance

// `otter mcp serve` as a user runs it: the real binary over stdio (as
// Claude Desktop starts it) and over HTTP with keys from config.toml.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// srvEnvValue is the value of key in env ("K=V" entries; the last wins).
func srvEnvValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// syncBuffer is a bytes.Buffer safe for a process writing while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// srvConnectStdio starts `otter mcp serve` with env as Claude Desktop
// would and connects a client to it; stderr collects the server's logs.
func srvConnectStdio(t *testing.T, ctx context.Context, env []string) (*mcp.ClientSession, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(otterBin, "mcp", "serve")
	cmd.Dir = t.TempDir()
	cmd.Env = env
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to otter mcp serve: %v\nstderr:\n%s", err, stderr.String())
	}
	return cs, stderr
}

func TestServeStdioBinary(t *testing.T) {
	requirePeers(t)
	env := isolatedEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	cs, stderr := srvConnectStdio(t, ctx, env)

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range tools.Tools {
		byName[tl.Name] = tl
	}
	for _, name := range []string{"scrape_page", "scrape_api", "analyze_site", "export_data", "get_status", "list_presets"} {
		tl := byName[name]
		if tl == nil {
			t.Errorf("tools/list lacks %s (got %d tools)", name, len(tools.Tools))
			continue
		}
		if tl.Description == "" || tl.InputSchema == nil || tl.Annotations == nil {
			t.Errorf("%s: description, input schema and annotations are all expected: %+v", name, tl)
		}
	}
	if tl := byName["list_presets"]; tl != nil && !tl.Annotations.ReadOnlyHint {
		t.Errorf("list_presets is not marked read-only")
	}

	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) == 0 || !strings.HasPrefix(res.Resources[0].URI, "otter://presets/") {
		t.Errorf("resources = %+v, want the presets", res.Resources)
	}

	call, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_presets", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if call.IsError {
		t.Errorf("list_presets failed: %+v", call.Content)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}

	// Logs are JSON lines on stderr (stdout is the MCP stream).
	sc := bufio.NewScanner(strings.NewReader(stderr.String()))
	lines := 0
	for sc.Scan() {
		lines++
		if !json.Valid(sc.Bytes()) {
			t.Errorf("stderr line is not JSON: %q", sc.Text())
		}
	}
	if lines == 0 {
		t.Error("no logs on stderr")
	}

	// The call is in the audit ledger under $XDG_STATE_HOME/otter.
	data, err := os.ReadFile(filepath.Join(srvEnvValue(env, "XDG_STATE_HOME"), "otter", "audit.jsonl"))
	if err != nil {
		t.Fatalf("audit ledger: %v", err)
	}
	var rec struct{ Client, Tool, Outcome string }
	if err := json.Unmarshal(bytes.TrimSpace(data), &rec); err != nil || rec.Tool != "list_presets" || rec.Outcome != "ok" || rec.Client != "stdio" {
		t.Errorf("audit ledger = %s (%v)", data, err)
	}
}

func TestServeHTTPBinaryKeys(t *testing.T) {
	requirePeers(t)
	env := isolatedEnv(t)

	// Without keys, an address other machines can reach is refused.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	r := runOtter(t, ctx, env, "", "mcp", "serve", "--http", "0.0.0.0:0")
	if r.Code != 2 || !strings.Contains(r.Stderr, "api_keys") || !strings.Contains(r.Stderr, "OTTER_SERVE_KEY") {
		t.Fatalf("serve on 0.0.0.0 without keys: exit %d, stderr:\n%s\nwant exit 2 explaining [serve] api_keys", r.Code, r.Stderr)
	}

	// With [serve] api_keys = ["${OTTER_SERVE_KEY}"], requests need the key.
	cfgDir := filepath.Join(srvEnvValue(env, "XDG_CONFIG_HOME"), "otter")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("[serve]\napi_keys = [\"${OTTER_SERVE_KEY}\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const key = "test-key-5f1c0a93d2e7"
	url := srvStartHTTP(t, append(env, "OTTER_SERVE_KEY="+key))
	post := func(auth string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"k","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(""); got != http.StatusUnauthorized {
		t.Errorf("without a key: %d, want 401", got)
	}
	if got := post("Bearer wrong"); got != http.StatusUnauthorized {
		t.Errorf("with a wrong key: %d, want 401", got)
	}
	if got := post("Bearer " + key); got != http.StatusOK {
		t.Errorf("with the key: %d, want 200", got)
	}
}

// TestServeKeysGuardOnlyHTTP: with api_keys = ["${OTTER_SERVE_KEY:-}"] and
// the variable unset (as in the environment Claude Desktop starts otter
// with), the stdio server works, and the HTTP server refuses to start
// rather than serve without auth.
func TestServeKeysGuardOnlyHTTP(t *testing.T) {
	requirePeers(t)
	env := slices.DeleteFunc(isolatedEnv(t), func(kv string) bool { return strings.HasPrefix(kv, "OTTER_SERVE_KEY=") })
	cfgDir := filepath.Join(srvEnvValue(env, "XDG_CONFIG_HOME"), "otter")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("[serve]\napi_keys = [\"${OTTER_SERVE_KEY:-}\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	r := runOtter(t, ctx, env, "", "mcp", "serve", "--http", "127.0.0.1:0")
	if r.Code != 2 || !strings.Contains(r.Stderr, "OTTER_SERVE_KEY") {
		t.Errorf("serve --http with an empty key: exit %d, stderr:\n%s\nwant exit 2 naming OTTER_SERVE_KEY", r.Code, r.Stderr)
	}

	cs, _ := srvConnectStdio(t, ctx, env)
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_presets", Arguments: map[string]any{}}); err != nil {
		t.Errorf("list_presets over stdio: %v", err)
	}
}

// TestServeBinaryRateLimitPerKey: the built-in tools' rate limits are kept
// per client (API key), and a refusal shows in /metrics and the audit ledger.
func TestServeBinaryRateLimitPerKey(t *testing.T) {
	requirePeers(t)
	env := isolatedEnv(t)
	cfgDir := filepath.Join(srvEnvValue(env, "XDG_CONFIG_HOME"), "otter")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "[serve]\napi_keys = [\"${KEY_A}\", \"${KEY_B}\"]\n\n[tools.rate_limits.list_presets]\nrpm = 1\nburst = 1\n"
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	url := srvStartHTTP(t, append(env, "KEY_A=key-a-7c1e0123456789", "KEY_B=key-b-90d20123456789"))
	connect := func(key string) *mcp.ClientSession {
		hc := &http.Client{Transport: srvBearer{key}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "rl", Version: "1"}, nil).
			Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatalf("connect with %s: %v", key, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	a, b := connect("key-a-7c1e0123456789"), connect("key-b-90d20123456789")
	call := func(cs *mcp.ClientSession) *mcp.CallToolResult {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_presets", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call(a); res.IsError {
		t.Fatalf("first call of key A refused: %+v", res.Content)
	}
	res := call(a)
	text, _ := json.Marshal(res.Content)
	if !res.IsError || !strings.Contains(string(text), "RATE_LIMITED") {
		t.Fatalf("second call of key A within the minute: %s, want RATE_LIMITED", text)
	}
	if res := call(b); res.IsError {
		t.Fatalf("key B's first call refused (limits must be per client): %+v", res.Content)
	}

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, strings.TrimSuffix(url, "/mcp")+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer key-a-7c1e0123456789")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`otter_serve_tool_calls_total{outcome="rate_limited",tool="list_presets"} 1`,
		`otter_serve_tool_calls_total{outcome="ok",tool="list_presets"} 2`,
		`otter_serve_rate_limited_total{tool="list_presets"} 1`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	data, err := os.ReadFile(filepath.Join(srvEnvValue(env, "XDG_STATE_HOME"), "otter", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	clients := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct{ Client, Outcome, Code string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		outcomes = append(outcomes, rec.Outcome+"/"+rec.Code)
		clients[rec.Client] = true
		if strings.Contains(line, "key-a-7c1e0123456789") || strings.Contains(line, "key-b-90d20123456789") {
			t.Errorf("audit line contains an API key: %s", line)
		}
	}
	if strings.Join(outcomes, " ") != "ok/ rate_limited/RATE_LIMITED ok/" || len(clients) != 2 {
		t.Errorf("audit outcomes = %v, clients = %v", outcomes, clients)
	}
}

// srvBearer adds an Authorization header to every request.
type srvBearer struct{ key string }

func (b srvBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}
