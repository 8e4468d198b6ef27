package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/cli"
)

// addPromptFlags adds -p and its flags to root and returns what runs the
// prompt they give: runF with the options, or cli.RunPrompt when runF is
// nil.
func addPromptFlags(root *cobra.Command, f *cli.Factory, session *app.SessionOptions, runF func(*cli.PromptOptions) error) func(*cobra.Command) error {
	var o cli.PromptOptions
	fs := root.Flags()
	fs.StringVarP(&o.Prompt, "print", "p", "", `run one prompt without the TUI and print the answer ("-" reads it from stdin)`)
	fs.StringVar(&o.Format, "output-format", cli.FormatText, "with -p: text, json (one object at the end) or stream-json (one JSON object per line, as it happens)")
	fs.StringSliceVar(&o.AllowTools, "allow-tools", nil, "with -p: let tools that would ask for permission run when their qualified name matches one of these glob patterns (e.g. 'mcp__github__*'), or, for run_command, when each command it chains starts as one says (e.g. 'run_command(git status:*)')")
	fs.BoolVar(&o.AllowAll, "dangerously-allow-all", false, "with -p: let every tool run without asking")
	fs.BoolVar(&o.AllowSampling, "allow-sampling", false, "with -p: answer MCP servers' sampling requests with the configured model")
	fs.StringVar(&o.Model, "model", "", "the model to use instead of [agent].model (with -p and in the TUI)")
	fs.StringVar(&o.Provider, "provider", "", "the provider to use instead of [agent].provider: a [providers.NAME] of the config (with -p and in the TUI)")
	fs.BoolVar(&o.NoInstructions, "no-instructions", false, "with -p: send the model no instruction files (AGENTS.md, CLAUDE.md, GEMINI.md)")
	fs.BoolVar(&o.AttachOutside, "attach-outside", false, "with -p: let @path attach files outside the project")
	fs.IntVar(&o.MaxTurns, "max-turns", 0, "with -p: the most tool rounds for the prompt (default [agent].max_turns)")
	fs.BoolVar(&o.Verbose, "verbose", false, "with -p: print the model's thinking (reasoning) on stderr as it arrives")

	// `echo hi | otter -p` is how other agent CLIs read stdin; here -p takes
	// the prompt as its value, so say how instead of pflag's bare message.
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if strings.Contains(err.Error(), "needs an argument: 'p' in -p") || strings.Contains(err.Error(), "needs an argument: --print") {
			return exitCode(2, fmt.Errorf(`%w: give the prompt as otter -p "PROMPT", or pipe it in with … | otter -p -`, err))
		}
		return err
	})
	return func(cmd *cobra.Command) error {
		o.Session = *session
		if err := o.Check(); err != nil {
			return exitCode(2, err)
		}
		if runF != nil {
			return runF(&o)
		}
		return cli.RunPrompt(cmd.Context(), f, o)
	}
}

func promptRequested(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("print")
	return f != nil && f.Changed
}

// checkPromptFlag catches `otter -p --flag …`, where -p took the next flag
// as its prompt (and cobra would blame the words after it).
func checkPromptFlag(cmd *cobra.Command) error {
	if !promptRequested(cmd) {
		return nil
	}
	prompt, _ := cmd.Flags().GetString("print")
	if name, isFlag := strings.CutPrefix(prompt, "--"); isFlag && cmd.Flags().Lookup(strings.SplitN(name, "=", 2)[0]) != nil {
		return fmt.Errorf("-p takes the prompt as its value, but got the flag %s: write otter -p \"PROMPT\" %s …", prompt, prompt)
	}
	return nil
}
