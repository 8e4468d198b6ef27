package localtools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/otter-sh/otter/internal/projectfile"
	"github.com/otter-sh/otter/internal/tool"
)

// place is a path a call names, resolved.
type place struct {
	asked  string // as the model wrote it
	abs    string // absolute, as written (links not resolved)
	real   string // its symbolic links resolved; for a path that does not exist yet, its nearest existing parent's, joined with the rest
	root   string // the project, its links resolved
	inside bool   // real lies in the project (or a Readable tree, for reading)
	exists bool
	info   fs.FileInfo // of real, when it exists (Stat: a link's target)
}

// resolve makes p absolute (relative to Dir) and resolves its links, to
// tell whether it lies in the project; readable counts o.Readable as the
// project too (reading, not writing).
func (o Options) resolve(p string, readable bool) (place, error) {
	if strings.TrimSpace(p) == "" {
		return place{}, errors.New("the path is empty: give a path relative to the working directory, or an absolute one")
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, rest)
		}
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(o.Dir, abs)
	}
	abs = filepath.Clean(abs)
	pl := place{asked: p, abs: abs}
	root, err := filepath.EvalSymlinks(o.rootOrDir())
	if err != nil {
		return place{}, fmt.Errorf("the project %s: %w", o.rootOrDir(), err)
	}
	pl.root = root
	real, rest := abs, ""
	for {
		r, err := filepath.EvalSymlinks(real)
		if err == nil {
			real = filepath.Join(r, rest)
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return place{}, fmt.Errorf("%s: %w", p, err)
		}
		parent := filepath.Dir(real)
		if parent == real {
			break
		}
		rest = filepath.Join(filepath.Base(real), rest)
		real = parent
	}
	pl.real = real
	pl.exists = rest == ""
	if pl.exists {
		if pl.info, err = os.Stat(real); err != nil {
			return place{}, fmt.Errorf("%s: %w", p, err)
		}
	}
	pl.inside = projectfile.Inside(root, real)
	if !pl.inside && readable {
		for _, r := range o.Readable {
			if rr, err := filepath.EvalSymlinks(r); err == nil && projectfile.Inside(rr, real) {
				pl.inside = true
			}
		}
	}
	return pl, nil
}

// movedOut says why a reading call may not read pl now: the permission
// check found it inside the project and asked nobody, and it leads out
// of the project now (a link changed since); "" when it may.
func (pl place) movedOut(ctx context.Context, shown string) string {
	if g, checked := tool.GateFrom(ctx); !checked || g.Ask || pl.inside {
		return ""
	}
	return fmt.Sprintf("%s now leads outside the project (to %s), where it led inside when it was checked; it was not read", shown, pl.real)
}

// where words a path outside the project for a question: where it leads
// when a link takes it there.
func (pl place) where() string {
	if pl.real != pl.abs {
		return fmt.Sprintf("%s (it leads to %s)", pl.abs, pl.real)
	}
	return pl.abs
}

// rel is real relative to the project, for an os.Root of it.
func (pl place) rel() (string, error) {
	return filepath.Rel(pl.root, pl.real)
}

// open opens the regular file pl names for reading: through an os.Root
// of the project when it lies inside it (a link swapped in since the
// check cannot lead out), as it is otherwise (the person allowed it).
// A named pipe, a device or a socket is refused without waiting.
func (pl place) open() (*os.File, fs.FileInfo, error) {
	if projectfile.Inside(pl.root, pl.real) {
		return projectfile.OpenIn(pl.root, pl.real)
	}
	return projectfile.Open(pl.real)
}

// notRegular words a path that is no regular file.
func notRegular(shown string, mode fs.FileMode) string {
	if mode.IsDir() {
		return fmt.Sprintf("%s is a directory: list it with find_files (path %q), or read a file in it", shown, shown)
	}
	return fmt.Sprintf("%s is %s, not a regular file: otter reads and writes regular files only, and never waits on a pipe", shown, projectfile.Kind(mode))
}
