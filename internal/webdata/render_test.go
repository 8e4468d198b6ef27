package webdata

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// needChromium returns the browser for render_js tests. Without one the
// test fails in CI (CI=true) and is skipped, loudly, elsewhere.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := ChromiumPath(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("render_js tests need Chromium in CI: %v (the CI script installs it with apt-get install chromium)", err)
		}
		t.Skipf("SKIPPING render_js test: %v — install Chromium (apt-get install chromium) to run it", err)
	}
}

func TestRenderJS(t *testing.T) {
	needChromium(t)
	private, privConns := countingServer(t, "127.0.0.2:0")
	s := newSite(t, map[string]http.HandlerFunc{
		"/spa": htmlPage(fmt.Sprintf(`<!doctype html><html><head><title>SPA</title></head><body>
			<div id="app"><p class="loading">Loading…</p></div>
			<script>
			setTimeout(function () {
				var app = document.getElementById('app');
				app.innerHTML = '<h1 class="late">Rendered by JS</h1><ul><li>one</li><li>two</li></ul>';
				// The API call waits for the image to fail, so that the
				// refusal is recorded before p.api appears.
				var img = new Image();
				img.onerror = img.onload = function () {
					fetch('/api/data').then(function (r) { return r.json(); }).then(function (d) {
						var p = document.createElement('p'); p.className = 'api'; p.textContent = d.msg; app.appendChild(p);
					});
				};
				img.src = %q;
			}, 300);
			</script></body></html>`, private.URL+"/pixel.png")),
		"/api/data": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"msg":"from the api"}`)
		},
		"/to-private": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, private.URL+"/", http.StatusFound)
		},
	})
	ts := newTools(t, loopbackOnly())
	ctx := context.Background()
	selectors := map[string]any{"late": "h1.late", "items": map[string]any{"selector": "li", "all": true}}

	// Without JavaScript the content is not there.
	_, env := ts.call(t, ctx, NameScrapePage, map[string]any{"url": s.URL + "/spa", "selectors": selectors})
	if env.Status != StatusPartial {
		t.Errorf("static fetch of the SPA: %s, want partial (h1.late missing)", env.Status)
	}

	_, env = ts.call(t, ctx, NameScrapePage, map[string]any{
		"url": s.URL + "/spa", "render_js": true, "wait_for": "p.api", "timeout": 90,
		"selectors": map[string]any{"late": "h1.late", "api": "p.api", "items": map[string]any{"selector": "li", "all": true}},
	})
	if env.Status != StatusSuccess {
		t.Fatalf("render_js: %s %+v", env.Status, env.Errors)
	}
	res := decode[struct {
		Data     map[string]any
		Metadata pageMeta
	}](t, env)
	if res.Data["late"] != "Rendered by JS" || res.Data["api"] != "from the api" || !equalJSON(res.Data["items"], []any{"one", "two"}) {
		t.Errorf("rendered data = %#v", res.Data)
	}
	if !res.Metadata.Rendered || res.Metadata.StatusCode != 200 {
		t.Errorf("metadata = %+v", res.Metadata)
	}
	if s.count("/api/data") != 1 {
		t.Errorf("the page's own fetch went to the site %d times, want 1 (through the filtering proxy)", s.count("/api/data"))
	}
	// The image on 127.0.0.2 was refused by the proxy, before connecting.
	if len(res.Metadata.Refused) == 0 || !strings.Contains(strings.Join(res.Metadata.Refused, " "), "127.0.0.2") {
		t.Errorf("refused requests = %v, want the 127.0.0.2 image", res.Metadata.Refused)
	}

	// A redirect into a private address is refused for the browser too.
	_, env = ts.call(t, ctx, NameScrapePage, map[string]any{"url": s.URL + "/to-private", "render_js": true, "timeout": 90})
	if !env.hasCode(CodeForbidden) {
		t.Errorf("render_js redirect to 127.0.0.2: %+v, want FORBIDDEN", env.Errors)
	}

	// wait_for that never appears ends in a timeout, not a hang. (On a slow
	// machine the deadline may strike while the page still loads, so the
	// message is not checked.)
	_, env = ts.call(t, ctx, NameScrapePage, map[string]any{"url": s.URL + "/spa", "render_js": true, "wait_for": "#never", "timeout": 15})
	if !env.hasCode(CodeNetworkTimeout) {
		t.Errorf("wait_for timeout: %+v", env.Errors)
	}
	if n := privConns.Load(); n != 0 {
		t.Errorf("127.0.0.2 accepted %d connections from the browser, want 0", n)
	}
}

func TestRenderJSWithoutChromium(t *testing.T) {
	t.Setenv(ChromiumEnv, "")
	t.Setenv("PATH", t.TempDir())
	s := newSite(t, map[string]http.HandlerFunc{"/": htmlPage(`<h1>hi</h1>`)})
	ts := newTools(t, loopbackOnly())
	res, env := ts.call(t, context.Background(), NameScrapePage, map[string]any{"url": s.URL + "/", "render_js": true})
	if !res.IsError || !env.hasCode(CodeInternalError) || !strings.Contains(env.Errors[0].Message, "apt-get install chromium") ||
		!strings.Contains(env.Errors[0].Message, ChromiumEnv) {
		t.Errorf("render_js without a browser: %+v", env.Errors)
	}
}

// Chromium keeps its sandbox unless otter runs as root, where Chromium
// will not start without --no-sandbox. A stand-in browser records the
// command line it was started with.
func TestRenderJSSandboxOffOnlyAsRoot(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	browser := filepath.Join(dir, "chromium")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" + argsFile + "'\necho 'fake browser: not starting' >&2\nexit 1\n"
	if err := os.WriteFile(browser, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(ChromiumEnv, browser)
	s := newSite(t, map[string]http.HandlerFunc{"/": htmlPage(`<h1>hi</h1>`)})
	ts := newTools(t, loopbackOnly())
	defer func(orig func() int) { geteuid = orig }(geteuid)
	for _, c := range []struct {
		euid      int
		noSandbox bool
	}{{1000, false}, {0, true}} {
		geteuid = func() int { return c.euid }
		os.Remove(argsFile)
		res, env := ts.call(t, context.Background(), NameScrapePage, map[string]any{"url": s.URL + "/", "render_js": true, "timeout": 10})
		if !res.IsError {
			t.Fatalf("euid %d: the stand-in browser exits at once, yet render_js succeeded: %+v", c.euid, env)
		}
		args, err := os.ReadFile(argsFile)
		if err != nil {
			t.Fatalf("euid %d: the browser was not started: %v (errors %+v)", c.euid, err, env.Errors)
		}
		if got := slices.Contains(strings.Split(string(args), "\n"), "--no-sandbox"); got != c.noSandbox {
			t.Errorf("euid %d: --no-sandbox passed = %v, want %v; command line:\n%s", c.euid, got, c.noSandbox, args)
		}
	}
}
