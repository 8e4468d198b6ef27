package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/otter-sh/otter/internal/config"
)

// ImportOptions are the options of `otter mcp import`.
type ImportOptions struct {
	File  string // "": .mcp.json in the working directory
	Write bool   // append to the user config file instead of printing
}

// RunImport converts the "mcpServers" of a .mcp.json or
// claude_desktop_config.json into otter TOML, printed or appended to the
// user config file.
func RunImport(f *Factory, o ImportOptions) error {
	file := o.File
	if file == "" {
		file = filepath.Join(f.WorkDir, config.MCPJSONName)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return ExitCode(2, fmt.Errorf("import: %w (give the file to import, e.g. otter mcp import ~/.config/Claude/claude_desktop_config.json)", err))
	}
	servers, err := config.ParseMCPJSON(data, file)
	if err != nil {
		return ExitCode(2, &configError{err})
	}
	if len(servers) == 0 {
		return ExitCode(2, fmt.Errorf("import: %s has no servers in \"mcpServers\"", file))
	}
	// Tokens are not copied into a config file: a ${VAR} stands for each.
	servers, secrets := config.ReferenceSecrets(servers)
	if !o.Write {
		var b bytes.Buffer
		fmt.Fprintf(&b, "# Imported from %s by `otter mcp import`.\n", file)
		if err := config.WriteServersTOML(&b, servers); err != nil {
			return ExitCode(2, err)
		}
		if _, err := f.IO.Out.Write(b.Bytes()); err != nil {
			return err
		}
		tellSecrets(f.IO.ErrOut, secrets, file)
		return nil
	}
	target := config.DefaultPaths().UserConfigFile()
	if err := appendServers(target, servers, file); err != nil {
		return ExitCode(2, err)
	}
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.Name
	}
	fmt.Fprintf(f.IO.Out, "added %s to %s: %s\n", plural(len(servers), "server"), target, strings.Join(names, ", "))
	tellSecrets(f.IO.ErrOut, secrets, file)
	return nil
}

// appendServers appends servers, imported from source, to the config file
// target, refusing names it already defines; it never rewrites what is there.
func appendServers(target string, servers []config.Server, source string) error {
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
	if err := config.AddServers(target, servers, "Imported from "+source+" by `otter mcp import`."); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return nil
}

// tellSecrets says which variables the imported servers' ${VAR} references
// need, and where their values are.
func tellSecrets(w io.Writer, secrets []config.ImportedSecret, file string) {
	if len(secrets) == 0 {
		return
	}
	fmt.Fprintf(w, "otter: secrets are written as ${VAR} references, not copied; set these environment variables (their values are in %s):\n", file)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	seen := map[string]bool{}
	for _, s := range secrets {
		if !seen[s.Var] {
			seen[s.Var] = true
			fmt.Fprintf(tw, "  %s\tserver %s, %s\n", s.Var, s.Server, s.Where)
		}
	}
	tw.Flush()
}
