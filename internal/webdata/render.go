package webdata

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/otter-sh/otter/internal/safehttp"
)

// ChromiumEnv names the environment variable that points render_js at a
// Chromium or Chrome binary.
const ChromiumEnv = "OTTER_CHROMIUM"

// geteuid is os.Geteuid; tests replace it.
var geteuid = os.Geteuid

// chromiumNames are looked up on PATH, in order.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"}

// ErrNoChromium is returned by ChromiumPath when no browser is found.
var ErrNoChromium = errors.New("render_js needs Chromium or Google Chrome, and none was found: " +
	"install it (Debian/Ubuntu: apt-get install chromium; Fedora: dnf install chromium; macOS: brew install --cask chromium) " +
	"or set " + ChromiumEnv + " to the browser's path")

// ChromiumPath returns the browser render_js uses: $OTTER_CHROMIUM, else the
// first of chromium, chromium-browser, google-chrome, google-chrome-stable
// and chrome on PATH.
func ChromiumPath() (string, error) {
	if p := os.Getenv(ChromiumEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", ChromiumEnv, p, err)
		}
		return p, nil
	}
	for _, n := range chromiumNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// refusals records what the forward proxy refused during a render.
type refusals struct {
	mu      sync.Mutex
	targets []string
	errs    map[string]error
}

func (r *refusals) add(target string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.errs == nil {
		r.errs = make(map[string]error)
	}
	if _, seen := r.errs[target]; !seen {
		r.targets = append(r.targets, target)
	}
	r.errs[target] = err
}

// of returns the refusal of u (an http URL as requested, or an https
// URL's CONNECT host:port), if any.
func (r *refusals) of(u *url.URL) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.errs[u.String()]; err != nil {
		return err
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	return r.errs[net.JoinHostPort(u.Hostname(), port)]
}

func (r *refusals) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.targets...)
}

// render loads u in a fresh headless Chromium whose every request goes
// through a policy-checking forward proxy, waits for waitFor, and returns
// the resulting DOM as the page body.
func (k *toolkit) render(ctx context.Context, u *url.URL, waitFor string, timeout time.Duration) (*page, []string, *ErrorInfo) {
	exe, err := ChromiumPath()
	if err != nil {
		e := newError(CodeInternalError, err.Error(), "install Chromium (apt-get install chromium), or call scrape_page without render_js")
		e.Recoverable = false
		e.Field = "render_js"
		return nil, nil, &e
	}

	var refused refusals
	fp := &safehttp.ForwardProxy{Policy: k.policy, Options: k.clientOpt, OnRefused: refused.add}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e := newError(CodeInternalError, fmt.Sprintf("starting the browser's filtering proxy: %v", err), "retry")
		return nil, nil, &e
	}
	srv := &http.Server{Handler: fp, ReadHeaderTimeout: 30 * time.Second}
	go srv.Serve(ln)
	defer func() {
		fp.Close()
		srv.Close()
	}()

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		// Chromium's sandbox confines a renderer that a hostile page has
		// compromised, so it stays on. Only as root must it go: Chromium
		// refuses to start as root without --no-sandbox ("Running as root
		// without --no-sandbox is not supported"), as in many containers.
		// The flag is always set, to true or false, because chromedp adds
		// --no-sandbox by itself for uid 0 when it is not.
		chromedp.Flag("no-sandbox", geteuid() == 0),
		chromedp.DisableGPU,
		chromedp.ProxyServer("http://"+ln.Addr().String()),
		// Chromium sends loopback addresses around a proxy unless told not to.
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		// The browser resolves no names itself: the proxy does, and checks.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("disable-quic", true),
		chromedp.UserAgent(k.clientOpt.UserAgent),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()

	start := k.now()
	progress(ctx, 0, 3, "starting Chromium and loading "+u.String())
	resp, err := chromedp.Run(bctx, chromedp.NavigateResponse(u.String()))
	if err != nil {
		return nil, nil, k.renderError(ctx, err, u, &refused, timeout)
	}
	progress(ctx, 1, 3, "page loaded")
	if waitFor != "" {
		progress(ctx, 2, 3, "waiting for "+waitFor)
		if err := chromedp.Do(bctx, chromedp.WaitVisible(chromedp.CSS(waitFor))); err != nil {
			if ctx.Err() != nil {
				e := newError(CodeNetworkTimeout, fmt.Sprintf("wait_for: no element matching %q became visible on %s within %s", waitFor, u, timeout),
					"check the wait_for selector, or raise the timeout")
				e.Field = "wait_for"
				return nil, nil, &e
			}
			return nil, nil, k.renderError(ctx, err, u, &refused, timeout)
		}
	}
	progress(ctx, 3, 3, "reading the rendered page")
	html, err := chromedp.Run(bctx, chromedp.Evaluate[string]("document.documentElement.outerHTML"))
	if err != nil {
		return nil, nil, k.renderError(ctx, err, u, &refused, timeout)
	}
	loc, err := chromedp.Run(bctx, chromedp.Location())
	if err != nil {
		return nil, nil, k.renderError(ctx, err, u, &refused, timeout)
	}
	final, err := url.Parse(loc)
	if err != nil {
		final = u
	}
	limit := k.clientOpt.MaxBodyBytes
	if limit <= 0 {
		limit = safehttp.DefaultMaxBodyBytes
	}
	if int64(len(html)) > limit {
		e := fetchError(&safehttp.BodyTooLargeError{Limit: limit}, u.String(), timeout)
		return nil, nil, &e
	}
	h := http.Header{}
	for name, v := range resp.Headers {
		for _, line := range strings.Split(fmt.Sprint(v), "\n") {
			h.Add(name, line)
		}
	}
	status := int(resp.Status)
	if status == http.StatusForbidden {
		if rerr := refused.of(final); rerr != nil {
			e := fetchError(rerr, final.String(), timeout)
			return nil, nil, &e
		}
	}
	return &page{
		URL:         final,
		Status:      status,
		Header:      h,
		Body:        []byte(html),
		ContentType: "text/html; charset=utf-8",
		Elapsed:     k.now().Sub(start),
		Rendered:    true,
	}, refused.list(), nil
}

func (k *toolkit) renderError(ctx context.Context, err error, u *url.URL, refused *refusals, timeout time.Duration) *ErrorInfo {
	if rerr := refused.of(u); rerr != nil {
		e := fetchError(rerr, u.String(), timeout)
		return &e
	}
	if ctx.Err() != nil {
		e := fetchError(context.DeadlineExceeded, u.String(), timeout)
		return &e
	}
	var le *chromedp.LoadError
	if errors.As(err, &le) {
		e := newError(CodeNetworkError, fmt.Sprintf("Chromium could not load %s: %s", u, le.ErrorText), "check the URL and that the site is reachable")
		if targets := refused.list(); len(targets) > 0 {
			e.Details = map[string]any{"refused_requests": targets}
		}
		return &e
	}
	var xe *exec.ExitError
	if errors.As(err, &xe) || strings.Contains(err.Error(), "exec") {
		e := newError(CodeInternalError, fmt.Sprintf("running Chromium for render_js: %v", err), "check that the browser starts (try it with --headless; as root it also needs --no-sandbox, which otter adds only for root), or set "+ChromiumEnv)
		return &e
	}
	e := newError(CodeInternalError, fmt.Sprintf("rendering %s in Chromium: %v", u, err), "retry, or call scrape_page without render_js")
	return &e
}
