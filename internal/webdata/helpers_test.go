package webdata

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/tool"
)

// callTimeout bounds each tool call in tests: generous, for a loaded machine.
const callTimeout = 2 * time.Minute

// envelope is the JSON a model sees, decoded.
type envelope struct {
	ID         string          `json:"id"`
	Tool       string          `json:"tool"`
	Timestamp  time.Time       `json:"timestamp"`
	DurationMS int64           `json:"duration_ms"`
	Status     string          `json:"status"`
	Result     json.RawMessage `json:"result"`
	Metadata   struct {
		RequestID      string         `json:"request_id"`
		QuotaRemaining *int           `json:"quota_remaining"`
		RateLimit      *RateLimitInfo `json:"rate_limit"`
	} `json:"metadata"`
	Errors []ErrorInfo `json:"errors"`
}

func (e *envelope) codes() []string {
	var out []string
	for _, x := range e.Errors {
		out = append(out, x.Code)
	}
	return out
}

func (e *envelope) hasCode(code string) bool {
	for _, x := range e.Errors {
		if x.Code == code {
			return true
		}
	}
	return false
}

// toolset builds the tools with cfg and returns them by name.
type toolset map[string]tool.Tool

func newTools(t *testing.T, cfg config.Tools, mod ...func(*Options)) toolset {
	t.Helper()
	opts := Options{Config: cfg, Paths: config.Paths{DataDir: t.TempDir()}}
	for _, m := range mod {
		m(&opts)
	}
	list, err := Tools(opts)
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	ts := toolset{}
	for _, tl := range list {
		ts[tl.Info().Name] = tl
	}
	return ts
}

// loopbackOnly allows exactly 127.0.0.1, the address of the test sites,
// with rate limits high enough not to interfere with a test.
func loopbackOnly() config.Tools {
	limits := map[string]config.RateLimit{}
	for name := range DefaultRateLimits {
		limits[name] = config.RateLimit{RPM: 6000, Burst: 1000}
	}
	return config.Tools{AllowPrivateNetworks: []string{"127.0.0.1/32"}, RateLimits: limits}
}

// call calls a tool and decodes its text content, checking that it agrees
// with the structured content.
func (ts toolset) call(t *testing.T, ctx context.Context, name string, args any) (*tool.Result, *envelope) {
	t.Helper()
	tl, ok := ts[name]
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := tl.Call(ctx, raw)
	if err != nil {
		t.Fatalf("%s(%s): %v", name, raw, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content items, want 1", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content is %T, want text", name, res.Content[0])
	}
	var env envelope
	if err := json.Unmarshal([]byte(text.Text), &env); err != nil {
		t.Fatalf("%s: text is not the JSON envelope: %v\n%s", name, err, text.Text)
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var env2 envelope
	if err := json.Unmarshal(structured, &env2); err != nil || env2.ID != env.ID || env2.Status != env.Status {
		t.Fatalf("%s: structured content %s disagrees with the text", name, structured)
	}
	if env.Tool != name || !strings.HasPrefix(env.ID, "req_") || env.Metadata.RequestID != env.ID || env.Timestamp.IsZero() {
		t.Errorf("%s: envelope header wrong: %+v", name, env)
	}
	if res.IsError != (env.Status == StatusFailed) {
		t.Errorf("%s: IsError=%v but status %s", name, res.IsError, env.Status)
	}
	if env.Status == StatusFailed && (string(env.Result) != "null" || len(env.Errors) == 0) {
		t.Errorf("%s: a failed envelope needs result null and errors: %s", name, text.Text)
	}
	return res, &env
}

func decode[T any](t *testing.T, env *envelope) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(env.Result, &v); err != nil {
		t.Fatalf("decoding result %s: %v", env.Result, err)
	}
	return v
}

// site is a local test web site that counts its requests by path.
type site struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
	all  atomic.Int64
}

func (s *site) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// newSite starts a site on 127.0.0.1 serving routes (path → handler);
// unknown paths are 404.
func newSite(t *testing.T, routes map[string]http.HandlerFunc) *site {
	t.Helper()
	s := &site{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.all.Add(1)
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		if h, ok := routes[r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func htmlPage(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body)
	}
}

// countingListener is a TCP listener that counts the connections it
// accepts: refused URLs must not even connect.
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

// countingServer serves "secret" on addr and counts connections.
func countingServer(t *testing.T, addr string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html><title>secret</title></html>")
	}))
	srv.Listener.Close()
	srv.Listener = countingListener{ln, &n}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &n
}
