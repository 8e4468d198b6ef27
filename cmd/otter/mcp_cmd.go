package main

import "github.com/spf13/cobra"

// Stub: replaced by its owner.
func mcpSubcommands() []*cobra.Command { return nil }
