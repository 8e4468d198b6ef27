package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/config"
)

// configCommands are `otter config validate|show` and `otter trust`.
func configCommands() []*cobra.Command {
	cfgCmd := groupCommand(&cobra.Command{
		Use:   "config",
		Short: "Check and show otter's configuration",
		Long: `otter reads, highest scope first: --config FILE, .otter/config.local.toml,
.otter/config.toml and .mcp.json of the project (the nearest directory, walking
up, with a .otter/ directory or a .mcp.json file), and
$XDG_CONFIG_HOME/otter/config.toml. See config.example.toml for every key.`,
	})
	cfgCmd.AddCommand(newConfigValidateCmd(), newConfigShowCmd())
	return []*cobra.Command{cfgCmd, newTrustCmd()}
}

// loadOptions are the config.LoadOptions of the global flags.
func loadOptions() config.LoadOptions {
	return config.LoadOptions{Paths: config.DefaultPaths(), WorkDir: flags.workDir, Extra: flags.configFile}
}

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

func newConfigValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate [PATH]",
		Short: "Check a config file, or the whole resolved configuration",
		Long: `With PATH, check that file alone (TOML, or .mcp.json-shaped JSON).
Without, check every file otter would read here, merged. Prints
"ok: N servers from FILES", or every problem with its file:line and exits 2.
A server's ${VAR} that cannot be expanded counts as a problem here, although
otter itself only marks that server failed and starts the others.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			var (
				cfg *config.Config
				err error
			)
			if len(args) == 1 {
				cfg, err = config.LoadFile(args[0])
			} else {
				cfg, err = config.Load(loadOptions())
			}
			if err == nil {
				err = cfg.ServerProblems()
			}
			if err != nil {
				return exitCode(2, &configError{err})
			}
			var files []string
			for _, f := range cfg.Files {
				files = append(files, f.Path)
			}
			if len(files) == 0 {
				fmt.Fprintf(out, "ok: no config files found (the user file would be %s)\n", config.DefaultPaths().UserConfigFile())
				return nil
			}
			fmt.Fprintf(out, "ok: %s from %s\n", plural(len(cfg.MCP.Servers), "server"), strings.Join(files, ", "))
			printDisabled(out, cfg)
			printWarnings(out, cfg)
			return nil
		},
	}
}

// printWarnings prints what the configuration costs the user without
// stopping otter, such as servers whose tools get the same names; each
// warning names the file and line to change.
func printWarnings(w io.Writer, cfg *config.Config) {
	for _, warn := range cfg.Warnings {
		fmt.Fprintf(w, "warning: %s\n", strings.ReplaceAll(warn.Error(), "\n", "\n  "))
	}
}

// printDisabled lists servers that will not start and why.
func printDisabled(w io.Writer, cfg *config.Config) {
	for _, s := range cfg.MCP.Servers {
		switch {
		case s.DisabledReason != "":
			fmt.Fprintf(w, "note: server %q: %s\n", s.Name, s.DisabledReason)
		case s.Problem != nil:
			msgs := strings.Split(s.Problem.Error(), "\n")
			fmt.Fprintf(w, "note: server %q cannot start: %s\n", s.Name, strings.Join(msgs, "\n  "))
		}
	}
}

func newConfigShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show",
		Short: "Print the resolved configuration as TOML, secrets masked",
		Long: `Print the configuration otter uses here: every scope merged, ${VAR}
expanded, defaults filled in. Each server carries a comment naming its scope
and file:line (and a "# problem:" line for each ${VAR} that could not be
expanded, which keeps the server from starting); header values,
secret-looking env values and flags, API keys and client secrets are masked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(loadOptions())
			if err != nil {
				return exitCode(2, &configError{err})
			}
			if len(cfg.Files) == 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "otter: no config file found; create %s (see config.example.toml)\n", config.DefaultPaths().UserConfigFile())
			}
			return cfg.WriteResolved(cmd.OutOrStdout())
		},
	}
}

func newTrustCmd() *cobra.Command {
	var (
		list   bool
		revoke string
	)
	cmd := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Let a project's .otter/config.toml and .mcp.json start their servers",
		Long: `A cloned repository never starts a process on its own: the servers of a
project's .otter/config.toml and .mcp.json stay disabled, and the project's
other settings ignored, until you trust the project directory.

otter trust [DIR]      trust DIR's project (default: the project here, or the
                       working directory) and list the servers that will now start
otter trust --list     list trusted directories
otter trust --revoke DIR  forget DIR`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			paths := config.DefaultPaths()
			switch {
			case list && (revoke != "" || len(args) > 0):
				return exitCode(2, errors.New("--list takes no directory and no --revoke"))
			case list:
				return listTrusted(out, paths)
			case revoke != "":
				if len(args) > 0 {
					return exitCode(2, errors.New("give the directory to --revoke, not as an argument"))
				}
				ok, err := paths.Untrust(revoke)
				if err != nil {
					return exitCode(2, err)
				}
				if !ok {
					return exitCode(2, fmt.Errorf("%s was not trusted (see otter trust --list)", revoke))
				}
				fmt.Fprintf(out, "revoked trust in %s: its project servers will not start\n", revoke)
				return nil
			}
			dir := flags.workDir
			if len(args) == 1 {
				dir = args[0]
			}
			return trustDir(out, cmd.ErrOrStderr(), paths, dir)
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "list the trusted directories")
	cmd.Flags().StringVar(&revoke, "revoke", "", "forget the trust in `DIR`")
	return cmd
}

func listTrusted(w io.Writer, paths config.Paths) error {
	dirs, err := paths.TrustedDirs()
	if err != nil {
		return exitCode(2, err)
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

// trustDir trusts the project of dir and lists the servers that now start.
func trustDir(out, errw io.Writer, paths config.Paths, dir string) error {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return exitCode(2, err)
		}
		dir = wd
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return exitCode(2, fmt.Errorf("trust %s: not a directory", dir))
	}
	proj := config.ProjectDir(dir)
	if proj == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return exitCode(2, err)
		}
		proj = abs
		fmt.Fprintf(errw, "note: %s has no %s/ directory or %s yet\n", proj, config.ProjectDirName, config.MCPJSONName)
	}
	opts := loadOptions()
	opts.WorkDir = proj

	// The servers the missing trust held back, to name them afterwards.
	held := map[string]bool{}
	if before, err := config.Load(opts); err == nil {
		for _, s := range before.MCP.Servers {
			held[s.Name] = s.Untrusted
		}
	}
	already, err := paths.IsTrusted(proj)
	if err != nil {
		return exitCode(2, err)
	}
	if err := paths.Trust(proj); err != nil {
		return exitCode(2, err)
	}
	if already {
		fmt.Fprintf(out, "%s was already trusted\n", proj)
	} else {
		fmt.Fprintf(out, "trusted %s\n", proj)
	}
	cfg, err := config.Load(opts)
	if err != nil {
		return exitCode(2, fmt.Errorf("trusted %s, but its configuration has problems: %w", proj, &configError{err}))
	}
	var starting []string
	for _, s := range cfg.MCP.Servers {
		if s.IsEnabled() && s.Problem == nil && (held[s.Name] || s.Scope == config.ScopeProject) {
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

// plural writes n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
