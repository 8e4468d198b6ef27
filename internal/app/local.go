package app

import (
	"fmt"
	"os"
	"slices"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/localtools"
	"github.com/otter-sh/otter/internal/sandbox"
)

// localOptions are the local tools' options under cfg: the working
// directory, the project (TrustDir: the nearest directory holding .otter,
// .mcp.json or .git, else the working directory), the spill folder the
// model may read, and how commands are confined.
func (a *App) localOptions(cfg *config.Config) localtools.Options {
	return localtools.Options{
		Dir:            a.WorkDir,
		Root:           a.TrustDir(),
		Readable:       []string{a.spillDir()},
		Sandbox:        a.commandSandbox(cfg),
		MaxOutputChars: cfg.Tools.MaxOutputChars,
		SpillDir:       a.spillDir(),
		Logger:         a.Logger.With("component", "localtools"),
	}
}

// commandSandbox is how run_command's commands are confined: by the same
// launcher as stdio servers, with sandbox.ForCommands's policy loosened
// or tightened by [sandbox] commands.
func (a *App) commandSandbox(cfg *config.Config) *localtools.Sandbox {
	home, _ := os.UserHomeDir()
	own := []string{a.Paths.ConfigDir, a.Paths.DataDir, a.Paths.StateDir, a.Paths.CacheDir}
	s := &localtools.Sandbox{Own: own, Home: home, ConfigAt: a.Paths.UserConfigFile()}
	if cfg.Sandbox.CommandsFile != "" {
		s.ConfigAt = fmt.Sprintf("%s:%d", cfg.Sandbox.CommandsFile, cfg.Sandbox.CommandsLine)
	}
	sb := cfg.Sandbox.Commands
	switch {
	case a.opts.SandboxLauncher == "":
		s.Off = "otter was started without its sandbox launcher"
		return s
	case !sb.IsEnabled():
		s.Off = "[sandbox] commands.enabled = false"
		return s
	}
	if err := sandbox.Available(); err != nil {
		if cfg.Sandbox.Required {
			s.Refused = fmt.Sprintf("[sandbox] required is set, and %v", err)
		} else {
			s.Off = err.Error()
			a.Logger.Warn("commands the model runs are not sandboxed", "why", err.Error())
		}
		return s
	}
	p := sandbox.ForCommands(home, own, []string{a.TrustDir()})
	if sb != nil {
		p.Read = append(p.Read, sb.Read...)
		p.Write = append(p.Write, sb.Write...)
		p.Network = sb.NetworkAllowed()
		// A path the user names is theirs to give, a secret folder included.
		p.Deny = slices.DeleteFunc(p.Deny, func(d string) bool { return slices.Contains(sb.Read, d) || slices.Contains(sb.Write, d) })
	}
	if err := sandbox.SeparateRoot(&p); err != nil { // root's commands do not keep CAP_SYS_PTRACE over otter
		a.Logger.Warn("commands the model runs run as root beside otter", "why", err.Error())
	}
	if !p.Network {
		// No network: a network namespace of its own too, where the
		// system makes one, as for a server (sandbox/isolate_linux.go).
		if err := sandbox.CanIsolate(a.opts.SandboxLauncher); err == nil {
			p.Isolated = true
		} else {
			a.Logger.Warn("commands the model runs reach this machine's abstract Unix sockets", "why", err.Error())
		}
	}
	s.Launcher, s.Policy = a.opts.SandboxLauncher, p
	return s
}
