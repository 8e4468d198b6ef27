package config

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/otter-sh/otter/internal/projectfile"
)

// usersLocalFile reports whether the local-scope file path (projDir's
// .otter/config.local.toml) is the user's own: a regular file really inside
// the project's own .otter directory that git does not track. Anything else
// came with the project, and needs its trust like the project's other
// files: a .otter that is a symlink (git checks one out as the clone's
// author wrote it), a local file that is a symlink, one git's index lists
// (committed, so it came with the clone), or one whose index cannot be
// read.
//
// It runs no git command: git's own configuration, which a cloned or
// unpacked repository brings, can make any git command run a program
// (core.fsmonitor, hooks, filters), and the project is not trusted yet. It
// reads the index file instead. A missing file is the user's (there is
// nothing to hold back).
func usersLocalFile(projDir, path string) bool {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	dot, err := os.Lstat(filepath.Join(projDir, ProjectDirName))
	if err != nil || !dot.IsDir() { // a symlink is not a directory to Lstat
		return false
	}
	tracked, err := gitTracks(projDir, path)
	return err == nil && !tracked
}

// gitTracks reports whether the git index of the work tree holding dir
// lists path (a file under dir). Outside a work tree it is false.
func gitTracks(dir, path string) (bool, error) {
	top, gitDir, err := findGitDir(dir)
	if err != nil || top == "" {
		return false, err
	}
	rel, err := filepath.Rel(top, path)
	if err != nil || !filepath.IsLocal(rel) {
		return false, fmt.Errorf("%s is not inside the work tree %s", path, top)
	}
	f, _, err := projectfile.Open(filepath.Join(gitDir, "index")) // not a FIFO
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // a repository with nothing added yet
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	return indexLists(bufio.NewReaderSize(io.LimitReader(f, maxIndexBytes), 64<<10), hashSize(gitDir), filepath.ToSlash(rel))
}

// maxIndexBytes caps the index read: a repository of half a million files
// has an index of about 60 MB.
const maxIndexBytes = 512 << 20

// findGitDir returns the work tree at or above dir (the nearest directory
// holding .git) and its git directory: .git itself, or where a .git file
// ("gitdir: …", a worktree or submodule) points. Both are "" when there is
// none.
func findGitDir(dir string) (top, gitDir string, err error) {
	for d := dir; ; {
		dotGit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotGit)
		switch {
		case err == nil && fi.IsDir():
			return d, dotGit, nil
		case err == nil && fi.Mode().IsRegular():
			data, err := readCapped(dotGit, 4<<10)
			if err != nil {
				return "", "", err
			}
			target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
			if !ok {
				return "", "", fmt.Errorf("%s: not a gitdir file", dotGit)
			}
			target = strings.TrimSpace(target)
			if !filepath.IsAbs(target) {
				target = filepath.Join(d, target)
			}
			return d, target, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", nil
		}
		d = parent
	}
}

// readCapped reads at most max bytes of name.
func readCapped(name string, max int64) ([]byte, error) {
	f, _, err := projectfile.Open(name) // a FIFO in a clone must not hang otter
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

// hashSize is the object hash's size in the repository at gitDir: 32 for
// a SHA-256 repository ([extensions] objectFormat = sha256), else 20. A
// worktree's git directory names the repository's own in "commondir".
func hashSize(gitDir string) int {
	if common, err := readCapped(filepath.Join(gitDir, "commondir"), 4<<10); err == nil {
		c := strings.TrimSpace(string(common))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		gitDir = c
	}
	data, _ := readCapped(filepath.Join(gitDir, "config"), 1<<20)
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "objectformat") && strings.EqualFold(strings.TrimSpace(v), "sha256") {
			return 32
		}
	}
	return 20
}

// indexLists reads a git index (versions 2 to 4, see git's
// Documentation/gitformat-index.txt) and reports whether it lists path
// (slash-separated, relative to the work tree), or a sparse directory
// entry holding it. An index that does not parse, or a split index whose
// shared part would have to be read too, is an error.
func indexLists(r *bufio.Reader, hashLen int, path string) (bool, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return false, fmt.Errorf("git index: %w", err)
	}
	if string(hdr[:4]) != "DIRC" {
		return false, errors.New("git index: bad signature")
	}
	version := binary.BigEndian.Uint32(hdr[4:8])
	if version < 2 || version > 4 {
		return false, fmt.Errorf("git index: version %d", version)
	}
	n := binary.BigEndian.Uint32(hdr[8:12])
	fixed := 40 + hashLen + 2 // stat data, mode…size, object name, flags
	entry := make([]byte, fixed+2)
	var prev []byte
	for range n {
		if _, err := io.ReadFull(r, entry[:fixed]); err != nil {
			return false, fmt.Errorf("git index: %w", err)
		}
		flags := binary.BigEndian.Uint16(entry[fixed-2 : fixed])
		size := fixed
		if flags&0x4000 != 0 { // extended flags (version 3 and up)
			if version < 3 {
				return false, errors.New("git index: extended flags in version 2")
			}
			if _, err := io.ReadFull(r, entry[fixed:fixed+2]); err != nil {
				return false, fmt.Errorf("git index: %w", err)
			}
			size += 2
		}
		var name []byte
		if version == 4 {
			strip, err := offsetVarint(r)
			if err != nil || strip > uint64(len(prev)) {
				return false, errors.New("git index: bad path prefix")
			}
			rest, err := r.ReadBytes(0)
			if err != nil {
				return false, fmt.Errorf("git index: %w", err)
			}
			name = append(prev[:len(prev)-int(strip):len(prev)-int(strip)], rest[:len(rest)-1]...)
		} else {
			rest, err := r.ReadBytes(0)
			if err != nil {
				return false, fmt.Errorf("git index: %w", err)
			}
			name = rest[:len(rest)-1]
			// Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
			pad := 8 - (size+len(name))%8
			if _, err := r.Discard(pad - 1); err != nil {
				return false, fmt.Errorf("git index: %w", err)
			}
		}
		mode := binary.BigEndian.Uint32(entry[24:28])
		if string(name) == path || (mode == 0o40000 && bytes.HasSuffix(name, []byte("/")) && strings.HasPrefix(path, string(name))) {
			return true, nil
		}
		prev = name
	}
	// A split index keeps most entries in a shared index file ("link"
	// extension): this one alone does not say.
	for {
		var ext [8]byte
		if _, err := io.ReadFull(r, ext[:]); err != nil {
			return false, nil // the trailing checksum, or the end
		}
		if string(ext[:4]) == "link" {
			return false, errors.New("git index: a split index")
		}
		if ext[0] < 'A' || ext[0] > 'Z' {
			return false, nil // the checksum: no more extensions
		}
		if _, err := r.Discard(int(binary.BigEndian.Uint32(ext[4:8]))); err != nil {
			return false, nil
		}
	}
}

// offsetVarint reads the variable-length integer of index version 4's path
// prefix (git's varint.c: each continuation adds one before shifting).
func offsetVarint(r *bufio.Reader) (uint64, error) {
	c, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	v := uint64(c & 0x7f)
	for c&0x80 != 0 {
		if c, err = r.ReadByte(); err != nil {
			return 0, err
		}
		if v > 1<<56 {
			return 0, errors.New("varint overflow")
		}
		v = ((v + 1) << 7) | uint64(c&0x7f)
	}
	return v, nil
}
