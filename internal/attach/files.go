package attach

// @path mentions: a person's files attached to a message, beside the
// @SERVER:URI resources. A mention whose name before ":" is a configured
// server is a resource; anything else is a path.

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/otter-sh/otter/internal/gitignore"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/projectfile"
)

// KindDir is a directory attached as its listing.
const KindDir Kind = "directory"

// Limits of what a @path attaches when FileOptions leaves them 0.
const (
	// DefaultMaxFileBytes caps a text file: 256 KiB, some 64,000 tokens,
	// already a large share of most context windows.
	DefaultMaxFileBytes = 256 << 10
	// DefaultMaxImageBytes caps an image: 5 MiB, what the Anthropic API
	// takes per image.
	DefaultMaxImageBytes = 5 << 20
	// DefaultMaxDirEntries caps a directory's listing.
	DefaultMaxDirEntries = 500
)

// ErrBinary is wrapped by the error of a @path that names a file neither
// text nor an image.
var ErrBinary = errors.New("is a binary file")

// ErrTooLarge is wrapped by the error of a @path over the size cap.
var ErrTooLarge = errors.New("is too large to attach")

// ErrNoFile is wrapped by the error of a @path that looks like a path
// (it has a "/" or a "." or was quoted) but names nothing.
var ErrNoFile = errors.New("no such file or directory")

// ErrNotRegular is wrapped by the error of a @path that names a named
// pipe, a device or a socket: otter attaches only regular files (and
// directories), and does not wait on a pipe.
var ErrNotRegular = projectfile.ErrNotRegular

// OutsideError is the error of a @path outside the project that the
// person did not allow; the front end words how to allow it. A path inside
// the project whose symbolic links lead out of it is outside.
type OutsideError struct {
	Path   string // absolute, as written
	Target string // Path with its symbolic links resolved: what would be read
	Root   string // the project
}

func (e *OutsideError) Error() string {
	if e.Target != "" && e.Target != e.Path {
		return fmt.Sprintf("@%s links to %s, outside the project (%s)", e.Path, e.Target, e.Root)
	}
	return fmt.Sprintf("@%s is outside the project (%s)", e.Path, e.Root)
}

// FileOptions say where @paths resolve and what they may attach.
type FileOptions struct {
	// WorkDir is where relative paths start.
	WorkDir string
	// Root is the project; a path outside it needs AllowOutside. "" means
	// WorkDir.
	Root string
	// AllowOutside decides on a path outside Root (absolute, its symbolic
	// links resolved: what would be read); nil refuses with *OutsideError.
	// An error from it fails the message.
	AllowOutside func(ctx context.Context, path string) (bool, error)
	// Caps; 0 means the Default… constants.
	MaxFileBytes, MaxImageBytes, MaxDirEntries int
}

func (o FileOptions) root() string {
	if o.Root != "" {
		return o.Root
	}
	return o.WorkDir
}

// FileMention is one @path in a message.
type FileMention struct {
	Path   string // as written, without the @ and the quotes
	Quoted bool   // @"…"
	// Start and End are the byte offsets of the mention in the text.
	Start, End int
}

// FileMentions returns the @path mentions of text, in order: @ at the
// start or after a space or an opening bracket, then a quoted path
// (@"with spaces.txt") or one that runs to the next white space, without
// the punctuation that ends a sentence. A mention whose name before ":"
// isServer accepts is a resource (see Mentions), not a path.
func FileMentions(text string, isServer func(string) bool) []FileMention {
	var out []FileMention
	for i := 0; i < len(text); i++ {
		if text[i] != '@' || (i > 0 && !strings.ContainsRune(" \t\n\r([{", rune(text[i-1]))) {
			continue
		}
		start := i
		rest := text[i+1:]
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end <= 0 {
				continue
			}
			p := rest[1 : 1+end]
			out = append(out, FileMention{Path: p, Quoted: true, Start: start, End: start + 1 + end + 2})
			i = start + end + 2
			continue
		}
		n := strings.IndexAny(rest, " \t\n\r")
		if n < 0 {
			n = len(rest)
		}
		p := trimTrailing(rest[:n])
		i += n
		if p == "" {
			continue
		}
		if name, _, ok := strings.Cut(p, ":"); ok && isServer != nil && isServer(name) {
			continue
		}
		out = append(out, FileMention{Path: p, Start: start, End: start + 1 + len(p)})
	}
	return out
}

// looksLikePath reports whether an unquoted mention that names nothing is
// a mistyped path (an error) rather than a handle such as @alice (text).
func looksLikePath(m FileMention) bool {
	return m.Quoted || strings.ContainsAny(m.Path, `/.~\`)
}

// resolve makes a mention's path absolute: ~/ is the home directory,
// relative paths start at WorkDir.
func (o FileOptions) resolve(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, rest)
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(o.WorkDir, p)
	}
	return filepath.Clean(p)
}

// File is one file (or directory) read for a message.
type File struct {
	Attachment
	Text  string     // the text, or the directory's listing
	Image *llm.Image // an image
}

// ReadFile reads the file a @path names for a model: text as text, an
// image as an image, a directory as its listing, within o's caps; a binary
// file, one over its cap, or a named pipe, device or socket is refused with
// an error that names it; a path outside the project — its symbolic links
// resolved first — needs o.AllowOutside. ok is false (and err nil) for an
// unquoted mention that names nothing and does not look like a path
// (@alice): it stays text. Each error reads as a sentence on its own:
// "@big.txt is too large to attach: …".
func ReadFile(ctx context.Context, o FileOptions, m FileMention) (f File, ok bool, err error) {
	abs := o.resolve(m.Path)
	fi, err := os.Stat(abs)
	if errors.Is(err, os.ErrNotExist) {
		if !looksLikePath(m) {
			return File{}, false, nil
		}
		return File{}, false, fmt.Errorf("@%s: %w", m.Path, ErrNoFile)
	}
	if err != nil {
		return File{}, false, fmt.Errorf("could not read @%s: %w", m.Path, err)
	}
	target, root, inside := abs, o.root(), true
	if root != "" {
		if target, root, inside, err = projectfile.Resolve(root, abs); err != nil {
			return File{}, false, fmt.Errorf("could not read @%s: %w", m.Path, err)
		}
	}
	if !inside {
		allowed := false
		if o.AllowOutside != nil {
			if allowed, err = o.AllowOutside(ctx, target); err != nil {
				return File{}, false, err
			}
		}
		if !allowed {
			return File{}, false, &OutsideError{Path: abs, Target: target, Root: root}
		}
	}
	f = File{Attachment: Attachment{Path: m.Path}}
	if fi.IsDir() {
		text, n, err := listing(ctx, target, orDefault(o.MaxDirEntries, DefaultMaxDirEntries))
		if err != nil {
			return File{}, false, fmt.Errorf("could not list @%s: %w", m.Path, err)
		}
		f.Kind, f.Size, f.Text = KindDir, n, text
		return f, true, nil
	}
	var file *os.File
	if inside && root != "" {
		file, fi, err = projectfile.OpenIn(root, target)
	} else {
		file, fi, err = projectfile.Open(target)
	}
	var nr *projectfile.NotRegularError
	if errors.As(err, &nr) {
		return File{}, false, fmt.Errorf("@%s is %s, not a regular file: %w; otter attaches text files, images (PNG, JPEG, GIF, WebP) and directories", m.Path, projectfile.Kind(nr.Mode), ErrNotRegular)
	}
	if err != nil {
		return File{}, false, fmt.Errorf("could not read @%s: %w", m.Path, err)
	}
	defer file.Close()
	head := make([]byte, 8192)
	n, err := io.ReadFull(file, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return File{}, false, fmt.Errorf("could not read @%s: %w", m.Path, err)
	}
	head = head[:n]
	rest := io.MultiReader(bytes.NewReader(head), file) // the whole file again
	mime := http.DetectContentType(head)
	switch {
	case IsImage(mime):
		max := orDefault(o.MaxImageBytes, DefaultMaxImageBytes)
		if fi.Size() > int64(max) {
			return File{}, false, fmt.Errorf("@%s %w: the image is %s; otter attaches images up to %s", m.Path, ErrTooLarge, Size(int(fi.Size())), Size(max))
		}
		data, more, err := projectfile.Read(rest, int64(max))
		if err != nil {
			return File{}, false, fmt.Errorf("could not read @%s: %w", m.Path, err)
		}
		if more {
			return File{}, false, fmt.Errorf("@%s %w: the image grew past %s while otter read it", m.Path, ErrTooLarge, Size(max))
		}
		f.Kind, f.MIMEType, f.Size, f.Image = KindImage, mime, len(data), &llm.Image{MIMEType: mime, Data: data}
		return f, true, nil
	case projectfile.LooksBinary(head, fi.Size()):
		return File{}, false, fmt.Errorf("@%s %w (%s); otter attaches text files, images (PNG, JPEG, GIF, WebP) and directories", m.Path, ErrBinary, mime)
	}
	max := orDefault(o.MaxFileBytes, DefaultMaxFileBytes)
	if fi.Size() > int64(max) {
		return File{}, false, fmt.Errorf("@%s %w: the file is %s; otter attaches text files up to %s, so attach a part of it", m.Path, ErrTooLarge, Size(int(fi.Size())), Size(max))
	}
	data, more, err := projectfile.Read(rest, int64(max))
	if err != nil {
		return File{}, false, fmt.Errorf("could not read @%s: %w", m.Path, err)
	}
	if more {
		return File{}, false, fmt.Errorf("@%s %w: the file grew past %s while otter read it; otter attaches text files up to %s, so attach a part of it", m.Path, ErrTooLarge, Size(max), Size(max))
	}
	if !utf8.Valid(data) {
		return File{}, false, fmt.Errorf("@%s %w (not UTF-8 text); otter attaches text files, images (PNG, JPEG, GIF, WebP) and directories", m.Path, ErrBinary)
	}
	f.Kind, f.MIMEType, f.Size, f.Text = KindText, strings.SplitN(mime, ";", 2)[0], len(data), string(data)
	return f, true, nil
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// listing is a directory's entries, one a line, directories with a "/",
// without .git and what .gitignore ignores, at most max of them.
func listing(ctx context.Context, dir string, max int) (string, int, error) {
	names, err := ListDir(ctx, dir)
	if err != nil {
		return "", 0, err
	}
	n := len(names)
	var b strings.Builder
	for i, name := range names {
		if i == max {
			fmt.Fprintf(&b, "… and %d more\n", n-max)
			break
		}
		b.WriteString(name)
		b.WriteByte('\n')
	}
	return b.String(), n, nil
}

// ListDir lists a directory's entries by name, sorted, directories with a
// trailing "/", leaving out .git and what git ignores there (.gitignore and
// the like, as git reads them; outside a repository or without git, only
// .git is left out).
func ListDir(ctx context.Context, dir string) ([]string, error) {
	entries, err := projectfile.ReadDir(dir) // not os.ReadDir: it waits on a named pipe
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		name := e.Name()
		if e.IsDir() || (e.Type()&os.ModeSymlink != 0 && isDir(filepath.Join(dir, name))) {
			name += "/"
		}
		names = append(names, name)
	}
	ignored := gitIgnored(ctx, dir, names)
	names = slices.DeleteFunc(names, func(n string) bool { return ignored[n] })
	slices.Sort(names)
	return names, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// gitIgnored reports which of names (entries of dir) git's ignore rules
// leave out (package gitignore: the rules are read, git is never run, so
// that listing a folder runs no program its repository configures);
// outside a repository nothing is ignored.
func gitIgnored(_ context.Context, dir string, names []string) map[string]bool {
	return gitignore.Entries(dir, names)
}

// CompletePath completes the @path being typed (prefix, as written after
// the @) against the files under workDir: the entries of its directory
// whose names start with its last part, as they would be written (with the
// directory part kept, directories ending in "/"), leaving out .git and
// what git ignores. Hidden entries show only when the part starts with ".".
func CompletePath(ctx context.Context, workDir, prefix string) []string {
	dirPart, base := "", prefix
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dirPart, base = prefix[:i+1], prefix[i+1:]
	}
	dir := FileOptions{WorkDir: workDir}.resolve(cmp.Or(dirPart, "."))
	names, err := ListDir(ctx, dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range names {
		if !strings.HasPrefix(n, base) || (strings.HasPrefix(n, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		out = append(out, dirPart+n)
	}
	return out
}

// QuotePath writes a path as a mention: @path, or @"path" when it has a
// space.
func QuotePath(p string) string {
	if strings.ContainsAny(p, " \t") {
		return `@"` + p + `"`
	}
	return "@" + p
}
