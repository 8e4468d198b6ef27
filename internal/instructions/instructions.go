// Package instructions finds and reads the person's instruction files for
// the model: AGENTS.md (the convention Codex, opencode and Crush share),
// or where a directory has none, CLAUDE.md or GEMINI.md (Claude Code's and
// Gemini CLI's names). They are read from the user scope
// ($XDG_CONFIG_HOME/otter) and then from every directory between the
// project root and the working directory, outer first, so that the most
// specific instructions come last, where a model weighs them most.
//
// A project's files are text a stranger may have written (a cloned
// repository), so they count only once the person trusts the project, as
// its .otter/config.toml does; until then they are listed as held back.
// Even then a project's file that resolves outside the project (AGENTS.md
// a symbolic link to ~/.ssh/id_rsa) is not read, and only regular files are
// read (a named pipe called AGENTS.md would hang otter): each such file is
// in Set.Errors, named with where it leads. The user's own files may lead
// anywhere. The total is capped, and what is cut is said. A Loader re-reads the files
// only when one of them changed, so that the system prompt, and with it the
// model's prompt cache, stays the same between turns otherwise.
//
// It imports only internal/projectfile of otter's: the caller says where
// the user scope and the project root are and whether the project is
// trusted.
package instructions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/otter-sh/otter/internal/projectfile"
)

// Primary is the instruction file's name read in every directory.
const Primary = "AGENTS.md"

// DefaultFallback are the names read, in order, in a directory without
// Primary.
var DefaultFallback = []string{"CLAUDE.md", "GEMINI.md"}

// DefaultMaxBytes caps the instructions' total size when Options.MaxBytes
// is 0: 32 KiB, the size Codex reads (project_doc_max_bytes), about 8,000
// tokens.
const DefaultMaxBytes = 32 << 10

// Scope says where an instruction file comes from.
type Scope string

const (
	ScopeUser    Scope = "user"
	ScopeProject Scope = "project"
)

// Options say where to look.
type Options struct {
	// UserDir is otter's user config directory ($XDG_CONFIG_HOME/otter);
	// "" reads no user file.
	UserDir string
	// ProjectRoot is where the project's files start (the project
	// directory: the nearest holding .otter/, .mcp.json or .git); "" reads
	// only WorkDir's. It must contain WorkDir; otherwise only WorkDir is
	// read.
	ProjectRoot string
	// WorkDir is the working directory, the last directory read.
	WorkDir string
	// Trusted lets the project's files be read. Untrusted, they are listed
	// in Set.Held and not read.
	Trusted bool
	// Fallback are the names read in a directory without AGENTS.md; nil
	// means DefaultFallback, empty reads AGENTS.md only.
	Fallback []string
	// MaxBytes caps the total of the files' text; 0 means DefaultMaxBytes.
	MaxBytes int
}

// File is one instruction file read.
type File struct {
	Path  string
	Scope Scope
	// Size is the file's size on disk; Text may be shorter when the cap cut
	// it (Cut).
	Size int64
	Text string
	Cut  bool // the cap cut this file short, or left it out (Text == "")
}

// Tokens estimates the tokens Text costs a model (about four bytes each).
func (f File) Tokens() int { return (len(f.Text) + 3) / 4 }

// Set is what a Load found.
type Set struct {
	Files []File
	// Held are project files found but not read, because the project is
	// not trusted.
	Held []string
	// MaxBytes is the cap that applied; Cut reports whether it cut any file.
	MaxBytes int
	Cut      bool
	// Errors are files that exist but could not be read (permissions, a
	// directory or a named pipe called AGENTS.md, a project's file that
	// links outside the project): they are left out and said.
	Errors []error
}

// Prompt renders the set as a section of the system prompt: each file
// under its path, outer first; "" when no file was read. A note says when
// the cap cut something, so the model knows it did not see everything.
func (s Set) Prompt() string {
	if len(s.Files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n# Instructions from the user's instruction files\n")
	b.WriteString("The user wrote these for you (AGENTS.md and the like); the later, more specific ones take precedence.\n")
	for _, f := range s.Files {
		if f.Text == "" {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n%s\n", f.Path, strings.TrimRight(f.Text, "\n"))
	}
	if s.Cut {
		fmt.Fprintf(&b, "\n(otter cut these instructions at %s; files cut short: %s)\n", KiB(s.MaxBytes), strings.Join(s.CutPaths(), ", "))
	}
	return b.String()
}

// CutPaths are the files the cap cut short or left out.
func (s Set) CutPaths() []string {
	var out []string
	for _, f := range s.Files {
		if f.Cut {
			out = append(out, f.Path)
		}
	}
	return out
}

// KiB words a byte cap: "32 KiB".
func KiB(n int) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Candidates lists the directories read, in order, with their scope: the
// user directory, then the project root down to the working directory.
func Candidates(o Options) []Dir {
	var dirs []Dir
	if o.UserDir != "" {
		dirs = append(dirs, Dir{Path: o.UserDir, Scope: ScopeUser})
	}
	if o.WorkDir == "" {
		return dirs
	}
	work := filepath.Clean(o.WorkDir)
	chain := []string{work}
	if root := filepath.Clean(o.ProjectRoot); o.ProjectRoot != "" && within(root, work) {
		for d := work; d != root; {
			d = filepath.Dir(d)
			chain = append(chain, d)
		}
	}
	slices.Reverse(chain)
	for _, d := range chain {
		if o.UserDir != "" && filepath.Clean(o.UserDir) == d {
			continue // read once, as the user's
		}
		dirs = append(dirs, Dir{Path: d, Scope: ScopeProject})
	}
	return dirs
}

// Dir is a directory instruction files are read from.
type Dir struct {
	Path  string
	Scope Scope
}

// within reports whether path is root or under it.
func within(root, path string) bool { return projectfile.Inside(root, path) }

// project is the folder the project's files must resolve inside: the
// project root when it holds the working directory, else the working
// directory (the folders Candidates reads).
func (o Options) project() string {
	work := filepath.Clean(o.WorkDir)
	if root := filepath.Clean(o.ProjectRoot); o.ProjectRoot != "" && within(root, work) {
		return root
	}
	return work
}

// names is the names read in a directory, in order of preference.
func (o Options) names() []string {
	fb := o.Fallback
	if fb == nil {
		fb = DefaultFallback
	}
	return append([]string{Primary}, fb...)
}

// Load finds and reads the instruction files o names (see the package
// comment). It does not fail: a file that cannot be read is in Set.Errors.
func Load(o Options) Set {
	set, _ := load(o)
	return set
}

// stamp is what a file looked like when it was read; a Loader compares
// stamps to know whether to read again.
type stamp struct {
	path    string
	size    int64
	modTime time.Time
	exists  bool
}

func load(o Options) (Set, []stamp) {
	maxBytes := o.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	set := Set{MaxBytes: maxBytes}
	var stamps []stamp
	left := maxBytes
	for _, d := range Candidates(o) {
		for _, name := range o.names() {
			p := filepath.Join(d.Path, name)
			fi, err := os.Stat(p)
			st := stamp{path: p}
			if err == nil {
				st.size, st.modTime, st.exists = fi.Size(), fi.ModTime(), true
			}
			stamps = append(stamps, st)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err == nil && fi.IsDir() {
				err = errors.New("is a directory")
			}
			if err != nil {
				set.Errors = append(set.Errors, fmt.Errorf("instruction file %s: %w", p, err))
				break
			}
			if d.Scope == ScopeProject && !o.Trusted {
				set.Held = append(set.Held, p)
				break
			}
			confine := ""
			if d.Scope == ScopeProject {
				confine = o.project()
			}
			text, cut, err := readCapped(confine, p, left, left == maxBytes)
			if err != nil {
				set.Errors = append(set.Errors, readError(p, err))
				break
			}
			left -= len(text)
			set.Cut = set.Cut || cut
			set.Files = append(set.Files, File{Path: p, Scope: d.Scope, Size: fi.Size(), Text: text, Cut: cut})
			break // the first name found in a directory is its file
		}
	}
	return set, stamps
}

// readError words why the instruction file p was not read.
func readError(p string, err error) error {
	var oe *projectfile.OutsideError
	var nr *projectfile.NotRegularError
	switch {
	case errors.As(err, &oe), errors.As(err, &nr):
		return fmt.Errorf("instruction file %w; it is not read", err)
	}
	return fmt.Errorf("instruction file %s: %w", p, err)
}

// readCapped reads at most max bytes of the regular file p — inside the
// folder confine once its links are resolved, unless confine is "" — cut
// back to the last whole line; a file whose first line does not fit gives
// nothing, unless it is the first file read (first is set), which then ends
// at the last whole UTF-8 character that fits.
func readCapped(confine, p string, max int, first bool) (string, bool, error) {
	var f *os.File
	var err error
	if confine == "" {
		f, _, err = projectfile.Open(p)
	} else {
		f, _, err = projectfile.OpenIn(confine, p)
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	if max <= 0 {
		return "", true, nil
	}
	buf, more, err := projectfile.Read(f, int64(max))
	if err != nil {
		return "", false, err
	}
	if !more {
		return string(buf), false, nil
	}
	if i := strings.LastIndexByte(string(buf), '\n'); i >= 0 {
		buf = buf[:i+1]
	} else if !first {
		return "", true, nil
	}
	for len(buf) > 0 && !utf8.Valid(buf) {
		buf = buf[:len(buf)-1]
	}
	return string(buf), true, nil
}

// Loader keeps the last Set and reads the files again only when one of
// them (or a file that could now take precedence) changed.
type Loader struct {
	mu     sync.Mutex
	opts   Options
	set    Set
	stamps []stamp
	loaded bool
}

// NewLoader returns a Loader over o; nothing is read until Load.
func NewLoader(o Options) *Loader { return &Loader{opts: o} }

// SetOptions replaces the options (after the project was trusted, or the
// config changed); the next Load reads again.
func (l *Loader) SetOptions(o Options) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.opts, l.loaded = o, false
}

// Options returns the options in use.
func (l *Loader) Options() Options {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.opts
}

// Load returns the instruction files as they are now: the last Set when
// no file changed (a stat of each candidate), else a fresh read. changed
// reports a fresh read that differs from the last one.
func (l *Loader) Load() (set Set, changed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.loaded && !stale(l.stamps) {
		return l.set, false
	}
	set, stamps := load(l.opts)
	changed = l.loaded && set.Prompt() != l.set.Prompt()
	l.set, l.stamps, l.loaded = set, stamps, true
	return set, changed
}

// stale reports whether any stamped file differs from what it was.
func stale(stamps []stamp) bool {
	for _, s := range stamps {
		fi, err := os.Stat(s.path)
		exists := err == nil
		if exists != s.exists {
			return true
		}
		if exists && (fi.Size() != s.size || !fi.ModTime().Equal(s.modTime)) {
			return true
		}
	}
	return false
}
