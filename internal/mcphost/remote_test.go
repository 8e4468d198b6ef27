package mcphost

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth"
	"github.com/otter-sh/otter/internal/servers"
)

func streamableServer(t *testing.T, mode string) *httptest.Server {
	srv := newTestServer(mode)
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts
}

func sseServer(t *testing.T, mode string) *httptest.Server {
	srv := newTestServer(mode)
	ts := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts
}

func remote(name, transport, url string) config.Server {
	return config.Server{Name: name, Transport: transport, URL: url, StartupTimeout: dur(liveness)}
}

func TestRemoteTransports(t *testing.T) {
	var gotHeader atomic.Value
	modern := newTestServer("modern")
	modernHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return modern }, nil)
	withHeader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.Header.Get("X-Api-Key"); h != "" {
			gotHeader.Store(h)
		}
		modernHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(withHeader.Close)
	httpSrv := remote("http", "http", withHeader.URL)
	httpSrv.Headers = map[string]string{"X-Api-Key": "secret"}
	legacyHTTP := streamableServer(t, "normal")
	sse := sseServer(t, "normal")

	h := newHarness(t, configOf(
		httpSrv,
		remote("legacy-http", "http", legacyHTTP.URL),
		remote("sse", "sse", sse.URL),
		remote("auto-http", "", legacyHTTP.URL),
		remote("auto-sse", TransportAuto, sse.URL),
	), servers.Options{Eliciter: &eliciter{reply: ask.ElicitReply{Action: ask.Accept}}})
	h.m.Start(context.Background())
	if err := h.m.WaitSettled(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantTransport := map[string]string{"http": "http", "legacy-http": "http", "sse": "sse", "auto-http": "http", "auto-sse": "sse"}
	for _, st := range h.m.Statuses() {
		if st.State != servers.StateConnected {
			t.Errorf("%s: %s %s", st.Name, st.State, st.Error)
			continue
		}
		if st.Transport != wantTransport[st.Name] {
			t.Errorf("%s: transport %s, want %s", st.Name, st.Transport, wantTransport[st.Name])
		}
		if got := h.callText(st.Name, "add", `{"a":2,"b":3}`); got != "5" {
			t.Errorf("%s: add = %q", st.Name, got)
		}
	}
	if gotHeader.Load() != "secret" {
		t.Errorf("configured header not sent: %v", gotHeader.Load())
	}
	// Server-to-client requests within a call, over SSE and streamable HTTP.
	for _, name := range []string{"sse", "legacy-http"} {
		if got := h.callText(name, "elicit", `{}`); !strings.HasPrefix(got, `accept {"count":3,"flag":true,"name":"otter"}`) {
			t.Errorf("%s: elicit = %q", name, got)
		}
	}
	// list_changed: over the standalone SSE stream (2025-11-25), through
	// subscriptions/listen (2026-07-28), and over SSE.
	for _, name := range []string{"legacy-http", "http", "sse"} {
		h.callText(name, "add_tool", `{}`)
		h.wait(name, "the new tool", func(st servers.Status) bool {
			_, ok := h.set.Lookup("mcp__" + name + "__extra")
			return ok
		})
	}
}

// An HTTP server that forgets its sessions answers 404; the manager starts a
// new session at once and the call that hit the 404 is sent again.
func TestHTTPSessionExpiryReinitializes(t *testing.T) {
	srv := newTestServer("normal")
	var handler atomic.Pointer[sdk.StreamableHTTPHandler]
	handler.Store(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler.Load().ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	h := newHarness(t, configOf(remote("web", "http", ts.URL)), servers.Options{})
	h.m.Start(context.Background())
	first := h.waitState("web", servers.StateConnected)
	if got := h.callText("web", "echo", `{"text":"one"}`); got != "one" {
		t.Fatalf("echo = %q", got)
	}
	// The server restarts and no longer knows the session.
	handler.Store(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	if got := h.callText("web", "echo", `{"text":"two"}`); got != "two" {
		t.Fatalf("echo after session loss = %q", got)
	}
	st := h.waitState("web", servers.StateConnected)
	if !st.ConnectedAt.After(first.ConnectedAt) || !strings.Contains(st.Error, "session not found") {
		t.Errorf("no new session: %+v", st)
	}
}

// fakeAuth is an Authorizer whose server accepts the bearer token "good",
// which only an interactive login obtains.
type fakeAuth struct {
	mu       sync.Mutex
	token    string
	logins   int
	handlers []bool // interactive flag of each Handler call
}

func (a *fakeAuth) Handler(srv config.Server, interactive bool) auth.OAuthHandler {
	a.mu.Lock()
	a.handlers = append(a.handlers, interactive)
	a.mu.Unlock()
	return &fakeHandler{a: a, interactive: interactive}
}

func (a *fakeAuth) TokenExpiry(config.Server) time.Time { return time.Time{} }

type fakeHandler struct {
	a           *fakeAuth
	interactive bool
}

func (h *fakeHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.a.mu.Lock()
	defer h.a.mu.Unlock()
	if h.a.token == "" {
		return nil, nil
	}
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: h.a.token, TokenType: "Bearer"}), nil
}

func (h *fakeHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	resp.Body.Close()
	if !h.interactive {
		return fmt.Errorf("server %s needs a login: %w", req.URL.Host, oauth.ErrLoginRequired)
	}
	h.a.mu.Lock()
	h.a.token = "good"
	h.a.logins++
	h.a.mu.Unlock()
	return nil
}

// A remote server that demands OAuth goes needs-auth without a login and
// connects after one, over streamable HTTP, legacy SSE (which has no OAuth
// of its own in the SDK) and auto's fallback to SSE alike.
func TestNeedsAuthThenLogin(t *testing.T) {
	for _, tc := range []struct{ transport, handler string }{
		{"http", "streamable"},
		{"sse", "sse"},
		{"auto", "sse"}, // the POST gets 405 only once authorized
	} {
		t.Run(tc.transport, func(t *testing.T) {
			srv := newTestServer("normal")
			var inner http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
			if tc.handler == "sse" {
				inner = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
			}
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer good" {
					w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+"http://"+r.Host+`/.well-known/oauth-protected-resource"`)
					http.Error(w, "unauthorized", http.StatusUnauthorized)
					return
				}
				inner.ServeHTTP(w, r)
			}))
			t.Cleanup(ts.Close)
			fa := &fakeAuth{}
			h := newHarness(t, configOf(remote("secure", tc.transport, ts.URL)), servers.Options{Auth: fa})
			h.m.Start(context.Background())
			st := h.waitState("secure", servers.StateNeedsAuth)
			// The reason, without the SDK's layers around the authorizer's
			// error; how to log in is the front end's to say.
			if want := "authorization required"; st.Error != want {
				t.Errorf("needs-auth reason = %q, want %q", st.Error, want)
			}
			if err := h.m.Login(context.Background(), "secure"); err != nil {
				t.Fatalf("Login: %v", err)
			}
			if got := h.callText("secure", "echo", `{"text":"in"}`); got != "in" {
				t.Errorf("echo = %q", got)
			}
			if st, _ := h.m.Status("secure"); tc.handler == "sse" && st.Transport != config.TransportSSE {
				t.Errorf("transport = %q, want sse", st.Transport)
			}
			fa.mu.Lock()
			defer fa.mu.Unlock()
			if fa.logins != 1 || len(fa.handlers) != 2 || fa.handlers[0] || !fa.handlers[1] {
				t.Errorf("logins %d, handler calls (interactive) %v", fa.logins, fa.handlers)
			}
			if err := h.m.Login(context.Background(), "nope"); err == nil || !strings.Contains(err.Error(), `no MCP server named "nope"`) {
				t.Errorf("Login of an unknown server: %v", err)
			}
		})
	}
}

// A server that answers ping with an error is alive: the health check must
// not restart it.
func TestPingErrorAnswerIsHealthy(t *testing.T) {
	srv := newTestServer("normal")
	var pings atomic.Int32
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "ping" {
				pings.Add(1)
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no ping here"}
			}
			return next(ctx, method, req)
		}
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	cfg := configOf(remote("noping", "http", ts.URL))
	cfg.HealthCheckInterval = dur(20 * time.Millisecond)
	h := newHarness(t, cfg, servers.Options{})
	h.m.Start(context.Background())
	first := h.waitState("noping", servers.StateConnected)
	deadline := time.Now().Add(liveness)
	for pings.Load() < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d pings arrived", pings.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	st, _ := h.m.Status("noping")
	if st.State != servers.StateConnected || !st.ConnectedAt.Equal(first.ConnectedAt) {
		t.Errorf("restarted after refused pings: %+v", st)
	}
}

// An HTTP server that goes away while idle, with no standalone GET stream to
// notice it, is found by the health check: its pings cannot be delivered
// (the go-sdk reports that as a JSON-RPC error too, code -32005), and the
// server must leave "connected" instead of looking healthy forever.
func TestHealthCheckNoticesDeadHTTPServer(t *testing.T) {
	srv := newTestServer("normal")
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet { // no standalone stream: only pings can tell
			http.Error(w, "no GET stream here", http.StatusMethodNotAllowed)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	cfg := configOf(remote("gone", "http", ts.URL))
	cfg.HealthCheckInterval = dur(20 * time.Millisecond)
	h := newHarness(t, cfg, servers.Options{})
	h.m.Start(context.Background())
	first := h.waitState("gone", servers.StateConnected)
	ts.CloseClientConnections()
	ts.Close()
	st := h.wait("gone", "the dead server to be noticed", func(st servers.Status) bool {
		return st.State != servers.StateConnected || !st.ConnectedAt.Equal(first.ConnectedAt)
	})
	if st.State == servers.StateConnected {
		t.Errorf("reconnected to a closed server: %+v", st)
	}
	if !strings.Contains(st.Error, "health check failed") {
		t.Errorf("state %s, error %q; want the health check named", st.State, st.Error)
	}
}

// A remote server that stops answering requests while its event stream
// stays open (a proxy returning 503, a hung backend) is found by the health
// check on both remote transports: the ping is not delivered, which is no
// answer, though streamable HTTP reports it as a JSON-RPC error (-32005).
func TestHealthCheckNoticesServerThatRefusesRequests(t *testing.T) {
	for _, transport := range []string{config.TransportHTTP, config.TransportSSE} {
		t.Run(transport, func(t *testing.T) {
			srv := newTestServer("normal")
			var handler http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
			if transport == config.TransportSSE {
				handler = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
			}
			var refusing atomic.Bool
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if refusing.Load() {
					http.Error(w, "backend gone", http.StatusServiceUnavailable)
					return
				}
				handler.ServeHTTP(w, r)
			}))
			t.Cleanup(ts.Close)
			cfg := configOf(remote("refuser", transport, ts.URL))
			cfg.HealthCheckInterval = dur(20 * time.Millisecond)
			h := newHarness(t, cfg, servers.Options{})
			h.m.Start(context.Background())
			h.waitState("refuser", servers.StateConnected)
			refusing.Store(true)
			st := h.wait("refuser", "the refusing server to be noticed", func(st servers.Status) bool {
				return st.State != servers.StateConnected
			})
			if !strings.Contains(st.Error, "health check failed") {
				t.Errorf("state %s, error %q; want the health check named", st.State, st.Error)
			}
		})
	}
}
