package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/otter-sh/otter/internal/oauth/oauthtest"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
)

// The test binary doubles as a browser stand-in and as a second otter
// process, selected by environment variables.
const (
	envBrowser       = "OTTER_OAUTH_TEST_BROWSER"        // "1": fetch the last argument, following redirects
	envBrowserRecord = "OTTER_OAUTH_TEST_BROWSER_RECORD" // file to write the arguments to
	envRefresher     = "OTTER_OAUTH_TEST_REFRESHER"      // "1": get a token for $..._URL from $..._DATA and print it
	envRefresherURL  = "OTTER_OAUTH_TEST_REFRESHER_URL"
	envRefresherData = "OTTER_OAUTH_TEST_REFRESHER_DATA"
)

func TestMain(m *testing.M) {
	switch {
	case os.Getenv(envBrowser) == "1":
		os.Exit(browserMain(os.Args[1:]))
	case os.Getenv(envRefresher) == "1":
		os.Exit(refresherMain())
	}
	os.Exit(m.Run())
}

// browserMain is the $BROWSER stand-in: it loads the URL and follows the
// redirects, as a browser does after the person approves.
func browserMain(args []string) int {
	if p := os.Getenv(envBrowserRecord); p != "" {
		os.WriteFile(p+".tmp", []byte(strings.Join(args, "\n")), 0o600)
		os.Rename(p+".tmp", p)
		return 0
	}
	if len(args) == 0 {
		return 2
	}
	resp, err := http.Get(args[len(args)-1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "browser:", err)
		return 1
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return 0
}

// refresherMain is a second otter process wanting a token for a server.
func refresherMain() int {
	a := New(Options{Paths: config.Paths{DataDir: os.Getenv(envRefresherData)}})
	h := a.Handler(config.Server{Name: "s", URL: os.Getenv(envRefresherURL)}, false)
	ts, _ := h.TokenSource(context.Background())
	tok, err := ts.Token()
	if err != nil || tok == nil {
		fmt.Fprintln(os.Stderr, "refresher: no token:", err)
		return 1
	}
	fmt.Print(tok.AccessToken)
	return 0
}

// browserEnv makes $BROWSER the stand-in.
func browserEnv(t *testing.T) {
	t.Helper()
	t.Setenv(envBrowser, "1")
	t.Setenv("BROWSER", os.Args[0])
}

// choose is a LoginPrompter that always gives the same answer and counts
// the prompts.
type choose struct {
	mu      sync.Mutex
	prompts []ask.Login
	reply   func(ask.Login) ask.LoginReply
}

func (c *choose) Login(_ context.Context, req ask.Login) (ask.LoginReply, error) {
	c.mu.Lock()
	c.prompts = append(c.prompts, req)
	c.mu.Unlock()
	return c.reply(req), nil
}

func (c *choose) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.prompts)
}

func openBrowserChoice(ask.Login) ask.LoginReply { return ask.LoginReply{Choice: ask.LoginOpenBrowser} }

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// fixture is a protected MCP server, its authorization server, a data
// directory, and $BROWSER set to the stand-in.
type fixture struct {
	ctx      context.Context
	as       *oauthtest.AuthServer
	endpoint string
	data     string
	srv      config.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	browserEnv(t)
	f := &fixture{ctx: testCtx(t), as: oauthtest.NewAuthServer(t), data: t.TempDir()}
	f.endpoint = oauthtest.NewProtectedMCP(t, f.as)
	f.srv = config.Server{Name: "remote", URL: f.endpoint, Transport: config.TransportHTTP}
	return f
}

// authorizer returns an Authorizer on the fixture's data directory; the
// prompter defaults to one that always opens the browser.
func (f *fixture) authorizer(opts Options) *Authorizer {
	opts.Paths = config.Paths{DataDir: f.data}
	if opts.Prompter == nil {
		opts.Prompter = &choose{reply: openBrowserChoice}
	}
	return New(opts)
}

// seed writes a stored token for serverURL as a previous login would have.
func seed(t *testing.T, data string, serverURL string, as *oauthtest.AuthServer, tok *oauth2.Token) {
	t.Helper()
	st := newStore(filepath.Join(data, "tokens"), slog.Default())
	err := st.update(serverURL, func(rec *record) (bool, error) {
		rec.Token = tok
		rec.Client = &clientInfo{ClientID: "c", TokenURL: as.URL + "/token", AuthStyle: oauth2.AuthStyleInParams}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func storedRecord(t *testing.T, data, serverURL string) *record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, "tokens", key(serverURL)+".json"))
	if err != nil {
		t.Fatalf("read token file: %v", err)
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("token file: %v", err)
	}
	return &rec
}

// TestLoginFlow is the whole story: a server needing OAuth is needs-auth
// at startup without any browser; a login through $BROWSER succeeds; a
// later process uses the stored token without logging in; an expired
// access token is refreshed; after the grant is revoked, a new login
// reuses otter's client registration.
func TestLoginFlow(t *testing.T) {
	f := newFixture(t)
	ctx, as, endpoint, data, srv := f.ctx, f.as, f.endpoint, f.data, f.srv

	// Startup: non-interactive, no token → needs login, nothing opened.
	prompter := &choose{reply: openBrowserChoice}
	// Every Authorizer logs at debug level into logs: no token may appear.
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a1 := f.authorizer(Options{Prompter: prompter, Logger: logger})
	_, err := oauthtest.Connect(ctx, endpoint, a1.Handler(srv, false))
	if !errors.Is(err, ErrLoginRequired) {
		t.Fatalf("connect without a token: got %v, want an error wrapping ErrLoginRequired", err)
	}
	if le, ok := errors.AsType[*LoginRequiredError](err); !ok || le.Server != "remote" || le.Adhoc != nil {
		t.Errorf("error %q does not say that server remote (configured, logged in to by name) needs a login", err)
	}
	if c := as.Counts(); c.Authorizes != 0 || prompter.count() != 0 {
		t.Fatalf("a non-interactive connection started a login: %+v, %d prompts", c, prompter.count())
	}

	// Login: interactive, the browser stand-in approves.
	got, err := oauthtest.Connect(ctx, endpoint, a1.Handler(srv, true))
	if err != nil {
		t.Fatalf("interactive login: %v", err)
	}
	if got != "echo: hi" {
		t.Fatalf("echo after login = %q", got)
	}
	if prompter.count() != 1 || !strings.HasPrefix(prompter.prompts[0].AuthURL, as.URL+"/authorize?") || prompter.prompts[0].Server != "remote" {
		t.Fatalf("login prompts = %+v", prompter.prompts)
	}
	if as.LastResource() != endpoint {
		t.Errorf("authorization request resource = %q, want %q", as.LastResource(), endpoint)
	}
	if exp := a1.TokenExpiry(srv); time.Until(exp) < 30*time.Minute {
		t.Errorf("TokenExpiry after login = %v, want about an hour from now", exp)
	}

	// A later process: a new Authorizer, non-interactive, no prompt.
	later := &choose{reply: openBrowserChoice}
	a2 := f.authorizer(Options{Prompter: later, Logger: logger})
	if got, err := oauthtest.Connect(ctx, endpoint, a2.Handler(srv, false)); err != nil || got != "echo: hi" {
		t.Fatalf("later process with the stored token: %q, %v", got, err)
	}
	if later.count() != 0 || as.Counts().Authorizes != 1 {
		t.Fatalf("the later process logged in again: %d prompts, %+v", later.count(), as.Counts())
	}

	// The server stops accepting the access token: otter refreshes it
	// (no login) and the refreshed token is stored.
	as.ExpireAccess()
	a3 := f.authorizer(Options{Prompter: later, Logger: logger})
	if got, err := oauthtest.Connect(ctx, endpoint, a3.Handler(srv, false)); err != nil || got != "echo: hi" {
		t.Fatalf("after the server expired the access token: %q, %v", got, err)
	}
	if c := as.Counts(); c.Refreshes != 1 || c.Authorizes != 1 {
		t.Fatalf("want one refresh and no new login, got %+v", c)
	}
	if got := as.LastRefreshResource(); got != endpoint {
		t.Errorf("refresh request resource = %q, want %q (the login's, so the token stays bound to the server)", got, endpoint)
	}
	if rt := storedRecord(t, data, endpoint).Token.RefreshToken; !as.RefreshValid(rt) {
		t.Fatal("the stored refresh token is not the rotated one")
	}

	// Access revoked: non-interactive is needs-auth again; a new login
	// reuses the stored client registration.
	as.RevokeAll()
	a4 := f.authorizer(Options{Prompter: prompter, Logger: logger})
	if _, err := oauthtest.Connect(ctx, endpoint, a4.Handler(srv, false)); !errors.Is(err, ErrLoginRequired) {
		t.Fatalf("after revocation: got %v, want ErrLoginRequired", err)
	}
	if got, err := oauthtest.Connect(ctx, endpoint, a4.Handler(srv, true)); err != nil || got != "echo: hi" {
		t.Fatalf("login after revocation: %q, %v", got, err)
	}
	if c := as.Counts(); c.Registrations != 1 || c.Authorizes != 2 {
		t.Fatalf("want the second login to reuse the registration: %+v", c)
	}
	tok := storedRecord(t, data, endpoint).Token
	if logs.String() == "" || strings.Contains(logs.String(), tok.AccessToken) || strings.Contains(logs.String(), tok.RefreshToken) {
		t.Errorf("the log is empty or shows a token:\n%s", logs.String())
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestLoginPasteRedirect: over SSH the browser cannot reach otter's
// loopback address; the person pastes the address it ended on.
func TestLoginPasteRedirect(t *testing.T) {
	f := newFixture(t)
	t.Setenv("BROWSER", "")
	ctx, endpoint := f.ctx, f.endpoint
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var calls int
	prompter := &choose{reply: func(req ask.Login) ask.LoginReply {
		calls++
		if !req.CanPasteRedirect {
			t.Error("the prompt does not offer pasting the redirect URL")
		}
		if calls == 1 {
			// A wrong paste is rejected and the person is asked again.
			return ask.LoginReply{Choice: ask.LoginPasteRedirect, RedirectURL: "http://127.0.0.1:1/callback?code=x&state=forged"}
		}
		// The remote browser: approve, and read the address it ends on
		// without loading it.
		resp, err := noRedirect.Get(req.AuthURL)
		if err != nil {
			t.Error(err)
			return ask.LoginReply{Choice: ask.LoginLater}
		}
		resp.Body.Close()
		return ask.LoginReply{Choice: ask.LoginPasteRedirect, RedirectURL: resp.Header.Get("Location")}
	}}
	a := f.authorizer(Options{Prompter: prompter,
		OpenBrowser: func(string) error { t.Error("a browser was opened"); return nil }})
	if got, err := oauthtest.Connect(ctx, endpoint, a.Handler(f.srv, true)); err != nil || got != "echo: hi" {
		t.Fatalf("login by pasting the redirect: %q, %v", got, err)
	}
	if prompter.count() != 2 {
		t.Errorf("prompts = %d, want 2 (the forged paste is refused)", prompter.count())
	}
}

// TestLoginLater: the person postpones; the server stays needs-auth.
func TestLoginLater(t *testing.T) {
	f := newFixture(t)
	prompter := &choose{reply: func(ask.Login) ask.LoginReply { return ask.LoginReply{Choice: ask.LoginLater} }}
	a := f.authorizer(Options{Prompter: prompter})
	srv := f.srv
	if _, err := oauthtest.Connect(f.ctx, f.endpoint, a.Handler(srv, true)); !errors.Is(err, ErrLoginRequired) {
		t.Fatalf("postponed login: got %v, want ErrLoginRequired", err)
	}
	if a.LoggedIn(srv) {
		t.Fatal("a postponed login stored a token")
	}
	if n := prompter.count(); n != 1 {
		t.Errorf("the person was asked %d times, want once", n)
	}
}

func TestTokenFilePermissions(t *testing.T) {
	f := newFixture(t)
	data := f.data
	// A token directory that exists with loose permissions is tightened.
	if err := os.MkdirAll(filepath.Join(data, "tokens"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := f.authorizer(Options{})
	srv := f.srv
	if _, err := oauthtest.Connect(f.ctx, f.endpoint, a.Handler(srv, true)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(a.TokenFile(srv))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode = %v, want 0600", fi.Mode().Perm())
	}
	di, err := os.Stat(filepath.Dir(a.TokenFile(srv)))
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Errorf("token directory mode = %v, want 0700", di.Mode().Perm())
	}
	// A token file someone made readable by others is restricted again.
	if err := os.Chmod(a.TokenFile(srv), 0o644); err != nil {
		t.Fatal(err)
	}
	if !a.LoggedIn(srv) {
		t.Fatal("the token is gone")
	}
	if fi, err := os.Stat(a.TokenFile(srv)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a loose token file was not restricted: %v, %v", fi.Mode().Perm(), err)
	}
	if filepath.Dir(a.TokenFile(srv)) != filepath.Join(data, "tokens") {
		t.Errorf("token file %s is not under DataDir/tokens", a.TokenFile(srv))
	}
}

// TestRefresh: an expired stored token is refreshed before use, and the
// rotated refresh token is stored.
func TestRefresh(t *testing.T) {
	as := oauthtest.NewAuthServer(t)
	data := t.TempDir()
	const serverURL = "http://127.0.0.1:1/mcp"
	old := as.IssueExpired()
	seed(t, data, serverURL, as, old)

	a := New(Options{Paths: config.Paths{DataDir: data}})
	ts, _ := a.Handler(config.Server{Name: "s", URL: serverURL}, false).TokenSource(context.Background())
	tok, err := ts.Token()
	if err != nil || tok == nil {
		t.Fatalf("Token: %v, %v", tok, err)
	}
	if tok.AccessToken == old.AccessToken || time.Until(tok.Expiry) < 30*time.Minute {
		t.Fatalf("token was not refreshed: expiry %v", tok.Expiry)
	}
	rec := storedRecord(t, data, serverURL)
	if rec.Token.AccessToken != tok.AccessToken || !as.RefreshValid(rec.Token.RefreshToken) {
		t.Fatal("the refreshed token pair was not stored")
	}
	// A fresh token is not refreshed again.
	if tok2, _ := ts.Token(); tok2.AccessToken != tok.AccessToken || as.Counts().Refreshes != 1 {
		t.Fatalf("a fresh token was refreshed again (%d refreshes)", as.Counts().Refreshes)
	}
}

// TestConcurrentRefreshGoroutines: two otter components (separate
// Authorizers, as in two sessions) refresh the same expired token at once.
// The authorization server rotates refresh tokens and rejects reuse, so
// without the store's lock one of them would lose the grant.
func TestConcurrentRefreshGoroutines(t *testing.T) {
	concurrentRefresh(t, func(data, serverURL string) (string, error) {
		a := New(Options{Paths: config.Paths{DataDir: data}})
		ts, _ := a.Handler(config.Server{Name: "s", URL: serverURL}, false).TokenSource(context.Background())
		tok, err := ts.Token()
		if err != nil || tok == nil {
			return "", fmt.Errorf("no token: %v", err)
		}
		return tok.AccessToken, nil
	})
}

// TestConcurrentRefreshProcesses: the same with two otter processes.
func TestConcurrentRefreshProcesses(t *testing.T) {
	ctx := testCtx(t)
	concurrentRefresh(t, func(data, serverURL string) (string, error) {
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envRefresher+"=1", envRefresherURL+"="+serverURL, envRefresherData+"="+data)
		cmd.Stdout = &out
		cmd.Stderr = os.Stderr
		err := cmd.Run()
		return out.String(), err
	})
}

// concurrentRefresh runs two refreshers at once against one stored,
// expired token and checks that exactly one refresh happened, both ended
// with the same access token, and the stored refresh token still works.
func concurrentRefresh(t *testing.T, refresher func(data, serverURL string) (accessToken string, err error)) {
	as := oauthtest.NewAuthServer(t)
	as.RefreshDelay = 300 * time.Millisecond // widen the window for a race
	data := t.TempDir()
	const serverURL = "http://127.0.0.1:1/mcp"
	seed(t, data, serverURL, as, as.IssueExpired())

	var wg sync.WaitGroup
	toks := make([]string, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { toks[i], errs[i] = refresher(data, serverURL) })
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil || toks[i] == "" {
			t.Fatalf("refresher %d: %v", i, errs[i])
		}
	}
	if toks[0] != toks[1] {
		t.Error("the two refreshers ended with different access tokens")
	}
	if c := as.Counts(); c.Refreshes != 1 || c.Reuses != 0 {
		t.Fatalf("want exactly one refresh and no reused refresh token: %+v", c)
	}
	if !as.RefreshValid(storedRecord(t, data, serverURL).Token.RefreshToken) {
		t.Fatal("the stored refresh token is no longer valid: the grant was lost")
	}
}

// TestCorruptTokenFile: a damaged file is reported clearly and treated as
// no token; a fresh login replaces it.
func TestCorruptTokenFile(t *testing.T) {
	f := newFixture(t)
	ctx, endpoint, srv := f.ctx, f.endpoint, f.srv
	var logs bytes.Buffer
	a := f.authorizer(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	file := a.TokenFile(srv)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(`{"version":1,"token":{"access_tok`), 0o600); err != nil {
		t.Fatal(err)
	}

	if a.LoggedIn(srv) || !a.TokenExpiry(srv).IsZero() {
		t.Fatal("a corrupt file counts as a token")
	}
	if _, err := oauthtest.Connect(ctx, endpoint, a.Handler(srv, false)); !errors.Is(err, ErrLoginRequired) {
		t.Fatalf("with a corrupt token file: got %v, want ErrLoginRequired", err)
	}
	if !strings.Contains(logs.String(), "corrupt token file") || !strings.Contains(logs.String(), file) {
		t.Errorf("the log does not name the corrupt file:\n%s", logs.String())
	}
	if got, err := oauthtest.Connect(ctx, endpoint, a.Handler(srv, true)); err != nil || got != "echo: hi" {
		t.Fatalf("fresh login over a corrupt file: %q, %v", got, err)
	}
	if rec := storedRecord(t, f.data, endpoint); rec.Token == nil {
		t.Fatal("the fresh login did not replace the corrupt file")
	}
}

func TestLogout(t *testing.T) {
	f := newFixture(t)
	ctx, endpoint, srv := f.ctx, f.endpoint, f.srv
	a := f.authorizer(Options{})
	if _, err := oauthtest.Connect(ctx, endpoint, a.Handler(srv, true)); err != nil {
		t.Fatal(err)
	}
	if !a.LoggedIn(srv) {
		t.Fatal("not logged in after login")
	}
	if err := a.Logout(srv); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.TokenFile(srv)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("token file after logout: %v", err)
	}
	if _, err := oauthtest.Connect(ctx, endpoint, f.authorizer(Options{}).Handler(srv, false)); !errors.Is(err, ErrLoginRequired) {
		t.Fatalf("after logout: got %v, want ErrLoginRequired", err)
	}
	if err := a.Logout(srv); err != nil {
		t.Fatalf("second logout: %v", err)
	}
}

func TestNoHandler(t *testing.T) {
	a := New(Options{Paths: config.Paths{DataDir: t.TempDir()}})
	if h := a.Handler(config.Server{Name: "s", Command: "x", Transport: config.TransportStdio}, true); h != nil {
		t.Error("a stdio server got an OAuth handler")
	}
	if h := a.Handler(config.Server{Name: "s", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"authorization": "Bearer k"}}, true); h != nil {
		t.Error("a server with a configured Authorization header got an OAuth handler")
	}
}

// TestAdhocServerLoginCommand: an ad hoc server (given by --url, named
// after its host) can only be logged in to by its URL, so that is what the
// error and the login prompt name; a configured server is named by name.
func TestAdhocServerLoginCommand(t *testing.T) {
	f := newFixture(t)
	adhoc := config.Server{Name: "127.0.0.1", URL: f.endpoint, Transport: config.TransportHTTP, Scope: config.ScopeFlag}
	_, err := oauthtest.Connect(f.ctx, f.endpoint, f.authorizer(Options{}).Handler(adhoc, false))
	var le *LoginRequiredError
	if !errors.As(err, &le) || !errors.Is(err, ErrLoginRequired) {
		t.Fatalf("ad hoc server without a token: got %v, want a LoginRequiredError", err)
	}
	if le.Server != f.endpoint || le.Adhoc == nil || !strings.Contains(err.Error(), f.endpoint+": ") {
		t.Errorf("error %q names %q (ad hoc settings %v), want %q with its settings", err, le.Server, le.Adhoc, f.endpoint)
	}

	prompter := &choose{reply: func(ask.Login) ask.LoginReply { return ask.LoginReply{Choice: ask.LoginLater} }}
	_, err = oauthtest.Connect(f.ctx, f.endpoint, f.authorizer(Options{Prompter: prompter}).Handler(adhoc, true))
	if !errors.Is(err, ErrLoginRequired) || prompter.count() != 1 || prompter.prompts[0].Server != f.endpoint {
		t.Errorf("postponed ad hoc login: %v; prompts %+v, want one naming %s", err, prompter.prompts, f.endpoint)
	}

	// A configured server is logged in to by name, even one given by
	// --config (ScopeFlag with a file); a URL only when there is no name.
	for _, tc := range []struct {
		srv  config.Server
		want string
	}{
		{config.Server{Name: "github", URL: "https://x/mcp", Scope: config.ScopeUser, File: "/c.toml"}, "github"},
		{config.Server{Name: "ci", URL: "https://x/mcp", Scope: config.ScopeFlag, File: "extra.toml"}, "ci"},
		{config.Server{Name: "x", URL: "https://x/mcp?a=1&b=it's", Scope: config.ScopeFlag}, "https://x/mcp?a=1&b=it's"},
		{config.Server{Name: "my server", URL: "https://x/mcp", Scope: config.ScopeProject, File: ".mcp.json"}, "my server"},
	} {
		if got := loginRequired(tc.srv, "why").Server; got != tc.want {
			t.Errorf("login required for (%s, %s) names %q, want %q", tc.srv.Name, tc.srv.URL, got, tc.want)
		}
	}
}

// TestSSETransport: the SSE client transport has no OAuth support of its
// own; Transport adds it.
func TestSSETransport(t *testing.T) {
	f := newFixture(t)
	sseURL := strings.TrimSuffix(f.endpoint, "/mcp") + "/sse"
	srv := config.Server{Name: "legacy", URL: sseURL, Transport: config.TransportSSE}
	a := f.authorizer(Options{})
	sse := func(interactive bool) mcp.Transport {
		return &mcp.SSEClientTransport{Endpoint: sseURL, HTTPClient: &http.Client{Transport: Transport(a.Handler(srv, interactive), nil)}}
	}
	if _, err := oauthtest.CallEcho(f.ctx, sse(false)); !errors.Is(err, ErrLoginRequired) {
		t.Fatalf("SSE without a token: got %v, want ErrLoginRequired", err)
	}
	if got, err := oauthtest.CallEcho(f.ctx, sse(true)); err != nil || got != "echo: hi" {
		t.Fatalf("SSE login: %q, %v", got, err)
	}
	if got, err := oauthtest.CallEcho(f.ctx, sse(false)); err != nil || got != "echo: hi" {
		t.Fatalf("SSE with the stored token: %q, %v", got, err)
	}
	if c := f.as.Counts(); c.Authorizes != 1 {
		t.Fatalf("authorizations = %d, want 1", c.Authorizes)
	}
}

// TestBrowserCannotOpen: when the browser cannot be opened the person is
// asked again (to open the URL elsewhere or paste the redirect), and
// after a few attempts the server stays needs-auth.
func TestBrowserCannotOpen(t *testing.T) {
	f := newFixture(t)
	prompter := &choose{reply: openBrowserChoice}
	a := f.authorizer(Options{Prompter: prompter, OpenBrowser: func(string) error { return ErrNoBrowser }})
	_, err := oauthtest.Connect(f.ctx, f.endpoint, a.Handler(f.srv, true))
	if !errors.Is(err, ErrLoginRequired) {
		t.Fatalf("got %v, want ErrLoginRequired", err)
	}
	// The error says why, not only that no answer was usable.
	if !strings.Contains(err.Error(), "could not open a browser") {
		t.Errorf("error %q does not say the browser could not be opened", err)
	}
	if prompter.count() != maxPrompts {
		t.Errorf("prompts = %d, want %d", prompter.count(), maxPrompts)
	}
}

func TestFresh(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name string
		tok  *oauth2.Token
		want bool
	}{
		{"no expiry", &oauth2.Token{AccessToken: "a"}, true},
		{"an hour left", &oauth2.Token{AccessToken: "a", Expiry: now.Add(time.Hour), ExpiresIn: 3600}, true},
		{"inside the margin", &oauth2.Token{AccessToken: "a", Expiry: now.Add(10 * time.Second), ExpiresIn: 3600}, false},
		{"short-lived, early", &oauth2.Token{AccessToken: "a", Expiry: now.Add(18 * time.Second), ExpiresIn: 20}, true},
		{"short-lived, past half", &oauth2.Token{AccessToken: "a", Expiry: now.Add(5 * time.Second), ExpiresIn: 20}, false},
		{"expired", &oauth2.Token{AccessToken: "a", Expiry: now.Add(-time.Second)}, false},
		{"empty", &oauth2.Token{}, false},
	} {
		if got := fresh(tc.tok); got != tc.want {
			t.Errorf("%s: fresh = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestConcurrentLogin: two connections through one handler that both need
// a login lead to one login, which both then use.
func TestConcurrentLogin(t *testing.T) {
	f := newFixture(t)
	prompter := &choose{reply: openBrowserChoice}
	h := f.authorizer(Options{Prompter: prompter}).Handler(f.srv, true)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { _, errs[i] = oauthtest.Connect(f.ctx, f.endpoint, h) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("connection %d: %v", i, err)
		}
	}
	if n := prompter.count(); n != 1 {
		t.Errorf("the person was asked %d times, want once", n)
	}
}

// A server that refuses with a bare 401 (an API-key server, such as otter
// mcp serve with api_keys) makes the OAuth attempt fail; the error must
// point at the header the person probably needs.
func TestBare401SuggestsAPIKeyHeader(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="keys"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer ts.Close()
	a := New(Options{Paths: config.Paths{DataDir: t.TempDir()}, Prompter: &choose{reply: func(ask.Login) ask.LoginReply { return ask.LoginReply{Choice: ask.LoginShowURL} }}})
	srv := config.Server{Name: "keyed", Transport: config.TransportHTTP, URL: ts.URL + "/mcp"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := oauthtest.Connect(ctx, srv.URL, a.Handler(srv, true))
	if err == nil || !strings.Contains(err.Error(), "Authorization: Bearer KEY in the server's headers") {
		t.Fatalf("error = %v, want a hint about the Authorization header", err)
	}
}

// TestStepUpRemembered: a session that may not log in is refused a tool
// call with 403 insufficient_scope. The scopes the server asked for are
// noted with the token, so that a later login knows the token is not
// enough and asks for them even though the server's discovery does not
// name them.
func TestStepUpRemembered(t *testing.T) {
	f := newFixture(t)
	p := oauthtest.NewProtectedMCPServer(t, f.as)
	srv := config.Server{Name: "prot", URL: p.URL, Transport: config.TransportHTTP}
	if got, err := oauthtest.Connect(f.ctx, p.URL, f.authorizer(Options{}).Handler(srv, true)); err != nil || got != "echo: hi" {
		t.Fatalf("first login: %q, %v", got, err)
	}
	a := f.authorizer(Options{})
	if missing, err := a.MissingScopes(srv); err != nil || len(missing) != 0 {
		t.Fatalf("MissingScopes after the login = %v, %v; want none", missing, err)
	}

	p.RequireScopes("tools", "admin")
	_, err := oauthtest.Connect(f.ctx, p.URL, a.Handler(srv, false))
	if !errors.Is(err, ErrLoginRequired) || !strings.Contains(err.Error(), `"tools admin"`) || !strings.Contains(err.Error(), "prot: ") {
		t.Fatalf("call refused for scope: %v; want ErrLoginRequired naming the server and the scopes", err)
	}
	if missing, err := a.MissingScopes(srv); err != nil || fmt.Sprint(missing) != "[admin]" {
		t.Fatalf("MissingScopes after the 403 = %v, %v; want [admin]", missing, err)
	}
	// Configured scopes the token lacks count too.
	withCfg := srv
	withCfg.OAuth = &config.OAuth{Scopes: []string{"audit", "offline_access"}}
	if missing, _ := a.MissingScopes(withCfg); fmt.Sprint(missing) != "[admin audit]" {
		t.Errorf("MissingScopes with configured scopes = %v, want [admin audit]", missing)
	}

	// What `otter mcp login prot` does: set the token aside and log in.
	// The server's 401 names no scopes; the noted ones are asked for.
	if _, err := a.SetAside(srv); err != nil {
		t.Fatal(err)
	}
	if got, err := oauthtest.Connect(f.ctx, p.URL, a.Handler(srv, true)); err != nil || got != "echo: hi" {
		t.Fatalf("login for the noted scopes: %q, %v", got, err)
	}
	rec := storedRecord(t, f.data, p.URL)
	if !slices.Contains(strings.Fields(rec.Scope), "admin") || rec.WantScope != "" {
		t.Errorf("after the login: scope %q, want_scope %q; want admin granted and nothing left wanted", rec.Scope, rec.WantScope)
	}
	if c := f.as.Counts(); c.Authorizes != 2 {
		t.Errorf("authorizations = %d, want 2", c.Authorizes)
	}
	// A later process calls the tool with the stored token.
	if got, err := oauthtest.Connect(f.ctx, p.URL, f.authorizer(Options{}).Handler(srv, false)); err != nil || got != "echo: hi" {
		t.Fatalf("a later process after the step-up: %q, %v", got, err)
	}
}
