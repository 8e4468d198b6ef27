package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth"
)

// LoginTarget resolves target — a configured server's name, or the URL of
// a remote server in no config file (an ad hoc server) — to the remote
// server a login or logout is for, against the configuration opts merges.
// It loads the configuration only: no server starts.
//
// Its errors are config.Load's, an *UnknownServerError for a name that is
// no server and no http(s) URL, a *StdioServerError for a server that
// runs a local command, and, for a server whose configuration has a
// problem (an unset ${VAR}, say), an error wrapping that problem.
func LoginTarget(opts config.LoadOptions, target string) (config.Server, error) {
	cfg, err := config.Load(opts)
	if err != nil {
		return config.Server{}, err
	}
	srv, ok := cfg.Server(target)
	if !ok {
		if u, err := url.Parse(target); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			return config.Server{Name: target, URL: target, Scope: config.ScopeFlag}, nil
		}
		e := &UnknownServerError{Name: target}
		for _, s := range cfg.MCP.Servers {
			if s.URL != "" {
				e.Remote = append(e.Remote, s.Name)
			}
		}
		slices.Sort(e.Remote)
		return config.Server{}, e
	}
	if srv.Problem != nil {
		return config.Server{}, fmt.Errorf("cannot log in to %q until its configuration is fixed: %w", target, srv.Problem)
	}
	if srv.URL == "" {
		return config.Server{}, &StdioServerError{Server: target}
	}
	return srv, nil
}

// LoginOptions configure LoginServer.
type LoginOptions struct {
	// Parts give the connection that runs the login (Parts.Probe).
	Parts Parts
	// Paths locate the token store; the zero value means
	// config.DefaultPaths().
	Paths config.Paths
	// Server is the remote server to log in to (see LoginTarget), with
	// any OAuth settings the front end was given applied.
	Server config.Server
	// Prompter asks the person how to log in (browser, URL, pasted
	// redirect) when the server wants a login. Required.
	Prompter ask.LoginPrompter
	// Force logs in again even when a stored token works (as another
	// account, say).
	Force bool
	// OnRelogin, when set, is called before the new login with the scopes
	// the stored token lacks although otter knows they are needed (see
	// LoginOutcome.Rerequested), so that the front end can say why it
	// asks for a login again before the prompt does. Not called with
	// Force.
	OnRelogin func(missing []string)
	// Version is the client version sent in initialize.
	Version string
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
}

// LoginOutcome is what a LoginServer that succeeded did.
type LoginOutcome struct {
	// ClientCredentials: the server's [mcp.servers.oauth] has the
	// client_credentials grant, and otter's own credentials got a token
	// that works. No person logs in and nothing is stored: otter gets
	// such a token in every process. The fields below are zero.
	ClientCredentials bool
	// Asked: the person was asked to log in, so a new login ran. With
	// Stored and not Asked, a stored token worked: already logged in.
	Asked bool
	// Stored: a token is stored for the server, which later otter
	// processes use. False (and not ClientCredentials): the server asked
	// for no login at all.
	Stored bool
	// Rerequested are the scopes the stored token lacked although otter
	// knows they are needed — those a server asked for when it refused a
	// tool call, and those of [mcp.servers.oauth] — for which it logged in
	// again without Force (OnRelogin was told them first).
	Rerequested []string
	// StillMissing are the scopes the authorization server did not grant
	// in the new login although otter asked for them: tools that need
	// them will still be refused. Nil unless Asked.
	StillMissing []string
	// Expiry is when the stored access token expires; zero when it does
	// not (or none is stored). otter refreshes it when it can.
	Expiry time.Time
}

// LoginServer connects once to the remote server o.Server with a handler
// that may start a login, so that the server's own answer decides: a
// server that needs a login gets one (through o.Prompter), a stored token
// that works is only checked, and the token a login gets is stored for
// every later otter process. It needs no App and starts no configured
// server: it is `otter mcp login`'s whole work.
//
// With o.Force, or when the stored token lacks scopes otter knows are
// needed, it sets the stored token aside first and logs in afresh; if that
// login does not complete, the previous token is put back.
//
// Its errors: a *StdioServerError or an *OwnAuthorizationError for a
// server whose login otter does not manage, a *LoginFailedError when the
// connection or the login failed (wrapping oauth.ErrLoginRequired when the
// person did not log in), a *TokenNotStoredError when the login worked
// but its token could not be stored, and the token store's own errors.
//
// The TUI's login (App.Login) shares none of this, and cannot without
// changing what it does: it logs in on the running server's own
// connection — the manager restarts that server with a handler that may
// log in, using the App's Authorizer and Asker — so the server's state
// and its tools follow the login, where a probe here would be a second
// connection beside the managed one. And it sets no token aside: a server
// whose stored token works connects with it, where LoginServer logs in
// again for missing scopes.
func LoginServer(ctx context.Context, o LoginOptions) (LoginOutcome, error) {
	srv := o.Server
	if o.Prompter == nil {
		return LoginOutcome{}, errors.New("app.LoginOptions.Prompter is nil (a bug: the front end must say how a person logs in)")
	}
	if srv.URL == "" || srv.Transport == config.TransportStdio {
		return LoginOutcome{}, &StdioServerError{Server: srv.Name}
	}
	logger := cmp.Or(o.Logger, slog.Default())
	prompter := &askedPrompter{LoginPrompter: o.Prompter}
	a := oauth.New(oauth.Options{Paths: o.Paths, Prompter: prompter, Logger: logger})
	h := a.Handler(srv, true)
	if h == nil {
		return LoginOutcome{}, &OwnAuthorizationError{Server: srv.Name}
	}
	had, _ := a.Stored(srv)
	relogin, err := a.BeginLogin(srv, o.Force)
	if err != nil {
		return LoginOutcome{}, err
	}
	var out LoginOutcome
	if len(relogin.Missing) > 0 && !o.Force {
		out.Rerequested = relogin.Missing
		if o.OnRelogin != nil {
			o.OnRelogin(relogin.Missing)
		}
	}
	if err := o.Parts.probeServer(ctx, srv, h, o.Version); err != nil {
		failed := &LoginFailedError{Server: srv.Name, Err: err}
		if rerr := relogin.Abandon(); rerr != nil {
			logger.Warn("could not put the previous token back", "server", srv.Name, "err", rerr)
		} else {
			failed.KeptPrevious = relogin.Replacing && had
		}
		return LoginOutcome{}, failed
	}
	if srv.OAuth.IsClientCredentials() {
		return LoginOutcome{ClientCredentials: true}, nil
	}
	out.Asked = prompter.asked.Load()
	stored, serr := a.Stored(srv)
	if !stored {
		if out.Asked || serr != nil {
			// The login worked for this process only.
			return LoginOutcome{}, &TokenNotStoredError{Server: srv.Name, Err: serr}
		}
		return out, nil
	}
	out.Stored = true
	out.Expiry = a.TokenExpiry(srv)
	if out.Asked {
		out.StillMissing, _ = a.MissingScopes(srv)
	}
	return out, nil
}

// Logout forgets what otter stored for the remote server srv (see
// LoginTarget) in the token store under paths: its token and otter's
// client registration at its authorization server. hadToken says whether
// a token was stored; it is not an error if none was. The OS keychain,
// when the store uses it, answers within oauth's own time limit.
func Logout(paths config.Paths, srv config.Server, logger *slog.Logger) (hadToken bool, err error) {
	a := oauth.New(oauth.Options{Paths: paths, Logger: logger})
	had := a.LoggedIn(srv)
	if err := a.Logout(srv); err != nil {
		return false, err
	}
	return had, nil
}

// askedPrompter notes whether the person was asked to log in.
type askedPrompter struct {
	ask.LoginPrompter
	asked atomic.Bool
}

func (p *askedPrompter) Login(ctx context.Context, req ask.Login) (ask.LoginReply, error) {
	p.asked.Store(true)
	return p.LoginPrompter.Login(ctx, req)
}

// UnknownServerError is LoginTarget's error for a name that is neither a
// configured server nor an http(s) URL.
type UnknownServerError struct {
	Name   string
	Remote []string // the configured remote servers' names, sorted
}

func (e *UnknownServerError) Error() string {
	if len(e.Remote) == 0 {
		return fmt.Sprintf("no MCP server named %q in the configuration (no remote servers are configured; a URL works too)", e.Name)
	}
	return fmt.Sprintf("no MCP server named %q in the configuration (remote servers: %s)", e.Name, strings.Join(e.Remote, ", "))
}

// StdioServerError is the error of a login to a server that runs a local
// command: OAuth is for remote servers only.
type StdioServerError struct{ Server string }

func (e *StdioServerError) Error() string {
	return fmt.Sprintf("server %q runs a local command over stdio; OAuth applies only to remote (http/sse) servers", e.Server)
}

// OwnAuthorizationError is the error of a login to a server whose
// configured headers carry an Authorization header: the person manages
// its credentials, not otter.
type OwnAuthorizationError struct{ Server string }

func (e *OwnAuthorizationError) Error() string {
	return fmt.Sprintf("server %q sends its own Authorization header (headers in its configuration); otter does not manage its login", e.Server)
}

// LoginFailedError is LoginServer's error when the connection or the
// login failed. It wraps the cause: oauth.ErrLoginRequired (with an
// *oauth.LoginRequiredError) when the person did not log in.
type LoginFailedError struct {
	Server string
	// KeptPrevious: a stored token was set aside for a new login, which
	// did not complete, and is back in place.
	KeptPrevious bool
	Err          error
}

func (e *LoginFailedError) Error() string {
	if errors.Is(e.Err, oauth.ErrLoginRequired) {
		return "not logged in to " + e.Server + ": " + e.Err.Error()
	}
	return "log in to " + e.Server + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *LoginFailedError) Unwrap() error { return e.Err }

// TokenNotStoredError is LoginServer's error when the login worked but
// its token could not be stored: this process was logged in, the next one
// will ask again.
type TokenNotStoredError struct {
	Server string
	// Err is why, when the token store said; nil when only the log does.
	Err error
}

func (e *TokenNotStoredError) Error() string {
	msg := "logged in to " + e.Server + ", but the token could not be stored, so the next otter process will ask again"
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns why the token could not be stored, if known.
func (e *TokenNotStoredError) Unwrap() error { return e.Err }
