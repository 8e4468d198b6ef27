package main

// Temporary wiring points; each moves to its owner's file as it is built.

import "github.com/spf13/cobra"

func mcpSubcommands() []*cobra.Command { return nil }
func configCommands() []*cobra.Command { return nil }
func setupRootRun(root *cobra.Command) {}
