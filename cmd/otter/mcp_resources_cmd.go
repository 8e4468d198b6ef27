package main

// `otter mcp resources|read|prompts|prompt` and `otter mcp
// add|remove|get|enable|disable`: flags into options for internal/cli.

import (
	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/cli"
)

// mcpResourceCommands are the commands for what servers offer besides
// tools, and for managing servers without an editor.
func mcpResourceCommands(f *cli.Factory) []*cobra.Command {
	return []*cobra.Command{
		newCmdMCPResources(f, nil), newCmdMCPRead(f, nil), newCmdMCPPrompts(f, nil), newCmdMCPPrompt(f, nil),
		newCmdMCPSearch(f, nil), newCmdMCPAdd(f, nil), newCmdMCPRemove(f, nil), newCmdMCPGet(f, nil), newCmdMCPEnable(f, true, nil), newCmdMCPEnable(f, false, nil),
	}
}

// listCmd is a command that lists what one server or every server offers:
// it parses [SERVER] and --json into server and asJSON, then calls run.
func listCmd(use, short, long string, server *string, asJSON *bool, run func(cmd *cobra.Command) error) *cobra.Command {
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				*server = args[0]
			}
			return run(cmd)
		},
	}
	cmd.Flags().BoolVar(asJSON, "json", false, "print JSON")
	return cmd
}

func newCmdMCPResources(f *cli.Factory, runF func(*cli.MCPResourcesOptions) error) *cobra.Command {
	var o cli.MCPResourcesOptions
	return listCmd("resources [SERVER]", "List the resources and resource templates of one server or of every server",
		`List the resources and resource templates servers offer.
With --json, print an array of {server, uri, name, mime_type, description};
a template has uri_template instead of uri.`,
		&o.Server, &o.JSON, func(cmd *cobra.Command) error {
			if runF != nil {
				return runF(&o)
			}
			return cli.RunMCPResources(cmd.Context(), f, o)
		})
}

func newCmdMCPRead(f *cli.Factory, runF func(*cli.MCPReadOptions) error) *cobra.Command {
	var o cli.MCPReadOptions
	cmd := &cobra.Command{
		Use:   "read SERVER URI",
		Short: "Read one resource: text to stdout, a blob to a file (-o)",
		Long: `Read one resource of a server. Text goes to stdout; binary content needs
-o FILE (or --json, which prints the raw result with blobs in base64).`,
		Example: `  otter mcp read everything demo://resource/dynamic/text/1
  otter mcp read everything demo://resource/dynamic/blob/1 -o blob.bin`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Server, o.URI = args[0], args[1]
			if runF != nil {
				return runF(&o)
			}
			return cli.RunMCPRead(cmd.Context(), f, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the raw ReadResourceResult as JSON")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "write the contents to FILE")
	return cmd
}

func newCmdMCPPrompts(f *cli.Factory, runF func(*cli.MCPPromptsOptions) error) *cobra.Command {
	var o cli.MCPPromptsOptions
	return listCmd("prompts [SERVER]", "List the prompts of one server or of every server",
		`List prompts with their arguments. With --json, print an array of {server, name, description, arguments}.`,
		&o.Server, &o.JSON, func(cmd *cobra.Command) error {
			if runF != nil {
				return runF(&o)
			}
			return cli.RunMCPPrompts(cmd.Context(), f, o)
		})
}

func newCmdMCPPrompt(f *cli.Factory, runF func(*cli.MCPPromptOptions) error) *cobra.Command {
	var o cli.MCPPromptOptions
	cmd := &cobra.Command{
		Use:   "prompt SERVER NAME [ARG=VALUE …]",
		Short: "Get one prompt and print its messages whole",
		Long: `Get a prompt with its arguments and print each message under its role:
text as text, embedded resources with their contents, binary content described.
--json prints the raw GetPromptResult.`,
		Example: `  otter mcp prompt everything resource-prompt resourceType=Text resourceId=2`,
		Args:    cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Server, o.Name, o.Args = args[0], args[1], args[2:]
			if runF != nil {
				return runF(&o)
			}
			return cli.RunMCPPrompt(cmd.Context(), f, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the raw GetPromptResult as JSON")
	return cmd
}

// newCmdMCPAdd is `otter mcp add`; runF, when not nil, is called with the
// parsed options instead of writing the config (tests check flags → options).
func newCmdMCPAdd(f *cli.Factory, runF func(*cli.MCPAddOptions) error) *cobra.Command {
	var o cli.MCPAddOptions
	cmd := &cobra.Command{
		Use:   "add NAME [flags] -- COMMAND [ARGS…] | add NAME URL | add NAME --from-registry",
		Short: "Add a server to the config file of a scope, keeping the file's comments and layout",
		Long: `Add an MCP server as a [[mcp.servers]] entry at the end of the config file of
--scope: user (default, ~/.config/otter/config.toml), project (.otter/config.toml,
shared) or local (.otter/config.local.toml, yours). The rest of the file is kept as
written. A name that is already defined is refused with its file and line.
A running TUI picks the change up through auto_reload or /mcp reload.

With --from-registry, NAME is a server of the MCP Registry (its full name, or the
short name ` + "`otter mcp search`" + ` lists it under) and the registry says how it runs: an npm
package with npx -y PKG@VERSION, PyPI with uvx, an OCI image with docker run -i --rm,
a remote over streamable HTTP or SSE (--remote, or --package npm|pypi|oci to choose).
Give its required values with --env KEY=VALUE, --header 'Name: value' and
--arg NAME=VALUE (arguments and {variables}); otter says which are missing. A secret
is never written: the entry reads it from an environment variable, ${VAR}. The entry
is named after the server (--as NAME to choose) and runs in otter's sandbox.

otter offers every server the working directory as an MCP root, and a server such
as server-filesystem confines itself to its roots rather than the directories on
its command line ("Access denied … not in <working dir>"): --roots offers it other
directories, --no-roots none (it keeps its own). /mcp shows each server's roots.`,
		Example: `  otter mcp add everything -- npx -y @modelcontextprotocol/server-everything
  otter mcp add --scope project --env API_KEY='${API_KEY}' docs -- docs-mcp --stdio
  otter mcp add --header 'Authorization: Bearer ${GITHUB_TOKEN}' github https://api.githubcopilot.com/mcp/
  otter mcp add --no-roots files -- npx -y @modelcontextprotocol/server-filesystem ~/notes
  otter mcp add io.github.brave/brave-search-mcp-server --from-registry
  otter mcp add filesystem --from-registry --arg allowed_directory=$HOME/notes --as notes`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name, o.Target = args[0], args[1:]
			if runF != nil {
				return runF(&o)
			}
			return cli.RunMCPAdd(cmd.Context(), f, o)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.FromRegistry, "from-registry", false, "take the server NAME from the MCP Registry ([mcp] registry, or the official one)")
	fs.StringArrayVar(&o.Args, "arg", nil, "with --from-registry: a value of the server's argument or {variable}, NAME=VALUE (repeatable)")
	fs.BoolVar(&o.Remote, "remote", false, "with --from-registry: reach the server's remote rather than run a package")
	fs.StringVar(&o.Package, "package", "", "with --from-registry: run the server's package of this type: npm, pypi or oci")
	fs.StringVar(&o.As, "as", "", "with --from-registry: the server's name in the config (default: a short form of its registry name)")
	fs.StringVar(&o.Scope, "scope", "user", "the config file to write: user, project or local")
	fs.StringVar(&o.Transport, "transport", "", "stdio, http or sse (default: http for a URL, else stdio)")
	fs.StringArrayVar(&o.Env, "env", nil, "an environment variable of a stdio server, KEY=VALUE (repeatable)")
	fs.StringArrayVar(&o.Headers, "header", nil, "an HTTP header of an http or sse server, 'Name: value' (repeatable)")
	fs.StringSliceVar(&o.Roots, "roots", nil, "directories to offer the server as MCP roots instead of the working directory, DIR,DIR… (repeatable)")
	fs.BoolVar(&o.NoRoots, "no-roots", false, "offer the server no MCP roots, so that it keeps the directories of its command line")
	return cmd
}

func newCmdMCPSearch(f *cli.Factory, runF func(*cli.MCPSearchOptions) error) *cobra.Command {
	var o cli.MCPSearchOptions
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "List the servers of the MCP Registry whose names hold QUERY",
		Long: `Ask the MCP Registry — the official one, registry.modelcontextprotocol.io, or the one
[mcp] registry names — for the servers whose names hold QUERY (the latest version of
each), following its pages, and print NAME VERSION RUNS-AS DESCRIPTION. With --json,
an array of {name, title, description, version, website, repository, local_name, ways}.

Answers are kept in otter's cache directory as long as the registry's cache headers
allow; when the registry cannot be reached, the last answers serve and stderr says so.
Add a server with ` + "`otter mcp add NAME --from-registry`" + `.`,
		Example: `  otter mcp search filesystem
  otter mcp search github --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Query = args[0]
			if runF != nil {
				return runF(&o)
			}
			return cli.RunMCPSearch(cmd.Context(), f, o)
		},
	}
	cmd.Flags().IntVar(&o.Limit, "limit", 30, "at most this many servers")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

// serverCmd is a command on one configured server, NAME; scope and json
// say whether it takes --scope and --json. It calls runF with the options
// when runF is not nil, and run otherwise.
func serverCmd(use, short string, runF func(*cli.MCPServerOptions) error, run func(o cli.MCPServerOptions) error, scope, json bool) *cobra.Command {
	var o cli.MCPServerOptions
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if runF != nil {
				return runF(&o)
			}
			return run(o)
		},
	}
	if scope {
		cmd.Flags().StringVar(&o.Scope, "scope", "", "the config file to change: user, project or local (default: the file that defines the server)")
	}
	if json {
		cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	}
	return cmd
}

func newCmdMCPRemove(f *cli.Factory, runF func(*cli.MCPServerOptions) error) *cobra.Command {
	return serverCmd("remove NAME", "Remove a server's entry from its config file, keeping the rest of the file",
		runF, func(o cli.MCPServerOptions) error { return cli.RunMCPRemove(f, o) }, true, false)
}

func newCmdMCPGet(f *cli.Factory, runF func(*cli.MCPServerOptions) error) *cobra.Command {
	return serverCmd("get NAME", "Show a server's definition: where it is defined, its command or URL, secrets masked",
		runF, func(o cli.MCPServerOptions) error { return cli.RunMCPGet(f, o) }, false, true)
}

// newCmdMCPEnable is `otter mcp enable` (on) or `otter mcp disable`.
func newCmdMCPEnable(f *cli.Factory, on bool, runF func(*cli.MCPServerOptions) error) *cobra.Command {
	use, short := "disable NAME", "Set enabled = false in a server's entry (a .mcp.json server: in the local scope)"
	if on {
		use, short = "enable NAME", "Set enabled = true in a server's entry (a .mcp.json server: in the local scope)"
	}
	return serverCmd(use, short, runF, func(o cli.MCPServerOptions) error { return cli.RunMCPSetEnabled(f, o, on) }, true, false)
}
