// Package oauth is otter's side of MCP authorization: token storage, the
// browser and loopback-callback steps, and the prompts that the go-sdk's
// auth package leaves to the host, and the flow of a re-login that
// replaces a stored token (BeginLogin).
//
// It imports ask, config, filelock and termtext of otter's packages; never
// the MCP client manager, the agent or a front end.
package oauth

import (
	"errors"
	"slices"

	"github.com/otter-sh/otter/internal/config"
)

// ErrLoginRequired is returned (wrapped) when a server needs the person to
// log in and otter may not start a login on its own (e.g. at startup).
// The MCP manager shows such a server as needs-auth.
var ErrLoginRequired = errors.New("login required")

// LoginRequiredError is the error, wrapping ErrLoginRequired, of a server
// that needs a login otter may not start here. It says which server and
// why; each front end words how to log in (a command at a shell, a key in
// the TUI), so the core names no command line.
type LoginRequiredError struct {
	Server string // the server's name, or its URL for an ad hoc server
	Reason string // why a login is needed, for a person
	// Adhoc is set for an ad hoc server (one given on the command line, in
	// no config file): the OAuth settings a login must be given again,
	// since nothing else remembers them. Nil for a configured server, whose
	// name is enough.
	Adhoc *AdhocOAuth
	// NeedsTerminal: otter could not ask for the login where it runs (no
	// terminal, no $BROWSER), so it must be done from a terminal.
	NeedsTerminal bool
}

func (e *LoginRequiredError) Error() string {
	return e.Server + ": " + e.Reason
}

// Unwrap returns ErrLoginRequired.
func (e *LoginRequiredError) Unwrap() error { return ErrLoginRequired }

// AdhocOAuth are the OAuth settings of an ad hoc server that a later login
// needs again. It has no field for a secret: a client secret given is only
// noted (ClientSecretGiven), so that a hint can ask for it again without
// showing it; a private key travels by its file name only.
type AdhocOAuth struct {
	Grant             string // empty or config.GrantAuthorizationCode: the default
	ClientID          string
	ClientSecretGiven bool
	PrivateKeyFile    string
	SigningAlg        string
	ClientMetadataURL string
	Scopes            []string
	CallbackPort      int
}

// AdhocSettings returns what a login to srv must be given again if srv is
// an ad hoc server, and nil for a configured one.
func AdhocSettings(srv config.Server) *AdhocOAuth {
	if !isAdhoc(srv) {
		return nil
	}
	a := &AdhocOAuth{}
	if o := srv.OAuth; o != nil {
		*a = AdhocOAuth{Grant: o.Grant, ClientID: o.ClientID, ClientSecretGiven: o.ClientSecret != "",
			PrivateKeyFile: o.PrivateKeyFile, SigningAlg: o.SigningAlg, ClientMetadataURL: o.ClientMetadataURL,
			Scopes: slices.Clone(o.Scopes), CallbackPort: o.CallbackPort}
	}
	return a
}

// loginRequired is the error of a login to srv that otter may not start.
func loginRequired(srv config.Server, why string) *LoginRequiredError {
	return &LoginRequiredError{Server: nameOf(srv), Reason: why, Adhoc: AdhocSettings(srv)}
}

// isAdhoc reports whether srv is an ad hoc server: one given on the
// command line (--url, --sse), in no config file.
func isAdhoc(srv config.Server) bool {
	return srv.Scope == config.ScopeFlag && srv.File == "" && srv.URL != ""
}

// nameOf is how messages name srv: its name, or its URL for an ad hoc
// server.
func nameOf(srv config.Server) string {
	if srv.Name == "" || isAdhoc(srv) {
		return srv.URL
	}
	return srv.Name
}
