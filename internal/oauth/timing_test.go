package oauth

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/oauth/oauthtest"
)

// A person who takes longer to answer the login prompt than the server's
// startup_timeout still logs in: the manager's startup clock stops while
// the prompt is up.
//
// The person reads the prompt for longer than the whole timeout, so that
// without the pause the login fails however fast the rest is; the rest
// (discovery, registration, the token, the connection) has all of the
// timeout to itself, which a loaded machine needs.
func TestSlowAnswerDoesNotUseUpTheStartupTimeout(t *testing.T) {
	const startup = 3 * time.Second // as the manager's startup_timeout
	f := newFixture(t)
	prompter := &choose{reply: func(ask.Login) ask.LoginReply {
		time.Sleep(startup + 100*time.Millisecond) // reading the prompt
		return ask.LoginReply{Choice: ask.LoginOpenBrowser}
	}}
	a := f.authorizer(Options{Prompter: prompter})
	ctx, cancel := ask.WithPausableTimeout(f.ctx, startup)
	defer cancel()
	if got, err := oauthtest.Connect(ctx, f.endpoint, a.Handler(f.srv, true)); err != nil || got != "echo: hi" {
		t.Fatalf("login slower than the startup timeout: %q, %v", got, err)
	}
}

// A login nobody completes ends after LoginTimeout with the server left
// needing a login, not failed.
func TestUnfinishedLoginTimesOut(t *testing.T) {
	f := newFixture(t)
	old := LoginTimeout
	LoginTimeout = 300 * time.Millisecond
	t.Cleanup(func() { LoginTimeout = old })
	prompter := &choose{reply: func(ask.Login) ask.LoginReply { return ask.LoginReply{Choice: ask.LoginShowURL} }}
	a := f.authorizer(Options{Prompter: prompter})
	_, err := oauthtest.Connect(f.ctx, f.endpoint, a.Handler(f.srv, true))
	if !errors.Is(err, ErrLoginRequired) || !strings.Contains(err.Error(), "not completed within") {
		t.Fatalf("unfinished login: %v; want ErrLoginRequired saying it was not completed in time", err)
	}
}

// A login the authorization server refuses opens the browser once, not
// again for each request of the same connection attempt.
func TestRefusedLoginOpensTheBrowserOnce(t *testing.T) {
	f := newFixture(t)
	var opened atomic.Int32
	refuse := func(authURL string) error {
		opened.Add(1)
		u, err := url.Parse(authURL)
		if err != nil {
			return err
		}
		q := u.Query()
		cb := q.Get("redirect_uri") + "?error=access_denied&error_description=the+user+said+no&state=" + url.QueryEscape(q.Get("state"))
		go func() {
			if resp, err := http.Get(cb); err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	}
	a := f.authorizer(Options{OpenBrowser: refuse})
	_, err := oauthtest.Connect(f.ctx, f.endpoint, a.Handler(f.srv, true))
	if err == nil || !strings.Contains(err.Error(), "access_denied") || strings.Count(err.Error(), "log in to remote") != 1 {
		t.Fatalf("refused login: %v, want the refusal named", err)
	}
	if n := opened.Load(); n != 1 {
		t.Errorf("the browser was opened %d times for one refused login, want 1", n)
	}
}
