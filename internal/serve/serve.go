// Package serve offers otter's tools to other agents over MCP: `otter mcp
// serve` over stdio, or streamable HTTP with bearer-key auth, Host and
// Origin checks against DNS rebinding, CORS, Prometheus metrics, a health
// endpoint and an append-only audit ledger of every tool call.
//
// The MCP protocol itself (JSON-RPC, sessions, SSE streams, logging/setLevel)
// is the official go-sdk's; this package adds the governance around it.
// FromConfig builds a Server from the [serve], [serve.store] and [tools]
// configuration, as `otter mcp serve` runs it.
//
// It imports config, secret, tool and webdata of otter's packages; never
// app nor a front end.
package serve

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/webdata"
)

// Options configure a Server.
type Options struct {
	// Tools are the tools offered, under their names in the Set. Arguments
	// are validated against each tool's input schema by the Set. Required.
	Tools *tool.Set
	// Resources are served read-only (otter serves its extraction presets).
	Resources []Resource
	// Version is reported in serverInfo and /health.
	Version string
	// APIKeys enable bearer auth on HTTP ([serve] api_keys). Empty entries
	// (an unset ${OTTER_SERVE_KEY:-}) are an error, never "no auth".
	APIKeys []string
	// AllowedOrigins are browser origins ("https://app.example.com") allowed
	// to call the HTTP endpoint cross-origin ([serve] allowed_origins).
	AllowedOrigins []string
	// AllowedHosts are extra Host header values accepted besides localhost
	// names, e.g. the name of a reverse proxy ([serve] allowed_hosts).
	AllowedHosts []string
	// AuditLog is the audit ledger file; "" disables the ledger.
	AuditLog string
	// DailyQuota caps tool calls per client per day; 0 is unlimited.
	DailyQuota int
	// QuotaLocation is where the quota day starts at midnight; nil is UTC.
	QuotaLocation *time.Location
	// Store, when set, keeps the daily quotas and the tools' rate limits
	// in Redis, shared by every replica using it; HTTP is then served
	// statelessly, so that any replica answers any request.
	Store *StoreOptions
	// RateLimits are the tools' rate limits, enforced here with a Store
	// (the tools are then built to take no token themselves). Required
	// with a Store.
	RateLimits *webdata.RateLimits
	// ReplicaID names this server in each audit record; "" with a Store
	// is the host name and process id, without one none is written.
	ReplicaID string
	// MaxSessions caps the open HTTP sessions ([serve] max_sessions); past
	// it the idlest are closed. 0 means DefaultMaxSessions.
	MaxSessions int
	// MaxSessionsPerKey caps the open HTTP sessions of one API key
	// ([serve] max_sessions_per_key); past it that key's idlest are
	// closed. 0 means DefaultMaxSessionsPerKey.
	MaxSessionsPerKey int
	// MaxConnections caps the open HTTP connections ([serve]
	// max_connections), never above the file limit less a reserve. 0
	// means DefaultMaxConnections.
	MaxConnections int
	// CallTimeout bounds one tool call; 0 means DefaultCallTimeout.
	CallTimeout time.Duration
	// WithClient tells the tools who is calling, for per-client rate limits
	// (webdata.WithClient). nil: the tools are not told.
	WithClient func(ctx context.Context, client string) context.Context
	// Logger receives structured logs (the command writes JSON to stderr).
	Logger *slog.Logger
}

// Resource is one read-only resource.
type Resource struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	Text        string
}

// DefaultCallTimeout bounds a tool call when Options.CallTimeout is 0.
const DefaultCallTimeout = 5 * time.Minute

// ClientStdio is the client identity of the peer on stdio.
const ClientStdio = "stdio"

// Server serves a tool Set over MCP.
type Server struct {
	opts    Options
	logger  *slog.Logger
	mcp     *mcp.Server
	metrics *metrics
	ledger  *Ledger // nil: no audit ledger
	keys    [][sha256.Size]byte
	start   time.Time
	limits  limits
	store   *storeLimits // nil: limits in this process
	// reporter is reportLimits, made once rather than with every call.
	reporter webdata.LimitsReporter
	// sessions caps the open HTTP sessions (Options.MaxSessions).
	sessions *sessionCap
	// authFails limits failed authentication per client address.
	authFails *authFailures
	timeouts  httpTimeouts // of Serve's http.Server
	// statelessHTTP serves HTTP statelessly without a store (benchmarks
	// compare the two kinds of limits alike).
	statelessHTTP bool

	mu         sync.Mutex
	registered []string // tool names registered with the SDK server
}

// New builds a Server and opens its audit ledger.
func New(opts Options) (*Server, error) {
	if opts.Tools == nil {
		return nil, errors.New("serve: no tool set")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	s := &Server{
		opts:    opts,
		logger:  opts.Logger,
		metrics: newMetrics(),
		start:   time.Now(),
	}
	if opts.QuotaLocation == nil {
		opts.QuotaLocation = time.UTC
		s.opts.QuotaLocation = time.UTC
	}
	s.limits = memLimits{newQuotas(opts.DailyQuota, opts.QuotaLocation)}
	if opts.Store != nil {
		if opts.RateLimits == nil {
			return nil, errors.New("serve: a shared store needs the tools' rate limits")
		}
		st, err := newStoreLimits(*opts.Store, opts.DailyQuota, opts.QuotaLocation, opts.RateLimits, opts.Logger, s.metrics)
		if err != nil {
			return nil, err
		}
		s.store, s.limits = st, st
		if s.opts.ReplicaID == "" {
			s.opts.ReplicaID = defaultReplicaID()
		}
	}
	s.reporter = s.reportLimits
	s.timeouts = defaultHTTPTimeouts
	for i, k := range opts.APIKeys {
		if strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("[serve] api_keys entry %d is empty: if it reads \"${OTTER_SERVE_KEY:-}\", export OTTER_SERVE_KEY (e.g. OTTER_SERVE_KEY=$(openssl rand -hex 32)) before starting otter", i+1)
		}
		s.keys = append(s.keys, sha256.Sum256([]byte(k)))
	}
	s.sessions = newSessionCap(s, opts.MaxSessions, opts.MaxSessionsPerKey)
	s.authFails = newAuthFailures(authFailEvery, authFailBurst, authFailAddrs)
	for _, o := range opts.AllowedOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.Path != "" || u.RawQuery != "" || u.User != nil {
			return nil, fmt.Errorf("[serve] allowed_origins: %q is not an origin; write scheme://host[:port], e.g. \"https://app.example.org\"", o)
		}
	}
	if opts.AuditLog != "" {
		l, err := OpenLedger(opts.AuditLog)
		if err != nil {
			return nil, err
		}
		s.ledger = l
	}

	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "otter", Title: "otter", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: "otter's web-data tools: fetch and extract pages (scrape_page), call JSON APIs (scrape_api), " +
			"assess a site before scraping (analyze_site), export records (export_data). Pages behind captchas or blocks " +
			"are reported, never circumvented; robots.txt is respected. Rate limits apply per tool and client.",
		Logger: opts.Logger.With("component", "mcp-sdk"),
		Capabilities: &mcp.ServerCapabilities{
			Logging:   &mcp.LoggingCapabilities{},
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
		},
	})
	s.mcp.AddReceivingMiddleware(s.metrics.middleware, s.auditRejectedCalls)
	s.syncTools()
	opts.Tools.OnChange(s.syncTools)
	s.addResources()
	s.addPrompts()
	return s, nil
}

// MCPServer is the underlying go-sdk server.
func (s *Server) MCPServer() *mcp.Server { return s.mcp }

// Run serves one session on t (stdio: &mcp.StdioTransport{}) until the peer
// disconnects or ctx is cancelled.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	s.logger.Info("serving MCP", append([]any{"transport", "stdio"}, s.summary()...)...)
	err := s.mcp.Run(ctx, t)
	if err != nil && ctx.Err() != nil {
		return nil // interrupted: a clean stop
	}
	return err
}

// summary is the configuration logged at startup.
func (s *Server) summary() []any {
	audit := "off"
	if s.ledger != nil {
		audit = s.ledger.Path()
	}
	out := []any{"version", s.opts.Version, "tools", len(s.toolNames()), "resources", len(s.opts.Resources),
		"audit_log", audit, "daily_quota", s.opts.DailyQuota, "quota_timezone", s.opts.QuotaLocation.String(),
		"call_timeout", s.opts.CallTimeout.String()}
	if s.store != nil {
		out = append(out, "store", s.store.url, "on_store_error", s.store.onError, "replica_id", s.opts.ReplicaID)
	}
	return out
}

// Close writes the pending summary of closed sessions and closes the
// audit ledger.
func (s *Server) Close() error {
	s.sessions.log.flush()
	var errs []error
	if s.store != nil {
		errs = append(errs, s.store.close())
	}
	if s.ledger != nil {
		errs = append(errs, s.ledger.Close())
	}
	return errors.Join(errs...)
}

// syncTools registers the Set's tools with the SDK server; the SDK tells
// connected clients when the list changes.
func (s *Server) syncTools() {
	entries := s.opts.Tools.Entries()
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []string
	for _, n := range s.registered {
		if !slices.Contains(names, n) {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		s.mcp.RemoveTools(gone...)
	}
	for _, e := range entries {
		s.mcp.AddTool(sdkTool(e), s.toolHandler(e.Name))
	}
	s.registered = names
}

func (s *Server) toolNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.registered)
}

// sdkTool describes e to MCP clients: schemas and annotations as the tool
// declares them.
func sdkTool(e tool.Entry) *mcp.Tool {
	in := e.Info.InputSchema
	if len(in) == 0 {
		in = []byte(`{"type":"object"}`)
	}
	t := &mcp.Tool{
		Name:        e.Name,
		Title:       e.Info.Title,
		Description: e.Info.Description,
		InputSchema: in,
		Annotations: e.Info.Annotations,
	}
	if t.Description == "" {
		t.Description = cmp.Or(e.Info.Title, "otter tool "+e.Name)
	}
	if len(e.Info.OutputSchema) > 0 {
		t.OutputSchema = e.Info.OutputSchema
	}
	return t
}

// keyClient is the client identity of an API key: a short hash, never the key.
func keyClient(sum [sha256.Size]byte) string {
	return "key:" + hex.EncodeToString(sum[:6])
}
