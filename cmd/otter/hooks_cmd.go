package main

import (
	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/cli"
)

// newCmdHooks is `otter hooks`, with its subcommand import.
func newCmdHooks(f *cli.Factory, runImport func(*cli.HooksImportOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Hooks: commands otter runs at points of a conversation",
		Long: `Hooks are shell commands that otter runs when a session starts, a prompt is
submitted, before and after a tool call, when the agent stops, before
compacting and at notifications — Claude Code's hooks, configured as
[[hooks.EVENT]] tables in config.toml. /hooks in the TUI lists the active ones.`,
	}
	var o cli.HooksImportOptions
	imp := &cobra.Command{
		Use:   "import [FILE]",
		Short: "Convert the hooks of a Claude Code settings.json into otter TOML",
		Long: `Read the "hooks" of a Claude Code settings file (.claude/settings.json,
~/.claude/settings.json) or of a hooks.json, and print them as otter
[[hooks.EVENT]] tables. FILE defaults to ./.claude/settings.json.

With --write they are appended to your user config file instead. Hooks of
other types than "command", and events otter does not run, are left out
and named. A tool hook whose matcher names Claude Code's own tools (Bash,
Edit, Write, ...) is kept, with a warning on stderr: no otter tool has those
names, so it never runs until its matcher names otter's tools.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.File = args[0]
			}
			if runImport != nil {
				return runImport(&o)
			}
			return cli.RunHooksImport(f, o)
		},
	}
	imp.Flags().BoolVar(&o.Write, "write", false, "append the hooks to the user config file instead of printing them")
	cmd.AddCommand(imp)
	return cmd
}
