package oauth

import (
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/config"
)

// The login advice for an ad hoc server repeats the --oauth-* flags it was
// given (`otter mcp login URL` takes the same ones), never the client
// secret itself; a configured server's command names only the server.
func TestLoginCommandKeepsAdhocOAuthFlags(t *testing.T) {
	for _, tc := range []struct {
		srv  config.Server
		want string
	}{
		{config.Server{Name: "127.0.0.1", URL: "http://127.0.0.1:8080/mcp", Scope: config.ScopeFlag, OAuth: &config.OAuth{
			ClientID: "otter cli", ClientSecret: "s3cret", Scopes: []string{"read", "repo:write"},
			ClientMetadataURL: "https://example.com/client.json", CallbackPort: 8765}},
			"otter mcp login http://127.0.0.1:8080/mcp --oauth-client-id 'otter cli' --oauth-client-secret … " +
				"--oauth-client-metadata-url https://example.com/client.json --oauth-scope read --oauth-scope repo:write --oauth-callback-port 8765"},
		{config.Server{Name: "h", URL: "https://h/mcp", Scope: config.ScopeFlag, OAuth: &config.OAuth{
			Grant: config.GrantClientCredentials, ClientID: "ci", PrivateKeyFile: "/k/ci.pem", SigningAlg: "ES256"}},
			"otter mcp login https://h/mcp --oauth-grant client_credentials --oauth-client-id ci --oauth-private-key-file /k/ci.pem --oauth-signing-alg ES256"},
		{config.Server{Name: "h", URL: "https://h/mcp", Scope: config.ScopeFlag}, "otter mcp login https://h/mcp"},
		// A configured server's settings live in its config: its name is enough.
		{config.Server{Name: "gh", URL: "https://h/mcp", Scope: config.ScopeUser, File: "/c.toml", OAuth: &config.OAuth{ClientID: "x", ClientSecret: "y"}},
			"otter mcp login gh"},
	} {
		got := LoginCommand(tc.srv)
		if got != tc.want {
			t.Errorf("LoginCommand(%s)\n got %s\nwant %s", tc.srv.URL, got, tc.want)
		}
		if strings.Contains(got, "s3cret") {
			t.Errorf("LoginCommand shows the client secret: %s", got)
		}
	}
}
