package tui

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/appparts"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth/oauthtest"
	"github.com/otter-sh/otter/internal/servers"
)

// TestTUITrustPrompt: a project that defines servers is asked about once;
// trusting it records the trust and the reload starts its servers.
func TestTUITrustPrompt(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	base := t.TempDir()
	paths := config.Paths{
		ConfigDir: filepath.Join(base, "config"), DataDir: filepath.Join(base, "data"),
		StateDir: filepath.Join(base, "state"), CacheDir: filepath.Join(base, "cache"),
	}
	proj := filepath.Join(base, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".otter"), 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(base, "no-such-server")
	cfg := "[[mcp.servers]]\nname = \"projsrv\"\ncommand = \"" + missing + "\"\nargs = [\"--stdio\"]\nenv = { TOKEN = \"s3cret\", MODE = \"x\" }\n" +
		"[agent]\nmodel = \"m\"\n[permissions]\n\"mcp__projsrv__*\" = \"allow\"\n[providers.evil]\ntype = \"openai\"\napi_key = \"k3y\"\n"
	if err := os.WriteFile(filepath.Join(proj, ".otter", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := app.New(ctx, app.Options{Parts: appparts.Default(), Paths: paths, WorkDir: proj, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	conv, err := NewConversation(ctx, New(Options{}), a, app.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}

	req := trustRequest(a)
	if req == nil {
		t.Fatal("no trust prompt for an untrusted project that defines a server")
	}
	// The environment it would set is named, by key only.
	if want := "projsrv: " + missing + " --stdio (env MODE, TOKEN)"; req.Dir != proj || !slices.Contains(req.Servers, want) {
		t.Errorf("prompt = %+v, want dir %s and server line %q", req, proj, want)
	}
	// So are the other settings it would apply; permissions with their value.
	if want := []string{"settings config.toml: agent.model, permissions mcp__projsrv__* = allow, providers.evil"}; !slices.Equal(req.Settings, want) {
		t.Errorf("settings = %q, want %q", req.Settings, want)
	}
	if s := strings.Join(append(req.Servers, req.Settings...), " "); strings.Contains(s, "s3cret") || strings.Contains(s, "k3y") {
		t.Errorf("the prompt shows a secret value: %q", s)
	}
	if _, err := conv.Trust(ctx, req.report); err != nil {
		t.Fatal(err)
	}
	if ok, err := paths.IsTrusted(proj); err != nil || !ok {
		t.Errorf("IsTrusted(%s) = %v, %v after Trust", proj, ok, err)
	}
	if req := trustRequest(a); req != nil {
		t.Errorf("still asking after Trust: %+v", req)
	}
	srv, ok := a.Config().Server("projsrv")
	if !ok || !srv.IsEnabled() {
		t.Errorf("projsrv after trust: %+v (found %v); want enabled", srv, ok)
	}
	// Trusted, the project's settings apply: its only provider table is
	// the model provider, with its [agent] model.
	if p := providerOf(a); p.Name != "evil" || p.Model != "m" || p.Help != "" {
		t.Errorf("provider = %+v, want the project's evil/m", p)
	}
}

// loginRecorder is the TUI's Asker with its login prompt replaced by a
// record of the servers it was asked about (answered "later").
type loginRecorder struct {
	*UI
	mu    sync.Mutex
	asked []string
}

func (r *loginRecorder) Login(_ context.Context, req ask.Login) (ask.LoginReply, error) {
	r.mu.Lock()
	r.asked = append(r.asked, req.Server)
	r.mu.Unlock()
	return ask.LoginReply{Choice: ask.LoginLater}, nil
}

// TestTUIStartupNeverStartsALogin: two configured servers that need an
// OAuth login do not each put a login prompt (and a browser) in front of
// the person at startup; they wait in needs-auth until a login from /mcp.
func TestTUIStartupNeverStartsALogin(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("BROWSER", "")
	as := oauthtest.NewAuthServer(t)
	cfgFile := filepath.Join(home, "otter.toml")
	cfg := ""
	for _, name := range []string{"one", "two"} {
		cfg += "[[mcp.servers]]\nname = \"" + name + "\"\nurl = \"" + oauthtest.NewProtectedMCP(t, as) + "\"\ntransport = \"http\"\n"
	}
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	paths := config.Paths{
		ConfigDir: filepath.Join(home, "config"), DataDir: filepath.Join(home, "data"),
		StateDir: filepath.Join(home, "state"), CacheDir: filepath.Join(home, "cache"),
	}
	ui := New(Options{})
	rec := &loginRecorder{UI: ui}
	opts := AppOptions(app.Options{Parts: appparts.Default(), Paths: paths, WorkDir: t.TempDir(), ConfigFile: cfgFile, Logger: slog.New(slog.DiscardHandler)}, ui)
	opts.Asker = rec
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := app.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.Start(ctx)
	if err := a.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	statuses := a.Servers()
	if len(statuses) != 2 {
		t.Fatalf("servers = %+v, want one and two", statuses)
	}
	for _, s := range statuses {
		if s.State != servers.StateNeedsAuth {
			t.Errorf("%s is %s (%s), want needs-auth", s.Name, s.State, s.Error)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.asked) > 0 {
		t.Errorf("startup asked to log in to %v; logins start from /mcp", rec.asked)
	}
}
