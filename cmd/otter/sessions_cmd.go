package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/cli"
)

// addSessionFlags adds -c/--continue, -r/--resume [ID], --fork-session and
// --no-session, for -p and the TUI alike, and returns what they chose.
func addSessionFlags(root *cobra.Command) *app.SessionOptions {
	var o app.SessionOptions
	fs := root.Flags()
	fs.BoolVarP(&o.Continue, "continue", "c", false, "continue the latest conversation of this directory")
	fs.VarP(sessionID{&o.Resume}, "resume", "r", "continue the saved conversation with this ID (or unique ID prefix); without an ID the TUI lets you pick one")
	fs.Lookup("resume").NoOptDefVal = cli.ResumePicker
	fs.BoolVar(&o.Fork, "fork-session", false, "with --continue or --resume: continue a copy, leaving the saved conversation as it was")
	fs.BoolVar(&o.Off, "no-session", false, "save nothing of this conversation")
	return &o
}

// takeResumeID moves the word after a bare --resume into it: pflag reads
// `-r ID` as --resume without a value followed by an argument, since the
// ID may be left out.
func takeResumeID(cmd *cobra.Command, o *app.SessionOptions, args []string) []string {
	if o.Resume == cli.ResumePicker && cmd.Flags().Changed("resume") && len(args) > 0 {
		o.Resume = args[0]
		return args[1:]
	}
	return args
}

// checkSessionFlags reports combinations that cannot work.
func checkSessionFlags(o *app.SessionOptions) error {
	switch {
	case o.Fork && !o.Resuming():
		return errors.New("--fork-session needs --continue or --resume: it says what to copy")
	case o.Off && o.Resuming():
		return errors.New("--no-session cannot be used with --continue or --resume: resuming needs the saved conversation")
	case o.Continue && o.Resume != "":
		return errors.New("give --continue or --resume, not both")
	}
	return nil
}

// newCmdSessions is `otter sessions list|show|search|rm|export`.
func newCmdSessions(f *cli.Factory, runF func(string, *cli.SessionsOptions) error) *cobra.Command {
	run := func(name string, o *cli.SessionsOptions, cmd *cobra.Command) error {
		if runF != nil {
			return runF(name, o)
		}
		ctx := cmd.Context()
		switch name {
		case "list":
			return cli.SessionsList(ctx, f, *o)
		case "show":
			return cli.SessionsShow(ctx, f, *o)
		case "search":
			return cli.SessionsSearch(ctx, f, *o)
		case "rm":
			return cli.SessionsRemove(ctx, f, *o)
		}
		return cli.SessionsExport(ctx, f, *o)
	}
	cmd := groupCommand(&cobra.Command{
		Use:   "sessions",
		Short: "List, show, search, delete and export saved conversations",
		Long: `otter saves every conversation in $XDG_DATA_HOME/otter/otter.db (see the
[sessions] table for retention). IDs may be shortened to any unique prefix.
otter -c continues this directory's latest conversation, otter -r ID another.`,
	})

	var list cli.SessionsOptions
	listCmd := &cobra.Command{
		Use:   "list",
		Short: "List this directory's saved conversations, the latest first",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return run("list", &list, c) },
	}
	listCmd.Flags().BoolVar(&list.All, "all", false, "list every directory's conversations")
	listCmd.Flags().BoolVar(&list.JSON, "json", false, "print a JSON array of {id, title, cwd, created, updated, messages, model}")

	// byID is a subcommand that takes a session ID.
	byID := func(name, use, short string, o *cli.SessionsOptions) *cobra.Command {
		return &cobra.Command{
			Use:   use,
			Short: short,
			Args:  cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				o.ID = args[0]
				return run(name, o, c)
			},
		}
	}
	var show, rm, export cli.SessionsOptions
	showCmd := byID("show", "show ID", "Print a saved conversation (Markdown, or JSON)", &show)
	showCmd.Flags().BoolVar(&show.JSON, "json", false, "print {id, title, …, messages: [{role, content, …}]}")
	showCmd.Flags().BoolVar(&show.Markdown, "markdown", false, "print Markdown (the default)")
	showCmd.MarkFlagsMutuallyExclusive("json", "markdown")
	rmCmd := byID("rm", "rm ID", "Delete a saved conversation", &rm)
	exportCmd := byID("export", "export ID", "Print a saved conversation as Markdown (or JSON)", &export)
	exportCmd.Flags().BoolVar(&export.JSON, "json", false, "print {id, title, …, messages: [{role, content, …}]}, as show --json")
	exportCmd.Flags().BoolVar(&export.Markdown, "markdown", false, "print Markdown (the default)")
	exportCmd.MarkFlagsMutuallyExclusive("json", "markdown")

	var search cli.SessionsOptions
	searchCmd := &cobra.Command{
		Use:   "search WORDS...",
		Short: "Find the saved messages that hold every word (beginnings of words match too)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			search.Query = strings.Join(args, " ")
			return run("search", &search, c)
		},
	}
	searchCmd.Flags().BoolVar(&search.JSON, "json", false, "print a JSON array of {session_id, title, cwd, seq, role, snippet, time}")

	cmd.AddCommand(listCmd, showCmd, searchCmd, rmCmd, exportCmd)
	return cmd
}

// sessionID is --resume's value: a session ID, shown as such in --help.
type sessionID struct{ p *string }

func (s sessionID) String() string {
	if s.p == nil {
		return ""
	}
	return *s.p
}

func (s sessionID) Set(v string) error { *s.p = v; return nil }

func (sessionID) Type() string { return "ID" }
