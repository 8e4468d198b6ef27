package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/serve"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/webdata"
)

// newMCPServeCmd is `otter mcp serve`: otter's built-in tools over MCP.
func newMCPServeCmd() *cobra.Command {
	var (
		httpAddr    string
		dailyQuota  int
		callTimeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve otter's built-in tools over MCP (stdio, or streamable HTTP with --http)",
		Long: `Serve otter's built-in web-data tools to any MCP client.

By default otter speaks MCP on stdin/stdout, as Claude Desktop and other
clients expect of a local server:

  "mcpServers": { "otter": { "command": "otter", "args": ["mcp", "serve"] } }

With --http ADDR it serves streamable HTTP at http://ADDR/mcp, with /health
and Prometheus /metrics. [serve] api_keys in config.toml enables bearer auth;
on an address other than loopback otter refuses to start without keys.
Every tool call is appended to the audit ledger ([serve] audit_log, default
$XDG_STATE_HOME/otter/audit.jsonl). Logs are JSON on stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd, httpAddr, dailyQuota, callTimeout)
		},
	}
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP on `ADDR` (e.g. 127.0.0.1:8080) instead of stdio")
	cmd.Flags().IntVar(&dailyQuota, "daily-quota", 0, "tool calls allowed per client per UTC day (0: unlimited)")
	cmd.Flags().DurationVar(&callTimeout, "call-timeout", serve.DefaultCallTimeout, "the longest one tool call may take")
	return cmd
}

func runServe(cmd *cobra.Command, httpAddr string, dailyQuota int, callTimeout time.Duration) error {
	if cmd.Flags().Changed("http") {
		if problem := httpAddrProblem(httpAddr); problem != "" {
			return exitCode(2, fmt.Errorf("%s\nUsage: %s\nRun '%s --help' for more.", problem, cmd.UseLine(), cmd.CommandPath()))
		}
	}
	ctx := cmd.Context()
	logger, closeLog, err := setupLogging(cmd, logSetup{stderr: os.Stderr, level: slog.LevelInfo, json: true})
	if err != nil {
		return exitCode(2, err)
	}
	defer closeLog()

	paths := config.DefaultPaths()
	cfg, err := config.Load(config.LoadOptions{Paths: paths, WorkDir: flags.workDir, Extra: flags.configFile})
	if err != nil {
		return exitCode(2, err)
	}
	if httpAddr != "" && cfg.Serve.KeysError != nil {
		return exitCode(2, fmt.Errorf("[serve] api_keys: %w", cfg.Serve.KeysError))
	}
	if httpAddr != "" {
		// Refuse before building anything, with the message that says how to fix it.
		if err := serve.CheckAddr(httpAddr, len(cfg.Serve.APIKeys) > 0); err != nil {
			return exitCode(2, err)
		}
	}

	set := tool.NewSet(tool.Options{MaxOutputChars: cfg.Tools.MaxOutputChars, SpillDir: filepath.Join(paths.CacheDir, "outputs")})
	builtins, err := webdata.Tools(webdata.Options{Config: cfg.Tools, Paths: paths, Recent: set.RecentBy})
	if err != nil {
		return exitCode(2, fmt.Errorf("built-in tools: %w", err))
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
		Tools:          set,
		Resources:      presetResources(),
		Version:        version,
		APIKeys:        apiKeys,
		AllowedOrigins: cfg.Serve.AllowedOrigins,
		AllowedHosts:   cfg.Serve.AllowedHosts,
		AuditLog:       auditLog,
		DailyQuota:     dailyQuota,
		CallTimeout:    callTimeout,
		WithClient:     webdata.WithClient,
		Logger:         logger,
	})
	if err != nil {
		return exitCode(2, err)
	}
	defer srv.Close()

	if httpAddr == "" {
		err = srv.RunStdio(ctx, os.Stdin, os.Stdout)
	} else {
		err = srv.ListenAndServe(ctx, httpAddr)
	}
	if err != nil {
		logger.Error("serve stopped", "err", err)
		return exitCode(2, err)
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

// httpAddrProblem says what is wrong with the address given to --http, or
// "" when it is HOST:PORT. A bare port ("8080") is refused rather than
// guessed at: it could mean this machine only (127.0.0.1:8080) or every
// interface (:8080), which needs API keys.
func httpAddrProblem(addr string) string {
	const choices = "use --http 127.0.0.1:%[1]s to serve this machine only, or --http :%[1]s to listen on all interfaces (that needs [serve] api_keys)"
	switch {
	case strings.TrimSpace(addr) == "":
		return "--http needs HOST:PORT: " + fmt.Sprintf(choices, "8080") + "; without --http otter serves stdio"
	case strings.Trim(addr, "0123456789") == "":
		return fmt.Sprintf("--http %s is a port without a host: ", addr) + fmt.Sprintf(choices, addr)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		if !strings.Contains(addr, ":") || strings.HasSuffix(addr, "]") {
			return fmt.Sprintf("--http %s has no port: write HOST:PORT, e.g. --http %s:8080", addr, addr)
		}
		return fmt.Sprintf("--http %s is not HOST:PORT (%v): ", addr, err) + fmt.Sprintf(choices, "8080")
	}
	return ""
}
