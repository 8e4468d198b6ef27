package main

// `otter mcp diff|approve`: pinned tool definitions, flags into options
// for internal/cli.

import (
	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/cli"
)

func newCmdMCPDiff(f *cli.Factory, runF func(*cli.MCPPinsOptions) error) *cobra.Command {
	var o cli.MCPPinsOptions
	cmd := &cobra.Command{
		Use:   "diff SERVER",
		Short: "Show what a server's tools and instructions changed since otter pinned them",
		Long: `Start SERVER and show, as unified diffs, each tool whose definition differs
from the one otter pinned when it first saw the server's tools, each tool the server
added since, and its instructions when they changed. These are held back: not
offered to the model, not found by tool_search, refused when called, until
` + "`otter mcp approve SERVER`" + ` takes them.
With --json, print an array of {kind, tool, pinned, now, diff}; kind is "changed",
"new" or "instructions".

Exit status: 0 (with or without changes), 2 for a usage, config or connection error.`,
		Example: `  otter mcp diff github
  otter mcp diff github --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Server = args[0]
			if runF != nil {
				return runF(&o)
			}
			return cli.RunMCPDiff(cmd.Context(), f, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

func newCmdMCPApprove(f *cli.Factory, runF func(*cli.MCPPinsOptions) error) *cobra.Command {
	var o cli.MCPPinsOptions
	cmd := &cobra.Command{
		Use:   "approve SERVER [TOOL...]",
		Short: "Take a server's changed tool definitions as their pins, so that they are offered again",
		Long: `Start SERVER and take its current definitions of the named tools as their pins
(see ` + "`otter mcp diff SERVER`" + `); without TOOL, of every tool held back and its
instructions. A running TUI picks the change up when the server reconnects.

Exit status: 0, 2 for a usage, config or connection error, a TOOL the server does not
list or that has not changed.`,
		Example: `  otter mcp diff github && otter mcp approve github
  otter mcp approve github create_issue`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Server, o.Tools = args[0], args[1:]
			if runF != nil {
				return runF(&o)
			}
			return cli.RunMCPApprove(cmd.Context(), f, o)
		},
	}
	return cmd
}
