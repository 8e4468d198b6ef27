// Package projectfile opens the files otter reads on a project's behalf —
// @-mentioned files, instruction files, custom commands, skills — so that
// a file in a project (a cloned repository, written by a stranger) can
// neither make otter read elsewhere nor hang it:
//
//   - symbolic links are resolved before the check that a file is inside
//     the project (OpenIn), and the open itself goes through an [os.Root]
//     of the project, so a link swapped in after the check cannot lead out
//     either;
//   - only a regular file is read: a named pipe, a device or a socket is
//     refused by a stat before the open, and the open does not wait for a
//     pipe's writer (O_NONBLOCK) and is checked again on what was opened
//     (fstat), which closes the race between the two;
//   - what is read is capped (Read).
//
// It imports nothing of otter's.
package projectfile

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
	"unicode/utf8"
)

// ErrNotRegular is wrapped by the error of a path that names something
// other than a regular file: a named pipe, a device, a socket, a directory.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError is the error of a path that is not a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, %v", e.Path, Kind(e.Mode), ErrNotRegular)
}

func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// Kind words what a file mode is: "a named pipe (FIFO)", "a directory",
// "a regular file"…
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

// OutsideError is the error of a path that resolves outside the project.
type OutsideError struct {
	Path   string // as asked for
	Target string // with its symbolic links resolved
	Root   string // the project, its links resolved
}

func (e *OutsideError) Error() string {
	if e.Target != "" && e.Target != e.Path {
		return fmt.Sprintf("%s links to %s, outside the project (%s)", e.Path, e.Target, e.Root)
	}
	return fmt.Sprintf("%s is outside the project (%s)", e.Path, e.Root)
}

// Inside reports whether path is root or under it, comparing the paths as
// written (see Resolve for their links).
func Inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Resolve returns path with every symbolic link resolved (it must exist)
// and root likewise, and whether the one lies inside the other.
func Resolve(root, path string) (target, realRoot string, inside bool, err error) {
	target, err = filepath.EvalSymlinks(path)
	if err != nil {
		return "", "", false, err
	}
	if target, err = filepath.Abs(target); err != nil {
		return "", "", false, err
	}
	if realRoot, err = filepath.EvalSymlinks(root); err != nil {
		return "", "", false, fmt.Errorf("the project %s: %w", root, err)
	}
	if realRoot, err = filepath.Abs(realRoot); err != nil {
		return "", "", false, err
	}
	return target, realRoot, Inside(realRoot, target), nil
}

// Open opens the regular file path for reading, wherever its links lead
// (for the user's own files). Anything else is a *NotRegularError, found
// without waiting for a named pipe's writer.
func Open(path string) (*os.File, fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	return checkRegular(f, path)
}

// OpenIn opens the regular file path for reading when it lies inside root
// once the symbolic links of both are resolved; otherwise the error is an
// *OutsideError that names where path leads. The open goes through an
// [os.Root] of root, so a link changed after the check cannot lead out.
func OpenIn(root, path string) (*os.File, fs.FileInfo, error) {
	target, realRoot, inside, err := Resolve(root, path)
	if err != nil {
		return nil, nil, err
	}
	if !inside {
		return nil, nil, &OutsideError{Path: path, Target: target, Root: realRoot}
	}
	fi, err := os.Stat(target)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	r, err := os.OpenRoot(realRoot)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	rel, err := filepath.Rel(realRoot, target)
	if err != nil {
		return nil, nil, err
	}
	f, err := r.OpenFile(rel, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		if strings.Contains(err.Error(), "escapes") {
			return nil, nil, &OutsideError{Path: path, Root: realRoot}
		}
		return nil, nil, err
	}
	return checkRegular(f, path)
}

// checkRegular keeps f when what was opened is a regular file: the path
// may have changed since the stat before the open.
func checkRegular(f *os.File, path string) (*os.File, fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return f, fi, nil
}

// Read reads r to its end, at most max bytes; more reports that r had
// more than that (and data is then its first max bytes).
func Read(r io.Reader, max int64) (data []byte, more bool, err error) {
	data, err = io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > max {
		return data[:max], true, nil
	}
	return data, false, nil
}

// ReadFile reads the regular file path, at most max bytes, confined to
// root as OpenIn does; root "" reads it wherever it is, as Open does. A
// file of more than max bytes is a *TooLargeError.
func ReadFile(root, path string, max int64) ([]byte, error) {
	var f *os.File
	var err error
	if root == "" {
		f, _, err = Open(path)
	} else {
		f, _, err = OpenIn(root, path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, more, err := Read(f, max)
	if err != nil {
		return nil, err
	}
	if more {
		return nil, &TooLargeError{Path: path, Max: max}
	}
	return data, nil
}

// LooksBinary reports whether a file of size bytes whose first bytes are
// head is not text: a NUL byte, or bytes that are not UTF-8 (a character
// cut by the end of head, when the file goes on, does not count).
func LooksBinary(head []byte, size int64) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if int64(len(head)) < size {
		for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
			head = head[:len(head)-1]
		}
	}
	return !utf8.Valid(head)
}

// ErrTooLarge is wrapped by the error of a file over a cap.
var ErrTooLarge = errors.New("too large")

// TooLargeError is the error of a file of more than Max bytes.
type TooLargeError struct {
	Path string
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the most otter reads of it", e.Path, Bytes(e.Max))
}

func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// Bytes words a byte count in binary units: "812 B", "256 KiB",
// "4.1 KiB", "2.3 MiB" (".0" left off).
func Bytes(n int64) string {
	const unit = 1 << 10
	switch {
	case n < unit:
		return fmt.Sprintf("%d B", n)
	case n < unit*unit:
		return trimZero(float64(n)/unit) + " KiB"
	case n < unit*unit*unit:
		return trimZero(float64(n)/(unit*unit)) + " MiB"
	}
	return trimZero(float64(n)/(unit*unit*unit)) + " GiB"
}

func trimZero(f float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0")
}

// ReadDir reads the entries of the directory dir, sorted by name, like
// [os.ReadDir] — except that anything other than a directory is an error
// found without waiting: os.ReadDir of a named pipe waits in open(2) for a
// writer that never comes.
func ReadDir(dir string) ([]fs.DirEntry, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is %s, not a directory", dir, Kind(fi.Mode()))
	}
	f, err := os.OpenFile(dir, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is %s, not a directory", dir, Kind(fi.Mode()))
	}
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}
