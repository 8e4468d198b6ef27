package cli

import (
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth"
)

// The login advice at a shell for an ad hoc server repeats the --oauth-*
// flags it was given (`otter mcp login URL` takes the same ones), never
// the client secret itself; a configured server's command names only the
// server, quoted for a shell when it must be.
func TestLoginAdviceKeepsAdhocOAuthFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		srv  config.Server
		want string
	}{
		{config.Server{Name: "127.0.0.1", URL: "http://127.0.0.1:8080/mcp", Scope: config.ScopeFlag, OAuth: &config.OAuth{
			ClientID: "otter cli", ClientSecret: "s3cret", Scopes: []string{"read", "repo:write"},
			ClientMetadataURL: "https://example.com/client.json", CallbackPort: 8765}},
			"run `otter mcp login http://127.0.0.1:8080/mcp --oauth-client-id 'otter cli' --oauth-client-secret … " +
				"--oauth-client-metadata-url https://example.com/client.json --oauth-scope read --oauth-scope repo:write --oauth-callback-port 8765`"},
		{config.Server{Name: "h", URL: "https://h/mcp", Scope: config.ScopeFlag, OAuth: &config.OAuth{
			Grant: config.GrantClientCredentials, ClientID: "ci", PrivateKeyFile: "/k/ci.pem", SigningAlg: "ES256"}},
			"run `otter mcp login https://h/mcp --oauth-grant client_credentials --oauth-client-id ci --oauth-private-key-file /k/ci.pem --oauth-signing-alg ES256`"},
		{config.Server{Name: "h", URL: "https://h/mcp", Scope: config.ScopeFlag, OAuth: &config.OAuth{Grant: config.GrantAuthorizationCode}},
			"run `otter mcp login https://h/mcp`"},
		{config.Server{Name: "x", URL: "https://x/mcp?a=1&b=it's", Scope: config.ScopeFlag}, "run `otter mcp login 'https://x/mcp?a=1&b=it'\\''s'`"},
		// A configured server's settings live in its config: its name is enough.
		{config.Server{Name: "gh", URL: "https://h/mcp", Scope: config.ScopeUser, File: "/c.toml", OAuth: &config.OAuth{ClientID: "x", ClientSecret: "y"}},
			"run `otter mcp login gh`"},
		{config.Server{Name: "my server", URL: "https://x/mcp", Scope: config.ScopeProject, File: ".mcp.json"}, "run `otter mcp login 'my server'`"},
	} {
		name := tc.srv.Name
		if tc.srv.File == "" {
			name = tc.srv.URL
		}
		le := &oauth.LoginRequiredError{Server: name, Reason: "why", Adhoc: oauth.AdhocSettings(tc.srv)}
		got := LoginAdvice(le)
		if got != tc.want {
			t.Errorf("LoginAdvice(%s)\n got %s\nwant %s", tc.srv.URL, got, tc.want)
		}
		if strings.Contains(got, "s3cret") {
			t.Errorf("LoginAdvice shows the client secret: %s", got)
		}
	}
	le := &oauth.LoginRequiredError{Server: "remote", Reason: "no terminal", NeedsTerminal: true}
	if got, want := LoginAdvice(le), "run `otter mcp login remote` in a terminal"; got != want {
		t.Errorf("a login that needs a terminal: %q, want %q", got, want)
	}
}
