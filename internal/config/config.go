// Package config loads otter's TOML configuration from its scopes (local,
// project, user), a project's .mcp.json, and the environment, and reports
// every error with the file and line it comes from.
//
// It sits low among otter's packages: besides the standard library and
// the TOML library it imports filelock, hooks, projectfile, sandbox,
// secret, termtext and toolname of otter's packages, nothing above them.
package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Scope is where a setting came from. Higher scopes override lower ones.
type Scope string

const (
	ScopeUser    Scope = "user"    // $XDG_CONFIG_HOME/otter/config.toml
	ScopeProject Scope = "project" // .otter/config.toml or .mcp.json, walking up from the working directory
	ScopeLocal   Scope = "local"   // .otter/config.local.toml (not committed)
	ScopeFlag    Scope = "flag"    // given on the command line (--config, ad hoc servers)
)

// Transport names.
const (
	TransportStdio = "stdio"
	TransportSSE   = "sse"
	TransportHTTP  = "http"
	// TransportAuto tries streamable HTTP and falls back to legacy SSE when
	// the server refuses it, as the MCP spec describes for old servers.
	TransportAuto = "auto"
)

// Duration is a time.Duration that reads from TOML strings like "30s".
type Duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
// It writes the shortest form time.ParseDuration reads back: "5m", not "5m0s".
func (d Duration) MarshalText() ([]byte, error) {
	s := d.Duration.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return []byte(s), nil
}

// Config is the resolved configuration.
type Config struct {
	MCP       MCP                 `toml:"mcp,omitempty"`
	Agent     Agent               `toml:"agent,omitempty"`
	Providers map[string]Provider `toml:"providers,omitempty"`
	Tools     Tools               `toml:"tools,omitempty"`
	Serve     Serve               `toml:"serve,omitempty"`
	Sessions  Sessions            `toml:"sessions,omitempty"`
	// Instructions is [instructions]: which instruction files (AGENTS.md
	// and the like) the model gets, and how much of them.
	Instructions Instructions `toml:"instructions,omitempty"`
	// Pricing maps model names to their prices ([pricing."MODEL"]); it
	// overrides otter's built-in price table.
	Pricing map[string]Price `toml:"pricing,omitempty"`
	// Permissions maps qualified tool names or glob patterns to "allow",
	// "ask" or "deny" ([permissions] table).
	Permissions map[string]string `toml:"permissions,omitempty"`
	// Hooks are commands run at points of a conversation ([[hooks.EVENT]]
	// groups, Claude Code's hooks written as TOML). Unlike other tables, the
	// hooks of every trusted file add up: a project's hooks run besides the
	// user's. Each command carries the file it came from.
	Hooks map[string][]HookGroup `toml:"hooks,omitempty"`
	// Sandbox is [sandbox]: what otter does where it cannot confine a
	// stdio server.
	Sandbox Sandbox `toml:"sandbox,omitempty"`

	// Files lists every file that contributed, lowest scope first.
	Files []Source `toml:"-"`
	// Project is the project directory (see ProjectDir); "" if none.
	Project string `toml:"-"`
	// ProjectTrust is the project's executable configuration (servers,
	// hooks, commands, skills, settings) against the user's trust: what
	// trusting it enables, and in a trusted project what was added or
	// changed since and so is held back.
	ProjectTrust ProjectTrust `toml:"-"`
	// Warnings are problems that do not stop otter but cost the user
	// something, such as two servers whose tools get the same names. Each
	// names the file and line to change; `otter config validate` prints them.
	Warnings []*Error `toml:"-"`
}

// NeedsTrust reports whether a project-scope file was held back because
// the user has not trusted Project yet (see Paths.Trust).
func (c *Config) NeedsTrust() bool {
	for _, f := range c.Files {
		if !f.Trusted {
			return true
		}
	}
	return false
}

// Source is one configuration file that was read.
type Source struct {
	Path  string
	Scope Scope
	// Trusted is false for project-scope files in a directory the user has
	// not trusted; their servers are disabled.
	Trusted bool
}

// MCP is the [mcp] table.
type MCP struct {
	Enabled             *bool    `toml:"enabled,omitempty"` // nil means true
	AutoReload          bool     `toml:"auto_reload,omitempty"`
	HealthCheckInterval Duration `toml:"health_check_interval,omitempty"` // default 30s; 0 from config means default, negative disables
	// MaxReconnectAttempts bounds reconnection after a server drops (default 5).
	MaxReconnectAttempts int `toml:"max_reconnect_attempts,omitzero"`
	// ReconnectDelay is the base delay; attempt n waits n × ReconnectDelay (default 1s).
	ReconnectDelay Duration `toml:"reconnect_delay,omitempty"`
	// Lazy lets a server whose tools are deferred behind tool_search, and
	// known from an earlier connection (its pins), stay idle until one of
	// its tools, resources or prompts is needed. nil means true; false
	// starts every server at launch. A server's own lazy wins.
	Lazy *bool `toml:"lazy,omitempty"`
	// IdleTimeout stops a server that started when it was needed (it was
	// idle) once it has been unused this long; it is idle again. 0: never.
	// A server's own idle_timeout wins.
	IdleTimeout Duration `toml:"idle_timeout,omitempty"`
	// Registry is the MCP Registry `otter mcp search` and `add
	// --from-registry` ask; "" means DefaultRegistry.
	Registry string   `toml:"registry,omitempty"`
	Servers  []Server `toml:"servers,omitempty"`
}

// DefaultRegistry is the official MCP Registry.
const DefaultRegistry = "https://registry.modelcontextprotocol.io"

// IsEnabled reports whether MCP is on.
func (m MCP) IsEnabled() bool { return m.Enabled == nil || *m.Enabled }

// StartsLazily reports whether srv may stay idle until it is needed
// ([mcp] lazy and the server's lazy; always_load servers start at launch).
func (m MCP) StartsLazily(srv Server) bool {
	switch {
	case srv.AlwaysLoad:
		return false
	case srv.Lazy != nil:
		return *srv.Lazy
	}
	return m.Lazy == nil || *m.Lazy
}

// IdleTimeoutOf is how long srv, started when it was needed, may sit
// unused before it is stopped again: its idle_timeout, else [mcp]'s; 0
// means never.
func (m MCP) IdleTimeoutOf(srv Server) time.Duration {
	if srv.IdleTimeout.Duration > 0 {
		return srv.IdleTimeout.Duration
	}
	return max(m.IdleTimeout.Duration, 0)
}

// Server is one [[mcp.servers]] entry, after merging scopes and expanding
// ${VAR} references.
type Server struct {
	Name      string            `toml:"name,omitempty"`
	Transport string            `toml:"transport,omitempty"` // stdio | sse | http; inferred from command/url when empty
	Command   string            `toml:"command,omitempty"`
	Args      []string          `toml:"args,omitempty"`
	Env       map[string]string `toml:"env,omitempty"`
	Cwd       string            `toml:"cwd,omitempty"`
	// Roots are the directories offered to the server as MCP roots
	// (absolute, ~/…, or relative as cwd is). Unset: the working
	// directory. Empty (roots = []): none, and the roots capability is not
	// offered, so a server such as server-filesystem keeps the directories
	// on its command line.
	Roots          []string          `toml:"roots,omitempty"`
	URL            string            `toml:"url,omitempty"`
	Headers        map[string]string `toml:"headers,omitempty"`
	Enabled        *bool             `toml:"enabled,omitempty"`         // nil means true
	StartupTimeout Duration          `toml:"startup_timeout,omitempty"` // connect + initialize + first list; default 30s
	Timeout        Duration          `toml:"timeout,omitempty"`         // one tool call; default 5m
	AllowedTools   []string          `toml:"allowed_tools,omitempty"`   // glob patterns on the server's own tool names
	DeniedTools    []string          `toml:"denied_tools,omitempty"`
	OAuth          *OAuth            `toml:"oauth,omitempty"`
	// AlwaysLoad keeps the server's tools offered to the model when the
	// other MCP tools are deferred behind tool_search.
	AlwaysLoad bool `toml:"always_load,omitempty"`
	// Sandbox loosens or turns off a stdio server's confinement (see
	// package sandbox); nil: the default policy.
	Sandbox *ServerSandbox `toml:"sandbox,omitempty"`
	// PinTools pins the server's tool definitions and instructions the
	// first time otter sees them and holds back what changes later until
	// the person approves it (internal/pins). nil means true; false turns
	// pinning off for this server.
	PinTools *bool `toml:"pin_tools,omitempty"`
	// Lazy, when false, starts the server at launch even when its tools
	// are deferred and known (see MCP.Lazy); nil: [mcp] lazy decides.
	Lazy *bool `toml:"lazy,omitempty"`
	// IdleTimeout overrides [mcp] idle_timeout for this server.
	IdleTimeout Duration `toml:"idle_timeout,omitempty"`

	// Scope and File say where the server was defined (the highest scope
	// that set any field of it); Line is the line of its entry there.
	Scope Scope  `toml:"-"`
	File  string `toml:"-"`
	Line  int    `toml:"-"`
	// DisabledReason is set when the server must not start for a reason
	// other than enabled = false, e.g. an untrusted project directory.
	DisabledReason string `toml:"-"`
	// Untrusted is set when the server comes from a project-scope file of
	// a directory the user has not trusted (DisabledReason says so);
	// trusting Config.Project lets it start.
	Untrusted bool `toml:"-"`
	// Problem, when not nil, is why this enabled server cannot start: the
	// ${VAR} references in it that could not be expanded (an unset
	// variable without a default, a malformed reference). Each is an
	// *Error naming the variable, the server, file:line and what to do;
	// several are joined with errors.Join. The fields concerned keep the
	// text as written. Load does not fail on it, so that one server's
	// missing variable does not stop the others: the MCP manager reports
	// the server failed with this reason and never starts it, and `otter
	// config validate` reports it as a configuration error (see
	// Config.ServerProblems). Servers that do not start anyway (disabled,
	// untrusted) get no Problem.
	Problem error `toml:"-"`
}

// IsEnabled reports whether the server is meant to start (enabled = true,
// trusted, not held back). An enabled server may still be unable to start
// because of its Problem.
func (s Server) IsEnabled() bool {
	return (s.Enabled == nil || *s.Enabled) && s.DisabledReason == ""
}

// ServerProblems returns the Problem of every server, joined with
// errors.Join, or nil if no server has one: what `otter config validate`
// reports on top of Load's own errors.
func (c *Config) ServerProblems() error {
	var errs []error
	for _, s := range c.MCP.Servers {
		if s.Problem != nil {
			errs = append(errs, s.Problem)
		}
	}
	return errors.Join(errs...)
}

// OAuth is [mcp.servers.oauth].
type OAuth struct {
	// Grant is how otter obtains tokens: GrantAuthorizationCode (the
	// default: a person logs in in a browser) or GrantClientCredentials (a
	// machine client with its own credentials; no person, no browser). The
	// client_credentials grant uses client_id with client_secret or a
	// private key, and requests the scopes the server asks for; scopes,
	// client_metadata_url and callback_port apply to browser logins only.
	Grant             string   `toml:"grant,omitempty"`
	ClientID          string   `toml:"client_id,omitempty"`
	ClientSecret      string   `toml:"client_secret,omitempty"`
	Scopes            []string `toml:"scopes,omitempty"`
	ClientMetadataURL string   `toml:"client_metadata_url,omitempty"`
	CallbackPort      int      `toml:"callback_port,omitzero"`
	// PrivateKeyFile and PrivateKeyPEM give the private key (PEM: PKCS #8,
	// SEC 1 EC or PKCS #1 RSA) for private_key_jwt client authentication
	// (RFC 7523) with the client_credentials grant, instead of a
	// client_secret. At most one is set; a relative file is resolved
	// against the directory of the config file that names it.
	PrivateKeyFile string `toml:"private_key_file,omitempty"`
	PrivateKeyPEM  string `toml:"private_key_pem,omitempty"`
	// SigningAlg is the JWS algorithm of the client assertion (e.g. ES256,
	// RS256, EdDSA); empty means the usual one for the key's type.
	SigningAlg string `toml:"signing_alg,omitempty"`
}

// OAuth grants of OAuth.Grant.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
)

// SigningAlgs are the values OAuth.SigningAlg accepts.
var SigningAlgs = []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"}

// IsClientCredentials reports whether o selects the client_credentials
// grant.
func (o *OAuth) IsClientCredentials() bool { return o != nil && o.Grant == GrantClientCredentials }

// Agent is the [agent] table.
type Agent struct {
	Provider     string `toml:"provider,omitempty"` // a key of [providers]
	Model        string `toml:"model,omitempty"`
	MaxTurns     int    `toml:"max_turns,omitzero"` // tool rounds per user message; default 50
	SystemPrompt string `toml:"system_prompt,omitempty"`
	MaxTokens    int    `toml:"max_tokens,omitzero"`
	// ToolSearch is when MCP tools are deferred behind the built-in
	// tool_search tool: ToolSearchAuto (the default: when their
	// definitions pass ToolSearchBudget or their count the provider's
	// cap), ToolSearchAlways or ToolSearchNever.
	ToolSearch string `toml:"tool_search,omitempty"`
	// ToolSearchBudget is how many tokens the MCP tools' definitions may
	// take in a request before they are deferred; 0 means 10 % of the
	// model's context window.
	ToolSearchBudget int `toml:"tool_search_budget,omitzero"`
	// CompactAt is the share of the model's context window at which otter
	// compacts the conversation before the next request (default 0.8).
	CompactAt float64 `toml:"compact_at,omitzero"`
}

// Values of Agent.ToolSearch.
const (
	ToolSearchAuto   = "auto"
	ToolSearchAlways = "always"
	ToolSearchNever  = "never"
)

// DefaultCompactAt is [agent] compact_at when no file sets it.
const DefaultCompactAt = 0.8

// Provider is one [providers.NAME] table.
type Provider struct {
	Type    string            `toml:"type,omitempty"` // "openai" | "openai-responses" | "anthropic"
	BaseURL string            `toml:"base_url,omitempty"`
	APIKey  string            `toml:"api_key,omitempty"`
	Model   string            `toml:"model,omitempty"` // default model for this provider
	Headers map[string]string `toml:"headers,omitempty"`
	// ContextWindow and MaxOutputTokens give the limits of this provider's
	// models in tokens, for models otter does not know (a local server
	// reports neither); 0 = otter's built-in figure or its default.
	ContextWindow   int `toml:"context_window,omitzero"`
	MaxOutputTokens int `toml:"max_output_tokens,omitzero"`
	// Models overrides those limits per model ([providers.NAME.models."MODEL"]).
	Models map[string]ModelLimits `toml:"models,omitempty"`
	// Thinking is how much the model reasons before answering: "off",
	// "low", "medium", "high" or (Anthropic) a token budget ≥ 1024;
	// "" = off.
	Thinking string `toml:"thinking,omitempty"`
	// Problem, when not nil, is why this provider cannot be used: a
	// ${VAR} in its api_key, base_url or headers that could not be
	// expanded (an *Error naming file and line; several joined with
	// errors.Join). It fails only what builds the provider (llmconfig.FromConfig),
	// not Load; `otter config validate` reports it for [agent]'s provider.
	Problem error `toml:"-"`
}

// ModelLimits is one [providers.NAME.models."MODEL"] table.
type ModelLimits struct {
	ContextWindow   int `toml:"context_window,omitzero"`
	MaxOutputTokens int `toml:"max_output_tokens,omitzero"`
}

// Price is one [pricing."MODEL"] table: US dollars per million tokens.
type Price struct {
	Input  float64 `toml:"input,omitzero"`
	Output float64 `toml:"output,omitzero"`
	// CachedInput is the price of input tokens read from the provider's
	// prompt cache; 0 = the input price.
	CachedInput float64 `toml:"cached_input,omitzero"`
	// CacheWrite is the price of input tokens written to the cache
	// (Anthropic); 0 = the input price.
	CacheWrite float64 `toml:"cache_write,omitzero"`
}

// Tools is the [tools] table: settings of the built-in tools and the tool set.
type Tools struct {
	MaxOutputChars       int                  `toml:"max_output_chars,omitzero"`        // default 100000
	AllowPrivateNetworks []string             `toml:"allow_private_networks,omitempty"` // CIDRs the web tools may reach
	RespectRobots        *bool                `toml:"respect_robots,omitempty"`         // default true
	ExportDir            string               `toml:"export_dir,omitempty"`             // default $XDG_DATA_HOME/otter/exports
	MaxBodyBytes         int64                `toml:"max_body_bytes,omitzero"`          // default 10 MiB
	UserAgent            string               `toml:"user_agent,omitempty"`
	RateLimits           map[string]RateLimit `toml:"rate_limits,omitempty"`
	// Local turns the tools for the project on or off (read_file,
	// find_files, search_files, edit_file, write_file, run_command,
	// command_output); nil means on.
	Local *bool `toml:"local,omitempty"`
}

// LocalEnabled reports whether the tools for the project are offered.
func (t Tools) LocalEnabled() bool { return t.Local == nil || *t.Local }

// RateLimit is [tools.rate_limits.TOOL].
type RateLimit struct {
	RPM   float64 `toml:"rpm,omitzero"`
	Burst int     `toml:"burst,omitzero"`
}

// Sessions is the [sessions] table: the saved conversations.
type Sessions struct {
	Enabled  *bool `toml:"enabled,omitempty"`   // nil means true
	KeepDays *int  `toml:"keep_days,omitempty"` // nil means DefaultKeepDays; 0 keeps every session
}

// Instructions is [instructions].
type Instructions struct {
	// Fallback are the names read in a directory without AGENTS.md; nil
	// means CLAUDE.md, GEMINI.md; an empty list reads AGENTS.md only.
	Fallback *[]string `toml:"fallback,omitempty"`
	// MaxBytes caps the files' total; 0 means 32 KiB.
	MaxBytes int `toml:"max_bytes,omitzero"`
}

// FallbackNames is Fallback with nil kept as nil (the default names).
func (i Instructions) FallbackNames() []string {
	if i.Fallback == nil {
		return nil
	}
	return append([]string{}, *i.Fallback...)
}

// DefaultKeepDays is how long a session is kept after its last message
// when [sessions] keep_days is not set.
const DefaultKeepDays = 30

// IsEnabled reports whether conversations are saved.
func (s Sessions) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Retention is keep_days with its default: sessions last updated more
// days ago are deleted at start; 0 keeps them all.
func (s Sessions) Retention() int {
	if s.KeepDays == nil {
		return DefaultKeepDays
	}
	return *s.KeepDays
}

// Serve is the [serve] table for `otter mcp serve`.
type Serve struct {
	APIKeys []string `toml:"api_keys,omitempty"`
	// KeysError reports api_keys entries whose ${VAR} could not be expanded
	// (those entries are left empty). Only `otter mcp serve --http` needs
	// the keys, so only it fails on this.
	KeysError error `toml:"-"`
	// APIKeySources say where each api_keys entry comes from, for
	// messages that must not show the key: the environment variables it
	// names ("from $OTTER_SERVE_KEY") or "written in the file", then the
	// file and line.
	APIKeySources  []string `toml:"-"`
	AllowedOrigins []string `toml:"allowed_origins,omitempty"`
	AllowedHosts   []string `toml:"allowed_hosts,omitempty"`
	AuditLog       string   `toml:"audit_log,omitempty"` // default $XDG_STATE_HOME/otter/audit.jsonl
	// MaxSessions caps the open MCP sessions of otter mcp serve --http;
	// past it the idlest are closed. 0: the default (1000).
	MaxSessions int `toml:"max_sessions,omitzero"`
	// MaxSessionsPerKey caps the open MCP sessions of one API key; past it
	// that key's idlest are closed. 0: the default (100).
	MaxSessionsPerKey int `toml:"max_sessions_per_key,omitzero"`
	// MaxConnections caps the open HTTP connections, never above the file
	// limit less a reserve. 0: the default (10000).
	MaxConnections int `toml:"max_connections,omitzero"`
	// QuotaTimezone is the IANA zone whose midnight starts a new quota day
	// ("Europe/Berlin"); "" is UTC.
	QuotaTimezone string `toml:"quota_timezone,omitempty"`
	// ReplicaID names this server in the audit ledger ("" with a store:
	// host name and process id).
	ReplicaID string `toml:"replica_id,omitempty"`
	// Store shares rate limits and quotas between replicas ([serve.store]).
	Store ServeStore `toml:"store,omitempty"`
}

// ServeStore is the [serve.store] table: a Redis server that replicas of
// otter mcp serve --http share their limits through.
type ServeStore struct {
	// URL is redis://[user:password@]host:port[/db] or rediss:// for TLS;
	// ${VAR} is expanded (keep the password in the environment).
	URL string `toml:"url,omitempty"`
	// URLError reports a ${VAR} in url that could not be expanded; only
	// the serve command needs the store, so only it fails on this.
	URLError error `toml:"-"`
	// OnStoreError is "deny" (the default: refuse calls while the store is
	// unreachable) or "local" (fall back to limits in this process).
	OnStoreError string `toml:"on_store_error,omitempty"`
	// Prefix namespaces the keys in Redis; "" is "otter".
	Prefix string `toml:"prefix,omitempty"`
}

// RateLimitedTools are the built-in tools a [tools.rate_limits.TOOL] table
// may name; internal/webdata's DefaultRateLimits has one entry for each
// (a test there holds the two together).
var RateLimitedTools = []string{"scrape_page", "scrape_api", "analyze_site", "export_data", "get_status", "list_presets"}

// HookGroup is a [[hooks.EVENT]] group: a matcher (a regular expression on
// the tool name, for the tool events) and the hooks that run when it
// matches.
type HookGroup struct {
	Matcher string        `toml:"matcher,omitempty"`
	Hooks   []HookCommand `toml:"hooks"`
}

// HookCommand is one [[hooks.EVENT.hooks]] entry.
type HookCommand struct {
	// Type is "command", the only kind otter runs.
	Type    string `toml:"type"`
	Command string `toml:"command"`
	// Timeout is in seconds, as Claude Code and Codex write it; 0 means the
	// default (60).
	Timeout int `toml:"timeout,omitempty"`
	// File and Line are where it was configured.
	File string `toml:"-"`
	Line int    `toml:"-"`
}

// ServerSandbox is a server's sandbox = { … } table.
type ServerSandbox struct {
	Enabled *bool           `toml:"enabled,omitempty"` // nil means true
	Read    []string        `toml:"read,omitempty"`    // trees it may read besides the default (a secret folder it needs)
	Write   []string        `toml:"write,omitempty"`   // trees it may write besides the project, the temporary directory and its runner's caches
	Network *SandboxNetwork `toml:"network,omitempty"` // nil means true
}

// IsEnabled reports whether the server runs confined (where the system
// can confine it).
func (s *ServerSandbox) IsEnabled() bool { return s == nil || s.Enabled == nil || *s.Enabled }

// NetworkAllowed reports whether the server may reach any host.
func (s *ServerSandbox) NetworkAllowed() bool { return s == nil || s.Network == nil || s.Network.Any }

// NetworkHosts are the only hosts the server may reach (through otter's
// filtering proxy): nil unless sandbox.network is a list. An empty list
// reaches none, as network = false.
func (s *ServerSandbox) NetworkHosts() []string {
	if s == nil || s.Network == nil {
		return nil
	}
	return s.Network.Hosts
}

// SandboxNetwork is a server's sandbox.network: true (any host), false
// (none: no connection out), or a list of the hosts it may reach
// (["api.github.com", "*.example.org"]), through a proxy otter runs.
type SandboxNetwork struct {
	Any   bool     // network = true
	Hosts []string // network = [...]; with Any false and no hosts: network = false
}

// UnmarshalTOML takes true, false or an array of strings.
func (n *SandboxNetwork) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case bool:
		*n = SandboxNetwork{Any: v}
		return nil
	case []any:
		hosts := make([]string, 0, len(v))
		for _, e := range v {
			h, ok := e.(string)
			if !ok {
				return fmt.Errorf("each host is a string in quotes, such as \"api.github.com\", not %v", e)
			}
			hosts = append(hosts, h)
		}
		*n = SandboxNetwork{Hosts: hosts}
		return nil
	}
	return fmt.Errorf("must be true, false or a list of host names such as [\"api.github.com\", \"*.example.org\"], not %q", fmt.Sprint(v))
}

// MarshalTOML writes it back as it is written: true, false or the list.
func (n SandboxNetwork) MarshalTOML() ([]byte, error) {
	if n.Hosts == nil {
		return []byte(strconv.FormatBool(n.Any)), nil
	}
	quoted := make([]string, len(n.Hosts))
	for i, h := range n.Hosts {
		quoted[i] = strconv.Quote(h)
	}
	return []byte("[" + strings.Join(quoted, ", ") + "]"), nil
}

// Sandbox is the [sandbox] table.
type Sandbox struct {
	// Required refuses to start a stdio server that cannot be confined
	// (no Landlock in the kernel, another system) instead of running it
	// unconfined with a warning. A server with sandbox.enabled = false
	// still starts: the user said so.
	Required bool `toml:"required,omitempty"`
	// Commands loosens or turns off the sandbox of the commands the model
	// runs (run_command), as a server's sandbox = { … } does its: read and
	// write add trees, network = false keeps them off the network,
	// enabled = false runs them unconfined. Nil: the default.
	Commands *ServerSandbox `toml:"commands,omitempty"`
	// CommandsFile and CommandsLine say where Commands is set ("" when it
	// is not), for the hint of a refusal.
	CommandsFile string `toml:"-"`
	CommandsLine int    `toml:"-"`
}
