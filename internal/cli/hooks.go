package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/otter-sh/otter/internal/config"
)

// HooksImportOptions are the options of `otter hooks import`.
type HooksImportOptions struct {
	File  string // "": .claude/settings.json in the working directory
	Write bool   // append to the user config file instead of printing
}

// RunHooksImport converts the "hooks" of a Claude Code settings file (or a
// hooks.json) into otter's [[hooks.EVENT]] tables, printed or appended to
// the user config file.
func RunHooksImport(f *Factory, o HooksImportOptions) error {
	file := o.File
	if file == "" {
		file = filepath.Join(f.WorkDir, ".claude", "settings.json")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		hint := ""
		if errors.Is(err, fs.ErrNotExist) && o.File == "" {
			hint = " (give the file to import, e.g. otter hooks import ~/.claude/settings.json)"
		}
		return ExitCode(2, fmt.Errorf("hooks import: %w%s", err, hint))
	}
	groups, skipped, err := config.ParseHooksJSON(data, file)
	if err != nil {
		return ExitCode(2, &configError{err})
	}
	for _, s := range skipped {
		fmt.Fprintf(f.IO.ErrOut, "hooks import: left out %s\n", s)
	}
	for _, w := range config.ClaudeToolMatchers(groups) {
		fmt.Fprintf(f.IO.ErrOut, "hooks import: warning: %s (`otter mcp tools` lists them)\n", w)
	}
	n := 0
	for _, gs := range groups {
		for _, g := range gs {
			n += len(g.Hooks)
		}
	}
	if n == 0 {
		return ExitCode(2, fmt.Errorf("hooks import: %s has no command hooks under \"hooks\"", file))
	}
	comment := "Imported from " + file + " by `otter hooks import`."
	if !o.Write {
		var b bytes.Buffer
		fmt.Fprintf(&b, "# %s\n", comment)
		if err := config.WriteHooksTOML(&b, groups); err != nil {
			return ExitCode(2, err)
		}
		_, err := f.IO.Out.Write(b.Bytes())
		return err
	}
	target := config.DefaultPaths().UserConfigFile()
	if err := config.AddHooks(target, groups, comment); err != nil {
		return ExitCode(2, fmt.Errorf("hooks import: %w", err))
	}
	fmt.Fprintf(f.IO.Out, "added %s to %s\n", plural(n, "hook"), target)
	if strings.HasPrefix(file, f.WorkDir+string(filepath.Separator)) {
		fmt.Fprintf(f.IO.Out, "They now run in every project; to keep them to this one, move them to %s.\n",
			filepath.Join(f.WorkDir, config.ProjectDirName, config.ProjectConfigName))
	}
	return nil
}
