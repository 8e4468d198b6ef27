package main

import "github.com/spf13/cobra"

// Stub: replaced by its owner.
func newMCPServeCmd() *cobra.Command {
	return &cobra.Command{Use: "serve", Short: "Serve otter's built-in tools over MCP"}
}
