package main

import (
	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/cli"
)

// configCommands are `otter config validate|show` and `otter trust`.
func configCommands(f *cli.Factory) []*cobra.Command {
	cfgCmd := groupCommand(&cobra.Command{
		Use:   "config",
		Short: "Check and show otter's configuration",
		Long: `otter reads, highest scope first: --config FILE, .otter/config.local.toml,
.otter/config.toml and .mcp.json of the project (the nearest directory, walking
up, with a .otter/ directory or a .mcp.json file), and
$XDG_CONFIG_HOME/otter/config.toml. See config.example.toml for every key.`,
	})
	cfgCmd.AddCommand(newCmdConfigValidate(f, nil), newCmdConfigShow(f, nil))
	return []*cobra.Command{cfgCmd, newCmdTrust(f, nil)}
}

func newCmdConfigValidate(f *cli.Factory, runF func(*cli.ConfigValidateOptions) error) *cobra.Command {
	var o cli.ConfigValidateOptions
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
			if len(args) == 1 {
				o.Path = args[0]
			}
			if runF != nil {
				return runF(&o)
			}
			return cli.RunConfigValidate(f, o)
		},
	}
}

func newCmdConfigShow(f *cli.Factory, runF func(*cli.ConfigShowOptions) error) *cobra.Command {
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
			if runF != nil {
				return runF(&cli.ConfigShowOptions{})
			}
			return cli.RunConfigShow(f)
		},
	}
}

func newCmdTrust(f *cli.Factory, runF func(*cli.TrustOptions) error) *cobra.Command {
	var o cli.TrustOptions
	cmd := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Let a project's servers, hooks, commands, skills and instruction files count",
		Long: `A cloned repository never starts a process on its own: the servers and hooks
of a project's .otter/config.toml and .mcp.json stay off, its commands, skills
and other settings ignored and its instruction files unread, until you trust
the project directory (the nearest directory holding .otter/, .mcp.json or
.git; trusting it covers its subdirectories). What is added to or changed in
its servers, hooks, commands, skills or settings later is held back until you
trust it again.

otter trust [DIR]      list what trusting DIR's project enables (or what changed
                       since you trusted it), ask, and trust it
otter trust --yes      trust without asking (for scripts)
otter trust --list     list trusted directories
otter trust --revoke DIR  forget DIR`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Dir = args[0]
			}
			if runF != nil {
				return runF(&o)
			}
			return cli.RunTrust(f, o)
		},
	}
	cmd.Flags().BoolVar(&o.List, "list", false, "list the trusted directories")
	cmd.Flags().StringVar(&o.Revoke, "revoke", "", "forget the trust in `DIR`")
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "trust what is listed without asking")
	return cmd
}
