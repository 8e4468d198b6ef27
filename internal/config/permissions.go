package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// PermissionsFile returns the file an "allow always" answer given in
// workDir is saved to: the local-scope .otter/config.local.toml of the
// project workDir is in when the project has a .otter directory of its own
// (not a symlink, which would write into what the symlink points at), else
// p's user config file (otter does not create .otter for it). Short is
// the same path for messages (~ for the home directory).
func (p Paths) PermissionsFile(workDir string) (file, short string) {
	if dir := ProjectDir(workDir); dir != "" {
		if fi, err := os.Lstat(filepath.Join(dir, ProjectDirName)); err == nil && fi.IsDir() {
			file = filepath.Join(dir, ProjectDirName, LocalConfigName)
			return file, file
		}
	}
	return p.UserConfigFile(), p.ShortUserConfigFile()
}

// SavePermission records decision ("allow", "ask" or "deny") for pattern
// (a qualified tool name or glob) in the [permissions] table of
// p.PermissionsFile(workDir), keeping the rest of the file as it is. An
// existing entry for pattern is replaced.
func (p Paths) SavePermission(workDir, pattern, decision string) error {
	if !validDecision(decision) {
		return fmt.Errorf("config: permission decision %q: use allow, ask or deny", decision)
	}
	if !ValidGlob(pattern) {
		return fmt.Errorf("config: bad glob pattern %q for a permission (%s)", pattern, GlobHint)
	}
	file, _ := p.PermissionsFile(workDir)
	return editConfigFile(file, true, func(file string) error { return savePermission(file, pattern, decision) })
}

func savePermission(file, pattern, decision string) error {
	data, err := readBounded(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("config: %w", err)
	}
	text := string(data)
	if len(data) > 0 {
		if _, err := toml.Decode(text, new(map[string]any)); err != nil {
			return fmt.Errorf("config: not changing %s, it does not parse: %w", file, syntaxError(file, err))
		}
	}
	entry := fmt.Sprintf("%s = %q\n", tomlKey(pattern), decision)
	text = setPermissionLine(text, pattern, entry)
	if _, err := toml.Decode(text, new(map[string]any)); err != nil {
		return fmt.Errorf("config: updating %s would break it (%w); add %q under [permissions] by hand", file, err, strings.TrimSpace(entry))
	}
	return writeConfigFile(file, text)
}

// setPermissionLine puts entry into the [permissions] table of text,
// replacing the line of an existing key pattern there.
func setPermissionLine(text, pattern, entry string) string {
	ix := scanPositions(text)
	lines := strings.SplitAfter(text, "\n")
	if l := ix.lineOf(toml.Key{"permissions", pattern}.String(), "", 0); l > 0 {
		lines[l-1] = entry
		return strings.Join(lines, "")
	}
	if l := ix.lineOf("permissions", "", 0); l > 0 {
		lines = append(lines[:l], append([]string{entry}, lines[l:]...)...)
		return strings.Join(lines, "")
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if text != "" {
		text += "\n"
	}
	return text + "[permissions]\n" + entry
}

// GlobHint says how tool-name glob patterns are written; every error about
// a bad one — in [permissions], allowed_tools, denied_tools or a flag such
// as --allow-tools — gives it.
const GlobHint = "glob patterns use * ? [a-z] and \\ escapes (path.Match)"

// ValidGlob reports whether pattern is a glob that can match a qualified
// tool name; one that is not ("[bad") would silently never match.
func ValidGlob(pattern string) bool {
	_, err := path.Match(pattern, "")
	return err == nil
}
