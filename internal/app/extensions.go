package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/customcmd"
	"github.com/otter-sh/otter/internal/hooks"
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
// first so that a project's command or skill of the same name wins.
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
	cmds = append(cmds,
		customcmd.Dir{Path: filepath.Join(projectRoot, ".claude", "commands"), Scope: customcmd.Project},
		customcmd.Dir{Path: filepath.Join(projectRoot, config.ProjectDirName, "commands"), Scope: customcmd.Project})
	for _, d := range []string{".claude", ".agents", config.ProjectDirName} {
		skills = append(skills, skill.Root{Path: filepath.Join(projectRoot, d, "skills"), Scope: skill.Project})
	}
	return cmds, skills
}

// loadExtensions reads the extensions under cfg. Hooks come from cfg, whose
// project files count only once trusted (config.Load holds them back).
func (a *App) loadExtensions(cfg *config.Config, projectRoot string, trusted bool) Extensions {
	cmdDirs, skillRoots := a.extensionDirs(projectRoot, trusted)
	var ext Extensions
	var problems []error
	ext.Commands, problems = customcmd.Load(cmdDirs)
	ext.Problems = append(ext.Problems, problems...)
	ext.Skills, problems = skill.Discover(skillRoots)
	ext.Problems = append(ext.Problems, problems...)
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
	set := a.Extensions().Hooks
	if set.Empty() {
		return hooks.Outcome{}
	}
	in.SessionID, in.CWD = sessionID, a.WorkDir
	dir := a.WorkDir
	if p := config.ProjectDir(a.WorkDir); p != "" {
		dir = p
	}
	// A hook's output is capped and spilled as a tool's result is.
	return set.Run(ctx, ev, in, hooks.Env{ProjectDir: dir, Dir: a.WorkDir,
		MaxOutputChars: a.cfg.Tools.MaxOutputChars, SpillDir: a.spillDir()})
}

// refreshExtensions reads the extensions again under cfg: the project's
// count once the project directory is trusted.
func (a *App) refreshExtensions(cfg *config.Config) {
	root := config.ProjectDir(a.WorkDir)
	trusted := false
	if root != "" {
		var err error
		if trusted, err = a.Paths.IsTrusted(root); err != nil {
			a.Logger.Warn("extensions: reading the trusted directories", "err", err)
		}
	}
	a.setExtensions(a.loadExtensions(cfg, root, trusted))
}

// Command is a custom slash command (see package customcmd).
type Command = customcmd.Command

// Skill is an Agent Skill (see package skill).
type Skill = skill.Skill

// HeldBack names the project's commands and skills that wait for the
// project's trust ("/review:pr", "skill release"), for the trust prompt;
// none once the project is trusted.
func (a *App) HeldBack() []string {
	root := config.ProjectDir(a.WorkDir)
	if root == "" {
		return nil
	}
	if trusted, err := a.Paths.IsTrusted(root); err != nil || trusted {
		return nil
	}
	all, allSkills := a.extensionDirs(root, true)
	mine, mySkills := a.extensionDirs(root, false)
	cmds, _ := customcmd.Load(all[len(mine):])
	skills, _ := skill.Discover(allSkills[len(mySkills):])
	var out []string
	for _, c := range cmds {
		out = append(out, "command /"+c.Name+" ("+c.File+")")
	}
	for _, s := range skills {
		out = append(out, "skill "+s.Name+" ("+s.File()+")")
	}
	return out
}
