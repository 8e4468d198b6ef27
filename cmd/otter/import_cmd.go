package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/config"
)

// newMCPImportCmd is `otter mcp import [FILE]`.
func newMCPImportCmd() *cobra.Command {
	var write bool
	cmd := &cobra.Command{
		Use:   "import [FILE]",
		Short: "Convert .mcp.json or claude_desktop_config.json into otter TOML",
		Long: `Read the "mcpServers" of a .mcp.json (Claude Code, Cursor, ...) or of
claude_desktop_config.json (~/.config/Claude/ on Linux, ~/Library/Application
Support/Claude/ on macOS) and print them as otter [[mcp.servers]] entries.
FILE defaults to ./.mcp.json. ${VAR} references are kept as written.

With --write the entries are appended to your user config file instead; otter
refuses if a server of the same name is already there. (A project's .mcp.json
needs no import: otter reads it as it is, once you trust the project.)`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := config.MCPJSONName
			if len(args) == 1 {
				file = args[0]
			} else if flags.workDir != "" {
				file = filepath.Join(flags.workDir, file)
			}
			data, err := os.ReadFile(file)
			if err != nil {
				return exitCode(2, fmt.Errorf("import: %w (give the file to import, e.g. otter mcp import ~/.config/Claude/claude_desktop_config.json)", err))
			}
			servers, err := config.ParseMCPJSON(data, file)
			if err != nil {
				return exitCode(2, &configError{err})
			}
			if len(servers) == 0 {
				return exitCode(2, fmt.Errorf("import: %s has no servers in \"mcpServers\"", file))
			}
			var b bytes.Buffer
			fmt.Fprintf(&b, "# Imported from %s by `otter mcp import`.\n", file)
			if err := config.WriteServersTOML(&b, servers); err != nil {
				return exitCode(2, err)
			}
			if !write {
				_, err := cmd.OutOrStdout().Write(b.Bytes())
				return err
			}
			target := config.DefaultPaths().UserConfigFile()
			if err := appendServers(target, servers, b.Bytes()); err != nil {
				return exitCode(2, err)
			}
			names := make([]string, len(servers))
			for i, s := range servers {
				names[i] = s.Name
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added %s to %s: %s\n", plural(len(servers), "server"), target, strings.Join(names, ", "))
			return nil
		},
	}
	cmd.Flags().BoolVar(&write, "write", false, "append the servers to the user config file instead of printing them")
	return cmd
}

// appendServers appends entries (the TOML of servers) to the config file
// target, refusing names it already defines; it never rewrites what is there.
func appendServers(target string, servers []config.Server, entries []byte) error {
	old, err := os.ReadFile(target)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("import: %w", err)
	}
	if len(old) > 0 {
		existing, err := config.FileServers(target)
		if err != nil {
			return fmt.Errorf("import: not touching %s until it is fixed: %w", target, &configError{err})
		}
		var clash []string
		for _, s := range servers {
			if slices.ContainsFunc(existing, func(e config.Server) bool { return e.Name == s.Name }) {
				clash = append(clash, s.Name)
			}
		}
		if len(clash) > 0 {
			return fmt.Errorf("import: %s already defines %s; nothing written (rename or remove those entries there, or import without --write and copy what you need)",
				target, strings.Join(clash, ", "))
		}
	}
	var add bytes.Buffer
	if len(old) > 0 {
		if !bytes.HasSuffix(old, []byte("\n")) {
			add.WriteString("\n")
		}
		add.WriteString("\n")
	}
	add.Write(entries)
	if _, err := toml.Decode(string(old)+add.String(), new(map[string]any)); err != nil {
		return fmt.Errorf("import: appending to %s would not parse (%w); nothing written", target, err)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if _, err := f.Write(add.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("import: %w", err)
	}
	return f.Close()
}
