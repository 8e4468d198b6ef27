package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/otter-sh/otter/internal/app"
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
	opts := f.LoadOptions()
	srv, err := app.LoginTarget(opts, o.Server)
	if err != nil {
		return ExitCode(2, err)
	}
	o.OAuth.Apply(&srv)
	return runLogin(ctx, f, srv, opts.Paths, o.Force)
}

// LogoutOptions are the options of `otter mcp logout`.
type LogoutOptions struct {
	Server string // a configured server's name, or a URL
}

// RunLogout forgets a server's stored OAuth token.
func RunLogout(f *Factory, o LogoutOptions) error {
	opts := f.LoadOptions()
	srv, err := app.LoginTarget(opts, o.Server)
	if err != nil {
		return ExitCode(2, err)
	}
	logger, closeLog, err := f.Logger(LogSetup{Stderr: f.IO.ErrOut, Level: slog.LevelInfo})
	if err != nil {
		return ExitCode(2, err)
	}
	defer closeLog()
	had, err := app.Logout(opts.Paths, srv, logger)
	if err != nil {
		return ExitCode(2, err)
	}
	if had {
		fmt.Fprintf(f.IO.Out, "Logged out of %s.\n", srv.Name)
	} else {
		fmt.Fprintf(f.IO.Out, "No token was stored for %s.\n", srv.Name)
	}
	return nil
}

// runLogin runs app.LoginServer for srv with a prompter on the terminal,
// and words its outcome: results on stdout, what went wrong on stderr.
func runLogin(ctx context.Context, f *Factory, srv config.Server, paths config.Paths, force bool) error {
	ctx, cancel := context.WithTimeout(ctx, loginTimeout)
	defer cancel()
	out, errOut := f.IO.Out, f.IO.ErrOut
	logger, closeLog, err := f.Logger(LogSetup{Stderr: errOut, Level: slog.LevelInfo})
	if err != nil {
		return ExitCode(2, err)
	}
	defer closeLog()
	res, err := app.LoginServer(ctx, app.LoginOptions{
		Parts:    f.Parts,
		Paths:    paths,
		Server:   srv,
		Prompter: oauth.NewTerminalPrompter(f.IO.In, errOut),
		Force:    force,
		OnRelogin: func(missing []string) {
			fmt.Fprintf(errOut, "otter: the stored token of %s does not grant %s, which %s now requires; logging in again.\n",
				srv.Name, strings.Join(missing, " "), srv.Name)
		},
		Version: f.Version,
		Logger:  logger,
	})
	if err != nil {
		if e, ok := errors.AsType[*app.LoginFailedError](err); ok && e.KeptPrevious {
			fmt.Fprintf(errOut, "otter: the new login did not complete; the previous token of %s is kept.\n", srv.Name)
		}
		if e, ok := errors.AsType[*app.TokenNotStoredError](err); ok && e.Err == nil {
			// The store's reason went to the log, which is on stderr.
			err = fmt.Errorf("%w: see the log above", err)
		}
		return ExitCode(2, err)
	}
	switch {
	case res.ClientCredentials:
		fmt.Fprintf(out, "Connected to %s with otter's client credentials (client_credentials grant). No login is needed: otter gets a token this way in every session and stores none.\n", srv.Name)
		return nil
	case !res.Stored:
		fmt.Fprintf(out, "%s did not ask for a login; nothing was stored.\n", srv.Name)
		return nil
	}
	verb := "Logged in to"
	if !res.Asked {
		verb = "Already logged in to"
	}
	fmt.Fprintf(out, "%s %s. %s\n", verb, srv.Name, expiryText(res.Expiry))
	if len(res.StillMissing) > 0 {
		fmt.Fprintf(errOut, "otter: the authorization server did not grant %s; tools of %s that need it will still be refused.\n",
			strings.Join(res.StillMissing, " "), srv.Name)
	}
	if !res.Asked {
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
