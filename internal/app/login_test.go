package app

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth"
	"github.com/otter-sh/otter/internal/oauth/oauthtest"
)

// browserPerson answers login prompts as a person who approves in the
// browser: it loads the authorization URL, which redirects to otter's
// loopback callback, and tells otter to wait for it. With decline set it
// says "not now" instead.
type browserPerson struct {
	t       *testing.T
	decline bool
	asked   atomic.Int32
}

func (p *browserPerson) Login(ctx context.Context, req ask.Login) (ask.LoginReply, error) {
	p.asked.Add(1)
	if p.decline {
		return ask.LoginReply{Choice: ask.LoginLater}, nil
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, req.AuthURL, nil)
	if err != nil {
		return ask.LoginReply{}, err
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		p.t.Errorf("the browser could not load %s: %v", req.AuthURL, err)
		return ask.LoginReply{}, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return ask.LoginReply{Choice: ask.LoginShowURL}, nil
}

// LoginServer, as `otter mcp login` uses it: a fresh login asks the
// person and stores a token a later process connects with; a second one
// finds that token and asks nothing; a forced login the person does not
// finish fails as "not logged in" and keeps the token that worked. Logout
// forgets it.
func TestLoginServer(t *testing.T) {
	as := oauthtest.NewAuthServer(t)
	endpoint := oauthtest.NewProtectedMCP(t, as)
	paths := testPaths(t, serverTOML("remote", endpoint))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	srv, err := LoginTarget(config.LoadOptions{Paths: paths, WorkDir: t.TempDir()}, "remote")
	if err != nil {
		t.Fatal(err)
	}
	person := &browserPerson{t: t}
	login := func(force bool, prompter ask.LoginPrompter) (LoginOutcome, error) {
		return LoginServer(ctx, LoginOptions{Parts: testParts, Paths: paths, Server: srv, Prompter: prompter, Force: force, Version: "test"})
	}

	out, err := login(false, person)
	if err != nil {
		t.Fatalf("first login: %v", err)
	}
	if !out.Asked || !out.Stored || out.Expiry.IsZero() || out.ClientCredentials || len(out.StillMissing) > 0 {
		t.Errorf("first login = %+v; want asked, stored, with an expiry", out)
	}
	later := oauth.New(oauth.Options{Paths: paths})
	if got, err := oauthtest.Connect(ctx, endpoint, later.Handler(srv, false)); err != nil || got != "echo: hi" {
		t.Fatalf("a later process with the stored token: %q, %v", got, err)
	}

	out, err = login(false, person)
	if err != nil || out.Asked || !out.Stored {
		t.Errorf("second login = %+v, %v; want already logged in", out, err)
	}
	if n := person.asked.Load(); n != 1 {
		t.Errorf("the person was asked %d times, want once", n)
	}
	if c := as.Counts(); c.Authorizes != 1 {
		t.Errorf("authorizations = %d, want 1", c.Authorizes)
	}

	_, err = login(true, &browserPerson{t: t, decline: true})
	failed, ok := errors.AsType[*LoginFailedError](err)
	if !ok || !failed.KeptPrevious || !errors.Is(err, oauth.ErrLoginRequired) || !strings.HasPrefix(err.Error(), "not logged in to remote: ") {
		t.Fatalf("forced login the person declined: %v; want not logged in, the previous token kept", err)
	}
	if got, err := oauthtest.Connect(ctx, endpoint, later.Handler(srv, false)); err != nil || got != "echo: hi" {
		t.Fatalf("the token after a failed forced login: %q, %v", got, err)
	}

	if had, err := Logout(paths, srv, nil); err != nil || !had {
		t.Fatalf("logout = %v, %v; want a token forgotten", had, err)
	}
	if had, err := Logout(paths, srv, nil); err != nil || had {
		t.Errorf("second logout = %v, %v; want nothing stored", had, err)
	}
}

// LoginTarget finds a configured remote server, takes a URL as an ad hoc
// server, and refuses a stdio server or an unknown name, listing the
// remote servers there are.
func TestLoginTarget(t *testing.T) {
	paths := testPaths(t, serverTOML("web", "http://127.0.0.1:1/mcp")+
		"[[mcp.servers]]\nname = \"local\"\ncommand = \"true\"\n")
	opts := config.LoadOptions{Paths: paths, WorkDir: t.TempDir()}

	if srv, err := LoginTarget(opts, "web"); err != nil || srv.URL != "http://127.0.0.1:1/mcp" {
		t.Errorf("LoginTarget(web) = %+v, %v", srv, err)
	}
	if srv, err := LoginTarget(opts, "https://mcp.example.com/mcp"); err != nil || srv.Name != "https://mcp.example.com/mcp" || srv.Scope != config.ScopeFlag {
		t.Errorf("LoginTarget(URL) = %+v, %v; want an ad hoc server", srv, err)
	}
	_, err := LoginTarget(opts, "local")
	if _, ok := errors.AsType[*StdioServerError](err); !ok {
		t.Errorf("LoginTarget(local) = %v; want a StdioServerError", err)
	}
	_, err = LoginTarget(opts, "nosuch")
	if e, ok := errors.AsType[*UnknownServerError](err); !ok || len(e.Remote) != 1 || e.Remote[0] != "web" ||
		err.Error() != `no MCP server named "nosuch" in the configuration (remote servers: web)` {
		t.Errorf("LoginTarget(nosuch) = %v; want the remote servers listed", err)
	}
}
