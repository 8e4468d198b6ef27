package config

import (
	"os"
	"path/filepath"
	"strings"
)

// Paths are otter's directories, following the XDG base directory spec.
type Paths struct {
	ConfigDir string // $XDG_CONFIG_HOME/otter
	DataDir   string // $XDG_DATA_HOME/otter   (tokens, exports)
	StateDir  string // $XDG_STATE_HOME/otter  (trust, audit ledger, logs, history)
	CacheDir  string // $XDG_CACHE_HOME/otter  (spilled tool outputs)
}

// DefaultPaths returns the XDG paths for the current user.
func DefaultPaths() Paths {
	home, _ := os.UserHomeDir()
	dir := func(env, fallback string) string {
		if v := os.Getenv(env); v != "" && filepath.IsAbs(v) {
			return filepath.Join(v, "otter")
		}
		return filepath.Join(home, fallback, "otter")
	}
	return Paths{
		ConfigDir: dir("XDG_CONFIG_HOME", ".config"),
		DataDir:   dir("XDG_DATA_HOME", filepath.Join(".local", "share")),
		StateDir:  dir("XDG_STATE_HOME", filepath.Join(".local", "state")),
		CacheDir:  dir("XDG_CACHE_HOME", ".cache"),
	}
}

// UserConfigFile is the user-scope config file.
func (p Paths) UserConfigFile() string { return filepath.Join(p.ConfigDir, "config.toml") }

// ShortUserConfigFile is UserConfigFile for messages: under the home
// directory it starts with "~".
func (p Paths) ShortUserConfigFile() string {
	f := p.UserConfigFile()
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rel, err := filepath.Rel(home, f); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join("~", rel)
		}
	}
	return f
}
