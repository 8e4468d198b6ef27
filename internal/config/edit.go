package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/otter-sh/otter/internal/filelock"
)

// editConfigFile runs edit, one read-modify-write of the config file file,
// so that concurrent otter processes cannot lose each other's change: the
// file's directory is locked against them for the whole of edit, and edit
// writes with writeConfigFile (a temporary file renamed into place), so a
// reader never sees half a file. When file is a symlink (a dotfile manager's
// link), edit is given the file the link leads to, so the link stays.
// The file's directory is created when create is set (an edit that adds);
// an edit that only changes what is there finds no file without it.
func editConfigFile(file string, create bool, edit func(target string) error) error {
	target, err := linkTarget(file)
	if err != nil {
		return err
	}
	dir := filepath.Dir(target)
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	} else if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return edit(target) // no file to change, and no .otter to create for nothing
	}
	unlock, err := filelock.LockDir(dir)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	defer unlock()
	return edit(target)
}

// linkTarget returns the file that file's symlinks lead to, or file itself
// when it is no symlink or does not exist yet.
func linkTarget(file string) (string, error) {
	fi, err := os.Lstat(file)
	if errors.Is(err, fs.ErrNotExist) {
		return file, nil
	}
	if err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return file, nil
	}
	target, err := filepath.EvalSymlinks(file)
	if err != nil {
		return "", fmt.Errorf("config: %s is a symlink that leads nowhere (%w): fix the link, or edit the file it should point to", file, err)
	}
	return target, nil
}

// writeConfigFile replaces file with text atomically, keeping its
// permissions (a new file is private to its owner).
func writeConfigFile(file, text string) error {
	perm := fs.FileMode(0o600)
	if fi, err := os.Stat(file); err == nil {
		perm = fi.Mode().Perm()
	}
	return writeFileAtomic(file, []byte(text), perm)
}
