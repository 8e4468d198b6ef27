package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/serve"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/webdata"
)

// ServeOptions are the options of `otter mcp serve`.
type ServeOptions struct {
	HTTPAddr    string // "": stdio
	DailyQuota  int
	CallTimeout time.Duration
}

// RunServe serves otter's built-in tools over MCP until ctx is done.
func RunServe(ctx context.Context, f *Factory, o ServeOptions) error {
	httpAddr := o.HTTPAddr
	logger, closeLog, err := f.Logger(LogSetup{Stderr: f.IO.ErrOut, Level: slog.LevelInfo, JSON: true})
	if err != nil {
		return ExitCode(2, err)
	}
	defer closeLog()

	paths := config.DefaultPaths()
	lopts := f.LoadOptions()
	lopts.Paths = paths
	cfg, err := config.Load(lopts)
	if err != nil {
		return ExitCode(2, err)
	}
	if httpAddr != "" && cfg.Serve.KeysError != nil {
		return ExitCode(2, fmt.Errorf("[serve] api_keys: %w", cfg.Serve.KeysError))
	}
	if httpAddr != "" {
		// Refuse before building anything, with the message that says how to fix it.
		if err := serve.CheckAddr(httpAddr, len(cfg.Serve.APIKeys) > 0); err != nil {
			return ExitCode(2, err)
		}
	}

	if cfg.Serve.Store.URLError != nil {
		return ExitCode(2, fmt.Errorf("[serve.store] url: %w", cfg.Serve.Store.URLError))
	}
	if httpAddr == "" && cfg.Serve.AuditLog == serve.LedgerStdout {
		return ExitCode(2, fmt.Errorf("[serve] audit_log = %q writes the audit ledger to stdout, but over stdio stdout carries the MCP messages: "+
			"serve over HTTP (otter mcp serve --http 127.0.0.1:8080), or set audit_log to a file", serve.LedgerStdout))
	}
	quotaLoc := time.UTC
	if tz := cfg.Serve.QuotaTimezone; tz != "" {
		if quotaLoc, err = time.LoadLocation(tz); err != nil {
			return ExitCode(2, fmt.Errorf("[serve] quota_timezone: %w", err))
		}
	}
	var store *serve.StoreOptions
	var rates *webdata.RateLimits
	if cfg.Serve.Store.URL != "" {
		store = &serve.StoreOptions{URL: cfg.Serve.Store.URL, OnError: cfg.Serve.Store.OnStoreError, Prefix: cfg.Serve.Store.Prefix}
		if rates, err = webdata.NewRateLimits(cfg.Tools.RateLimits); err != nil {
			return ExitCode(2, err)
		}
	}

	set := tool.NewSet(tool.Options{MaxOutputChars: cfg.Tools.MaxOutputChars, SpillDir: filepath.Join(paths.CacheDir, "outputs")})
	builtins, err := webdata.Tools(webdata.Options{Config: cfg.Tools, Paths: paths, Recent: set.RecentBy, CallerLimits: store != nil})
	if err != nil {
		return ExitCode(2, fmt.Errorf("built-in tools: %w", err))
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
	if httpAddr != "" {
		apiKeys = cfg.Serve.APIKeys
	}
	srv, err := serve.New(serve.Options{
		Tools:             set,
		Resources:         presetResources(),
		Version:           f.Version,
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
		Logger:            logger,
	})
	if err != nil {
		return ExitCode(2, err)
	}
	defer srv.Close()

	if httpAddr == "" {
		err = srv.RunStdio(ctx, f.IO.In, f.IO.Out)
	} else {
		err = srv.ListenAndServe(ctx, httpAddr)
	}
	if err != nil {
		logger.Error("serve stopped", "err", err)
		return ExitCode(2, err)
	}
	return nil
}

// presetResources serves the extraction presets as otter://presets/NAME.
func presetResources() []serve.Resource {
	var out []serve.Resource
	for _, p := range webdata.Presets() {
		text, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			continue
		}
		out = append(out, serve.Resource{
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
