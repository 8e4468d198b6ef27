// Package skill discovers Agent Skills (the open SKILL.md format that Claude
// Code, Codex, Gemini CLI and opencode read) and gives the model a built-in
// tool to load one.
//
// A skill is a folder holding SKILL.md: a YAML header with a name and a
// description, and a body of instructions, beside any files it bundles
// (references, templates, scripts). Only the names and descriptions go into
// the system prompt (see Catalog); the model loads a skill's body, and
// reads its bundled files, through the tool (see Tool), so a skill costs
// its few words until it is used. otter runs none of a skill's scripts: it
// has no shell tool, so a skill's scripts are the user's to run or an MCP
// server's.
//
// Which folders count, and whether a project's are trusted, is the
// caller's to decide. A root may confine its skills to a folder (a
// project's skills to the project): a skill folder or file whose symbolic
// links lead out of it is not read, and is reported with where it leads.
// Only regular files are read (a named pipe called SKILL.md would hang
// otter), each capped.
package skill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/otter-sh/otter/internal/frontmatter"
	"github.com/otter-sh/otter/internal/projectfile"
)

// Scope says whose a skill is.
type Scope string

const (
	User    Scope = "user"
	Project Scope = "project"
)

// Root is a folder whose subfolders are skills (.otter/skills,
// .agents/skills, .claude/skills).
type Root struct {
	Path  string
	Scope Scope
	// Confine is the folder its skills must resolve inside, symbolic links
	// followed (a project's skills: the project); "" lets them lead
	// anywhere (the user's own).
	Confine string
}

// Skill is one discovered skill.
type Skill struct {
	Name        string
	Description string
	Dir         string // the skill's folder
	Scope       Scope
	confine     string // Root.Confine
}

// File is the skill's SKILL.md.
func (s Skill) File() string { return filepath.Join(s.Dir, "SKILL.md") }

type header struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// The format's limits: a name of at most 64 lowercase letters, digits and
// single hyphens that is also its folder's name; a description of at most
// 1,024 characters.
const (
	maxNameLen        = 64
	maxDescriptionLen = 1024
	// maxSkillFile bounds SKILL.md and a bundled file read through the tool.
	maxSkillFile = 256 << 10
	// maxSkills bounds how many skills one root may hold.
	maxSkills = 200
)

var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// Discover finds the skills under roots. A later root's skill replaces an
// earlier one of the same name (pass user roots first). A SKILL.md that
// cannot be read, or whose header is missing a name or description, is
// left out and reported with its file and line; it never stops the others.
func Discover(roots []Root) (skills []Skill, problems []error) {
	byName := map[string]int{}
	for _, r := range roots {
		entries, err := projectfile.ReadDir(r.Path) // not os.ReadDir: it waits on a named pipe
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			problems = append(problems, err)
			continue
		}
		n := 0
		for _, e := range entries {
			dir := filepath.Join(r.Path, e.Name())
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, "SKILL.md")); err != nil {
				continue
			}
			if n++; n > maxSkills {
				problems = append(problems, fmt.Errorf("%s: more than %d skills; the rest are not read", r.Path, maxSkills))
				break
			}
			if r.Confine != "" {
				target, root, inside, err := projectfile.Resolve(r.Confine, dir)
				if err == nil && !inside {
					err = &projectfile.OutsideError{Path: dir, Target: target, Root: root}
				}
				if err != nil {
					problems = append(problems, fmt.Errorf("skill folder %w; it is not read", err))
					continue
				}
			}
			s, err := read(dir, r.Scope, r.Confine)
			if err != nil {
				problems = append(problems, err)
				continue
			}
			if i, ok := byName[s.Name]; ok {
				skills[i] = s
				continue
			}
			byName[s.Name] = len(skills)
			skills = append(skills, s)
		}
	}
	slices.SortFunc(skills, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return skills, problems
}

func read(dir string, scope Scope, confine string) (Skill, error) {
	file := filepath.Join(dir, "SKILL.md")
	data, err := readCapped(confine, file)
	if err != nil {
		return Skill{}, err
	}
	var h header
	if _, _, err := frontmatter.Decode(file, data, &h); err != nil {
		return Skill{}, err
	}
	if _, _, _, ok := frontmatter.Split(data); !ok {
		return Skill{}, &frontmatter.Error{File: file, Line: 1, Msg: "SKILL.md must start with a YAML header (---) giving its name and description"}
	}
	bad := func(key, msg string) error {
		return &frontmatter.Error{File: file, Line: headerLine(data, key), Msg: msg}
	}
	switch {
	case h.Name == "":
		return Skill{}, bad("name", "the header has no name")
	case len(h.Name) > maxNameLen || !validName().MatchString(h.Name):
		return Skill{}, bad("name", fmt.Sprintf("name %q must be at most %d lowercase letters, digits and single hyphens", h.Name, maxNameLen))
	case h.Name != filepath.Base(dir):
		return Skill{}, bad("name", fmt.Sprintf("name %q must be the name of its folder, %q", h.Name, filepath.Base(dir)))
	case strings.TrimSpace(h.Description) == "":
		return Skill{}, bad("description", "the header has no description: say what the skill does and when to use it")
	case utf8.RuneCountInString(h.Description) > maxDescriptionLen:
		return Skill{}, bad("description", fmt.Sprintf("the description is longer than %d characters", maxDescriptionLen))
	}
	return Skill{Name: h.Name, Description: strings.TrimSpace(h.Description), Dir: dir, Scope: scope, confine: confine}, nil
}

// headerLine is the line of key in data's header, or 1.
func headerLine(data []byte, key string) int {
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, key+":") {
			return i + 1
		}
	}
	return 1
}

// readCapped reads SKILL.md p: a regular file, inside confine (unless ""),
// of at most maxSkillFile bytes.
func readCapped(confine, p string) ([]byte, error) {
	data, err := projectfile.ReadFile(confine, p, maxSkillFile)
	var oe *projectfile.OutsideError
	var nr *projectfile.NotRegularError
	if errors.As(err, &oe) || errors.As(err, &nr) {
		return nil, fmt.Errorf("skill file %w; it is not read", err)
	}
	return data, err
}

// Body returns the skill's instructions: SKILL.md without its header.
func (s Skill) Body() (string, error) {
	data, err := readCapped(s.confine, s.File())
	if err != nil {
		return "", err
	}
	_, body, _, _ := frontmatter.Split(data)
	return strings.TrimSpace(string(body)), nil
}

// maxListed bounds the bundled files a skill lists.
const maxListed = 200

// Files lists the files the skill bundles, relative to its folder, SKILL.md
// left out.
func (s Skill) Files() ([]string, error) {
	var out []string
	err := filepath.WalkDir(s.Dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e.IsDir() {
			if p != s.Dir && strings.HasPrefix(e.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(s.Dir, p)
		if rel == "SKILL.md" || !e.Type().IsRegular() {
			return nil
		}
		if len(out) == maxListed {
			return fs.SkipAll
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	return out, err
}

// ErrOutside is a path that leaves the skill's folder.
var ErrOutside = errors.New("the path is outside the skill's folder")

// ReadFile reads one bundled file, by its path relative to the skill's
// folder. The path may not leave the folder, not even through a symbolic
// link (projectfile.OpenIn enforces it), and must name a regular file.
func (s Skill) ReadFile(rel string) (string, error) {
	if filepath.IsAbs(rel) || !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", fmt.Errorf("%s: %w", rel, ErrOutside)
	}
	f, st, err := projectfile.OpenIn(s.Dir, filepath.Join(s.Dir, filepath.FromSlash(rel)))
	var oe *projectfile.OutsideError
	var nr *projectfile.NotRegularError
	switch {
	case errors.As(err, &oe):
		return "", fmt.Errorf("%s: %w", rel, ErrOutside)
	case errors.As(err, &nr) && nr.Mode.IsDir():
		return "", fmt.Errorf("%s is a folder of skill %s; ask for one of its files", rel, s.Name)
	case errors.As(err, &nr):
		return "", fmt.Errorf("%s of skill %s is %s, not a file otter reads", rel, s.Name, projectfile.Kind(nr.Mode))
	case err != nil:
		return "", fmt.Errorf("skill %s has no file %s", s.Name, rel)
	}
	defer f.Close()
	if st.Size() > maxSkillFile {
		return "", fmt.Errorf("%s is %d KiB; at most %d KiB of a skill's file is read", rel, st.Size()>>10, maxSkillFile>>10)
	}
	data, more, err := projectfile.Read(f, maxSkillFile)
	if err != nil {
		return "", err
	}
	if more {
		return "", fmt.Errorf("%s is larger than %d KiB, the most of a skill's file that is read", rel, maxSkillFile>>10)
	}
	if !utf8.Valid(data) {
		return "", fmt.Errorf("%s is not text", rel)
	}
	return string(data), nil
}

// Catalog is the section of the system prompt that names the skills: how
// to load one, then each skill's name and description under where it comes
// from — the user's own, then the project's (in projectDir) — so that the
// model never takes a project's skill for one the user chose.
func Catalog(skills []Skill, projectDir string) string {
	if len(skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Skills\nSkills are instructions for particular tasks. When a task matches a skill's description, load it with the " + ToolName + " tool before you act, then follow it; it may name bundled files, which the same tool reads.\n")
	for _, g := range []struct {
		scope   Scope
		heading string
	}{
		{User, "## Skills from the user's configuration"},
		{Project, "## Skills from the project " + projectDir},
	} {
		head := false
		for _, s := range skills {
			if s.Scope != g.scope {
				continue
			}
			if !head {
				b.WriteString("\n" + g.heading + "\n")
				head = true
			}
			fmt.Fprintf(&b, "- %s: %s\n", s.Name, strings.Join(strings.Fields(s.Description), " "))
		}
	}
	return b.String()
}
