package localtools

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/otter-sh/otter/internal/gitignore"
	"github.com/otter-sh/otter/internal/projectfile"
	"github.com/otter-sh/otter/internal/tool"
)

// Caps of the walking tools.
const (
	// MaxFound caps the paths find_files lists.
	MaxFound = 200
	// maxWalked bounds the entries one walk visits.
	maxWalked = 500_000
)

// entry is a file a walk found.
type entry struct {
	abs  string
	rel  string      // from the walk's start, slash-separated
	typ  fs.FileMode // its type bits (a link is a link)
	info fs.FileInfo // Lstat's, read when asked for (Info)
}

// Info is the entry's Lstat, read once.
func (e *entry) Info() (fs.FileInfo, error) {
	if e.info != nil {
		return e.info, nil
	}
	fi, err := os.Lstat(e.abs)
	e.info = fi
	return fi, err
}

// walk visits the files below dir (dir itself when it is a file), leaving
// out .git, what git's ignore rules leave out (read without git) and the
// insides of directories that are symbolic links; fn returning false
// stops it. It reports whether it stopped at maxWalked.
func walk(ctx context.Context, dir string, fn func(entry) bool) (capped bool, err error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		fn(entry{abs: dir, rel: filepath.Base(dir), typ: fi.Mode().Type(), info: fi})
		return false, nil
	}
	rules := gitignore.For(dir)
	top := rules.Top()
	visited := 0
	var visit func(d, rel string, rules *gitignore.Rules) bool
	visit = func(d, rel string, rules *gitignore.Rules) bool {
		if ctx.Err() != nil {
			return false
		}
		entries, err := projectfile.ReadDir(d)
		if err != nil {
			return true // unreadable: left out, as rg does
		}
		for _, e := range entries {
			visited++
			if visited > maxWalked {
				capped = true
				return false
			}
			name := e.Name()
			if name == ".git" {
				continue
			}
			abs := filepath.Join(d, name)
			r := path.Join(rel, name)
			isDir := e.IsDir()
			if rules != nil {
				fromTop, _ := filepath.Rel(top, abs)
				if rules.Ignored(filepath.ToSlash(fromTop), isDir) {
					continue
				}
			}
			if isDir {
				sub := rules
				if rules != nil {
					fromTop, _ := filepath.Rel(top, abs)
					sub = rules.Below(abs, filepath.ToSlash(fromTop))
				}
				if !visit(abs, r, sub) {
					return false
				}
				continue
			}
			if !fn(entry{abs: abs, rel: r, typ: e.Type()}) {
				return false
			}
		}
		return true
	}
	visit(dir, "", rules)
	return capped, ctx.Err()
}

func findFilesDef() def {
	return def{
		name:  NameFindFiles,
		title: "Find files",
		description: "Find files by a glob pattern: \"**/*.go\", \"src/**/test_*.py\", \"*.{ts,tsx}\" (a pattern without a slash matches a file's name at any depth). " +
			"Lists paths, newest first, at most 200; .gitignore is honoured and .git left out. path is the directory to search (default: the working directory).",
		schema: `{"type":"object","properties":{` +
			`"pattern":{"type":"string","description":"a glob; ** matches any number of directories"},` +
			`"path":{"type":"string","description":"the directory to search, relative to the working directory or absolute; default the working directory"}},` +
			`"required":["pattern"],"additionalProperties":false}`,
		readOnly: true,
		group:    "basic",
		gate:     gateWalk,
		run: func(t *Tools, ctx context.Context, _ *State, args json.RawMessage) (*tool.Result, error) {
			in, err := decode[struct{ Pattern, Path string }](args)
			if err != nil {
				return errorResult("find_files: %v", err), nil
			}
			return findFiles(ctx, t.options(), in.Pattern, in.Path)
		},
	}
}

func findFiles(ctx context.Context, o Options, pattern, dir string) (*tool.Result, error) {
	pl, shown, refused := o.searched(ctx, dir)
	if refused != nil {
		return refused, nil
	}
	patterns := expandBraces(pattern)
	for _, p := range patterns {
		if _, err := path.Match(strings.ReplaceAll(p, "**", "*"), ""); err != nil {
			return errorResult("the pattern %q is not a glob: %v", pattern, err), nil
		}
	}
	var found []entry
	capped, err := walk(ctx, pl.real, func(e entry) bool {
		for _, p := range patterns {
			if gitignore.Match(p, e.rel) {
				if _, err := e.Info(); err == nil {
					found = append(found, e)
				}
				break
			}
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("find_files: %w", err)
	}
	if len(found) == 0 {
		return tool.TextResult(fmt.Sprintf("No files match %q in %s.", pattern, shown)), nil
	}
	slices.SortFunc(found, func(a, b entry) int {
		if c := b.info.ModTime().Compare(a.info.ModTime()); c != 0 {
			return c
		}
		return strings.Compare(a.rel, b.rel)
	})
	var b strings.Builder
	for i, e := range found {
		if i == MaxFound {
			fmt.Fprintf(&b, "[… and %d more: a narrower pattern or path lists them]\n", len(found)-MaxFound)
			break
		}
		b.WriteString(o.shown(filepath.Join(pl.abs, filepath.FromSlash(e.rel))))
		b.WriteByte('\n')
	}
	if capped {
		fmt.Fprintf(&b, "[the search stopped after %d entries: search a smaller directory]\n", maxWalked)
	}
	return tool.TextResult(strings.TrimSuffix(b.String(), "\n")), nil
}

// searched resolves the path a walking tool searches (default: the
// working directory), or says why it cannot.
func (o Options) searched(ctx context.Context, dir string) (place, string, *tool.Result) {
	dir = cmp.Or(dir, ".")
	pl, err := o.resolve(dir, true)
	if err != nil {
		return place{}, "", errorResult("could not search %s: %v", dir, err)
	}
	shown := o.shown(pl.abs)
	if !pl.exists {
		return place{}, "", errorResult("%s does not exist (looked for %s)", shown, pl.abs)
	}
	if why := pl.movedOut(ctx, shown); why != "" {
		return place{}, "", errorResult("%s", why)
	}
	return pl, shown, nil
}

// gateWalk is the question of find_files and search_files: that of
// reading their path (default: the working directory).
func gateWalk(t *Tools, _ context.Context, _ *State, args json.RawMessage) tool.Gate {
	in, _ := decode[struct{ Path string }](args)
	return gateReading(t.options(), cmp.Or(in.Path, "."))
}

// expandBraces expands the first {a,b} of a glob, recursively:
// "*.{ts,tsx}" is "*.ts" and "*.tsx".
func expandBraces(p string) []string {
	open := strings.IndexByte(p, '{')
	if open < 0 {
		return []string{p}
	}
	end := strings.IndexByte(p[open:], '}')
	if end < 0 {
		return []string{p}
	}
	end += open
	var out []string
	for _, alt := range strings.Split(p[open+1:end], ",") {
		out = append(out, expandBraces(p[:open]+alt+p[end+1:])...)
	}
	return out
}

// age words how long ago t was, for a command's state.
func age(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }
