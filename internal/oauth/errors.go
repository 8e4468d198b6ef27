// Package oauth is otter's side of MCP authorization: token storage, the
// browser and loopback-callback steps, and the prompts that the go-sdk's
// auth package leaves to the host.
package oauth

import (
	"errors"
	"fmt"
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
func LoginCommand(srv config.Server) string {
	return "otter mcp login " + shellQuote(nameOf(srv))
}

// nameOf is how messages name srv: its name, or its URL for an ad hoc
// server.
func nameOf(srv config.Server) string {
	if srv.Name == "" || (srv.Scope == config.ScopeFlag && srv.File == "" && srv.URL != "") {
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
