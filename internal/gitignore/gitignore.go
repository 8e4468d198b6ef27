// Package gitignore reads git's ignore rules without running git: a
// repository's own git configuration (core.fsmonitor, hooks, filters …)
// can make any git command run a program, and listing or searching a
// folder must not do that in a project the user has not trusted. What it
// reads, as git does (see gitignore(5)): the user's global excludes file
// (core.excludesFile, else $XDG_CONFIG_HOME/git/ignore), the repository's
// .git/info/exclude, and the .gitignore of every directory from the work
// tree's top down to the one listed; a later rule wins over an earlier
// one, a deeper file over a shallower one, and what is inside an ignored
// directory is ignored too.
//
// It imports projectfile of otter's packages.
package gitignore

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/otter-sh/otter/internal/projectfile"
)

// maxIgnoreFile caps what is read of one ignore file.
const maxIgnoreFile = 1 << 20

// ignoreRule is one pattern line of an ignore file.
type ignoreRule struct {
	base    string   // the directory it is relative to, slash-separated from the top ("" for the top)
	segs    []string // the pattern's segments; "**" matches any number
	negate  bool     // "!pattern": re-includes
	dirOnly bool     // "pattern/": matches directories only
}

// parseIgnore reads the rules of one ignore file, relative to base.
func parseIgnore(data []byte, base string) []ignoreRule {
	var rules []ignoreRule
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxIgnoreFile)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		line = trimTrailingSpaces(line)
		r := ignoreRule{base: base}
		switch {
		case strings.HasPrefix(line, "!"):
			r.negate, line = true, line[1:]
		case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		// A slash at the start or in the middle anchors the pattern to
		// base; without one it matches a name at any depth below base.
		anchored := strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		r.segs = strings.Split(line, "/")
		if !anchored {
			r.segs = append([]string{"**"}, r.segs...)
		}
		for i, s := range r.segs {
			if s != "**" && strings.Contains(s, "**") {
				r.segs[i] = strings.ReplaceAll(s, "**", "*") // "a**b" is "a*b"
			}
			r.segs[i] = strings.ReplaceAll(r.segs[i], "[!", "[^")
		}
		rules = append(rules, r)
	}
	return rules
}

// trimTrailingSpaces drops trailing spaces unless backslash-escaped.
func trimTrailingSpaces(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	if strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-2] + " "
	}
	return s
}

// matches reports whether the rule matches rel (slash-separated, from the
// work tree's top), a directory when dir is set.
func (r ignoreRule) matches(rel string, dir bool) bool {
	if r.dirOnly && !dir {
		return false
	}
	if r.base != "" {
		rest, ok := strings.CutPrefix(rel, r.base+"/")
		if !ok {
			return false
		}
		rel = rest
	}
	return matchSegs(r.segs, strings.Split(rel, "/"))
}

// matchSegs matches pattern segments against path segments; "**" matches
// zero or more whole segments, except that a trailing "**" needs at least
// one ("dir/**" is what is inside dir).
func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			if len(pat) == 1 {
				return len(name) > 0
			}
			for i := 0; i <= len(name); i++ {
				if matchSegs(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], name[0]); err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// Rules are the ignore rules that apply in one directory of a work tree,
// lowest precedence first. A nil *Rules (outside a work tree) ignores
// nothing.
type Rules struct {
	top   string // the work tree's top
	rules []ignoreRule
}

// Top is the work tree's top ("" for nil Rules).
func (s *Rules) Top() string {
	if s == nil {
		return ""
	}
	return s.top
}

// Ignored reports whether rel (slash-separated, from the top) is ignored,
// a directory when dir is set: the last rule that matches it decides.
func (s *Rules) Ignored(rel string, dir bool) bool {
	if s == nil {
		return false
	}
	ignored := false
	for _, r := range s.rules {
		if r.matches(rel, dir) {
			ignored = !r.negate
		}
	}
	return ignored
}

// For reads the rules for the entries of dir: the global and repository
// excludes and every .gitignore from the top down to dir. It is nil
// outside a git work tree.
func For(dir string) *Rules {
	top := workTreeTop(dir)
	if top == "" {
		return nil
	}
	s := &Rules{top: top}
	if f := globalExcludesFile(); f != "" {
		s.rules = append(s.rules, parseIgnore(readIgnoreFile(f), "")...)
	}
	if gd := gitDirOf(top); gd != "" {
		s.rules = append(s.rules, parseIgnore(readIgnoreFile(filepath.Join(gd, "info", "exclude")), "")...)
	}
	rel, err := filepath.Rel(top, dir)
	if err != nil {
		return s
	}
	base := ""
	s.rules = append(s.rules, parseIgnore(readIgnoreFile(filepath.Join(top, ".gitignore")), "")...)
	if rel != "." {
		for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
			base = path.Join(base, part)
			s.rules = append(s.rules, parseIgnore(readIgnoreFile(filepath.Join(top, filepath.FromSlash(base), ".gitignore")), base)...)
		}
	}
	return s
}

// Below returns the rules for the entries of sub, a directory just below
// the one s is for (rel, slash-separated from the top): s and sub's own
// .gitignore, which wins. s is not changed, so that a walk can hand each
// directory its own rules; nil stays nil.
func (s *Rules) Below(sub, rel string) *Rules {
	if s == nil {
		return nil
	}
	more := parseIgnore(readIgnoreFile(filepath.Join(sub, ".gitignore")), rel)
	if len(more) == 0 {
		return s
	}
	return &Rules{top: s.top, rules: append(s.rules[:len(s.rules):len(s.rules)], more...)}
}

// Entries reports which of names (entries of dir, directories ending in
// "/") git's ignore rules leave out; inside an ignored directory all of
// them are. Outside a work tree nothing is.
func Entries(dir string, names []string) map[string]bool {
	s := For(dir)
	if s == nil || len(names) == 0 {
		return nil
	}
	rel, err := filepath.Rel(s.top, dir)
	if err != nil {
		return nil
	}
	prefix := ""
	if rel != "." {
		prefix = filepath.ToSlash(rel)
		// A directory on the way down that is ignored hides everything
		// below it, whatever a deeper rule says.
		p := ""
		for _, part := range strings.Split(prefix, "/") {
			if p = path.Join(p, part); s.Ignored(p, true) {
				all := map[string]bool{}
				for _, n := range names {
					all[n] = true
				}
				return all
			}
		}
	}
	out := map[string]bool{}
	for _, n := range names {
		name, isDir := strings.CutSuffix(n, "/")
		if s.Ignored(path.Join(prefix, name), isDir) {
			out[n] = true
		}
	}
	return out
}

// workTreeTop is the nearest directory at or above dir holding .git.
func workTreeTop(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// gitDirOf is the git directory of the work tree at top: .git, or where a
// .git file points ("gitdir: …"); a worktree's info/exclude is the
// repository's (its "commondir").
func gitDirOf(top string) string {
	dotGit := filepath.Join(top, ".git")
	fi, err := os.Stat(dotGit)
	if err != nil {
		return ""
	}
	gd := dotGit
	if !fi.IsDir() {
		target, ok := strings.CutPrefix(strings.TrimSpace(string(readIgnoreFile(dotGit))), "gitdir:")
		if !ok {
			return ""
		}
		gd = strings.TrimSpace(target)
		if !filepath.IsAbs(gd) {
			gd = filepath.Join(top, gd)
		}
	}
	if common := strings.TrimSpace(string(readIgnoreFile(filepath.Join(gd, "commondir")))); common != "" {
		if !filepath.IsAbs(common) {
			common = filepath.Join(gd, common)
		}
		gd = common
	}
	return gd
}

// globalExcludesFile is the user's core.excludesFile, read from their own
// git configuration files ($XDG_CONFIG_HOME/git/config, ~/.gitconfig; the
// latter wins, as in git), else $XDG_CONFIG_HOME/git/ignore.
func globalExcludesFile() string {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	file := ""
	for _, cfg := range []string{filepath.Join(xdg, "git", "config"), filepath.Join(home, ".gitconfig")} {
		if v := coreExcludesFile(readIgnoreFile(cfg)); v != "" {
			file = v
		}
	}
	if file == "" && xdg != "" {
		return filepath.Join(xdg, "git", "ignore")
	}
	if rest, ok := strings.CutPrefix(file, "~/"); ok && home != "" {
		file = filepath.Join(home, rest)
	}
	return file
}

// coreExcludesFile finds excludesFile in the [core] section of a git
// config file (the last one set), unquoted.
func coreExcludesFile(data []byte) string {
	section, value := "", ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			name, _, _ := strings.Cut(strings.Trim(line, "[] \t"), " ")
			section = strings.ToLower(name)
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok && section == "core" && strings.EqualFold(strings.TrimSpace(k), "excludesfile") {
			value = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return value
}

// readIgnoreFile reads at most maxIgnoreFile bytes of a file; nil when it
// cannot be read.
func readIgnoreFile(name string) []byte {
	f, _, err := projectfile.Open(name) // a .gitignore that is a FIFO must not hang the listing
	if err != nil {
		return nil
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	return data
}

// Match reports whether rel (slash-separated) matches pattern, a glob whose
// segments are path.Match patterns and where a "**" segment matches any
// number of segments (none included), as in a .gitignore: "**/*.go",
// "src/**/test_*.py". A pattern without a slash matches the last segment
// at any depth ("*.go" as "**/*.go").
func Match(pattern, rel string) bool {
	pattern = strings.Trim(pattern, "/")
	segs := strings.Split(pattern, "/")
	if !strings.Contains(pattern, "/") {
		segs = append([]string{"**"}, segs...)
	}
	for i, s := range segs {
		if s != "**" && strings.Contains(s, "**") {
			segs[i] = strings.ReplaceAll(s, "**", "*")
		}
	}
	return matchSegs(segs, strings.Split(rel, "/"))
}
