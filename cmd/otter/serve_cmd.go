package main

import (
	"fmt"
	"net"
	"strings"

	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/serve"
)

// newCmdMCPServe is `otter mcp serve`: otter's built-in tools over MCP.
func newCmdMCPServe(f *cli.Factory, runF func(*cli.ServeOptions) error) *cobra.Command {
	var o cli.ServeOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve otter's built-in tools over MCP (stdio, or streamable HTTP with --http)",
		Long: `Serve otter's built-in web-data tools to any MCP client.

By default otter speaks MCP on stdin/stdout, as Claude Desktop and other
clients expect of a local server:

  "mcpServers": { "otter": { "command": "otter", "args": ["mcp", "serve"] } }

With --http ADDR it serves streamable HTTP at http://ADDR/mcp, with /health
and Prometheus /metrics. [serve] api_keys in config.toml enables bearer auth
(keys of at least 16 characters: openssl rand -hex 32); on an address other
than loopback otter refuses to start without keys. An address that sends
wrong keys again and again gets 429 with Retry-After; good keys still pass.
Every tool call is appended to the audit ledger ([serve] audit_log, default
$XDG_STATE_HOME/otter/audit.jsonl). Logs are JSON on stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("http") {
				if problem := httpAddrProblem(o.HTTPAddr); problem != "" {
					return exitCode(2, fmt.Errorf("%s\nUsage: %s\nRun '%s --help' for more.", problem, cmd.UseLine(), cmd.CommandPath()))
				}
			}
			if runF != nil {
				return runF(&o)
			}
			return cli.RunServe(cmd.Context(), f, o)
		},
	}
	cmd.Flags().StringVar(&o.HTTPAddr, "http", "", "serve streamable HTTP on `ADDR` (e.g. 127.0.0.1:8080) instead of stdio")
	cmd.Flags().IntVar(&o.DailyQuota, "daily-quota", 0, "tool calls allowed per client per UTC day (0: unlimited)")
	cmd.Flags().DurationVar(&o.CallTimeout, "call-timeout", serve.DefaultCallTimeout, "the longest one tool call may take")
	return cmd
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
