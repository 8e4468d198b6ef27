package main

import "github.com/spf13/cobra"

// Stub: replaced by its owner.
func runTUI(cmd *cobra.Command) error { return nil }
