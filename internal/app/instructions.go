package app

import (
	"cmp"
	"sync"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/instructions"
)

// instructionState is the person's instruction files (AGENTS.md and the
// like) as the agents get them, re-read when they change.
type instructionState struct {
	once   sync.Once
	loader *instructions.Loader
}

// ProjectRoot is the project the working directory is in (see
// config.ProjectDir: the nearest directory holding .otter/, .mcp.json or
// .git), else "" (the working directory's instruction files only). It is
// where instruction files start, and the project whose trust counts.
func (a *App) ProjectRoot() string { return config.ProjectDir(a.WorkDir) }

// TrustDir is the directory whose trust lets the project's configuration
// and instruction files count: the project directory, else the working
// directory.
func (a *App) TrustDir() string { return cmp.Or(a.ProjectRoot(), a.WorkDir) }

// instructionOptions are the loader's options under cfg.
func (a *App) instructionOptions(cfg *config.Config) instructions.Options {
	trusted, err := a.Paths.IsTrusted(a.TrustDir())
	if err != nil {
		a.Logger.Warn("instruction files: reading the trusted directories", "err", err)
	}
	return instructions.Options{
		UserDir:     a.Paths.ConfigDir,
		ProjectRoot: a.ProjectRoot(),
		WorkDir:     a.WorkDir,
		Trusted:     trusted,
		Fallback:    cfg.Instructions.FallbackNames(),
		MaxBytes:    cfg.Instructions.MaxBytes,
	}
}

func (a *App) instructionLoader() *instructions.Loader {
	a.instr.once.Do(func() { a.instr.loader = instructions.NewLoader(a.instructionOptions(a.Config())) })
	return a.instr.loader
}

// Instructions returns the instruction files as they are now (read again
// when one changed), with those held back because the project is not
// trusted. With Options.NoInstructions it returns an empty set.
func (a *App) Instructions() instructions.Set {
	if a.opts.NoInstructions {
		return instructions.Set{}
	}
	set, changed := a.instructionLoader().Load()
	if changed {
		a.Logger.Info("instruction files changed; the next message reads them")
	}
	for _, err := range set.Errors {
		a.Logger.Warn("instruction files", "err", err)
	}
	return set
}

// userInstructions is the agents' system prompt section of the
// instruction files.
func (a *App) userInstructions() string { return a.Instructions().Prompt() }

// refreshInstructions applies cfg (and the project's trust, which may have
// changed) to the instruction files from the next message on.
func (a *App) refreshInstructions(cfg *config.Config) {
	a.instructionLoader().SetOptions(a.instructionOptions(cfg))
}
