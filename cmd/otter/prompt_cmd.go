package main

import "github.com/spf13/cobra"

// Stub: replaced by its owner.
func addPromptFlags(root *cobra.Command) {}

func promptRequested(cmd *cobra.Command) bool { return false }

func runPrompt(cmd *cobra.Command) error { return nil }
