package cli

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llmconfig"
)

// configError formats one or more config errors one per line.
type configError struct{ err error }

func (e *configError) Error() string {
	msgs := strings.Split(e.err.Error(), "\n")
	if len(msgs) == 1 {
		return "invalid configuration: " + msgs[0]
	}
	return fmt.Sprintf("invalid configuration (%d problems):\n  %s", len(msgs), strings.Join(msgs, "\n  "))
}

func (e *configError) Unwrap() error { return e.err }

// ConfigValidateOptions are the options of `otter config validate`.
type ConfigValidateOptions struct {
	Path string // "": every file otter would read here, merged
}

// RunConfigValidate checks the config file o.Path, or without one the
// whole resolved configuration, and prints what it found.
func RunConfigValidate(f *Factory, o ConfigValidateOptions) error {
	out, path := f.IO.Out, o.Path
	var (
		cfg *config.Config
		err error
	)
	if path != "" {
		cfg, err = config.LoadFile(path)
	} else {
		cfg, err = config.Load(f.LoadOptions())
	}
	if err == nil {
		err = errors.Join(cfg.ServerProblems(), agentProviderProblem(cfg))
	}
	if err == nil && path == "" {
		err = providerProblem(cfg)
	}
	if err != nil {
		return ExitCode(2, &configError{err})
	}
	var files []string
	for _, f := range cfg.Files {
		files = append(files, f.Path)
	}
	if len(files) == 0 {
		found := "no config files found"
		if len(cfg.Warnings) > 0 { // a broken project file, left out
			found = "no config file applies"
		}
		fmt.Fprintf(out, "ok: %s (the user file would be %s)\n", found, config.DefaultPaths().UserConfigFile())
		printWarnings(out, cfg)
		return nil
	}
	fmt.Fprintf(out, "ok: %s from %s\n", plural(len(cfg.MCP.Servers), "server"), strings.Join(files, ", "))
	printDisabled(out, cfg)
	printWarnings(out, cfg)
	return nil
}

// agentProviderProblem is the Problem of the provider [agent] uses (an
// unset ${VAR} in its api_key, say): -p and the TUI's chat cannot work
// with it, so validate reports it as an error. Other providers' problems
// are notes (printDisabled): they matter only once chosen.
func agentProviderProblem(cfg *config.Config) error {
	return cfg.Providers[cfg.Agent.Provider].Problem
}

// providerProblem is what `otter -p` would refuse in the [agent] and
// [providers] settings of cfg (the check is llmconfig.FromConfig's), at the file
// and line to change. A configuration that names no provider is left to
// the environment's API keys, which validate does not judge.
func providerProblem(cfg *config.Config) error {
	if cfg.Agent.Provider == "" && len(cfg.Providers) == 0 {
		return nil
	}
	_, _, err := llmconfig.FromConfig(cfg, func(string) (string, bool) { return "", false })
	if err == nil {
		return nil
	}
	msg, more, _ := strings.Cut(err.Error(), "\n\n") // the problem, without the how-to that follows
	msg = strings.TrimPrefix(msg, llm.ErrNoProvider.Error()+": ")
	if strings.HasSuffix(msg, " with") { // "choose one with" and the lines to write
		example, _, _ := strings.Cut(more, "\n\n")
		msg += " " + strings.Join(strings.Fields(example), " ")
	}
	file, line := cfg.KeyLine("agent", "provider")
	if _, ok := cfg.Providers[cfg.Agent.Provider]; ok {
		file, line = cfg.KeyLine("providers", cfg.Agent.Provider) // the table is there: its settings are wrong
	} else if file == "" {
		file, line = cfg.KeyLine("providers", slices.Sorted(maps.Keys(cfg.Providers))[0])
	}
	return &config.Error{File: file, Line: line, Msg: msg, Hint: "otter -p and the TUI refuse it too"}
}

// printWarnings prints what the configuration costs the user without
// stopping otter, such as servers whose tools get the same names; each
// warning names the file and line to change.
func printWarnings(w io.Writer, cfg *config.Config) {
	for _, warn := range cfg.Warnings {
		fmt.Fprintf(w, "warning: %s\n", strings.ReplaceAll(warn.Error(), "\n", "\n  "))
	}
}

// printDisabled lists servers that will not start, and providers that
// cannot be used, and why.
func printDisabled(w io.Writer, cfg *config.Config) {
	for _, name := range slices.Sorted(maps.Keys(cfg.Providers)) {
		if p := cfg.Providers[name].Problem; p != nil {
			fmt.Fprintf(w, "note: [providers.%s] cannot be used: %s\n", name, strings.ReplaceAll(p.Error(), "\n", "\n  "))
		}
	}
	for _, s := range cfg.MCP.Servers {
		switch {
		case s.DisabledReason != "":
			fmt.Fprintf(w, "note: server %q: %s%s\n", s.Name, s.DisabledReason, trustHint(s))
		case s.Problem != nil:
			msgs := strings.Split(s.Problem.Error(), "\n")
			fmt.Fprintf(w, "note: server %q cannot start: %s\n", s.Name, strings.Join(msgs, "\n  "))
		}
	}
}

// ConfigShowOptions are the options of `otter config show`: none yet. The
// command still hands its caller a struct, as every other command does,
// so that a test checks that it takes no arguments the same way.
type ConfigShowOptions struct{}

// RunConfigShow prints the resolved configuration as TOML, secrets masked.
func RunConfigShow(f *Factory) error {
	cfg, err := config.Load(f.LoadOptions())
	if err != nil {
		return ExitCode(2, &configError{err})
	}
	if len(cfg.Files) == 0 {
		fmt.Fprintf(f.IO.ErrOut, "otter: no config file found; create %s (see config.example.toml)\n", config.DefaultPaths().UserConfigFile())
	}
	return cfg.WriteResolved(f.IO.Out)
}

// TrustOptions are the options of `otter trust`.
type TrustOptions struct {
	Dir    string // "": the project here, or the working directory
	List   bool
	Revoke string
	// Yes trusts what is listed without asking (for scripts); without it
	// otter asks on a terminal and refuses elsewhere.
	Yes bool
}

// RunTrust trusts a project directory, lists the trusted ones or forgets one.
func RunTrust(f *Factory, o TrustOptions) error {
	out := f.IO.Out
	paths := config.DefaultPaths()
	switch {
	case o.List && (o.Revoke != "" || o.Dir != ""):
		return ExitCode(2, errors.New("--list takes no directory and no --revoke"))
	case o.List:
		return listTrusted(out, paths)
	case o.Revoke != "":
		if o.Dir != "" {
			return ExitCode(2, errors.New("give the directory to --revoke, not as an argument"))
		}
		ok, err := paths.Untrust(o.Revoke)
		if err != nil {
			return ExitCode(2, err)
		}
		if !ok {
			return ExitCode(2, fmt.Errorf("%s was not trusted (see otter trust --list)", o.Revoke))
		}
		fmt.Fprintf(out, "revoked trust in %s: its project servers will not start\n", o.Revoke)
		return nil
	}
	dir := cmp.Or(o.Dir, f.WorkDir)
	return trustDir(f, paths, dir, o.Yes)
}

func listTrusted(w io.Writer, paths config.Paths) error {
	dirs, err := paths.TrustedDirs()
	if err != nil {
		return ExitCode(2, err)
	}
	if len(dirs) == 0 {
		fmt.Fprintln(w, "no trusted directories")
		return nil
	}
	for _, d := range dirs {
		note := ""
		if _, err := os.Stat(d.Dir); err != nil {
			note = "  (missing)"
		}
		fmt.Fprintf(w, "%s  trusted %s%s\n", d.Dir, d.TrustedAt.Local().Format("2006-01-02 15:04"), note)
	}
	return nil
}

// trustDir lists what trusting the project of dir enables (or, trusted,
// what changed since), asks, trusts it with what was listed, and names the
// servers that now start.
func trustDir(f *Factory, paths config.Paths, dir string, yes bool) error {
	out, errw := f.IO.Out, f.IO.ErrOut
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return ExitCode(2, err)
		}
		dir = wd
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ExitCode(2, fmt.Errorf("trust %s: not a directory", dir))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ExitCode(2, err)
	}
	if config.ProjectDir(abs) == "" {
		fmt.Fprintf(errw, "note: %s has no %s/ directory, %s or .git\n", abs, config.ProjectDirName, config.MCPJSONName)
	}
	opts := f.LoadOptions()
	opts.WorkDir = abs
	cfg, err := config.Load(opts)
	if err != nil {
		return ExitCode(2, fmt.Errorf("not trusting %s: its configuration has problems: %w", abs, &configError{err}))
	}
	report := app.NewTrustReport(cfg, abs)
	if report.Trusted && report.Empty() {
		fmt.Fprintf(out, "%s is trusted already; nothing in its configuration changed since\n", report.Dir)
		return nil
	}
	writeTrustReport(out, report)
	if !yes {
		if !f.IO.IsStdinTTY() {
			return ExitCode(2, fmt.Errorf("not trusting %s: otter asks first, and there is no terminal to ask on; run `otter trust --yes` to trust what is listed above", report.Dir))
		}
		fmt.Fprintf(out, "Trust %s? [y/N] ", report.Dir)
		line, _ := bufio.NewReader(f.IO.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(out, "not trusted")
			return ExitCode(1, Reported{errors.New("not trusted")})
		}
	}
	if err := report.Approve(paths); err != nil {
		return ExitCode(2, err)
	}
	fmt.Fprintf(out, "trusted %s\n", report.Dir)
	if cfg, err = config.Load(opts); err != nil {
		return ExitCode(2, fmt.Errorf("trusted %s, but its configuration has problems: %w", report.Dir, &configError{err}))
	}
	var starting []string
	for _, s := range cfg.MCP.Servers {
		if s.IsEnabled() && s.Problem == nil && s.Scope == config.ScopeProject {
			starting = append(starting, fmt.Sprintf("%s (%s)", s.Name, s.File))
		}
	}
	if len(starting) == 0 {
		fmt.Fprintln(out, "no project servers to start")
	} else {
		fmt.Fprintf(out, "these servers will now start:\n  %s\n", strings.Join(starting, "\n  "))
	}
	printDisabled(out, cfg)
	return nil
}

// writeTrustReport lists what trusting the project enables, kind by kind.
func writeTrustReport(w io.Writer, r app.TrustReport) {
	switch {
	case r.Legacy:
		fmt.Fprintf(w, "%s was trusted by an earlier otter, which kept no record of what it runs; trusting it again lets otter:\n", r.Dir)
	case r.Trusted:
		fmt.Fprintf(w, "%s changed since you trusted it; until you trust it again, otter holds back:\n", r.Dir)
	default:
		fmt.Fprintf(w, "%s is not trusted; trusting it lets otter:\n", r.Dir)
	}
	sections := []struct {
		kind config.ItemKind
		head string
	}{
		{config.ItemServer, "run its MCP servers"},
		{config.ItemHook, "run its hooks"},
		{config.ItemCommand, "offer its slash commands (a command may run shell commands)"},
		{config.ItemSkill, "offer its skills to the model"},
		{config.ItemSettings, "apply its settings"},
	}
	for _, sec := range sections {
		var lines []string
		for _, it := range r.Items {
			if it.Kind != sec.kind {
				continue
			}
			line := it.Name
			if it.Detail != "" {
				line += ": " + it.Detail
			}
			switch it.State {
			case config.ItemNew:
				line += " (new)"
			case config.ItemChanged:
				line += " (changed)"
			}
			lines = append(lines, line+"  ["+it.Rel+"]")
		}
		if len(lines) > 0 {
			fmt.Fprintf(w, "  %s:\n    %s\n", sec.head, strings.Join(lines, "\n    "))
		}
	}
	if len(r.Instructions) > 0 {
		fmt.Fprintf(w, "  send the model its instruction files:\n    %s\n", strings.Join(r.Instructions, "\n    "))
	}
	if r.Empty() {
		fmt.Fprintln(w, "  nothing yet: it has no servers, hooks, commands, skills, settings or instruction files")
	}
}

// plural writes n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// trustHint is how to let an untrusted project's server start, in a
// shell's words ("" for any other server).
func trustHint(s config.Server) string {
	if !s.Untrusted {
		return ""
	}
	return fmt.Sprintf(" (run `otter trust %s`)", cmp.Or(config.ProjectDir(filepath.Dir(s.File)), filepath.Dir(s.File)))
}
