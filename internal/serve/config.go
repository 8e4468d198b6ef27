package serve

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/webdata"
)

// ConfigOptions are what a front end chose for serving otter's built-in
// tools to other agents over MCP; the rest comes from the configuration.
type ConfigOptions struct {
	// Load says where the configuration comes from.
	Load config.LoadOptions
	// HTTP is set when the tools are served over HTTP (else stdio): API
	// keys and the listen address's checks apply to HTTP only.
	HTTP       bool
	HTTPAddr   string
	DailyQuota int // per API key; 0: none
	// CallTimeout bounds each tool call; 0: the server's default.
	CallTimeout time.Duration
	Version     string
	Logger      *slog.Logger
}

// ErrLedgerOnStdout: [serve] audit_log = "-" asks for the audit ledger on
// stdout, which over stdio carries the MCP messages. The front end says how
// to serve over HTTP instead.
var ErrLedgerOnStdout = fmt.Errorf("[serve] audit_log = %q writes the audit ledger to stdout, but over stdio stdout carries the MCP messages", LedgerStdout)

// FromConfig builds the MCP server that offers otter's built-in web-data
// tools and its presets as resources, from the [serve], [serve.store] and
// [tools] configuration. Every problem of the configuration is an error
// before anything listens.
func FromConfig(o ConfigOptions) (*Server, error) {
	cfg, err := config.Load(o.Load)
	if err != nil {
		return nil, err
	}
	paths := o.Load.Paths
	if o.HTTP && cfg.Serve.KeysError != nil {
		return nil, fmt.Errorf("[serve] api_keys: %w", cfg.Serve.KeysError)
	}
	if o.HTTP {
		// Refuse before building anything, with the message that says how to fix it.
		if err := CheckAddr(o.HTTPAddr, len(cfg.Serve.APIKeys) > 0); err != nil {
			return nil, err
		}
	}
	if o.HTTP {
		if err := checkKeyLengths(cfg.Serve); err != nil {
			return nil, err
		}
	}
	if cfg.Serve.Store.URLError != nil {
		return nil, fmt.Errorf("[serve.store] url: %w", cfg.Serve.Store.URLError)
	}
	if !o.HTTP && cfg.Serve.AuditLog == LedgerStdout {
		return nil, ErrLedgerOnStdout
	}
	quotaLoc := time.UTC
	if tz := cfg.Serve.QuotaTimezone; tz != "" {
		if quotaLoc, err = time.LoadLocation(tz); err != nil {
			return nil, fmt.Errorf("[serve] quota_timezone: %w", err)
		}
	}
	var store *StoreOptions
	var rates *webdata.RateLimits
	if cfg.Serve.Store.URL != "" {
		store = &StoreOptions{URL: cfg.Serve.Store.URL, OnError: cfg.Serve.Store.OnStoreError, Prefix: cfg.Serve.Store.Prefix}
		if rates, err = webdata.NewRateLimits(cfg.Tools.RateLimits); err != nil {
			return nil, err
		}
	}

	set := tool.NewSet(tool.Options{MaxOutputChars: cfg.Tools.MaxOutputChars, SpillDir: filepath.Join(paths.CacheDir, "outputs")})
	builtins, err := webdata.Tools(webdata.Options{Config: cfg.Tools, Paths: paths, Recent: set.RecentBy, CallerLimits: store != nil})
	if err != nil {
		return nil, fmt.Errorf("built-in tools: %w", err)
	}
	set.SetBuiltins(builtins)

	auditLog := cfg.Serve.AuditLog
	if auditLog == "" {
		auditLog = filepath.Join(paths.StateDir, "audit.jsonl")
	}
	// API keys guard HTTP only: over stdio the client is the local user who
	// started otter (Claude Desktop, say), whose environment may well lack
	// the variable the keys come from.
	var apiKeys []string
	if o.HTTP {
		apiKeys = cfg.Serve.APIKeys
	}
	return New(Options{
		Tools:             set,
		Resources:         presetResources(),
		Version:           o.Version,
		APIKeys:           apiKeys,
		AllowedOrigins:    cfg.Serve.AllowedOrigins,
		AllowedHosts:      cfg.Serve.AllowedHosts,
		AuditLog:          auditLog,
		DailyQuota:        o.DailyQuota,
		QuotaLocation:     quotaLoc,
		Store:             store,
		RateLimits:        rates,
		ReplicaID:         cfg.Serve.ReplicaID,
		MaxSessions:       cfg.Serve.MaxSessions,
		MaxSessionsPerKey: cfg.Serve.MaxSessionsPerKey,
		MaxConnections:    cfg.Serve.MaxConnections,
		CallTimeout:       o.CallTimeout,
		WithClient:        webdata.WithClient,
		Logger:            o.Logger,
	})
}

// ShortKeyError is the refusal of an API key shorter than
// MinAPIKeyLen: one short enough to be guessed.
type ShortKeyError struct {
	Entry  int    // 1-based, in [serve] api_keys
	Source string // where it comes from (config.Serve.APIKeySources), never the key
	Len    int    // its length in characters
}

func (e *ShortKeyError) Error() string {
	src := ""
	if e.Source != "" {
		src = ", " + e.Source + ","
	}
	return fmt.Sprintf("[serve] api_keys entry %d%s is %d characters long: a key needs at least %d so that it cannot be guessed. "+
		"Make one with: openssl rand -hex 32", e.Entry, src, e.Len, MinAPIKeyLen)
}

// checkKeyLengths refuses API keys shorter than MinAPIKeyLen. An
// empty entry is left to New, which says how to set it.
func checkKeyLengths(s config.Serve) error {
	for i, k := range s.APIKeys {
		n := utf8.RuneCountInString(k)
		if strings.TrimSpace(k) == "" || n >= MinAPIKeyLen {
			continue
		}
		e := &ShortKeyError{Entry: i + 1, Len: n}
		if i < len(s.APIKeySources) {
			e.Source = s.APIKeySources[i]
		}
		return e
	}
	return nil
}

// presetResources serves the extraction presets as otter://presets/NAME.
func presetResources() []Resource {
	var out []Resource
	for _, p := range webdata.Presets() {
		text, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			continue
		}
		out = append(out, Resource{
			URI:         "otter://presets/" + p.Name,
			Name:        p.Name,
			Title:       "Preset " + p.Name,
			Description: p.Description,
			MIMEType:    "application/json",
			Text:        string(text),
		})
	}
	return out
}
