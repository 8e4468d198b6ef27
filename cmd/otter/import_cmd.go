package main

import "github.com/spf13/cobra"

// Stub: replaced by its owner.
func newMCPImportCmd() *cobra.Command {
	return &cobra.Command{Use: "import [FILE]", Short: "Convert .mcp.json or claude_desktop_config.json into otter TOML"}
}
