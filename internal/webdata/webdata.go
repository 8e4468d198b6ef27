// Package webdata implements otter's built-in web-data tools: scrape_page,
// scrape_api, analyze_site, export_data, get_status and list_presets.
//
// The tools follow the tool protocol of seed 000 (§2–3): each has a JSON
// Schema for its input and MCP annotations, and each answers with the
// protocol's response envelope (id, tool, timestamp, duration_ms, status,
// result, metadata with the rate limit, errors) as structuredContent and as
// JSON text. A failure is a Result with IsError and one of the protocol's
// error codes (Code* constants); Call returns a Go error only when the
// caller's context ended.
//
// Every fetch goes through internal/safehttp, so no tool reaches loopback,
// private or metadata addresses unless [tools] allow_private_networks says
// so. Pages behind a captcha or a block are reported as CAPTCHA_REQUIRED or
// BLOCKED and never circumvented, robots.txt is respected unless
// [tools] respect_robots = false, and each tool has a token-bucket rate
// limit per client (WithClient).
//
// It imports assets, config, safehttp and tool of otter's packages; not
// the MCP client manager (internal/mcphost) nor oauth, which `otter mcp
// serve`, a user of these tools, does not link: get_status is handed the
// servers' states as ServerStatus values.
package webdata

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/safehttp"
	"github.com/otter-sh/otter/internal/tool"
)

// Error codes of the response envelope (seed 000 §3.3).
const (
	CodeInvalidParams   = "INVALID_PARAMS"
	CodeUnauthorized    = "UNAUTHORIZED"
	CodeForbidden       = "FORBIDDEN"
	CodeNotFound        = "NOT_FOUND"
	CodeRateLimited     = "RATE_LIMITED" // otter's own per-client limit ([tools.rate_limits.TOOL]), with retry_after
	CodeNetworkTimeout  = "NETWORK_TIMEOUT"
	CodeNetworkError    = "NETWORK_ERROR"
	CodeParseError      = "PARSE_ERROR"
	CodeCaptchaRequired = "CAPTCHA_REQUIRED"
	CodeBlocked         = "BLOCKED"
	CodeInternalError   = "INTERNAL_ERROR"
	// CodeQuotaExceeded is the answer of `otter mcp serve --daily-quota`
	// to a client that has used up its calls for the day.
	CodeQuotaExceeded = "QUOTA_EXCEEDED"
	// CodeUpstreamRateLimited reports that the site answered 429 Too Many
	// Requests; the details carry the site's Retry-After (retry_after). It
	// is not seed 000's RATE_LIMITED, which is otter's own limit and is
	// counted as such by `otter mcp serve`, nor BLOCKED (an address ban,
	// whose seed remedy of switching proxies would dodge the site's limit).
	CodeUpstreamRateLimited = "UPSTREAM_RATE_LIMITED"
)

// Tool names.
const (
	NameScrapePage  = "scrape_page"
	NameScrapeAPI   = "scrape_api"
	NameAnalyzeSite = "analyze_site"
	NameExportData  = "export_data"
	NameGetStatus   = "get_status"
	NameListPresets = "list_presets"
)

// PermissionGroups maps each tool to its permission group: "basic"
// (granted by default), "network" or "file". In otter's agent the tools of
// the network and file groups ask before they run (see
// tool.Info.NeedsConsent), read-only or not.
//
// Seed 000 §4.1 put analyze_site in "basic" (its tool table, §2, says
// "network"): it is read-only, but it fetches a URL the model chose, plus
// robots.txt, the sitemap and, at depth deep, up to 3 linked pages, so a
// prompt-injected model could carry data out in a query string as well as
// with scrape_page. It is in "network" and asks.
var PermissionGroups = map[string]string{
	NameGetStatus:   "basic",
	NameListPresets: "basic",
	NameAnalyzeSite: "network",
	NameScrapePage:  "network",
	NameScrapeAPI:   "network",
	NameExportData:  "file",
}

// Options configure the built-in tools.
type Options struct {
	Config config.Tools
	Paths  config.Paths // ExportDir defaults to Paths.DataDir/exports
	// Servers reports the MCP servers for get_status; may be nil. (The
	// app adapts its MCP client manager's statuses: webdata, which `otter
	// mcp serve` links, does not import the client manager.)
	Servers func() []ServerStatus
	// Recent reports the newest n tool calls of a caller (tool.CallerFrom)
	// for get_status; may be nil.
	Recent func(caller string, n int) []tool.CallRecord
	// CallerLimits says the caller enforces the rate limits itself (see
	// RateLimits): the tools take no token of their own.
	CallerLimits bool

	now func() time.Time // tests
}

// DefaultUserAgent is sent when [tools] user_agent is empty; robots.txt
// rules are matched against RobotsAgent.
const (
	DefaultUserAgent = "otter/1 (+https://github.com/otter-sh/otter)"
	RobotsAgent      = "otter"
)

// WithClient returns a context that attributes calls to client (an API key,
// a remote address): rate limits are kept per tool and client, and
// get_status shows a client its own calls. Calls on a context without one
// count against the client "local".
func WithClient(ctx context.Context, client string) context.Context {
	return tool.WithCaller(ctx, client)
}

// ClientFrom returns the client set by WithClient, or "local".
func ClientFrom(ctx context.Context) string {
	if c := tool.CallerFrom(ctx); c != "" {
		return c
	}
	return "local"
}

// toolkit is what the tools share.
type toolkit struct {
	opts      Options
	policy    *safehttp.Policy
	client    *http.Client // no proxy; shared for connection reuse
	clientOpt safehttp.ClientOptions
	robotsOn  bool
	robotsTxt *robotsCache
	exportDir string
	limits    *limiterSet
	presets   map[string]Preset
	now       func() time.Time
}

// Tools returns the built-in tools, in a stable order.
func Tools(opts Options) ([]tool.Tool, error) {
	policy, err := safehttp.NewPolicy(opts.Config.AllowPrivateNetworks)
	if err != nil {
		return nil, err
	}
	ua := opts.Config.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	copts := safehttp.ClientOptions{MaxBodyBytes: opts.Config.MaxBodyBytes, UserAgent: ua}
	client, err := policy.Client(copts)
	if err != nil {
		return nil, err
	}
	now := opts.now
	if now == nil {
		now = time.Now
	}
	limits, err := newLimiterSet(opts.Config.RateLimits, now)
	if err != nil {
		return nil, err
	}
	if opts.CallerLimits {
		for name, spec := range limits.specs {
			spec.RPM = -1
			limits.specs[name] = spec
		}
	}
	presets, err := loadPresets()
	if err != nil {
		return nil, err
	}
	exportDir := opts.Config.ExportDir
	if exportDir == "" && opts.Paths.DataDir != "" {
		exportDir = filepath.Join(opts.Paths.DataDir, "exports")
	}
	k := &toolkit{
		opts:      opts,
		policy:    policy,
		client:    client,
		clientOpt: copts,
		robotsOn:  opts.Config.RespectRobots == nil || *opts.Config.RespectRobots,
		robotsTxt: newRobotsCache(now),
		exportDir: exportDir,
		limits:    limits,
		presets:   presets,
		now:       now,
	}
	var out []tool.Tool
	for _, d := range []def{
		k.scrapePageDef(), k.scrapeAPIDef(), k.analyzeSiteDef(),
		k.exportDataDef(), k.getStatusDef(), k.listPresetsDef(),
	} {
		t, err := k.newTool(d)
		if err != nil {
			return nil, fmt.Errorf("webdata: tool %s: %w", d.name, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// def describes one tool to newTool.
type def struct {
	name, title, description string
	schema                   string // JSON Schema of the arguments
	annotations              *mcp.ToolAnnotations
	run                      func(ctx context.Context, args json.RawMessage) outcome
}

// outcome is what a tool's run returns: a result, errors, or both
// (status "partial").
type outcome struct {
	result any
	errs   []ErrorInfo
}

func failed(e ErrorInfo) outcome { return outcome{errs: []ErrorInfo{e}} }

type builtin struct {
	k      *toolkit
	def    def
	info   tool.Info
	schema *jsonschema.Resolved
}

func (k *toolkit) newTool(d def) (*builtin, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(d.schema), &s); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	return &builtin{k: k, def: d, schema: rs, info: tool.Info{
		Name:            d.name,
		Title:           d.title,
		Description:     d.description,
		InputSchema:     json.RawMessage(d.schema),
		OutputSchema:    json.RawMessage(envelopeSchema),
		Annotations:     d.annotations,
		PermissionGroup: PermissionGroups[d.name],
	}}, nil
}

// Info implements tool.Tool.
func (b *builtin) Info() tool.Info { return b.info }

// InvalidArguments implements tool.InvalidArgumentsAnswerer: arguments the
// Set rejected get the INVALID_PARAMS envelope, like those the tool rejects.
func (b *builtin) InvalidArguments(msg string) *tool.Result {
	return Refusal(b.def.name, b.k.now(), invalidParams("", "%s", msg))
}

// Call implements tool.Tool: it validates the arguments, takes a token from
// the caller's rate limit, runs the tool and wraps the outcome in the
// response envelope.
func (b *builtin) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	start := b.k.now()
	env := &Envelope{
		ID:        newRequestID(),
		Tool:      b.def.name,
		Timestamp: start.UTC(),
		Errors:    []ErrorInfo{},
	}
	env.Metadata.RequestID = env.ID
	finish := func(o outcome) (*tool.Result, error) {
		env.Result = o.result
		if o.errs != nil {
			env.Errors = o.errs
		}
		switch {
		case len(env.Errors) == 0:
			env.Status = StatusSuccess
		case o.result != nil:
			env.Status = StatusPartial
		default:
			env.Status = StatusFailed
		}
		env.DurationMS = b.k.now().Sub(start).Milliseconds()
		return env.toResult()
	}

	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var inst any
	if err := json.Unmarshal(args, &inst); err != nil {
		return finish(failed(invalidParams("", "the arguments are not valid JSON: %v", err)))
	}
	if err := b.schema.Validate(inst); err != nil {
		msg := strings.TrimPrefix(err.Error(), "validating root: ")
		return finish(failed(invalidParams("", "the arguments do not match the input schema of %s: %s", b.def.name, msg)))
	}

	rl, ok := b.k.limits.take(b.def.name, ClientFrom(ctx))
	env.Metadata.RateLimit = rl
	if rl != nil {
		env.Metadata.QuotaRemaining = &rl.Remaining
	}
	if !ok {
		return finish(failed(RateLimitedRefusal(b.def.name, rl.Limit, rl.Burst, rl.RetryAfter, b.k.now())))
	}

	o := b.def.run(ctx, args)
	if err := ctx.Err(); err != nil && o.result == nil {
		return nil, fmt.Errorf("%s: %w", b.def.name, err)
	}
	return finish(o)
}

func newRequestID() string {
	var b [8]byte
	rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}
