package main

import "github.com/spf13/cobra"

// Stub: replaced by its owner.
func newMCPLoginCmd() *cobra.Command {
	return &cobra.Command{Use: "login SERVER", Short: "Log in to a server that needs OAuth"}
}

func newMCPLogoutCmd() *cobra.Command {
	return &cobra.Command{Use: "logout SERVER", Short: "Forget a server's stored OAuth token"}
}
