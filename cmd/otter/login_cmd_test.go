package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth"
	"github.com/otter-sh/otter/internal/oauth/oauthtest"
)

// TestLoginBrowserHelper is the $BROWSER stand-in of the login tests.
func TestLoginBrowserHelper(t *testing.T) { oauthtest.RunBrowser() }

// runOtter runs the otter command line in-process with no terminal.
func runOtter(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return otterWithStdin(t, strings.NewReader(""), args...)
}

// TestMCPLogin: `otter mcp login NAME` logs in through the browser and
// stores the token where a later otter process finds it; `otter mcp
// logout NAME` removes it.
func TestMCPLogin(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	as := oauthtest.NewAuthServer(t)
	endpoint := oauthtest.NewProtectedMCP(t, as)
	cfgFile := filepath.Join(home, "otter.toml")
	cfg := "[[mcp.servers]]\nname = \"remote\"\nurl = \"" + endpoint + "\"\ntransport = \"http\"\n"
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()

	// No terminal and no $BROWSER: a clear failure naming the command.
	t.Setenv("BROWSER", "")
	_, _, err := runOtter(t, "--cwd", work, "--config", cfgFile, "mcp", "login", "remote")
	if !errors.Is(err, oauth.ErrLoginRequired) || !strings.HasSuffix(explained(err), "run `otter mcp login remote` in a terminal") {
		t.Fatalf("login without terminal or browser: %v", err)
	}

	t.Setenv("BROWSER", oauthtest.BrowserScript(t, "TestLoginBrowserHelper"))
	out, stderr, err := runOtter(t, "--cwd", work, "--config", cfgFile, "mcp", "login", "remote")
	if err != nil {
		t.Fatalf("otter mcp login remote: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(out, "Logged in to remote.") || !strings.Contains(out, "expires at") {
		t.Errorf("login output = %q", out)
	}
	if !strings.Contains(stderr, as.URL+"/authorize?") {
		t.Errorf("the authorization URL was not shown on stderr: %q", stderr)
	}
	srv := config.Server{Name: "remote", URL: endpoint}
	paths := config.DefaultPaths()
	if !strings.HasPrefix(paths.DataDir, filepath.Join(home, "data")) {
		t.Fatalf("DataDir %s is not under $XDG_DATA_HOME", paths.DataDir)
	}
	// A later otter process connects without a login.
	later := oauth.New(oauth.Options{Paths: paths})
	if got, err := oauthtest.Connect(t.Context(), endpoint, later.Handler(srv, false)); err != nil || got != "echo: hi" {
		t.Fatalf("a later process with the stored token: %q, %v", got, err)
	}

	out, _, err = runOtter(t, "--cwd", work, "--config", cfgFile, "mcp", "login", "remote")
	if err != nil || !strings.HasPrefix(out, "Already logged in to remote.") || !strings.Contains(out, "otter mcp login --force remote") {
		t.Errorf("second login: %q, %v", out, err)
	}
	if c := as.Counts(); c.Authorizes != 1 {
		t.Errorf("authorizations = %d, want 1", c.Authorizes)
	}

	// --force logs in again (for more scopes, say); a forced login that
	// cannot complete keeps the token that worked.
	out, stderr, err = runOtter(t, "--cwd", work, "--config", cfgFile, "mcp", "login", "--force", "remote")
	if err != nil || !strings.HasPrefix(out, "Logged in to remote.") {
		t.Errorf("forced login: %q, %v\n%s", out, err, stderr)
	}
	if c := as.Counts(); c.Authorizes != 2 {
		t.Errorf("authorizations after --force = %d, want 2", c.Authorizes)
	}
	t.Setenv("BROWSER", "")
	_, stderr, err = runOtter(t, "--cwd", work, "--config", cfgFile, "mcp", "login", "--force", "remote")
	if err == nil || !strings.Contains(stderr, "previous token of remote is kept") {
		t.Errorf("forced login without a browser: %v\n%s", err, stderr)
	}
	if got, err := oauthtest.Connect(t.Context(), endpoint, later.Handler(srv, false)); err != nil || got != "echo: hi" {
		t.Fatalf("the token after a failed forced login: %q, %v", got, err)
	}
	t.Setenv("BROWSER", oauthtest.BrowserScript(t, "TestLoginBrowserHelper"))

	out, _, err = runOtter(t, "--cwd", work, "--config", cfgFile, "mcp", "logout", "remote")
	if err != nil || !strings.HasPrefix(out, "Logged out of remote.") {
		t.Fatalf("logout: %q, %v", out, err)
	}
	if later.LoggedIn(srv) {
		t.Fatal("the token is still stored after logout")
	}

	// OTTER_TOKEN_STORE=keychain with no keychain answering: the browser
	// login works, but nothing can be stored, and login says so (exit 2).
	if runtime.GOOS == "linux" {
		t.Setenv("OTTER_TOKEN_STORE", "keychain")
		t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(home, "no-such-bus"))
		out, _, err = runOtter(t, "--cwd", work, "--config", cfgFile, "mcp", "login", "remote")
		wantExit(t, err, 2)
		if !strings.Contains(err.Error(), "could not be stored") || !strings.Contains(err.Error(), "OTTER_TOKEN_STORE") || strings.Contains(out, "Logged in") {
			t.Errorf("login with an unusable keychain: %q, %v", out, err)
		}
		t.Setenv("OTTER_TOKEN_STORE", "")
	}

	_, _, err = runOtter(t, "--cwd", work, "--config", cfgFile, "mcp", "login", "nosuch")
	if err == nil || !strings.Contains(err.Error(), `no MCP server named "nosuch"`) || !strings.Contains(err.Error(), "remote") {
		t.Errorf("login to an unknown server: %v", err)
	}
}

// TestMCPLoginStepUp: a server starts refusing a tool call for lack of a
// scope (403 insufficient_scope). The headless call fails naming `otter mcp
// login prot`, and that login - with a token stored - logs in again for the
// scope instead of saying "Already logged in"; the call then works.
func TestMCPLoginStepUp(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		t.Setenv(v, filepath.Join(home, strings.ToLower(v)))
	}
	as := oauthtest.NewAuthServer(t)
	p := oauthtest.NewProtectedMCPServer(t, as)
	cfgFile := filepath.Join(home, "otter.toml")
	cfg := "[[mcp.servers]]\nname = \"prot\"\nurl = \"" + p.URL + "\"\ntransport = \"http\"\n"
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	otter := func(args ...string) (string, string, error) {
		return runOtter(t, append([]string{"--cwd", work, "--config", cfgFile}, args...)...)
	}
	browser := oauthtest.BrowserScript(t, "TestLoginBrowserHelper")
	t.Setenv("BROWSER", browser)
	if out, stderr, err := otter("mcp", "login", "prot"); err != nil || !strings.HasPrefix(out, "Logged in to prot.") {
		t.Fatalf("first login: %q, %v\n%s", out, err, stderr)
	}

	p.RequireScopes("tools", "admin")
	t.Setenv("BROWSER", "")
	_, stderr, err := otter("mcp", "call", "prot", "echo", `{"text":"hi"}`)
	if err == nil || !strings.Contains(explained(err)+stderr, "otter mcp login prot") {
		t.Fatalf("headless call refused for a scope: %v\n%s; want the login command named", err, stderr)
	}

	t.Setenv("BROWSER", browser)
	out, stderr, err := otter("mcp", "login", "prot")
	if err != nil || !strings.HasPrefix(out, "Logged in to prot.") || !strings.Contains(stderr, "does not grant admin") {
		t.Fatalf("login after the 403: %q, %v\n%s; want a new login for the admin scope", out, err, stderr)
	}
	if c := as.Counts(); c.Authorizes != 2 {
		t.Errorf("authorizations = %d, want 2", c.Authorizes)
	}
	if out, stderr, err := otter("mcp", "call", "prot", "echo", `{"text":"hi"}`); err != nil || !strings.Contains(out, "echo: hi") {
		t.Fatalf("call after the step-up login: %q, %v\n%s", out, err, stderr)
	}
	if out, _, err := otter("mcp", "login", "prot"); err != nil || !strings.HasPrefix(out, "Already logged in to prot.") {
		t.Errorf("login with a sufficient token: %q, %v", out, err)
	}
}

// TestMCPClientCredentials: a machine client needs no browser and no
// terminal: `otter mcp call` with ad hoc --oauth-grant client_credentials
// flags, and a configured server with grant = "client_credentials", where
// `otter mcp login` only confirms that the credentials work.
func TestMCPClientCredentials(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		t.Setenv(v, filepath.Join(home, strings.ToLower(v)))
	}
	t.Setenv("BROWSER", "")
	as := oauthtest.NewAuthServer(t)
	as.TokenAuthMethods = []string{"client_secret_basic"}
	as.AddSecretClient("otter-ci", "ci-secret")
	endpoint := oauthtest.NewProtectedMCP(t, as)
	work := t.TempDir()

	out, stderr, err := runOtter(t, "--cwd", work, "mcp", "call", "--url", endpoint,
		"--oauth-grant", "client_credentials", "--oauth-client-id", "otter-ci", "--oauth-client-secret", "ci-secret", "echo", `{"text":"hi"}`)
	if err != nil || !strings.Contains(out, "echo: hi") {
		t.Fatalf("otter mcp call with client credentials: %q, %v\n%s", out, err, stderr)
	}

	cfgFile := filepath.Join(home, "otter.toml")
	cfg := "[[mcp.servers]]\nname = \"ci\"\nurl = \"" + endpoint + "\"\n[mcp.servers.oauth]\ngrant = \"client_credentials\"\nclient_id = \"otter-ci\"\nclient_secret = \"${CI_SECRET}\"\n"
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CI_SECRET", "ci-secret")
	out, stderr, err = runOtter(t, "--cwd", work, "--config", cfgFile, "mcp", "login", "ci")
	if err != nil || !strings.Contains(out, "client credentials") || !strings.Contains(out, "No login is needed") {
		t.Fatalf("otter mcp login ci: %q, %v\n%s", out, err, stderr)
	}
	if c := as.Counts(); c.ClientCredentials != 2 || c.Authorizes != 0 {
		t.Errorf("authorization server saw %+v, want 2 client_credentials grants and no browser login", c)
	}

	t.Setenv("CI_SECRET", "wrong")
	_, _, err = runOtter(t, "--cwd", work, "--config", cfgFile, "mcp", "login", "ci")
	if err == nil || !strings.Contains(err.Error(), "invalid_client") || strings.Contains(err.Error(), "otter mcp login ci") {
		t.Errorf("login with a wrong secret: %v, want invalid_client and no advice to log in", err)
	}
}

// TestClientCredentialsFlags: the flags for a machine client land in the
// ad hoc server's OAuth settings, and combinations that cannot work are
// refused before connecting.
func TestClientCredentialsFlags(t *testing.T) {
	t.Parallel()
	srv, err := adhocFromFlags(t, "--url", "http://127.0.0.1:8080/mcp", "--oauth-grant", "client_credentials",
		"--oauth-client-id", "cid", "--oauth-private-key-file", "/keys/otter.pem", "--oauth-signing-alg", "ES256")
	if err != nil {
		t.Fatal(err)
	}
	if o := srv.OAuth; o == nil || !o.IsClientCredentials() || o.ClientID != "cid" || o.PrivateKeyFile != "/keys/otter.pem" || o.SigningAlg != "ES256" || o.ClientSecret != "" {
		t.Errorf("OAuth = %+v", srv.OAuth)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--oauth-grant", "client-credentials"}, `--oauth-grant "client-credentials": use "client_credentials"`},
		{[]string{"--oauth-private-key-file", "k.pem"}, "need --oauth-grant client_credentials"},
		{[]string{"--oauth-grant", "client_credentials", "--oauth-client-id", "c", "--oauth-client-secret", "s", "--oauth-private-key-file", "k.pem"}, "not both"},
		{[]string{"--oauth-client-secret", "s"}, "--oauth-client-secret needs --oauth-client-id"},
	} {
		if _, err := adhocFromFlags(t, append([]string{"--url", "http://127.0.0.1:8080/mcp"}, tc.args...)...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}

// `otter mcp login URL` reaches a legacy SSE server the way every other
// connection does: streamable HTTP refused, then SSE. A server without
// OAuth asks for no login, and nothing is stored; a server that answers
// neither transport is an error naming both.
func TestMCPLoginOverSSE(t *testing.T) {
	configTestHome(t)
	s := sdk.NewServer(&sdk.Implementation{Name: "legacy", Version: "1"}, nil)
	ts := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(ts.Close)
	out, errOut, err := runOtter(t, "--cwd", t.TempDir(), "mcp", "login", ts.URL)
	if err != nil || !strings.Contains(out, "did not ask for a login; nothing was stored") {
		t.Errorf("login to an SSE server: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}

	gone := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(gone.Close)
	_, _, err = runOtter(t, "--cwd", t.TempDir(), "mcp", "login", gone.URL)
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), "SSE fallback failed too") {
		t.Errorf("login to a server that answers 404: err = %v, want both transports named", err)
	}
}
