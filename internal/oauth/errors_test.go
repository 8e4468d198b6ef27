package oauth

import (
	"fmt"
	"testing"

	"github.com/otter-sh/otter/internal/config"
)

// A login to an ad hoc server must be given its OAuth settings again (the
// front end words them as flags); the error carries them, but no secret:
// only that a client secret was given. A configured server's settings live
// in its config, so it carries none.
func TestAdhocSettingsKeepNoSecret(t *testing.T) {
	adhoc := config.Server{Name: "127.0.0.1", URL: "http://127.0.0.1:8080/mcp", Scope: config.ScopeFlag, OAuth: &config.OAuth{
		ClientID: "otter cli", ClientSecret: "s3cret", PrivateKeyPEM: "-----BEGIN KEY-----", Scopes: []string{"read", "repo:write"},
		ClientMetadataURL: "https://example.com/client.json", CallbackPort: 8765}}
	le := loginRequired(adhoc, "no token is stored")
	if le.Server != adhoc.URL || le.Adhoc == nil {
		t.Fatalf("ad hoc server: %+v; want it named by URL, with its settings", le)
	}
	want := AdhocOAuth{ClientID: "otter cli", ClientSecretGiven: true, ClientMetadataURL: "https://example.com/client.json",
		Scopes: []string{"read", "repo:write"}, CallbackPort: 8765}
	if fmt.Sprintf("%+v", *le.Adhoc) != fmt.Sprintf("%+v", want) {
		t.Errorf("settings carried: %+v\nwant %+v", *le.Adhoc, want)
	}
	if got := le.Error(); got != adhoc.URL+": no token is stored" {
		t.Errorf("Error() = %q", got)
	}

	for _, srv := range []config.Server{
		{Name: "gh", URL: "https://h/mcp", Scope: config.ScopeUser, File: "/c.toml", OAuth: &config.OAuth{ClientID: "x", ClientSecret: "y"}},
		{Name: "ci", URL: "https://x/mcp", Scope: config.ScopeFlag, File: "extra.toml"},
	} {
		if le := loginRequired(srv, "why"); le.Server != srv.Name || le.Adhoc != nil {
			t.Errorf("configured server %s: %+v; want it named by name, with no settings", srv.Name, le)
		}
	}
	if le := loginRequired(config.Server{Name: "h", URL: "https://h/mcp", Scope: config.ScopeFlag}, "why"); le.Adhoc == nil || le.Adhoc.ClientSecretGiven {
		t.Errorf("ad hoc server without OAuth flags: %+v; want empty settings that still mark it ad hoc", le)
	}
}
