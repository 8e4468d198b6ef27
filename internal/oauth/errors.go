// Package oauth is otter's side of MCP authorization: token storage, the
// browser and loopback-callback steps, and the prompts that the go-sdk's
// auth package leaves to the host, and the flow of a re-login that
// replaces a stored token (BeginLogin).
//
// It may import ask, config and filelock; never the MCP client manager, the agent or
// a front end.
package oauth

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/otter-sh/otter/internal/config"
)

// ErrLoginRequired is returned (wrapped) when a server needs the person to
// log in and otter may not start a login on its own (e.g. at startup).
// The MCP manager shows such a server as needs-auth.
var ErrLoginRequired = errors.New("login required")

// LoginRequiredError is the error, wrapping ErrLoginRequired, of a server
// that needs a login otter may not start here. It says why and which
// command logs in.
type LoginRequiredError struct {
	Server  string // the server's name, or its URL for an ad hoc server
	Reason  string // why a login is needed, for a person
	Command string // the command that logs in, e.g. "otter mcp login github"
	Where   string // where to run Command, e.g. " in a terminal"; may be empty
}

func (e *LoginRequiredError) Error() string {
	return fmt.Sprintf("%s: %s; run `%s`%s", e.Server, e.Reason, e.Command, e.Where)
}

// Unwrap returns ErrLoginRequired.
func (e *LoginRequiredError) Unwrap() error { return ErrLoginRequired }

// LoginCommand returns the command that logs in to srv: `otter mcp login`
// with the server's name, or with its URL for an ad hoc server (one given
// by --url or --sse, which has no name `otter mcp login` could look up).
// For an ad hoc server the command repeats the --oauth-* flags the server
// was given, since nothing else remembers them; a client secret is shown
// as `--oauth-client-secret …`, never as itself.
func LoginCommand(srv config.Server) string {
	cmd := "otter mcp login " + shellQuote(nameOf(srv))
	if !isAdhoc(srv) || srv.OAuth == nil {
		return cmd
	}
	o := srv.OAuth
	var b strings.Builder
	b.WriteString(cmd)
	flag := func(name, value string) {
		if value != "" {
			b.WriteString(" --" + name + " " + shellQuote(value))
		}
	}
	if o.Grant != "" && o.Grant != config.GrantAuthorizationCode {
		flag("oauth-grant", o.Grant)
	}
	flag("oauth-client-id", o.ClientID)
	if o.ClientSecret != "" {
		b.WriteString(" --oauth-client-secret …")
	}
	flag("oauth-private-key-file", o.PrivateKeyFile)
	flag("oauth-signing-alg", o.SigningAlg)
	flag("oauth-client-metadata-url", o.ClientMetadataURL)
	for _, s := range o.Scopes {
		flag("oauth-scope", s)
	}
	if o.CallbackPort != 0 {
		flag("oauth-callback-port", strconv.Itoa(o.CallbackPort))
	}
	return b.String()
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

// shellQuote quotes s for a POSIX shell when it holds anything but
// characters that are safe unquoted.
func shellQuote(s string) string {
	safe := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:@%+=,", r))
	}) < 0
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
