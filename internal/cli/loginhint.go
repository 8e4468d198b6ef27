package cli

import (
	"strconv"
	"strings"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth"
)

// LoginAdvice is what a person at a shell does about le: run `otter mcp
// login` for its server, in a terminal when otter could not ask for the
// login where it ran. The core's LoginRequiredError names no command; the
// TUI words its own advice (/mcp, l).
func LoginAdvice(le *oauth.LoginRequiredError) string {
	s := "run `" + loginCommand(le.Server, le.Adhoc) + "`"
	if le.NeedsTerminal {
		s += " in a terminal"
	}
	return s
}

// loginCommand is the command that logs in to target (a server's name, or
// an ad hoc server's URL, which has no name `otter mcp login` could look
// up). For an ad hoc server it repeats the --oauth-* flags the server was
// given, since nothing else remembers them; a client secret is shown as
// `--oauth-client-secret …`, never as itself (adhoc holds none).
func loginCommand(target string, adhoc *oauth.AdhocOAuth) string {
	var b strings.Builder
	b.WriteString("otter mcp login " + shellQuote(target))
	if adhoc == nil {
		return b.String()
	}
	flag := func(name, value string) {
		if value != "" {
			b.WriteString(" --" + name + " " + shellQuote(value))
		}
	}
	if adhoc.Grant != config.GrantAuthorizationCode {
		flag("oauth-grant", adhoc.Grant)
	}
	flag("oauth-client-id", adhoc.ClientID)
	if adhoc.ClientSecretGiven {
		b.WriteString(" --oauth-client-secret …")
	}
	flag("oauth-private-key-file", adhoc.PrivateKeyFile)
	flag("oauth-signing-alg", adhoc.SigningAlg)
	flag("oauth-client-metadata-url", adhoc.ClientMetadataURL)
	for _, s := range adhoc.Scopes {
		flag("oauth-scope", s)
	}
	if adhoc.CallbackPort != 0 {
		flag("oauth-callback-port", strconv.Itoa(adhoc.CallbackPort))
	}
	return b.String()
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
