// Package config loads otter's TOML configuration from its scopes (local,
// project, user), a project's .mcp.json, and the environment, and reports
// every error with the file and line it comes from.
package config

import "time"

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
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }

// Config is the resolved configuration.
type Config struct {
	MCP       MCP                 `toml:"mcp"`
	Agent     Agent               `toml:"agent"`
	Providers map[string]Provider `toml:"providers"`
	Tools     Tools               `toml:"tools"`
	Serve     Serve               `toml:"serve"`
	// Permissions maps qualified tool names or glob patterns to "allow",
	// "ask" or "deny" ([permissions] table).
	Permissions map[string]string `toml:"permissions"`

	// Files lists every file that contributed, lowest scope first.
	Files []Source `toml:"-"`
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
	Enabled             *bool    `toml:"enabled"` // nil means true
	AutoReload          bool     `toml:"auto_reload"`
	HealthCheckInterval Duration `toml:"health_check_interval"` // default 30s; 0 from config means default, negative disables
	// MaxReconnectAttempts bounds reconnection after a server drops (default 5).
	MaxReconnectAttempts int `toml:"max_reconnect_attempts"`
	// ReconnectDelay is the base delay; attempt n waits n × ReconnectDelay (default 1s).
	ReconnectDelay Duration `toml:"reconnect_delay"`
	Servers        []Server `toml:"servers"`
}

// IsEnabled reports whether MCP is on.
func (m MCP) IsEnabled() bool { return m.Enabled == nil || *m.Enabled }

// Server is one [[mcp.servers]] entry, after merging scopes and expanding
// ${VAR} references.
type Server struct {
	Name           string            `toml:"name"`
	Transport      string            `toml:"transport"` // stdio | sse | http; inferred from command/url when empty
	Command        string            `toml:"command"`
	Args           []string          `toml:"args"`
	Env            map[string]string `toml:"env"`
	Cwd            string            `toml:"cwd"`
	URL            string            `toml:"url"`
	Headers        map[string]string `toml:"headers"`
	Enabled        *bool             `toml:"enabled"`         // nil means true
	StartupTimeout Duration          `toml:"startup_timeout"` // connect + initialize + first list; default 30s
	Timeout        Duration          `toml:"timeout"`         // one tool call; default 5m
	AllowedTools   []string          `toml:"allowed_tools"`   // glob patterns on the server's own tool names
	DeniedTools    []string          `toml:"denied_tools"`
	OAuth          *OAuth            `toml:"oauth"`

	// Scope and File say where the server was defined (the highest scope
	// that set any field of it); Line is the line of its entry there.
	Scope Scope  `toml:"-"`
	File  string `toml:"-"`
	Line  int    `toml:"-"`
	// DisabledReason is set when the server must not start for a reason
	// other than enabled = false, e.g. an untrusted project directory.
	DisabledReason string `toml:"-"`
}

// IsEnabled reports whether the server should start.
func (s Server) IsEnabled() bool {
	return (s.Enabled == nil || *s.Enabled) && s.DisabledReason == ""
}

// OAuth is [mcp.servers.oauth].
type OAuth struct {
	ClientID          string   `toml:"client_id"`
	ClientSecret      string   `toml:"client_secret"`
	Scopes            []string `toml:"scopes"`
	ClientMetadataURL string   `toml:"client_metadata_url"`
	CallbackPort      int      `toml:"callback_port"`
}

// Agent is the [agent] table.
type Agent struct {
	Provider     string `toml:"provider"` // a key of [providers]
	Model        string `toml:"model"`
	MaxTurns     int    `toml:"max_turns"` // tool rounds per user message; default 50
	SystemPrompt string `toml:"system_prompt"`
	MaxTokens    int    `toml:"max_tokens"`
}

// Provider is one [providers.NAME] table.
type Provider struct {
	Type    string            `toml:"type"` // "openai" | "anthropic"
	BaseURL string            `toml:"base_url"`
	APIKey  string            `toml:"api_key"`
	Model   string            `toml:"model"` // default model for this provider
	Headers map[string]string `toml:"headers"`
}

// Tools is the [tools] table: settings of the built-in tools and the tool set.
type Tools struct {
	MaxOutputChars       int                  `toml:"max_output_chars"`       // default 100000
	AllowPrivateNetworks []string             `toml:"allow_private_networks"` // CIDRs the web tools may reach
	RespectRobots        *bool                `toml:"respect_robots"`         // default true
	ExportDir            string               `toml:"export_dir"`             // default $XDG_DATA_HOME/otter/exports
	MaxBodyBytes         int64                `toml:"max_body_bytes"`         // default 10 MiB
	UserAgent            string               `toml:"user_agent"`
	RateLimits           map[string]RateLimit `toml:"rate_limits"`
}

// RateLimit is [tools.rate_limits.TOOL].
type RateLimit struct {
	RPM   float64 `toml:"rpm"`
	Burst int     `toml:"burst"`
}

// Serve is the [serve] table for `otter mcp serve`.
type Serve struct {
	APIKeys        []string `toml:"api_keys"`
	AllowedOrigins []string `toml:"allowed_origins"`
	AllowedHosts   []string `toml:"allowed_hosts"`
	AuditLog       string   `toml:"audit_log"` // default $XDG_STATE_HOME/otter/audit.jsonl
}
