package main

import (
	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/cli"
)

// registerOAuth adds the --oauth-* flags.
func registerOAuth(cmd *cobra.Command, o *cli.OAuthOptions) {
	f := cmd.Flags()
	f.StringVar(&o.ClientID, "oauth-client-id", "", "pre-registered OAuth client ID (overrides [mcp.servers.oauth] client_id)")
	f.StringVar(&o.ClientSecret, "oauth-client-secret", "", "its client secret")
	f.StringVar(&o.MetadataURL, "oauth-client-metadata-url", "", "client ID metadata document URL (https), used where the server supports it")
	f.StringSliceVar(&o.Scopes, "oauth-scope", nil, "scopes to request besides those the server asks for (repeatable)")
	f.IntVar(&o.CallbackPort, "oauth-callback-port", 0, "port of the loopback redirect on 127.0.0.1 (default: a free port)")
	f.StringVar(&o.Grant, "oauth-grant", "", `"client_credentials" for a machine client (no browser; needs --oauth-client-id with --oauth-client-secret or --oauth-private-key-file), or "authorization_code" (default)`)
	f.StringVar(&o.PrivateKeyFile, "oauth-private-key-file", "", "PEM private key for private_key_jwt client authentication (client_credentials grant)")
	f.StringVar(&o.SigningAlg, "oauth-signing-alg", "", "JWS algorithm of the client assertion, e.g. ES256 or RS256 (default: the usual one for the key)")
}

func newCmdMCPLogin(f *cli.Factory, runF func(*cli.LoginOptions) error) *cobra.Command {
	var o cli.LoginOptions
	cmd := &cobra.Command{
		Use:   "login SERVER|URL",
		Short: "Log in to a server that needs OAuth",
		Long: `Log in to a remote MCP server that requires OAuth, and store the token.

SERVER is a configured server's name; a URL logs in to an ad hoc server
(as used with "otter mcp tools --url"). otter shows the authorization URL and
asks how to continue: open the browser ($BROWSER if set, else the system's
opener), open the URL yourself, or - over SSH, where the browser cannot reach
otter - paste the address the browser ends on after you approve.

Tokens are stored per server URL under $XDG_DATA_HOME/otter/tokens (mode 0600),
refreshed automatically, and shared by every otter process. otter never starts
a login on its own at startup: a server that needs one shows as needs-auth.

With a token already stored, login checks that it works, and logs in again
only when the token lacks scopes otter knows are needed: those a server asked
for when it refused a tool call (403 insufficient_scope), and the scopes of
[mcp.servers.oauth]. --force always logs in again (as another account, say).
A new login that does not complete keeps the old token.`,
		Example: `  otter mcp login github
  otter mcp login --force github
  otter mcp login https://mcp.example.com/mcp --oauth-client-id otter-cli`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Server = args[0]
			if err := o.OAuth.Check(); err != nil {
				return exitCode(2, err)
			}
			if runF != nil {
				return runF(&o)
			}
			return cli.RunLogin(cmd.Context(), f, o)
		},
	}
	registerOAuth(cmd, &o.OAuth)
	cmd.Flags().BoolVar(&o.Force, "force", false, "log in again even if a token is stored")
	return cmd
}

func newCmdMCPLogout(f *cli.Factory, runF func(*cli.LogoutOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:   "logout SERVER|URL",
		Short: "Forget a server's stored OAuth token",
		Long: `Delete the OAuth token otter stored for a server, and otter's client
registration with its authorization server. The next connection needs a new
"otter mcp login".`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := cli.LogoutOptions{Server: args[0]}
			if runF != nil {
				return runF(&o)
			}
			return cli.RunLogout(f, o)
		},
	}
}
