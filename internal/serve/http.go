package serve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTP paths.
const (
	PathMCP     = "/mcp"
	PathHealth  = "/health"
	PathMetrics = "/metrics"
)

// sessionIdleTimeout closes HTTP sessions nobody has used for this long.
const sessionIdleTimeout = 30 * time.Minute

// ErrPublicWithoutKeys is CheckAddr's refusal (wrapped): an address other
// machines can reach, and no API keys.
var ErrPublicWithoutKeys = errors.New("refusing to serve without API keys")

// CheckAddr refuses to serve on an address other machines can reach
// without API keys.
func CheckAddr(addr string, haveKeys bool) error {
	if haveKeys || isLoopbackAddr(addr) {
		return nil
	}
	return fmt.Errorf("%w on %s: anyone who can reach that address could use otter's tools. "+
		"Either bind to a loopback address such as 127.0.0.1:8080, or set keys in config.toml:\n"+
		"  [serve]\n  api_keys = [\"${OTTER_SERVE_KEY:-}\"]\n"+
		"and export OTTER_SERVE_KEY=$(openssl rand -hex 32); clients then send \"Authorization: Bearer <key>\"", ErrPublicWithoutKeys, addr)
}

// isLoopbackAddr reports whether a listen address (host:port) binds to
// loopback only. ":8080" binds every interface.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return isLoopbackHost(host)
}

// isLoopbackHost reports whether host (no port; brackets allowed) is
// localhost or a loopback IP.
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOnly strips the port from a Host header value.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// ListenAndServe serves HTTP on addr until ctx is cancelled, then shuts
// down gracefully. It refuses a non-loopback addr without API keys.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	if err := CheckAddr(addr, len(s.keys) > 0); err != nil {
		return err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return s.Serve(ctx, ln)
}

// shutdownWait bounds the graceful part of stopping: answers being written
// are let finish (the calls themselves were cancelled with ctx), then every
// connection is closed. net/http's Shutdown alone waits 5 s for a client
// that connected and sent nothing, or half a request; a signal gives otter 3 s
// to stop before it exits without its cleanup (cmd/otter endGrace), which
// would lose the audit log's close and the last summary line
// (TestInterruptFinishesTheCleanupDespiteSilentClients).
const shutdownWait = 1500 * time.Millisecond

// Serve serves HTTP on ln until ctx is cancelled, with at most
// Options.MaxConnections connections open (see connLimiter).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	maxConns, fdLimit := connectionCap(s.opts.MaxConnections)
	limited := newConnLimiter(ln, maxConns)
	ln = limited
	srv := &http.Server{
		ConnState:         limited.connState,
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.timeouts.header,
		ReadTimeout:       s.timeouts.body, // bounds reading the request, not a streamed answer (TestHTTPReadTimeoutDoesNotCutLongCalls)
		IdleTimeout:       s.timeouts.idle,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	addr := ln.Addr().String()
	s.logger.Info("serving MCP over HTTP", append([]any{"addr", addr, "url", "http://" + addr + PathMCP,
		"auth", len(s.keys) > 0, "api_keys", len(s.keys), "allowed_origins", s.opts.AllowedOrigins, "allowed_hosts", s.opts.AllowedHosts,
		"max_connections", maxConns, "file_limit", fdLimit, "max_sessions", s.sessions.max, "max_sessions_per_key", s.sessions.perKey},
		s.summary()...)...)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve HTTP on %s: %w", addr, err)
	case <-ctx.Done():
	}
	// The summary of closed sessions first: it must not wait on clients.
	s.sessions.log.flush()
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownWait)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close() // silent clients and open SSE streams do not end by themselves
	}
	s.logger.Info("stopped serving", "addr", addr)
	return err
}

// Handler is the HTTP handler: /mcp (streamable HTTP), /health, /metrics.
// Every path is guarded by the Host and Origin checks; /mcp and /metrics
// need a bearer key when keys are configured.
func (s *Server) Handler() http.Handler {
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:         s.logger.With("component", "mcp-http"),
		SessionTimeout: sessionIdleTimeout,
		// Our own Host check below covers DNS rebinding and also accepts the
		// configured allowed_hosts, which the SDK's check would refuse on a
		// loopback listener (a local reverse proxy).
		DisableLocalhostProtection: len(s.opts.AllowedHosts) > 0,
		// With a shared store, replicas sit behind a load balancer: each
		// request stands alone, so any replica answers it (see docs/serve.md,
		// "Running several replicas").
		Stateless: s.store != nil || s.statelessHTTP,
	})
	mux := http.NewServeMux()
	mux.Handle(PathMCP, s.requireKey(s.identify(s.sessions.wrap(mcpHandler))))
	mux.Handle(PathMetrics, s.requireKey(s.metrics.handler()))
	mux.HandleFunc(PathHealth, s.health)
	h := s.guard(mux)
	return s.metrics.countHTTP(h)
}

// health answers GET /health.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	up := time.Since(s.start)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	body := map[string]any{
		"status":         "ok",
		"version":        s.opts.Version,
		"uptime":         up.Round(time.Second).String(),
		"uptime_seconds": int64(up.Seconds()),
		"tools":          s.toolNames(),
	}
	if s.store != nil {
		// The replica itself is up (200) either way; status says whether
		// it can apply the shared limits.
		store := map[string]any{"url": s.store.url, "on_store_error": s.store.onError, "replica_id": s.opts.ReplicaID, "status": "ok"}
		if err := s.store.ping(r.Context()); err != nil {
			store["status"], store["error"] = "unreachable", err.Error()
			body["status"] = "degraded"
		}
		body["store"] = store
	}
	_ = json.NewEncoder(w).Encode(body)
}

// guard applies the Host check (DNS rebinding), the Origin check and CORS.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r) {
			s.metrics.errors.inc("forbidden_host")
			s.logger.Warn("refused request with foreign Host header", "host", r.Host, "remote", r.RemoteAddr)
			http.Error(w, fmt.Sprintf("Forbidden: Host %q is not allowed (add it to [serve] allowed_hosts if it is yours)", r.Host), http.StatusForbidden)
			return
		}
		origin := r.Header.Get("Origin")
		listed := origin != "" && slices.ContainsFunc(s.opts.AllowedOrigins, func(o string) bool { return strings.EqualFold(o, origin) })
		if origin != "" && !listed && !sameOrigin(origin, r.Host) {
			s.metrics.errors.inc("forbidden_origin")
			s.logger.Warn("refused request from foreign Origin", "origin", origin, "remote", r.RemoteAddr)
			http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not allowed (add it to [serve] allowed_origins to allow it)", origin), http.StatusForbidden)
			return
		}
		if listed {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Last-Event-ID, Mcp-Session-Id, Mcp-Protocol-Version")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// hostAllowed checks the Host header. On a loopback listener only
// localhost names (and allowed_hosts) are accepted: a DNS-rebound name
// such as evil.example.com resolving to 127.0.0.1 is refused.
func (s *Server) hostAllowed(r *http.Request) bool {
	host := hostOnly(r.Host)
	if isLoopbackHost(host) {
		return true
	}
	for _, h := range s.opts.AllowedHosts {
		if strings.EqualFold(h, host) || strings.EqualFold(h, r.Host) {
			return true
		}
	}
	if len(s.opts.AllowedHosts) > 0 {
		return false
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return !ok || !isLoopbackAddr(local.String())
}

// sameOrigin reports whether a browser Origin names the host it is sent to.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, host)
}

// requireKey enforces bearer auth when keys are configured, with the SDK's
// middleware: 401 and WWW-Authenticate without a valid key. An address
// that has failed too often gets 429 and Retry-After instead (see
// authFailures); a good key always passes.
func (s *Server) requireKey(next http.Handler) http.Handler {
	if len(s.keys) == 0 {
		return next
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		match := s.keyIndex(token)
		if match < 0 {
			return nil, fmt.Errorf("%w: the bearer key is not one of [serve] api_keys", auth.ErrInvalidToken)
		}
		// UserID ties each MCP session to the key that opened it.
		return &auth.TokenInfo{UserID: keyClient(s.keys[match])}, nil
	}
	protected := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.keyIndex(bearerToken(r)) < 0 {
			addr := clientAddr(r)
			if ok, retry, first := s.authFails.fail(addr, time.Now()); !ok {
				s.tooManyFailures(w, r, addr, retry, first)
				return
			}
		}
		protected.ServeHTTP(&challengeWriter{ResponseWriter: w, r: r, metrics: s.metrics}, r)
	})
}

// bearerToken is the request's bearer key, "" without one (as the SDK's
// middleware reads it).
func bearerToken(r *http.Request) string {
	f := strings.Fields(r.Header.Get("Authorization"))
	if len(f) != 2 || !strings.EqualFold(f[0], "Bearer") {
		return ""
	}
	return f[1]
}

// keyIndex is the index of token among the API keys, -1 when it is none
// of them. It compares with every key, in constant time.
func (s *Server) keyIndex(token string) int {
	if token == "" {
		return -1
	}
	sum := sha256.Sum256([]byte(token))
	match := -1
	for i, k := range s.keys {
		if subtle.ConstantTimeCompare(sum[:], k[:]) == 1 {
			match = i
		}
	}
	return match
}

// tooManyFailures answers a failed authentication from an address that
// has failed too often: 429 and Retry-After, the connection closed
// without reading the body, as after a 401.
func (s *Server) tooManyFailures(w http.ResponseWriter, r *http.Request, addr string, retry time.Duration, first bool) {
	s.metrics.errors.inc("auth_throttled")
	if first {
		s.logger.Warn("too many failed authentications from one address: its failures are refused with 429 until it slows down; good keys still pass",
			"client_addr", addr, "remote", r.RemoteAddr, "retry_after", retry.String(),
			"allowed", fmt.Sprintf("%d at once, then one every %s", authFailBurst, authFailEvery))
	}
	secs := int64(retry / time.Second)
	h := w.Header()
	h.Set("Retry-After", strconv.FormatInt(secs, 10))
	h.Set("Connection", "close")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusTooManyRequests)
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	fmt.Fprintf(w, "Too Many Requests: too many requests without a valid key from %s; retry in %d s with one of [serve] api_keys\n", addr, secs)
}

// challengeWriter adds the WWW-Authenticate challenge to a 401 (RFC 6750 §3).
type challengeWriter struct {
	http.ResponseWriter
	r       *http.Request
	metrics *metrics
}

// The connection is closed right after a 401: the request's body is not
// read (a client without a key trickling one would otherwise hold the
// connection until the read timeout, 30 s), and a client without a key has
// no use for a kept-alive connection.
func (c *challengeWriter) WriteHeader(code int) {
	if code != http.StatusUnauthorized {
		c.ResponseWriter.WriteHeader(code)
		return
	}
	c.metrics.errors.inc("unauthorized")
	if c.Header().Get("WWW-Authenticate") == "" {
		v := `Bearer realm="otter"`
		if f := strings.Fields(c.r.Header.Get("Authorization")); len(f) == 2 && strings.EqualFold(f[0], "Bearer") {
			v += `, error="invalid_token"`
		}
		c.Header().Set("WWW-Authenticate", v)
	}
	c.Header().Set("Connection", "close")
	c.ResponseWriter.WriteHeader(code)
	// The server discards what it can of an unread body before closing;
	// a read deadline in the past makes that end at once.
	_ = http.NewResponseController(c.ResponseWriter).SetReadDeadline(time.Now())
}

// Unwrap lets http.ResponseController reach the underlying writer (SSE flushes).
func (c *challengeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// Flush supports SSE streams through the wrapper.
func (c *challengeWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// identify sets the caller's identity for the tool handlers: the hash of
// its key, or its remote IP when serving without keys.
func (s *Server) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client := ""
		if ti := auth.TokenInfoFromContext(r.Context()); ti != nil && ti.UserID != "" {
			client = ti.UserID
		} else {
			host, _, err := net.SplitHostPort(r.RemoteAddr)
			if err != nil {
				host = r.RemoteAddr
			}
			client = "addr:" + host
		}
		r.Header.Set(clientHeader, client)
		next.ServeHTTP(w, r)
	})
}
