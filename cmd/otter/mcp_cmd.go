package main

// `otter mcp list|tools|call`: flags into options for internal/cli.

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/cli"
)

func newCmdMCPList(f *cli.Factory, runF func(*cli.MCPListOptions) error) *cobra.Command {
	var o cli.MCPListOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Start the configured MCP servers and show each one's state",
		Long: `Start every configured MCP server, wait until each has connected or failed
(each bounded by its startup_timeout), and print NAME TRANSPORT STATE TOOLS ERROR.
A server whose tools otter knows from an earlier connection and would defer behind
tool_search is not started: it is shown idle, with its known tools (see lazy in
the config); otter mcp tools SERVER starts it.
ERROR holds the error's first line and notes: when the OAuth token expires, and
tools not offered because another server's tool has the same qualified name.
With --json, print an array of {name, transport, state, tools, error}, plus
token_expiry and not_offered where they apply.

Exit status: 0 when every enabled server connected or is idle (disabled servers
do not count), 1 when one or more failed, need a login or did not finish starting
(the list is printed all the same, and stderr names them), 2 for a usage or
config error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(&o)
			}
			return cli.RunMCPList(cmd.Context(), f, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

func newCmdMCPTools(f *cli.Factory, runF func(*cli.MCPToolsOptions) error) *cobra.Command {
	var o cli.MCPToolsOptions
	cmd := &cobra.Command{
		Use:   "tools [SERVER]",
		Short: "List the tools of one server, or of every server and otter's built-ins",
		Long: `List tools with their descriptions and arguments. Without SERVER: otter's
built-in tools and those of every configured server. With --url, --sse or --stdio:
the tools of that server, without any config.
With --json, print an array of {name, server, tool, description, input_schema,
annotations}, where name is the qualified name a model sees and tool the server's own.
With --search "QUERY": the MCP tools the model's tool_search gives for QUERY, best
first, as it ranks them (--json adds each one's score).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Server = args[0]
			}
			connGiven(cmd, &o.Conn)
			if runF != nil {
				return runF(&o)
			}
			return cli.RunMCPTools(cmd.Context(), f, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&o.Search, "search", "", "rank the MCP tools for what a tool should do, as the model's tool_search does")
	cmd.Flags().IntVar(&o.Limit, "limit", 0, "with --search: how many tools (default "+strconv.Itoa(cli.DefaultSearchLimit)+", as tool_search)")
	registerConn(cmd, &o.Conn)
	return cmd
}

func newCmdMCPCall(f *cli.Factory, runF func(*cli.MCPCallOptions) error) *cobra.Command {
	var o cli.MCPCallOptions
	cmd := &cobra.Command{
		Use:   "call [SERVER] TOOL [JSON_ARGS]",
		Short: "Call one tool and print its result",
		Long: `Call one tool and print its result: text content as text, other content
summarised, structuredContent as JSON. --json prints the raw CallToolResult.

TOOL is a server's own tool name after SERVER, or without SERVER a qualified name
(mcp__server__tool) or one of otter's built-in tools. With --url, --sse or --stdio,
TOOL is a tool of that server. JSON_ARGS is a JSON object (default {}); "-" reads it
from stdin.

Arguments that do not match the tool's input schema are refused before the
call, with every problem named.

Exit status: 0 on success, 1 when the tool reports an error (isError),
2 on usage (arguments off the input schema included), config or connection
errors; messages go to stderr.`,
		Example: `  otter mcp call everything get-sum '{"a":2,"b":3}'
  otter mcp call --url http://127.0.0.1:3001/mcp echo '{"message":"hi"}'
  echo '{"url":"https://example.com"}' | otter mcp call scrape_page -`,
		Args: cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Args = args
			connGiven(cmd, &o.Conn)
			if runF != nil {
				return runF(&o)
			}
			return cli.RunMCPCall(cmd.Context(), f, o)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.JSON, "json", false, "print the raw CallToolResult as JSON")
	fs.DurationVar(&o.Timeout, "timeout", 0, "give up on the call after this long (e.g. 30s; default: the server's timeout)")
	registerConn(cmd, &o.Conn)
	return cmd
}

// registerConn adds the flags of `tools` and `call` that name an ad hoc
// server and say how to answer its questions.
func registerConn(cmd *cobra.Command, c *cli.ConnOptions) {
	fs := cmd.Flags()
	fs.StringVar(&c.URL, "url", "", "use this server instead of the config: streamable HTTP, falling back to SSE")
	fs.StringVar(&c.SSE, "sse", "", "use this legacy SSE server instead of the config")
	fs.StringVar(&c.Stdio, "stdio", "", "run this command as a stdio server instead of the config (quoted like a shell command)")
	fs.StringArrayVar(&c.Headers, "header", nil, "an HTTP header for --url/--sse, as 'Name: value' (repeatable)")
	fs.DurationVar(&c.StartupTimeout, "startup-timeout", 0, "how long the server may take to connect (default: its startup_timeout, 30s for ad hoc servers); time spent answering an OAuth login prompt and in the browser does not count")
	fs.StringVar(&c.Elicit, "elicit", "", "answer servers' requests for input: ask, accept-defaults, decline or cancel (default: ask on a terminal, decline otherwise)")
	registerOAuth(cmd, &c.OAuth)
}

// connGiven records which of --url, --sse and --stdio were given.
func connGiven(cmd *cobra.Command, c *cli.ConnOptions) {
	c.Given = nil
	for _, name := range []string{"url", "sse", "stdio"} {
		if cmd.Flags().Changed(name) {
			c.Given = append(c.Given, "--"+name)
		}
	}
}
