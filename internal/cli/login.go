package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth"
)

// loginTimeout bounds a whole `otter mcp login`, browser step included.
const loginTimeout = 15 * time.Minute

// OAuthOptions are the --oauth-* flags of `otter mcp login` and of ad hoc
// servers: they override a server's [mcp.servers.oauth].
type OAuthOptions struct {
	ClientID, ClientSecret, MetadataURL string
	Scopes                              []string
	CallbackPort                        int
	Grant, PrivateKeyFile, SigningAlg   string
}

// Check reports flags that cannot work together.
func (o *OAuthOptions) Check() error {
	switch o.Grant {
	case "", config.GrantAuthorizationCode, config.GrantClientCredentials:
	default:
		return fmt.Errorf("--oauth-grant %q: use %q or %q", o.Grant, config.GrantClientCredentials, config.GrantAuthorizationCode)
	}
	if o.Grant != config.GrantClientCredentials && (o.PrivateKeyFile != "" || o.SigningAlg != "") {
		return errors.New("--oauth-private-key-file and --oauth-signing-alg need --oauth-grant client_credentials")
	}
	if o.PrivateKeyFile != "" && o.ClientSecret != "" {
		return errors.New("give --oauth-client-secret or --oauth-private-key-file, not both")
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		return errors.New("--oauth-client-secret needs --oauth-client-id: the ID of the client the secret belongs to")
	}
	return nil
}

// Apply overrides srv's [mcp.servers.oauth] with the flags that were given.
func (o *OAuthOptions) Apply(srv *config.Server) {
	if o.ClientID == "" && o.MetadataURL == "" && len(o.Scopes) == 0 && o.CallbackPort == 0 && o.Grant == "" && o.PrivateKeyFile == "" && o.SigningAlg == "" {
		return
	}
	var c config.OAuth
	if srv.OAuth != nil {
		c = *srv.OAuth
	}
	if o.ClientID != "" {
		c.ClientID, c.ClientSecret = o.ClientID, o.ClientSecret
		if o.PrivateKeyFile != "" || o.ClientSecret != "" {
			c.PrivateKeyFile, c.PrivateKeyPEM = "", ""
		}
	}
	if o.Grant != "" {
		c.Grant = o.Grant
	}
	if o.PrivateKeyFile != "" {
		c.PrivateKeyFile, c.PrivateKeyPEM, c.ClientSecret = o.PrivateKeyFile, "", ""
	}
	if o.SigningAlg != "" {
		c.SigningAlg = o.SigningAlg
	}
	if o.MetadataURL != "" {
		c.ClientMetadataURL = o.MetadataURL
	}
	if len(o.Scopes) > 0 {
		c.Scopes = o.Scopes
	}
	if o.CallbackPort != 0 {
		c.CallbackPort = o.CallbackPort
	}
	srv.OAuth = &c
}

// LoginOptions are the options of `otter mcp login`.
type LoginOptions struct {
	Server string // SERVER|URL
	Force  bool   // log in again even if a token is stored
	OAuth  OAuthOptions
}

// RunLogin logs in to a server that needs OAuth and stores the token.
// o.OAuth has passed Check: the command refuses flags that cannot work
// together before it runs.
func RunLogin(ctx context.Context, f *Factory, o LoginOptions) error {
	srv, paths, err := loginServer(f, o.Server)
	if err != nil {
		return ExitCode(2, err)
	}
	o.OAuth.Apply(&srv)
	return runLogin(ctx, f, srv, paths, o.Force)
}

// LogoutOptions are the options of `otter mcp logout`.
type LogoutOptions struct {
	Server string // a configured server's name, or a URL
}

// RunLogout forgets a server's stored OAuth token.
func RunLogout(f *Factory, o LogoutOptions) error {
	srv, paths, err := loginServer(f, o.Server)
	if err != nil {
		return ExitCode(2, err)
	}
	logger, closeLog, err := f.Logger(LogSetup{Stderr: f.IO.ErrOut, Level: slog.LevelInfo})
	if err != nil {
		return ExitCode(2, err)
	}
	defer closeLog()
	a := oauth.New(oauth.Options{Paths: paths, Logger: logger})
	had := a.LoggedIn(srv)
	if err := a.Logout(srv); err != nil {
		return ExitCode(2, err)
	}
	if had {
		fmt.Fprintf(f.IO.Out, "Logged out of %s.\n", srv.Name)
	} else {
		fmt.Fprintf(f.IO.Out, "No token was stored for %s.\n", srv.Name)
	}
	return nil
}

// loginServer resolves SERVER|URL to a remote server using the merged
// configuration.
func loginServer(f *Factory, arg string) (config.Server, config.Paths, error) {
	opts := f.LoadOptions()
	paths := opts.Paths
	cfg, err := config.Load(opts)
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
func runLogin(ctx context.Context, f *Factory, srv config.Server, paths config.Paths, force bool) error {
	ctx, cancel := context.WithTimeout(ctx, loginTimeout)
	defer cancel()
	prompter := &countingPrompter{LoginPrompter: oauth.NewTerminalPrompter(f.IO.In, f.IO.ErrOut)}
	out, errOut := f.IO.Out, f.IO.ErrOut
	logger, closeLog, err := f.Logger(LogSetup{Stderr: errOut, Level: slog.LevelInfo})
	if err != nil {
		return ExitCode(2, err)
	}
	defer closeLog()
	a := oauth.New(oauth.Options{Paths: paths, Prompter: prompter, Logger: logger})
	relogin, err := a.BeginLogin(srv, force)
	if err != nil {
		return ExitCode(2, err)
	}
	if len(relogin.Missing) > 0 && !force {
		fmt.Fprintf(errOut, "otter: the stored token of %s does not grant %s, which %s now requires; logging in again.\n",
			srv.Name, strings.Join(relogin.Missing, " "), srv.Name)
	}
	h := a.Handler(srv, true)
	if h == nil {
		return ExitCode(2, fmt.Errorf("server %q sends its own Authorization header (headers in its configuration); otter does not manage its login", srv.Name))
	}
	if err := f.Parts.ProbeServer(ctx, srv, h, f.Version); err != nil {
		if rerr := relogin.Abandon(); rerr != nil {
			logger.Warn("could not put the previous token back", "server", srv.Name, "err", rerr)
		} else if force || len(relogin.Missing) > 0 {
			fmt.Fprintf(errOut, "otter: the new login did not complete; the previous token of %s is kept.\n", srv.Name)
		}
		if errors.Is(err, oauth.ErrLoginRequired) {
			return ExitCode(2, fmt.Errorf("not logged in to %s: %w", srv.Name, err))
		}
		return ExitCode(2, fmt.Errorf("log in to %s: %w", srv.Name, err))
	}
	if srv.OAuth.IsClientCredentials() {
		fmt.Fprintf(out, "Connected to %s with otter's client credentials (client_credentials grant). No login is needed: otter gets a token this way in every session and stores none.\n", srv.Name)
		return nil
	}
	if stored, serr := a.Stored(srv); !stored {
		if prompter.asked.Load() || serr != nil {
			// The login worked for this process only.
			return ExitCode(2, fmt.Errorf("logged in to %s, but the token could not be stored, so the next otter process will ask again: %w",
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
		fmt.Fprintf(errOut, "otter: the authorization server did not grant %s; tools of %s that need it will still be refused.\n",
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
