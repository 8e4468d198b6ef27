package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/termtext"
)

// Options configure an Authorizer.
type Options struct {
	// Paths locate the token store: Paths.DataDir/tokens.
	Paths config.Paths
	// Prompter asks the person how to log in. Nil means a TerminalPrompter
	// on stdin and stderr.
	Prompter ask.LoginPrompter
	// OpenBrowser opens a URL in a browser. Nil means OpenBrowser.
	OpenBrowser func(url string) error
	// Logger receives diagnostics (never tokens). Nil means slog.Default().
	Logger *slog.Logger
	// HTTPClient is used for discovery, registration and token requests.
	// Nil means a client with a 30s timeout.
	HTTPClient *http.Client
}

// Authorizer gives otter's MCP client OAuth handlers for remote servers. It
// implements the MCP manager's Authorizer interface: the go-sdk's auth
// package runs the protocol (metadata discovery, client registration, PKCE,
// scopes, step-up), and the Authorizer supplies what the SDK leaves to the
// host: the loopback redirect, the browser, the person's consent, and a
// token store that survives restarts and is shared safely between otter
// processes.
type Authorizer struct {
	store       *store
	prompter    ask.LoginPrompter
	openBrowser func(string) error
	logger      *slog.Logger
	client      *http.Client
	saveErrs    sync.Map // server URL → why the last token from a login could not be stored
}

// New returns an Authorizer.
func New(opts Options) *Authorizer {
	a := &Authorizer{
		prompter:    opts.Prompter,
		openBrowser: opts.OpenBrowser,
		logger:      opts.Logger,
		client:      opts.HTTPClient,
	}
	if a.logger == nil {
		a.logger = slog.Default()
	}
	if a.prompter == nil {
		// The login URL comes from the server's metadata: what reaches
		// the terminal is cleaned of escape sequences, as everything
		// otter writes there that came from outside.
		a.prompter = NewTerminalPrompter(os.Stdin, termtext.NewWriter(os.Stderr))
	}
	if a.openBrowser == nil {
		a.openBrowser = OpenBrowser
	}
	if a.client == nil {
		a.client = &http.Client{Timeout: 30 * time.Second}
	}
	paths := opts.Paths
	if paths.DataDir == "" {
		paths = config.DefaultPaths()
	}
	a.store = newStore(filepath.Join(paths.DataDir, "tokens"), a.logger)
	return a
}

// Handler returns the OAuth handler for a remote server, or nil for a stdio
// server or one whose configured headers already carry an Authorization
// header. With interactive false the handler never starts a login: its
// Authorize returns an error wrapping ErrLoginRequired when the server
// needs one and no stored token can be refreshed.
//
// A server whose [mcp.servers.oauth] sets grant = "client_credentials"
// gets a handler that obtains tokens with otter's own client credentials
// (a secret, or a private key for private_key_jwt): it needs no person,
// so interactive makes no difference and it never reports
// ErrLoginRequired. Such tokens are fetched per process, not stored.
func (a *Authorizer) Handler(srv config.Server, interactive bool) auth.OAuthHandler {
	if srv.URL == "" || srv.Transport == config.TransportStdio {
		return nil
	}
	for k := range srv.Headers {
		if strings.EqualFold(k, "Authorization") {
			return nil
		}
	}
	if srv.OAuth.IsClientCredentials() {
		return &ccHandler{a: a, srv: srv}
	}
	h := &handler{a: a, srv: srv, interactive: interactive}
	h.ts = &tokenSource{store: a.store, serverURL: srv.URL, client: a.client, logger: a.logger}
	h.regs = &registrationCache{base: transportOf(a.client), store: a.store, serverURL: srv.URL, logger: a.logger}
	return h
}

// TokenExpiry returns when the stored access token for srv expires; zero if
// none is stored (or it never expires). A stored refresh token usually lets
// otter renew an expired access token without a login.
func (a *Authorizer) TokenExpiry(srv config.Server) time.Time {
	if srv.URL == "" {
		return time.Time{}
	}
	rec, err := a.store.load(srv.URL)
	if err != nil || rec == nil || rec.Token == nil {
		return time.Time{}
	}
	return rec.Token.Expiry
}

// LoggedIn reports whether a token is stored for srv.
func (a *Authorizer) LoggedIn(srv config.Server) bool {
	ok, _ := a.Stored(srv)
	return ok
}

// Stored is LoggedIn that also says why the store could not be read (a
// keychain that $OTTER_TOKEN_STORE=keychain demands but that does not
// answer, a damaged file).
func (a *Authorizer) Stored(srv config.Server) (bool, error) {
	if srv.URL == "" {
		return false, nil
	}
	if err, ok := a.saveErrs.Load(srv.URL); ok {
		return false, err.(error)
	}
	rec, err := a.store.load(srv.URL)
	return err == nil && rec != nil && rec.Token != nil, err
}

// SetAside removes srv's stored token, keeping otter's client registration,
// so that the next interactive connection logs in afresh (to grant more
// scopes, or as another account). restore puts the old token back unless a
// new one was stored meanwhile: a forced login that fails loses nothing.
func (a *Authorizer) SetAside(srv config.Server) (restore func() error, err error) {
	var old *oauth2.Token
	var oldScope string
	err = a.store.update(srv.URL, func(rec *record) (bool, error) {
		old, oldScope = rec.Token, rec.Scope
		if old == nil {
			return false, nil
		}
		rec.Token, rec.Scope = nil, ""
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("set aside the token of %s: %w", nameOf(srv), err)
	}
	return func() error {
		if old == nil {
			return nil
		}
		return a.store.update(srv.URL, func(rec *record) (bool, error) {
			if rec.Token != nil {
				return false, nil // a new login stored its token
			}
			rec.Token, rec.Scope = old, oldScope
			return true, nil
		})
	}, nil
}

// Logout forgets everything stored for srv: its token and otter's client
// registration at its authorization server. It is not an error if nothing
// was stored.
func (a *Authorizer) Logout(srv config.Server) error {
	if srv.URL == "" {
		return nil
	}
	if _, err := a.store.remove(srv.URL); err != nil {
		return fmt.Errorf("log out of %s: %w", nameOf(srv), err)
	}
	return nil
}

// TokenFile returns the file that holds srv's token (whether or not it
// exists), for documentation and diagnostics.
func (a *Authorizer) TokenFile(srv config.Server) string { return a.store.path(srv.URL) }

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

// handler is the auth.OAuthHandler for one server connection.
type handler struct {
	a           *Authorizer
	srv         config.Server
	interactive bool
	ts          *tokenSource
	regs        *registrationCache

	loginMu sync.Mutex // one login at a time per handler

	mu        sync.Mutex
	sdk       *auth.AuthorizationCodeHandler // built on the first interactive Authorize
	port      int                            // loopback redirect port of sdk
	recovered string                         // an access token obtained by recover that the server then refused
	declined  error                          // the login was postponed or failed; not tried again by this handler
	resource  string                         // the resource parameter (RFC 8707) of the running login
}

var _ auth.OAuthHandler = (*handler)(nil)

func (h *handler) name() string { return nameOf(h.srv) }

// loginRequired is the error of a handler that needs a login it may not
// start.
func (h *handler) loginRequired(why string) error {
	return loginRequired(h.srv, why)
}

// TokenSource implements auth.OAuthHandler. It always returns the store's
// token source; its Token is nil while there is no usable token.
func (h *handler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return h.ts, nil
}

// Authorize implements auth.OAuthHandler. It is called when the server
// answered 401 or 403.
func (h *handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode == http.StatusForbidden && !insufficientScope(challenges) {
		// Not an authorization problem login could fix; the transport
		// retries once and reports the 403 (as the SDK's handler does).
		drain(resp)
		return nil
	}
	if resp.StatusCode == http.StatusUnauthorized {
		if sent := bearer(req); sent != "" && sent != h.recoveredToken() {
			ok, err := h.ts.recover(sent)
			if err != nil {
				h.a.logger.Warn("oauth: could not refresh a refused token", "server", h.name(), "err", err)
			}
			if ok {
				h.setRecovered(h.ts.current())
				drain(resp)
				return nil
			}
		}
	}
	if !h.interactive {
		drain(resp)
		why := "the server requires a login"
		if resp.StatusCode == http.StatusForbidden {
			why = "the server requires a login with more permissions (scopes)"
			if scopes := challengeScopes(challenges); len(scopes) > 0 {
				why = fmt.Sprintf("the server requires a login granting the scopes %q", strings.Join(scopes, " "))
				h.noteWantedScopes(scopes)
			}
		}
		return h.loginRequired(why)
	}
	h.loginMu.Lock()
	defer h.loginMu.Unlock()
	if err := h.declinedErr(); err != nil {
		// One connection attempt sends several requests (the SDK tries
		// server/discover, then initialize); ask once.
		drain(resp)
		return err
	}
	if cur := h.ts.current(); cur != "" && cur != bearer(req) && resp.StatusCode == http.StatusUnauthorized {
		// A login finished while this request waited: retry with its token.
		drain(resp)
		return nil
	}
	sdk, err := h.sdkHandler()
	if err != nil {
		drain(resp)
		return fmt.Errorf("log in to %s: %w", h.name(), err)
	}
	// A server that names no OAuth metadata in its challenge may want an
	// API key rather than a login; say so if the login then fails.
	advertised := strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata")
	if err := sdk.Authorize(ctx, req, resp); err != nil {
		if !advertised && !errors.Is(err, ErrLoginRequired) && ctx.Err() == nil {
			err = fmt.Errorf("%w (the server answered %d without OAuth metadata: if it takes an API key instead, send it as a header, e.g. Authorization: Bearer KEY in the server's headers)", err, resp.StatusCode)
		}
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_client" {
			h.regs.forget()
		}
		if prefix := "log in to " + h.name() + ": "; !errors.Is(err, ErrLoginRequired) && !strings.HasPrefix(err.Error(), prefix) {
			err = fmt.Errorf("%s%w", prefix, err) // fetchCode's errors say it already
		}
		// Postponed or failed, the answer stands for the rest of this
		// connection attempt: its next request must not start a second
		// login (and open a second browser window).
		h.mu.Lock()
		h.declined = err
		h.mu.Unlock()
		return err
	}
	return nil
}

func (h *handler) declinedErr() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.declined
}

func (h *handler) recoveredToken() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.recovered
}

func (h *handler) setRecovered(tok string) {
	h.mu.Lock()
	h.recovered = tok
	h.mu.Unlock()
}

// current returns the access token in memory, or "".
func (ts *tokenSource) current() string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.tok == nil {
		return ""
	}
	return ts.tok.AccessToken
}

// sdkHandler returns the go-sdk's authorization code handler for this
// server, building it on first use. Client identity follows the server's
// [mcp.servers.oauth]: a pre-registered client_id (and secret) if given;
// otherwise a client ID metadata document URL where the authorization
// server supports it, with dynamic client registration as the fallback.
func (h *handler) sdkHandler() (*auth.AuthorizationCodeHandler, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sdk != nil {
		return h.sdk, nil
	}
	port, err := h.choosePort()
	if err != nil {
		return nil, err
	}
	redirect := redirectURL(port)
	var o config.OAuth
	if h.srv.OAuth != nil {
		o = *h.srv.OAuth
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: h.fetchCode,
		RequestRefreshToken:      true,
		Client:                   &http.Client{Transport: h.regs, Timeout: h.a.client.Timeout, Jar: h.a.client.Jar},
		NewTokenSource:           h.newTokenSource,
	}
	if o.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: o.ClientID}
		if o.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
		}
	} else {
		if o.ClientMetadataURL != "" {
			cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
		}
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs:  []string{redirect},
				ClientName:    "otter",
				GrantTypes:    []string{"authorization_code", "refresh_token"},
				ResponseTypes: []string{"code"},
			},
		}
	}
	// The configured scopes, and those the server demanded of an earlier
	// session that could not log in (noteWantedScopes), are requested
	// besides those the server asks for now.
	cfg.ScopeFilter = func(discovered []string) []string {
		return union(union(discovered, o.Scopes), h.wantedScopes())
	}
	sdk, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("OAuth settings: %w", err)
	}
	h.sdk, h.port = sdk, port
	return sdk, nil
}

// choosePort picks the loopback redirect port: callback_port if configured;
// else the port of the last login if it is free (a registered redirect URI
// stays valid); else a free port.
func (h *handler) choosePort() (int, error) {
	if h.srv.OAuth != nil && h.srv.OAuth.CallbackPort != 0 {
		return h.srv.OAuth.CallbackPort, nil
	}
	if rec, _ := h.a.store.load(h.srv.URL); rec != nil && rec.RedirectURL != "" {
		if u, err := url.Parse(rec.RedirectURL); err == nil && u.Hostname() == "127.0.0.1" {
			var port int
			if _, err := fmt.Sscan(u.Port(), &port); err == nil && port > 0 && portFree(port) {
				return port, nil
			}
		}
	}
	port, err := freePort()
	if err != nil {
		return 0, fmt.Errorf("find a free port on 127.0.0.1 for the OAuth redirect: %w", err)
	}
	return port, nil
}

// newTokenSource is the SDK's hook after a successful code exchange: it
// stores the token with its client configuration and hands the SDK the
// store-backed token source.
func (h *handler) newTokenSource(_ context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	h.mu.Lock()
	resource := h.resource
	h.mu.Unlock()
	err := h.a.store.update(h.srv.URL, func(rec *record) (bool, error) {
		rec.Token = tok
		rec.Scope, _ = tok.Extra("scope").(string)
		rec.Client = clientInfoFrom(cfg)
		rec.Client.Resource = resource
		rec.RedirectURL = cfg.RedirectURL
		// Scopes the server demanded that this login did not get stay
		// noted: the next `otter mcp login` asks for them again.
		rec.WantScope = strings.Join(missingScopes(strings.Fields(rec.WantScope), grantedScopes(rec)), " ")
		return true, nil
	})
	if err != nil {
		h.a.saveErrs.Store(h.srv.URL, err)
		// The token still works for this process; the next one logs in again.
		h.a.logger.Error("oauth: could not store the token; otter will ask for a login next time",
			"server", h.name(), "file", h.a.store.path(h.srv.URL), "err", err)
	}
	if err == nil {
		h.a.saveErrs.Delete(h.srv.URL)
	}
	h.ts.set(tok)
	h.setRecovered("")
	return h.ts, nil
}

func insufficientScope(cs []oauthex.Challenge) bool {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// bearer returns the bearer token a request carried, or "".
func bearer(req *http.Request) string {
	if req == nil {
		return ""
	}
	scheme, tok, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
}
