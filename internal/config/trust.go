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
	// Approved is what the user saw when trusting: each item of the
	// project's executable configuration (TrustItem.Key) with its content's
	// fingerprint (TrustItem.Sum). An item added or changed since is held
	// back until the user trusts the project again. Nil for an entry an
	// older otter wrote, which recorded no fingerprints: the directory
	// counts as trusted (its instruction files are read) but none of its
	// servers, hooks, commands, skills or settings runs until the user
	// trusts it again and so sees them. That is the safe reading: the old
	// entry does not say what the user saw.
	Approved map[string]string `json:"approved"`
}

// trustFile is where trust is recorded.
func (p Paths) trustFile() string { return filepath.Join(p.StateDir, "trusted.json") }

// trustDoc is trusted.json. Version 2 added TrustedDir.Approved; an older
// otter reads the file as before and ignores it.
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

// Approvals is the trust in force for a project directory.
type Approvals struct {
	// Dir is the trusted directory that covers the project: the project's
	// own, or the nearest trusted ancestor; "" when none does.
	Dir string
	// Legacy is set when Dir's entry has no fingerprints (an older otter
	// wrote it): nothing of the project's executable configuration is
	// approved yet.
	Legacy bool
	sums   map[string]string
}

// Trusted reports whether a trusted directory covers the project.
func (a Approvals) Trusted() bool { return a.Dir != "" }

// ApprovalsFor returns the trust in force for dir: the entry of dir or of
// its nearest trusted ancestor (trusting a directory covers its
// subdirectories), symlinks resolved.
func (p Paths) ApprovalsFor(dir string) (Approvals, error) {
	resolved, err := canonicalDir(dir)
	if err != nil {
		return Approvals{}, err
	}
	dirs, err := p.TrustedDirs()
	if err != nil {
		return Approvals{}, err
	}
	var best *TrustedDir
	for i, t := range dirs {
		if within(t.Dir, resolved) && (best == nil || len(t.Dir) > len(best.Dir)) {
			best = &dirs[i]
		}
	}
	if best == nil {
		return Approvals{}, nil
	}
	return Approvals{Dir: best.Dir, Legacy: best.Approved == nil, sums: best.Approved}, nil
}

// within reports whether path is root or under it (both clean and
// absolute).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && filepath.IsLocal(rel)
}

// IsTrusted reports whether the user trusted dir or one of its ancestors
// (after resolving symlinks), so that its project configuration and
// instruction files count. Items of the configuration added or changed
// since are still held back: see Approvals.
func (p Paths) IsTrusted(dir string) (bool, error) {
	a, err := p.ApprovalsFor(dir)
	return a.Trusted(), err
}

// Trust records that the user trusts the project dir is in (ProjectDir,
// else dir itself) as it is now: every item of its executable
// configuration (servers, hooks, commands, skills, settings) is approved
// with its current content.
func (p Paths) Trust(dir string) error {
	proj, items, err := ProjectItems(dir)
	if err != nil {
		return err
	}
	return p.TrustItems(proj, items)
}

// TrustItems records that the user trusts the project directory dir with
// exactly items, the ones they were shown: anything else, or anything
// that changed since they were listed, stays held back. A project's
// earlier approvals are replaced.
func (p Paths) TrustItems(dir string, items []TrustItem) error {
	resolved, err := canonicalDir(dir)
	if err != nil {
		return err
	}
	dirs, err := p.TrustedDirs()
	if err != nil {
		return err
	}
	approved := map[string]string{}
	for _, it := range items {
		approved[it.key("")] = it.Sum
	}
	entry := TrustedDir{Dir: resolved, TrustedAt: time.Now().UTC().Truncate(time.Second), Approved: approved}
	if i := slices.IndexFunc(dirs, func(t TrustedDir) bool { return t.Dir == resolved }); i >= 0 {
		dirs[i] = entry
	} else {
		dirs = append(dirs, entry)
	}
	return p.writeTrust(dirs)
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
	data, err := json.MarshalIndent(trustDoc{Version: 2, Dirs: dirs}, "", "  ")
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
