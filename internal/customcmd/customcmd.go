// Package customcmd loads the user's custom slash commands — Markdown
// files whose body is a prompt template — and expands one into the message
// it sends.
//
// A file commands/review/pr.md is the command /review:pr (a subfolder is a
// namespace). Its optional YAML header sets:
//
//	description: Review a pull request     # listed in /help; else the body's first line
//	argument-hint: <number>                # shown after the name while typing
//	model: claude-sonnet-4-5               # the model for this one turn
//	allowed-tools: [mcp__github__get_pr]   # tools it may run without asking, for that turn
//
// In the body, $ARGUMENTS is everything typed after the name and $1 … $9
// its words (shell quoting groups words); a body without $ARGUMENTS gets the
// arguments appended. A !`cmd` span runs cmd in the shell and stands for
// its output — only when the command's own allowed-tools permits the shell
// (Bash, or Bash(PREFIX:*) for commands starting with PREFIX, as Claude Code
// writes it). @file mentions are left for the conversation to expand, as in
// a typed message.
//
// The format is Claude Code's, so a .claude/commands folder works as it is.
// Which folders count, and whether a project's are trusted, is the caller's
// to decide. A folder may confine its files (a project's, to the project):
// a command file whose symbolic links lead out of it is not read, and is
// reported with where it leads. Only regular files are read (a named pipe
// called x.md would hang otter), each capped.
package customcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/shell"

	"github.com/otter-sh/otter/internal/frontmatter"
	"github.com/otter-sh/otter/internal/projectfile"
)

// Scope says whose a command is.
type Scope string

const (
	User    Scope = "user"
	Project Scope = "project"
)

// Dir is a folder of command files.
type Dir struct {
	Path  string
	Scope Scope
	// Confine is the folder its command files must resolve inside,
	// symbolic links followed (a project's commands: the project); "" lets
	// them lead anywhere (the user's own).
	Confine string
}

// Command is one custom slash command.
type Command struct {
	Name         string // "review:pr", without the slash
	Description  string
	ArgumentHint string
	Model        string
	AllowedTools []string
	Body         string
	File         string
	Scope        Scope
}

// header is a command file's YAML header. allowed-tools may be a list or,
// as Claude Code also accepts, one comma-separated string.
type header struct {
	Description  string    `yaml:"description"`
	ArgumentHint string    `yaml:"argument-hint"`
	Model        string    `yaml:"model"`
	AllowedTools toolsList `yaml:"allowed-tools"`
}

type toolsList []string

func (l *toolsList) UnmarshalYAML(unmarshal func(any) error) error {
	var list []string
	if err := unmarshal(&list); err == nil {
		*l = list
		return nil
	}
	var s string
	if err := unmarshal(&s); err != nil {
		return errors.New("allowed-tools must be a list of tool names or one comma-separated string")
	}
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			*l = append(*l, f)
		}
	}
	return nil
}

// maxFileSize bounds a command file: a prompt template, not a data file.
const maxFileSize = 256 << 10

// maxFiles bounds how many files one folder may contribute, so that a
// clone with a huge commands tree costs nothing noticeable at start.
const maxFiles = 1000

// validName is a command name's segment: what can be typed after a slash.
var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`) })

// Load reads every *.md file below each dir. A later dir's command wins over
// an earlier one of the same name (pass user folders first, then the
// project's). A file that cannot be read or whose header is bad is left out
// and reported, with its file and line; it never stops the others.
func Load(dirs []Dir) (cmds []Command, problems []error) {
	byName := map[string]int{}
	for _, d := range dirs {
		n := 0
		err := filepath.WalkDir(d.Path, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if p == d.Path && errors.Is(err, fs.ErrNotExist) {
					return fs.SkipAll
				}
				problems = append(problems, err)
				return nil
			}
			if e.IsDir() || !strings.EqualFold(filepath.Ext(p), ".md") {
				return nil
			}
			if n++; n > maxFiles {
				problems = append(problems, fmt.Errorf("%s: more than %d command files; the rest are not read", d.Path, maxFiles))
				return fs.SkipAll
			}
			c, err := readCommand(d, p)
			if err != nil {
				problems = append(problems, err)
				return nil
			}
			if i, ok := byName[c.Name]; ok {
				cmds[i] = c
				return nil
			}
			byName[c.Name] = len(cmds)
			cmds = append(cmds, c)
			return nil
		})
		if err != nil {
			problems = append(problems, err)
		}
	}
	slices.SortFunc(cmds, func(a, b Command) int { return strings.Compare(a.Name, b.Name) })
	return cmds, problems
}

func readCommand(d Dir, p string) (Command, error) {
	rel, err := filepath.Rel(d.Path, p)
	if err != nil {
		return Command{}, err
	}
	parts := strings.Split(strings.TrimSuffix(filepath.ToSlash(rel), filepath.Ext(rel)), "/")
	for _, s := range parts {
		if !validName().MatchString(s) {
			return Command{}, &frontmatter.Error{File: p, Msg: fmt.Sprintf("%q cannot be a command name: use letters, digits, '-', '_' and '.'", s)}
		}
	}
	data, err := projectfile.ReadFile(d.Confine, p, maxFileSize)
	var oe *projectfile.OutsideError
	var nr *projectfile.NotRegularError
	switch {
	case errors.Is(err, projectfile.ErrTooLarge):
		return Command{}, &frontmatter.Error{File: p, Msg: fmt.Sprintf("the file is larger than %d KiB, the most a command file may be", maxFileSize>>10)}
	case errors.As(err, &oe), errors.As(err, &nr):
		return Command{}, fmt.Errorf("command file %w; it is not read", err)
	case err != nil:
		return Command{}, err
	}
	var h header
	body, _, err := frontmatter.Decode(p, data, &h)
	if err != nil {
		return Command{}, err
	}
	c := Command{
		Name:         strings.Join(parts, ":"),
		Description:  h.Description,
		ArgumentHint: h.ArgumentHint,
		Model:        h.Model,
		AllowedTools: h.AllowedTools,
		Body:         strings.TrimSpace(string(body)),
		File:         p,
		Scope:        d.Scope,
	}
	if c.Description == "" {
		first, _, _ := strings.Cut(c.Body, "\n")
		c.Description = strings.TrimSpace(strings.TrimLeft(first, "# "))
	}
	return c, nil
}

// Expansion is a command made ready to send.
type Expansion struct {
	// Prompt is the body with its arguments and shell output in place.
	Prompt string
	// Notes are for the user: shell spans that were not run, and why.
	Notes []string
}

// RunShell runs one shell command for a !`cmd` span and returns its output.
type RunShell func(ctx context.Context, cmdline string) (string, error)

var (
	shellSpan  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("!`([^`\n]+)`") })
	positional = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$([1-9])`) })
)

// Expand puts args into c's body and runs its !`cmd` spans with run (nil:
// none runs). A span whose command the command's allowed-tools does not
// permit is not run; it stands as a note in the prompt and in Notes.
func (c Command) Expand(ctx context.Context, args string, run RunShell) (Expansion, error) {
	args = strings.TrimSpace(args)
	words, err := shell.Fields(args, func(name string) string { return "$" + name })
	if err != nil {
		return Expansion{}, fmt.Errorf("/%s: the arguments cannot be split into words: %w", c.Name, err)
	}
	body := c.Body
	usesArgs := strings.Contains(body, "$ARGUMENTS") || positional().MatchString(body)
	body = strings.ReplaceAll(body, "$ARGUMENTS", args)
	body = positional().ReplaceAllStringFunc(body, func(m string) string {
		i, _ := strconv.Atoi(m[1:])
		if i <= len(words) {
			return words[i-1]
		}
		return ""
	})
	if !usesArgs && args != "" {
		body += "\n\nARGUMENTS: " + args
	}
	var exp Expansion
	var runErr error
	body = shellSpan().ReplaceAllStringFunc(body, func(m string) string {
		cmdline := strings.TrimSpace(m[2 : len(m)-1])
		switch {
		case runErr != nil:
			return m
		case run == nil:
			exp.Notes = append(exp.Notes, fmt.Sprintf("/%s: !`%s` was not run: shell lines do not run here", c.Name, cmdline))
			return "[not run: " + cmdline + "]"
		case !c.ShellAllowed(cmdline):
			exp.Notes = append(exp.Notes, fmt.Sprintf("/%s: !`%s` was not run: the command's allowed-tools does not permit it (add Bash(%s:*) to its allowed-tools)", c.Name, cmdline, firstWord(cmdline)))
			return "[not run: " + cmdline + "]"
		}
		out, err := run(ctx, cmdline)
		if ctx.Err() != nil {
			runErr = ctx.Err()
			return m
		}
		if err != nil {
			out = cmp.Or(strings.TrimSpace(out)+"\n", "") + "[" + err.Error() + "]"
		}
		return strings.TrimRight(out, "\n")
	})
	if runErr != nil {
		return Expansion{}, runErr
	}
	exp.Prompt = body
	return exp, nil
}

func firstWord(s string) string {
	w, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	return w
}

// ShellAllowed reports whether c's allowed-tools permits running cmdline:
// "Bash" permits any command, "Bash(git status)" exactly that one, and
// "Bash(git diff:*)" any command that starts with "git diff".
func (c Command) ShellAllowed(cmdline string) bool {
	cmdline = strings.TrimSpace(cmdline)
	for _, t := range c.AllowedTools {
		t = strings.TrimSpace(t)
		if t == "Bash" {
			return true
		}
		inner, ok := strings.CutPrefix(t, "Bash(")
		if !ok || !strings.HasSuffix(inner, ")") {
			continue
		}
		inner = strings.TrimSuffix(inner, ")")
		if prefix, ok := strings.CutSuffix(inner, ":*"); ok {
			if cmdline == prefix || strings.HasPrefix(cmdline, prefix+" ") {
				return true
			}
			continue
		}
		if cmdline == inner {
			return true
		}
	}
	return false
}

// ToolAllowed reports whether allowed-tools names tool (a qualified name,
// mcp__SERVER__TOOL or a built-in's); an entry may end in * as a prefix.
func (c Command) ToolAllowed(tool string) bool {
	for _, t := range c.AllowedTools {
		t = strings.TrimSpace(t)
		if p, ok := strings.CutSuffix(t, "*"); ok && strings.HasPrefix(tool, p) || t == tool {
			return true
		}
	}
	return false
}
