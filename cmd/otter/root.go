package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/appparts"
	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/iostreams"
	"github.com/otter-sh/otter/internal/termtext"
)

// newRootCmd is the otter command line; the global flags go into f.
func newRootCmd(f *cli.Factory) *cobra.Command { return newRootCmdRun(f, nil, nil) }

// newRootCmdRun is newRootCmd whose own work, when promptF or tuiF is not
// nil, is to call it with the options that -p (and its flags) or the TUI's
// flags gave, instead of running a prompt or the TUI: tests check flags →
// options with it, as with each subcommand's runF.
func newRootCmdRun(f *cli.Factory, promptF func(*cli.PromptOptions) error, tuiF func(*tuiOptions) error) *cobra.Command {
	if f.Parts.NewServers == nil {
		f.Parts = appparts.Default()
	}
	var sessionOpts *app.SessionOptions // set below, read by Args
	var promptWords []string            // set by Args: the words of `otter PROMPT`
	root := &cobra.Command{
		Use:           "otter",
		Short:         "A terminal AI agent shell with built-in web-data tools and MCP servers",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			args = takeResumeID(cmd, sessionOpts, args)
			if cmd.Flags().Changed("resume") && strings.TrimSpace(sessionOpts.Resume) == "" {
				// `otter -r "$SID"` with $SID empty: not a new conversation.
				return exitCode(2, errors.New(`--resume "": the session ID is empty; give an ID (`+"`otter sessions list`"+` lists them), --continue for the latest, or -r alone to pick one in the TUI`))
			}
			if err := checkSessionFlags(sessionOpts); err != nil {
				return exitCode(2, err)
			}
			if err := checkPromptFlag(cmd); err != nil {
				return exitCode(2, err)
			}
			if len(args) > 0 && promptRequested(cmd) {
				// Typically "--allow-tools a b": a list flag takes one value.
				return exitCode(2, fmt.Errorf("unexpected argument %q: with -p the prompt is the value of -p (quote it); "+
					"a flag that takes a list takes one value per use: --allow-tools a,b or --allow-tools a --allow-tools b", args[0]))
			}
			if len(args) > 1 && isCommandTypo(cmd, args[0]) {
				// `otter mpc list`: a mistyped command, not a prompt.
				return unknownCommandError(cmd, args[0])
			}
			// `otter "PROMPT"` (or otter fix the tests): the TUI, sending it.
			promptWords = args
			return nil
		},
	}
	sessionOpts = addSessionFlags(root) // sessions_cmd.go: -c, -r, --fork-session, --no-session
	cleanStreams(f.IO)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	pf := root.PersistentFlags()
	pf.Var(onceString{&f.ConfigFile, "--config", "otter reads one extra config file: merge them into one, or put one in $XDG_CONFIG_HOME/otter/config.toml"}, "config", "read this config file too, above every scope")
	pf.StringVar(&f.LogFile, "log-file", "", "write logs to this file")
	pf.StringVar(&f.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	pf.StringVar(&f.WorkDir, "cwd", "", "run as if started in this directory")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		f.LogLevelSet = cmd.Flags().Changed("log-level")
		if f.WorkDir != "" {
			// Not a silent run somewhere else, nor sessions saved under a
			// directory that is not there.
			if fi, err := os.Stat(f.WorkDir); errors.Is(err, fs.ErrNotExist) {
				return exitCode(2, fmt.Errorf("--cwd %s: no such directory", f.WorkDir))
			} else if err != nil {
				return exitCode(2, fmt.Errorf("--cwd: %w", err))
			} else if !fi.IsDir() {
				return exitCode(2, fmt.Errorf("--cwd %s: not a directory", f.WorkDir))
			}
		}
		if f.LogFile != "" {
			if err := checkLogFile(f.LogFile); err != nil {
				return exitCode(2, err)
			}
		}
		return nil
	}

	mcpCmd := groupCommand(&cobra.Command{
		Use:   "mcp",
		Short: "Manage and use MCP servers without the TUI",
	})
	mcpCmd.AddCommand(newCmdMCPList(f, nil), newCmdMCPTools(f, nil), newCmdMCPCall(f, nil)) // mcp_cmd.go
	mcpCmd.AddCommand(newCmdMCPImport(f, nil))                                              // import_cmd.go
	mcpCmd.AddCommand(newCmdMCPLogin(f, nil), newCmdMCPLogout(f, nil))                      // login_cmd.go
	mcpCmd.AddCommand(newCmdMCPServe(f, nil))                                               // serve_cmd.go
	mcpCmd.AddCommand(newCmdMCPDiff(f, nil), newCmdMCPApprove(f, nil))                      // pins_cmd.go
	mcpCmd.AddCommand(mcpResourceCommands(f)...)                                            // mcp_resources_cmd.go
	root.AddCommand(mcpCmd)
	root.AddCommand(configCommands(f)...)   // config_cmd.go: config validate|show, trust
	root.AddCommand(newCmdSessions(f, nil)) // sessions_cmd.go
	root.AddCommand(newCmdHooks(f, nil))    // hooks_cmd.go

	runPrompt := addPromptFlags(root, f, sessionOpts, promptF) // prompt_cmd.go: -p and its flags
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if promptRequested(cmd) {
			return runPrompt(cmd)
		}
		o := tuiOptions{Session: *sessionOpts, Prompt: strings.TrimSpace(strings.Join(promptWords, " "))}
		o.Model, _ = cmd.Flags().GetString("model")
		o.Provider, _ = cmd.Flags().GetString("provider")
		if tuiF != nil {
			return tuiF(&o)
		}
		return runTUI(cmd.Context(), f, o) // tui_cmd.go
	}
	for _, c := range root.Commands() {
		addUsageToArgErrors(c)
	}
	return root
}

// checkLogFile opens the --log-file path for appending, creating the file
// but not its directory, for every command — also those that log nothing,
// which would otherwise take a mistyped path without a word. A directory
// is not created: a typo (/tmp/otetr/x.log) would make a tree where the
// person does not look, and shells' own `>>` refuses the same way; the
// default log file's directory, otter's own, is created as before.
func checkLogFile(path string) error {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--log-file %s: there is no directory %s; create it first (mkdir -p %s) or give a file in a directory that exists", path, dir, dir)
	} else if err == nil && !fi.IsDir() {
		return fmt.Errorf("--log-file %s: %s is not a directory", path, dir)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("--log-file %s: that is a directory; give a file name, such as %s", path, filepath.Join(path, "otter.log"))
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("--log-file %s: otter cannot write it: %w", path, errors.Unwrap(err))
	}
	return file.Close()
}

// groupCommand makes cmd, which only groups subcommands (mcp, config),
// print its help when run alone and fail (exit 2) on a word that names none
// of them. cobra's own behaviour for such a command is to print the help
// and exit 0, so a typo such as `otter mcp lsit` would look like success.
func groupCommand(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return cmd.Help()
		case args[0] == "help":
			// `otter mcp help [list]`, as `otter help mcp [list]`.
			target := cmd
			if c, rest, err := cmd.Find(args[1:]); err == nil && len(rest) == 0 {
				target = c
			}
			return target.Help()
		}
		return unknownCommandError(cmd, args[0])
	}
	// Its help shows no usage line of its own: run alone it only helps.
	help := cmd.HelpFunc()
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == cmd {
			run := c.RunE
			c.RunE = nil
			defer func() { c.RunE = run }()
		}
		help(c, args)
	})
	// `otter mcp lsit --json`: the flag is unknown because the command is.
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if c == cmd {
			if args := c.Flags().Args(); len(args) > 0 {
				return unknownCommandError(c, args[0])
			}
		}
		if p := cmd.Parent(); p != nil {
			return p.FlagErrorFunc()(c, err)
		}
		return err
	})
	return cmd
}

// isCommandTypo reports whether word is close to one of cmd's subcommands
// (other than help, which "hello" is close to).
func isCommandTypo(cmd *cobra.Command, word string) bool {
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	for _, s := range cmd.SuggestionsFor(word) {
		if s != "help" && s != "completion" {
			return true
		}
	}
	return false
}

// unknownCommandError is the error of a word that names no subcommand of
// cmd, with cobra's suggestions of the closest ones.
func unknownCommandError(cmd *cobra.Command, arg string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown command %q for %q", arg, cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if suggestions := cmd.SuggestionsFor(arg); len(suggestions) > 0 {
		b.WriteString("\n\nDid you mean this?\n")
		for _, s := range suggestions {
			fmt.Fprintf(&b, "\t%s\n", s)
		}
	} else if !cmd.HasParent() && strings.ContainsAny(arg, " \t\n") {
		b.WriteString("\nTo run a prompt without the TUI, write otter -p \"PROMPT\".")
	}
	fmt.Fprintf(&b, "\nRun '%s --help' for usage.", cmd.CommandPath())
	return exitCode(2, errors.New(b.String()))
}

// addUsageToArgErrors makes the argument errors of cmd and its
// subcommands ("accepts between 1 and 3 arg(s), received 0") show the
// command's usage line.
func addUsageToArgErrors(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		addUsageToArgErrors(c)
	}
	check := cmd.Args
	if check == nil {
		return
	}
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		err := check(cmd, args)
		var ee *cli.ExitError
		if err == nil || errors.As(err, &ee) {
			return err
		}
		return exitCode(2, fmt.Errorf("%w\nUsage: %s\nRun '%s --help' for more.", err, cmd.UseLine(), cmd.CommandPath()))
	}
}

// onceString is a string flag that refuses to be given twice, where the
// second would silently replace the first.
type onceString struct {
	p    *string
	name string
	why  string // what to do instead
}

func (o onceString) String() string {
	if o.p == nil {
		return ""
	}
	return *o.p
}

func (o onceString) Set(v string) error {
	if *o.p != "" {
		return fmt.Errorf("%s given twice (%s, then %s): %s", o.name, *o.p, v, o.why)
	}
	*o.p = v
	return nil
}

func (onceString) Type() string { return "string" }

// cleanStreams makes stdout and stderr write through termtext: what a
// command prints for a person — a tool's result, a model's answer, a
// server's error or stderr line, a description — has its escape sequences,
// controls (but newline and tab) and bidi overrides dropped, on a terminal
// and in a pipe alike, since piped text is read on a terminal in the end
// (less, cat). Output that must stay exact goes to termtext.Raw(out):
// JSON (--json, -p's json and stream-json, whose encoding escapes
// controls), and the MCP protocol of `otter mcp serve`.
func cleanStreams(s *iostreams.IOStreams) {
	if _, ok := s.Out.(*termtext.Writer); !ok {
		s.Out = termtext.NewWriter(s.Out)
	}
	if _, ok := s.ErrOut.(*termtext.Writer); !ok {
		s.ErrOut = termtext.NewWriter(s.ErrOut)
	}
}
