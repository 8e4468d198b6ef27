package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth"
)

// loginTimeout bounds a whole `otter mcp login`, browser step included.
const loginTimeout = 15 * time.Minute

// loginOAuth holds the --oauth-* flags of `otter mcp login`.
type loginOAuth struct {
	clientID, clientSecret, metadataURL string
	scopes                              []string
	callbackPort                        int
	grant, privateKeyFile, signingAlg   string
}

func (o *loginOAuth) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.clientID, "oauth-client-id", "", "pre-registered OAuth client ID (overrides [mcp.servers.oauth] client_id)")
	f.StringVar(&o.clientSecret, "oauth-client-secret", "", "its client secret")
	f.StringVar(&o.metadataURL, "oauth-client-metadata-url", "", "client ID metadata document URL (https), used where the server supports it")
	f.StringSliceVar(&o.scopes, "oauth-scope", nil, "scopes to request besides those the server asks for (repeatable)")
	f.IntVar(&o.callbackPort, "oauth-callback-port", 0, "port of the loopback redirect on 127.0.0.1 (default: a free port)")
	f.StringVar(&o.grant, "oauth-grant", "", `"client_credentials" for a machine client (no browser; needs --oauth-client-id with --oauth-client-secret or --oauth-private-key-file), or "authorization_code" (default)`)
	f.StringVar(&o.privateKeyFile, "oauth-private-key-file", "", "PEM private key for private_key_jwt client authentication (client_credentials grant)")
	f.StringVar(&o.signingAlg, "oauth-signing-alg", "", "JWS algorithm of the client assertion, e.g. ES256 or RS256 (default: the usual one for the key)")
}

// check reports flags that cannot work together.
func (o *loginOAuth) check() error {
	switch o.grant {
	case "", config.GrantAuthorizationCode, config.GrantClientCredentials:
	default:
		return fmt.Errorf("--oauth-grant %q: use %q or %q", o.grant, config.GrantClientCredentials, config.GrantAuthorizationCode)
	}
	if o.grant != config.GrantClientCredentials && (o.privateKeyFile != "" || o.signingAlg != "") {
		return errors.New("--oauth-private-key-file and --oauth-signing-alg need --oauth-grant client_credentials")
	}
	if o.privateKeyFile != "" && o.clientSecret != "" {
		return errors.New("give --oauth-client-secret or --oauth-private-key-file, not both")
	}
	if o.clientSecret != "" && o.clientID == "" {
		return errors.New("--oauth-client-secret needs --oauth-client-id: the ID of the client the secret belongs to")
	}
	return nil
}

// apply overrides srv's [mcp.servers.oauth] with the flags that were given.
func (o *loginOAuth) apply(srv *config.Server) {
	if o.clientID == "" && o.metadataURL == "" && len(o.scopes) == 0 && o.callbackPort == 0 && o.grant == "" && o.privateKeyFile == "" && o.signingAlg == "" {
		return
	}
	var c config.OAuth
	if srv.OAuth != nil {
		c = *srv.OAuth
	}
	if o.clientID != "" {
		c.ClientID, c.ClientSecret = o.clientID, o.clientSecret
		if o.privateKeyFile != "" || o.clientSecret != "" {
			c.PrivateKeyFile, c.PrivateKeyPEM = "", ""
		}
	}
	if o.grant != "" {
		c.Grant = o.grant
	}
	if o.privateKeyFile != "" {
		c.PrivateKeyFile, c.PrivateKeyPEM, c.ClientSecret = o.privateKeyFile, "", ""
	}
	if o.signingAlg != "" {
		c.SigningAlg = o.signingAlg
	}
	if o.metadataURL != "" {
		c.ClientMetadataURL = o.metadataURL
	}
	if len(o.scopes) > 0 {
		c.Scopes = o.scopes
	}
	if o.callbackPort != 0 {
		c.CallbackPort = o.callbackPort
	}
	srv.OAuth = &c
}

func newMCPLoginCmd() *cobra.Command {
	var (
		o     loginOAuth
		force bool
	)
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
			if err := o.check(); err != nil {
				return exitCode(2, err)
			}
			srv, paths, err := loginServer(args[0])
			if err != nil {
				return exitCode(2, err)
			}
			o.apply(&srv)
			return runLogin(cmd, srv, paths, force)
		},
	}
	o.register(cmd)
	cmd.Flags().BoolVar(&force, "force", false, "log in again even if a token is stored")
	return cmd
}

func newMCPLogoutCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "logout SERVER|URL",
		Short: "Forget a server's stored OAuth token",
		Long: `Delete the OAuth token otter stored for a server, and otter's client
registration with its authorization server. The next connection needs a new
"otter mcp login".`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			srv, paths, err := loginServer(args[0])
			if err != nil {
				return exitCode(2, err)
			}
			logger, closeLog, err := setupLogging(cmd, logSetup{stderr: cmd.ErrOrStderr(), level: slog.LevelInfo})
			if err != nil {
				return exitCode(2, err)
			}
			defer closeLog()
			a := oauth.New(oauth.Options{Paths: paths, Logger: logger})
			had := a.LoggedIn(srv)
			if err := a.Logout(srv); err != nil {
				return exitCode(2, err)
			}
			if had {
				fmt.Fprintf(cmd.OutOrStdout(), "Logged out of %s.\n", srv.Name)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "No token was stored for %s.\n", srv.Name)
			}
			return nil
		},
	}
}

// loginServer resolves SERVER|URL to a remote server using the merged
// configuration.
func loginServer(arg string) (config.Server, config.Paths, error) {
	paths := config.DefaultPaths()
	cfg, err := config.Load(config.LoadOptions{Paths: paths, WorkDir: flags.workDir, Extra: flags.configFile})
	if err != nil {
		return config.Server{}, paths, err
	}
	srv, ok := cfg.Server(arg)
	if !ok {
		if u, err := url.Parse(arg); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			return config.Server{Name: arg, URL: arg, Scope: config.ScopeFlag}, paths, nil
		}
		return config.Server{}, paths, fmt.Errorf("no MCP server named %q in the configuration%s", arg, knownServers(cfg))
	}
	if srv.Problem != nil {
		return config.Server{}, paths, fmt.Errorf("cannot log in to %q until its configuration is fixed: %w", arg, srv.Problem)
	}
	if srv.URL == "" {
		return config.Server{}, paths, fmt.Errorf("server %q runs a local command over stdio; OAuth applies only to remote (http/sse) servers", arg)
	}
	return srv, paths, nil
}

func knownServers(cfg *config.Config) string {
	var names []string
	for _, s := range cfg.MCP.Servers {
		if s.URL != "" {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return " (no remote servers are configured; a URL works too)"
	}
	sort.Strings(names)
	return " (remote servers: " + strings.Join(names, ", ") + ")"
}

// countingPrompter notes whether the person was asked to log in.
type countingPrompter struct {
	ask.LoginPrompter
	asked atomic.Bool
}

func (p *countingPrompter) Login(ctx context.Context, req ask.Login) (ask.LoginReply, error) {
	p.asked.Store(true)
	return p.LoginPrompter.Login(ctx, req)
}

// runLogin connects to srv with an interactive OAuth handler, which runs
// the login if the server asks for one, and reports the outcome.
func runLogin(cmd *cobra.Command, srv config.Server, paths config.Paths, force bool) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), loginTimeout)
	defer cancel()
	prompter := &countingPrompter{LoginPrompter: oauth.NewTerminalPrompter(cmd.InOrStdin(), cmd.ErrOrStderr())}
	out := cmd.OutOrStdout()
	logger, closeLog, err := setupLogging(cmd, logSetup{stderr: cmd.ErrOrStderr(), level: slog.LevelInfo})
	if err != nil {
		return exitCode(2, err)
	}
	defer closeLog()
	a := oauth.New(oauth.Options{Paths: paths, Prompter: prompter, Logger: logger})
	restore := func() error { return nil }
	var missing []string // scopes the stored token is known to lack
	if !srv.OAuth.IsClientCredentials() {
		if missing, err = a.MissingScopes(srv); err != nil {
			return exitCode(2, err)
		}
	}
	if len(missing) > 0 && !force {
		fmt.Fprintf(cmd.ErrOrStderr(), "otter: the stored token of %s does not grant %s, which %s now requires; logging in again.\n",
			srv.Name, strings.Join(missing, " "), srv.Name)
	}
	if (force || len(missing) > 0) && !srv.OAuth.IsClientCredentials() {
		if restore, err = a.SetAside(srv); err != nil {
			return exitCode(2, err)
		}
	}
	h := a.Handler(srv, true)
	if h == nil {
		return exitCode(2, fmt.Errorf("server %q sends its own Authorization header (headers in its configuration); otter does not manage its login", srv.Name))
	}
	if err := loginConnect(ctx, srv, h, prompter); err != nil {
		if rerr := restore(); rerr != nil {
			logger.Warn("could not put the previous token back", "server", srv.Name, "err", rerr)
		} else if force || len(missing) > 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "otter: the new login did not complete; the previous token of %s is kept.\n", srv.Name)
		}
		if errors.Is(err, oauth.ErrLoginRequired) {
			return exitCode(2, fmt.Errorf("not logged in to %s: %w", srv.Name, err))
		}
		return exitCode(2, fmt.Errorf("log in to %s: %w", srv.Name, err))
	}
	if srv.OAuth.IsClientCredentials() {
		fmt.Fprintf(out, "Connected to %s with otter's client credentials (client_credentials grant). No login is needed: otter gets a token this way in every session and stores none.\n", srv.Name)
		return nil
	}
	if stored, serr := a.Stored(srv); !stored {
		if prompter.asked.Load() || serr != nil {
			// The login worked for this process only.
			return exitCode(2, fmt.Errorf("logged in to %s, but the token could not be stored, so the next otter process will ask again: %w",
				srv.Name, cmp.Or(serr, errors.New("see the log above"))))
		}
		fmt.Fprintf(out, "%s did not ask for a login; nothing was stored.\n", srv.Name)
		return nil
	}
	verb := "Logged in to"
	if !prompter.asked.Load() {
		verb = "Already logged in to"
	}
	fmt.Fprintf(out, "%s %s. %s\n", verb, srv.Name, expiryText(a.TokenExpiry(srv)))
	if still, _ := a.MissingScopes(srv); len(still) > 0 && prompter.asked.Load() {
		fmt.Fprintf(cmd.ErrOrStderr(), "otter: the authorization server did not grant %s; tools of %s that need it will still be refused.\n",
			strings.Join(still, " "), srv.Name)
	}
	if !prompter.asked.Load() {
		fmt.Fprintf(out, "To log in again (as another account, say), run `otter mcp login --force %s`.\n", srv.Name)
	}
	return nil
}

func expiryText(exp time.Time) string {
	if exp.IsZero() {
		return "The token does not expire."
	}
	at := exp.Local().Format("2006-01-02 15:04 MST")
	if left := time.Until(exp); left > 0 {
		at += " (in " + shortDuration(left) + ")"
	}
	return "The access token expires at " + at + "; otter refreshes it when it can."
}

// loginConnect connects and initializes an MCP session with srv through h
// and closes it. A server whose transport is not set is tried over
// streamable HTTP and then, if that was refused before any login, over SSE.
func loginConnect(ctx context.Context, srv config.Server, h auth.OAuthHandler, prompter *countingPrompter) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "otter", Version: version}, nil)
	base := &loginHeaders{headers: srv.Headers}
	var err error
	if srv.Transport != config.TransportSSE {
		t := &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: base}, OAuthHandler: h, DisableStandaloneSSE: true}
		var cs *mcp.ClientSession
		if cs, err = client.Connect(ctx, t, nil); err == nil {
			return cs.Close()
		}
		if srv.Transport == config.TransportHTTP || prompter.asked.Load() || ctx.Err() != nil || errors.Is(err, oauth.ErrLoginRequired) {
			return err
		}
	}
	t := &mcp.SSEClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: oauth.Transport(h, base)}}
	cs, sseErr := client.Connect(ctx, t, nil)
	if sseErr != nil {
		if err != nil {
			return fmt.Errorf("over streamable HTTP: %w; over SSE: %w", err, sseErr)
		}
		return sseErr
	}
	return cs.Close()
}

// loginHeaders adds the server's configured headers to every request.
type loginHeaders struct{ headers map[string]string }

func (t *loginHeaders) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}
