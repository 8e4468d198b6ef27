package app

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/customcmd"
	"github.com/otter-sh/otter/internal/hooks"
	"github.com/otter-sh/otter/internal/instructions"
	"github.com/otter-sh/otter/internal/skill"
)

// Extensions are what the user added to otter: custom slash commands,
// Agent Skills and hooks, from the user's config directory and — once the
// project is trusted — the project's. In a project that is not trusted, none
// of the project's loads, runs or reaches the model.
type Extensions struct {
	Commands []customcmd.Command
	Skills   []skill.Skill
	Hooks    *hooks.Set
	// Problems are files that could not be used (a bad header, a bad hook
	// matcher), each with its file and line; the rest work.
	Problems []error
}

// extensionState holds the loaded extensions, replaced on Reload.
type extensionState struct {
	mu  sync.Mutex
	ext Extensions
}

// extensionDirs are the folders extensions are read from, user folders
// first so that a project's command or skill of the same name wins. A
// project's files must resolve inside the project: a command file linked
// to /etc/shadow is not read.
func (a *App) extensionDirs(projectRoot string, trusted bool) (cmds []customcmd.Dir, skills []skill.Root) {
	home, _ := os.UserHomeDir()
	cmds = []customcmd.Dir{{Path: filepath.Join(a.Paths.ConfigDir, "commands"), Scope: customcmd.User}}
	skills = []skill.Root{{Path: filepath.Join(a.Paths.ConfigDir, "skills"), Scope: skill.User}}
	if home != "" {
		// The cross-tool user folders, so that skills installed for other
		// agents work in otter too.
		skills = append(skills,
			skill.Root{Path: filepath.Join(home, ".agents", "skills"), Scope: skill.User},
			skill.Root{Path: filepath.Join(home, ".claude", "skills"), Scope: skill.User})
	}
	if projectRoot == "" || !trusted {
		return cmds, skills
	}
	for _, d := range config.ProjectCommandDirs(projectRoot) {
		cmds = append(cmds, customcmd.Dir{Path: d, Scope: customcmd.Project, Confine: projectRoot})
	}
	for _, d := range config.ProjectSkillDirs(projectRoot) {
		skills = append(skills, skill.Root{Path: d, Scope: skill.Project, Confine: projectRoot})
	}
	return cmds, skills
}

// loadExtensions reads the extensions under cfg. Hooks come from cfg, whose
// project files count only once trusted (config.Load holds them back, and
// those added or changed since). A project's command or skill counts only
// as the user approved it when trusting the project (cfg.ProjectTrust).
func (a *App) loadExtensions(cfg *config.Config, projectRoot string, trusted bool) Extensions {
	cmdDirs, skillRoots := a.extensionDirs(projectRoot, trusted)
	var ext Extensions
	var problems []error
	ext.Commands, problems = customcmd.Load(cmdDirs)
	ext.Problems = append(ext.Problems, problems...)
	ext.Skills, problems = skill.Discover(skillRoots)
	ext.Problems = append(ext.Problems, problems...)
	pt := cfg.ProjectTrust
	ext.Commands = slices.DeleteFunc(ext.Commands, func(c customcmd.Command) bool {
		return c.Scope == customcmd.Project && !pt.Allows(config.ItemCommand, c.File)
	})
	ext.Skills = slices.DeleteFunc(ext.Skills, func(s skill.Skill) bool {
		return s.Scope == skill.Project && !pt.Allows(config.ItemSkill, s.Dir)
	})
	set, err := hooks.New(hookConfig(cfg))
	if err != nil {
		ext.Problems = append(ext.Problems, err)
	}
	ext.Hooks = set
	return ext
}

// hookConfig converts cfg's [[hooks.EVENT]] tables for the hooks package.
func hookConfig(cfg *config.Config) hooks.Config {
	out := hooks.Config{}
	for ev, groups := range cfg.Hooks {
		for _, g := range groups {
			hg := hooks.Group{Matcher: g.Matcher}
			for _, h := range g.Hooks {
				hg.Hooks = append(hg.Hooks, hooks.Command{
					Command: h.Command,
					Timeout: time.Duration(h.Timeout) * time.Second,
					Source:  fmt.Sprintf("%s:%d", h.File, h.Line),
				})
			}
			out[hooks.Event(ev)] = append(out[hooks.Event(ev)], hg)
		}
	}
	return out
}

// Extensions returns the extensions in force.
func (a *App) Extensions() Extensions {
	a.ext.mu.Lock()
	defer a.ext.mu.Unlock()
	return a.ext.ext
}

func (a *App) setExtensions(e Extensions) {
	a.ext.mu.Lock()
	a.ext.ext = e
	a.ext.mu.Unlock()
	for _, p := range e.Problems {
		a.Logger.Warn("extension not loaded", "err", p)
	}
}

// skills is what the skill tool offers: the skills in force now.
func (a *App) skills() []skill.Skill { return a.Extensions().Skills }

// RunHooks runs the hooks of ev for the conversation of sessionID.
func (a *App) runHooks(ctx context.Context, sessionID string, ev hooks.Event, in hooks.Input) hooks.Outcome {
	return a.runHookSet(ctx, a.Extensions().Hooks, sessionID, ev, in)
}

// runHookSet runs the hooks of ev in set.
func (a *App) runHookSet(ctx context.Context, set *hooks.Set, sessionID string, ev hooks.Event, in hooks.Input) hooks.Outcome {
	if set.Empty() {
		return hooks.Outcome{}
	}
	in.SessionID, in.CWD = sessionID, a.WorkDir
	// A hook's output is capped and spilled as a tool's result is.
	return set.Run(ctx, ev, in, hooks.Env{ProjectDir: a.TrustDir(), Dir: a.WorkDir,
		MaxOutputChars: a.Config().Tools.MaxOutputChars, SpillDir: a.spillDir()})
}

// refreshExtensions reads the extensions again under cfg: the project's
// count once the project directory is trusted.
func (a *App) refreshExtensions(cfg *config.Config) {
	a.setExtensions(a.loadExtensions(cfg, cfg.ProjectTrust.Dir, cfg.ProjectTrust.Trusted()))
}

// Command is a custom slash command (see package customcmd).
type Command = customcmd.Command

// Skill is an Agent Skill (see package skill).
type Skill = skill.Skill

// TrustReport is what trusting a project enables: in a project not
// trusted yet, all of its executable configuration and its instruction
// files; in a trusted one, what was added to or changed in its
// configuration since, which is held back until the user trusts it again.
// Both front ends show it before they ask (the TUI's trust panel, the trust
// command), and Approve records exactly what was shown.
type TrustReport struct {
	Dir string // the project directory to trust
	// Trusted: the project is trusted already; Items are what changed
	// since. Legacy: its trust was recorded by an older otter, which kept
	// no record of what the user saw, so nothing of it is approved yet.
	Trusted, Legacy bool
	// Items are the servers, hooks, commands, skills and settings to
	// approve (config.TrustItem.String words one).
	Items []config.TrustItem
	// Instructions are the instruction files (AGENTS.md and the like) the
	// model gets once the project is trusted.
	Instructions []string
	all          []config.TrustItem // every item, approved or not
}

// Empty reports whether there is nothing to ask about.
func (r TrustReport) Empty() bool { return len(r.Items) == 0 && len(r.Instructions) == 0 }

// Approve trusts the project with what the report listed (and what was
// approved before): an item that changed since the report was made stays
// held back.
func (r TrustReport) Approve(paths config.Paths) error {
	return paths.TrustItems(r.Dir, r.all)
}

// NewTrustReport is the report for cfg (config.Load for workDir) in
// workDir, whose instruction files are looked up under cfg's settings.
func NewTrustReport(cfg *config.Config, workDir string) TrustReport {
	pt := cfg.ProjectTrust
	r := TrustReport{Dir: cmp.Or(pt.Dir, workDir), Trusted: pt.Trusted(), Legacy: pt.Legacy, all: pt.Items}
	if r.Trusted {
		r.Items = pt.Pending()
		return r
	}
	r.Items = pt.Items
	r.Instructions = instructions.Load(instructions.Options{
		ProjectRoot: pt.Dir, WorkDir: workDir, Fallback: cfg.Instructions.FallbackNames(),
	}).Held
	return r
}

// TrustReport is the report for the configuration in force.
func (a *App) TrustReport() TrustReport {
	r := NewTrustReport(a.Config(), a.WorkDir)
	if a.opts.NoInstructions {
		r.Instructions = nil
	}
	return r
}

// UntrustedCommandError is a typed /NAME that names a custom command or a
// skill of the project which is off until the user trusts it: the project
// is not trusted, or (Changed) the file changed since it was trusted.
// Nothing is sent; a front end adds how to trust the project.
type UntrustedCommandError struct {
	Name    string // as typed, without the slash
	Skill   bool   // a skill, not a command
	Dir     string // the project directory to trust
	Changed bool   // trusted, but the file changed since
}

func (e *UntrustedCommandError) Error() string {
	kind := "command"
	if e.Skill {
		kind = "skill"
	}
	if e.Changed {
		return fmt.Sprintf("/%s is a %s of the project %s that changed since you trusted the project; it stays off until you trust the change", e.Name, kind, e.Dir)
	}
	return fmt.Sprintf("/%s is a %s of the project %s, which is not trusted; trusting the project enables it", e.Name, kind, e.Dir)
}

// CheckCommand returns an *UntrustedCommandError when text is a /NAME that
// names no command or skill in force but one of the project that waits for
// the user's trust; nil otherwise (the text is not such a command, or the
// command runs).
func (a *App) CheckCommand(text string) error {
	name, ok := commandName(text)
	if !ok {
		return nil
	}
	ext := a.Extensions()
	if slices.ContainsFunc(ext.Commands, func(c customcmd.Command) bool { return c.Name == name }) ||
		slices.ContainsFunc(ext.Skills, func(s skill.Skill) bool { return s.Name == name }) {
		return nil
	}
	pt := a.Config().ProjectTrust
	if pt.Dir == "" {
		return nil
	}
	e := &UntrustedCommandError{Name: name, Dir: pt.Dir, Changed: pt.Trusted()}
	var dirs []customcmd.Dir
	for _, d := range config.ProjectCommandDirs(pt.Dir) {
		dirs = append(dirs, customcmd.Dir{Path: d, Scope: customcmd.Project, Confine: pt.Dir})
	}
	cmds, _ := customcmd.Load(dirs)
	if slices.ContainsFunc(cmds, func(c customcmd.Command) bool { return c.Name == name }) {
		return e
	}
	var roots []skill.Root
	for _, d := range config.ProjectSkillDirs(pt.Dir) {
		roots = append(roots, skill.Root{Path: d, Scope: skill.Project, Confine: pt.Dir})
	}
	skills, _ := skill.Discover(roots)
	if slices.ContainsFunc(skills, func(s skill.Skill) bool { return s.Name == name }) {
		e.Skill = true
		return e
	}
	return nil
}

// commandName is the NAME of a typed /NAME [ARGS].
func commandName(text string) (string, bool) {
	rest, ok := strings.CutPrefix(text, "/")
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(rest, " ")
	name, _, _ = strings.Cut(name, "\n")
	name = strings.TrimSpace(name)
	return name, name != ""
}
