package conformance

// `otter mcp serve` as a user runs it: the real binary over stdio (as
// Claude Desktop starts it) and over HTTP with keys from config.toml.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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

func TestServeStdioBinary(t *testing.T) {
	requirePeers(t)
	env := isolatedEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	cmd := exec.Command(otterBin, "mcp", "serve")
	cmd.Dir = t.TempDir()
	cmd.Env = env
	var stderr syncBuffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to otter mcp serve: %v\nstderr:\n%s", err, stderr.String())
	}

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
	const key = "test-key-5f1c0a"
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
