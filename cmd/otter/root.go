package main

import (
	"fmt"
	"github.com/spf13/cobra"
)

// globalFlags are accepted by every command.
type globalFlags struct {
	configFile string // --config: an extra config file, above every scope
	logFile    string // --log-file: where slog writes (default: stderr for headless commands, a file for the TUI)
	logLevel   string // --log-level
	workDir    string // --cwd
}

var flags globalFlags

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "otter",
		Short:         "A terminal AI agent shell with built-in web-data tools and MCP servers",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := checkPromptFlag(cmd); err != nil {
				return exitCode(2, err)
			}
			if len(args) > 0 && promptRequested(cmd) {
				// Typically "--allow-tools a b": a list flag takes one value.
				return exitCode(2, fmt.Errorf("unexpected argument %q: with -p the prompt is the value of -p (quote it); "+
					"a flag that takes a list takes one value per use: --allow-tools a,b or --allow-tools a --allow-tools b", args[0]))
			}
			return cobra.NoArgs(cmd, args)
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&flags.configFile, "config", "", "read this config file too, above every scope")
	pf.StringVar(&flags.logFile, "log-file", "", "write logs to this file")
	pf.StringVar(&flags.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	pf.StringVar(&flags.workDir, "cwd", "", "run as if started in this directory")

	mcpCmd := &cobra.Command{
		Use:   "mcp",
		Short: "Manage and use MCP servers without the TUI",
	}
	mcpCmd.AddCommand(mcpSubcommands()...)                 // mcp_cmd.go: list, tools, call
	mcpCmd.AddCommand(newMCPImportCmd())                   // import_cmd.go
	mcpCmd.AddCommand(newMCPLoginCmd(), newMCPLogoutCmd()) // login_cmd.go
	mcpCmd.AddCommand(newMCPServeCmd())                    // serve_cmd.go
	root.AddCommand(mcpCmd)
	root.AddCommand(configCommands()...) // config_cmd.go: config validate|show, trust

	addPromptFlags(root) // prompt_cmd.go: -p and its flags
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if promptRequested(cmd) {
			return runPrompt(cmd) // prompt_cmd.go
		}
		return runTUI(cmd) // tui_cmd.go
	}
	return root
}
