package main

import (
	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/cli"
)

// newCmdMCPImport is `otter mcp import [FILE]`.
func newCmdMCPImport(f *cli.Factory, runF func(*cli.ImportOptions) error) *cobra.Command {
	var o cli.ImportOptions
	cmd := &cobra.Command{
		Use:   "import [FILE]",
		Short: "Convert .mcp.json or claude_desktop_config.json into otter TOML",
		Long: `Read the "mcpServers" of a .mcp.json (Claude Code, Cursor, ...) or of
claude_desktop_config.json (~/.config/Claude/ on Linux, ~/Library/Application
Support/Claude/ on macOS) and print them as otter [[mcp.servers]] entries.
FILE defaults to ./.mcp.json. ${VAR} references are kept as written.

Secrets are not copied: the values of secret-named env variables (*_TOKEN,
*_KEY, *_SECRET, ...), of secret-named headers (Authorization keeps its
scheme: "Bearer ${VAR}"), of secret-looking flags (--token X) and well-known
tokens (ghp_..., sk-...) become ${VAR} references, and stderr lists the
variables to set.

With --write the entries are appended to your user config file instead; otter
refuses if a server of the same name is already there. (A project's .mcp.json
needs no import: otter reads it as it is, once you trust the project.)`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.File = args[0]
			}
			if runF != nil {
				return runF(&o)
			}
			return cli.RunImport(f, o)
		},
	}
	cmd.Flags().BoolVar(&o.Write, "write", false, "append the servers to the user config file instead of printing them")
	return cmd
}
