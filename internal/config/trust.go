package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// TrustedDir is one project directory the user has trusted.
type TrustedDir struct {
	Dir       string    `json:"dir"` // absolute, symlinks resolved
	TrustedAt time.Time `json:"trusted_at"`
}

// trustFile is where trust is recorded.
func (p Paths) trustFile() string { return filepath.Join(p.StateDir, "trusted.json") }

type trustDoc struct {
	Version int          `json:"version"`
	Dirs    []TrustedDir `json:"dirs"`
}

// canonicalDir returns dir absolute with symlinks resolved.
func canonicalDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("trust: %w", err)
	}
	return resolved, nil
}

// TrustedDirs lists the trusted project directories, oldest first.
func (p Paths) TrustedDirs() ([]TrustedDir, error) {
	data, err := os.ReadFile(p.trustFile())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trust: read %s: %w", p.trustFile(), err)
	}
	var doc trustDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, &Error{File: p.trustFile(), Msg: "cannot read the list of trusted directories: " + err.Error(),
			Hint: "fix the JSON or delete the file and trust your projects again"}
	}
	return doc.Dirs, nil
}

// IsTrusted reports whether the user trusted dir (exactly that directory,
// after resolving symlinks), so that its project-scope servers may start.
func (p Paths) IsTrusted(dir string) (bool, error) {
	resolved, err := canonicalDir(dir)
	if err != nil {
		return false, err
	}
	dirs, err := p.TrustedDirs()
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(dirs, func(t TrustedDir) bool { return t.Dir == resolved }), nil
}

// Trust records that the user trusts dir's project configuration.
func (p Paths) Trust(dir string) error {
	resolved, err := canonicalDir(dir)
	if err != nil {
		return err
	}
	dirs, err := p.TrustedDirs()
	if err != nil {
		return err
	}
	if slices.ContainsFunc(dirs, func(t TrustedDir) bool { return t.Dir == resolved }) {
		return nil
	}
	return p.writeTrust(append(dirs, TrustedDir{Dir: resolved, TrustedAt: time.Now().UTC().Truncate(time.Second)}))
}

// Untrust forgets dir; it reports whether dir was trusted. dir need not
// exist any more.
func (p Paths) Untrust(dir string) (bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, err
	}
	keys := []string{filepath.Clean(abs)}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		keys = append(keys, resolved)
	}
	dirs, err := p.TrustedDirs()
	if err != nil {
		return false, err
	}
	kept := slices.DeleteFunc(slices.Clone(dirs), func(t TrustedDir) bool { return slices.Contains(keys, t.Dir) })
	if len(kept) == len(dirs) {
		return false, nil
	}
	return true, p.writeTrust(kept)
}

func (p Paths) writeTrust(dirs []TrustedDir) error {
	data, err := json.MarshalIndent(trustDoc{Version: 1, Dirs: dirs}, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(p.trustFile(), append(data, '\n'), 0o600)
}

// writeFileAtomic writes data to a temporary file next to name and renames
// it into place, creating the directory (0700) if needed.
func writeFileAtomic(name string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
