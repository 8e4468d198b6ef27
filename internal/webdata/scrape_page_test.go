package webdata

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/text/encoding/simplifiedchinese"

	"github.com/otter-sh/otter/internal/config"
)

const productPage = `<!doctype html>
<html lang="en"><head><title>Otter Plush | Shop</title>
<meta name="description" content="A soft otter.">
<meta property="og:image" content="/img/otter.jpg">
<script>var tracking = "not text";</script>
<style>.price{color:red}</style>
</head><body>
<h1 class="title">Otter   Plush</h1>
<div itemscope itemtype="https://schema.org/Product">
  <span itemprop="name">Otter Plush Deluxe</span>
  <span class="price" itemprop="price" content="19.90">$19.90</span>
  <meta itemprop="priceCurrency" content="USD">
</div>
<ul class="related">
  <li><a href="/p/1">Beaver</a></li>
  <li><a href="/p/2">Seal</a></li>
  <li><a href="https://other.example/p/3">Walrus</a></li>
</ul>
<p data-x="a@b">at sign</p>
</body></html>`

func TestScrapePageSelectors(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{"/product": htmlPage(productPage)})
	ts := newTools(t, loopbackOnly())
	_, env := ts.call(t, context.Background(), NameScrapePage, map[string]any{
		"url": s.URL + "/product",
		"selectors": map[string]any{
			"title":      "h1.title",
			"price":      ".price",
			"price_attr": ".price@content",
			"links":      map[string]any{"selector": "ul.related a", "attr": "href", "all": true},
			"names":      map[string]any{"selector": "ul.related a", "all": true},
			"at":         `[data-x="a@b"]`,
			"fallback":   []any{"h2.nothing", map[string]any{"selector": "meta[name=description]", "attr": "content"}},
			"html":       map[string]any{"selector": "ul.related li", "html": true},
		},
	})
	if env.Status != StatusSuccess {
		t.Fatalf("status %s, errors %+v", env.Status, env.Errors)
	}
	res := decode[struct {
		Data     map[string]any `json:"data"`
		Metadata pageMeta       `json:"metadata"`
	}](t, env)
	want := map[string]any{
		"title":      "Otter Plush",
		"price":      "$19.90",
		"price_attr": "19.90",
		"links":      []any{s.URL + "/p/1", s.URL + "/p/2", "https://other.example/p/3"},
		"names":      []any{"Beaver", "Seal", "Walrus"},
		"at":         "at sign",
		"fallback":   "A soft otter.",
		"html":       `<a href="/p/1">Beaver</a>`,
	}
	for k, v := range want {
		if got := res.Data[k]; !equalJSON(got, v) {
			t.Errorf("data[%s] = %#v, want %#v", k, got, v)
		}
	}
	m := res.Metadata
	if m.StatusCode != 200 || !strings.HasPrefix(m.ContentType, "text/html") || m.Rendered || m.URL != s.URL+"/product" {
		t.Errorf("metadata = %+v", m)
	}
}

func TestScrapePageFollowsRedirects(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{
		"/old": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/product", http.StatusMovedPermanently)
		},
		"/product": htmlPage(productPage),
	})
	ts := newTools(t, loopbackOnly())
	_, env := ts.call(t, context.Background(), NameScrapePage, map[string]any{
		"url": s.URL + "/old", "selectors": map[string]any{"og": "meta[property='og:image']@content"},
	})
	res := decode[struct {
		Data     map[string]any
		Metadata pageMeta
	}](t, env)
	if res.Metadata.FinalURL != s.URL+"/product" || res.Metadata.URL != s.URL+"/old" {
		t.Errorf("metadata after a redirect = %+v", res.Metadata)
	}
	if res.Data["og"] != "/img/otter.jpg" {
		t.Errorf("og:image content is not a URL attribute and stays as written: %#v", res.Data["og"])
	}
}

func equalJSON(a, b any) bool {
	switch b := b.(type) {
	case []any:
		al, ok := a.([]any)
		if !ok || len(al) != len(b) {
			return false
		}
		for i := range b {
			if al[i] != b[i] {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

func TestScrapePagePartialAndInvalidSelector(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{"/product": htmlPage(productPage)})
	ts := newTools(t, loopbackOnly())
	res, env := ts.call(t, context.Background(), NameScrapePage, map[string]any{
		"url":       s.URL + "/product",
		"selectors": map[string]any{"title": "h1", "missing": ".no-such-thing", "broken": "div[[", "none": map[string]any{"selector": "table td", "all": true}},
	})
	if env.Status != StatusPartial || res.IsError {
		t.Fatalf("status %s (IsError %v), want partial", env.Status, res.IsError)
	}
	data := decode[struct{ Data map[string]any }](t, env).Data
	if data["title"] != "Otter Plush" || data["missing"] != nil || data["broken"] != nil {
		t.Errorf("data = %v", data)
	}
	if l, ok := data["none"].([]any); !ok || len(l) != 0 {
		t.Errorf(`"all" field with no match = %#v, want []`, data["none"])
	}
	fields := map[string]string{}
	for _, e := range env.Errors {
		fields[e.Field] = e.Code
	}
	if fields["missing"] != CodeParseError || fields["broken"] != CodeParseError || len(fields) != 2 {
		t.Errorf("errors = %+v, want PARSE_ERROR for missing and broken only", env.Errors)
	}
}

func TestScrapePageDefaultsAndPreset(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{
		"/product": htmlPage(productPage),
		"/article": htmlPage(`<html><head><title>T</title><meta name="author" content="Ada">
			<meta property="article:published_time" content="2026-01-27T10:30:00Z"></head>
			<body><nav>menu</nav><article><h1>Otters hold hands</h1><p>They sleep.</p><p>In rafts.</p></article></body></html>`),
	})
	ts := newTools(t, loopbackOnly())
	_, env := ts.call(t, context.Background(), NameScrapePage, map[string]any{"url": s.URL + "/product"})
	data := decode[struct{ Data map[string]any }](t, env).Data
	text, _ := data["text"].(string)
	if data["title"] != "Otter Plush | Shop" || data["description"] != "A soft otter." ||
		!strings.Contains(text, "Otter Plush\n") || strings.Contains(text, "not text") || strings.Contains(text, "color:red") {
		t.Errorf("default fields = %#v", data)
	}

	_, env = ts.call(t, context.Background(), NameScrapePage, map[string]any{
		"url": s.URL + "/article", "preset": "article", "selectors": map[string]any{"extra": "nav"},
	})
	res := decode[struct {
		Data     map[string]any
		Metadata pageMeta
	}](t, env)
	if res.Data["title"] != "Otters hold hands" || res.Data["author"] != "Ada" ||
		res.Data["published"] != "2026-01-27T10:30:00Z" || res.Data["content"] != "Otters hold hands\nThey sleep.\nIn rafts." ||
		res.Data["extra"] != "menu" || res.Metadata.Preset != "article" {
		t.Errorf("article preset: %#v", res)
	}

	_, env = ts.call(t, context.Background(), NameScrapePage, map[string]any{"url": s.URL + "/article", "preset": "nope"})
	if !env.hasCode(CodeInvalidParams) || !strings.Contains(env.Errors[0].Message, "article") {
		t.Errorf("unknown preset: %+v", env.Errors)
	}
}

func TestScrapePageCharset(t *testing.T) {
	gbk, err := simplifiedchinese.GBK.NewEncoder().String(`<html><head><title>水獭</title></head><body><h1>你好，水獭</h1></body></html>`)
	if err != nil {
		t.Fatal(err)
	}
	s := newSite(t, map[string]http.HandlerFunc{"/gbk": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=gbk")
		w.Write([]byte(gbk))
	}})
	ts := newTools(t, loopbackOnly())
	_, env := ts.call(t, context.Background(), NameScrapePage, map[string]any{"url": s.URL + "/gbk", "selectors": map[string]any{"h": "h1"}})
	if data := decode[struct{ Data map[string]any }](t, env).Data; data["h"] != "你好，水獭" {
		t.Errorf("GBK page: %#v", data)
	}
}

func TestScrapePageStatusErrors(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{
		"/captcha": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`<html><head><title>Security check</title><script src="https://www.google.com/recaptcha/api.js"></script></head>
				<body><form><div class="g-recaptcha" data-sitekey="x"></div></form></body></html>`))
		},
		"/cf-challenge": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cf-Mitigated", "challenge")
			w.Header().Set("Cf-Ray", "8a1b2c3d4e5f-AMS")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`<html><head><title>Just a moment...</title></head><body></body></html>`))
		},
		"/interstitial": htmlPage(`<html><head><title>Verify you are human</title></head><body><div class="h-captcha"></div></body></html>`),
		"/login":        htmlPage(`<html><head><title>Log in</title></head><body><h1>Log in</h1><div class="g-recaptcha"></div></body></html>`),
		"/blocked": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`<html><head><title>Access denied</title></head><body>Sorry, you have been blocked. Error code: 1020</body></html>`))
		},
		"/limited": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "120")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		},
		"/json": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"a":1}`))
		},
	})
	ts := newTools(t, loopbackOnly())
	for path, want := range map[string]string{
		"/captcha":      CodeCaptchaRequired,
		"/cf-challenge": CodeCaptchaRequired,
		"/interstitial": CodeCaptchaRequired,
		"/blocked":      CodeBlocked,
		"/limited":      CodeUpstreamRateLimited,
		"/missing":      CodeNotFound,
		"/json":         CodeParseError,
	} {
		res, env := ts.call(t, context.Background(), NameScrapePage, map[string]any{"url": s.URL + path})
		if !res.IsError || len(env.Errors) != 1 || env.Errors[0].Code != want {
			t.Errorf("%s: IsError=%v errors %+v, want %s", path, res.IsError, env.Errors, want)
			continue
		}
		e := env.Errors[0]
		if e.Suggestion == "" || want != CodeParseError && e.Recoverable != recoverable[want] {
			t.Errorf("%s: error %+v lacks a suggestion or has the wrong recoverable flag", path, e)
		}
		// The site's 429 is not otter's own limit (RATE_LIMITED), and says so.
		if want == CodeUpstreamRateLimited && (e.Details["retry_after"] != float64(120) || e.Details["status_code"] != float64(429) ||
			!strings.Contains(e.Message, "the site answered 429") || !strings.Contains(e.Message, "Retry-After: 120") || !e.Recoverable) {
			t.Errorf("/limited: %+v, want the site's 429 and its retry_after 120", e)
		}
		if want == CodeCaptchaRequired && !strings.Contains(e.Suggestion, "does not solve") {
			t.Errorf("%s: suggestion %q should say captchas are not solved", path, e.Suggestion)
		}
	}
	// A captcha widget in an ordinary page is not a challenge.
	_, env := ts.call(t, context.Background(), NameScrapePage, map[string]any{"url": s.URL + "/login", "selectors": map[string]any{"h": "h1"}})
	if env.Status != StatusSuccess {
		t.Errorf("/login with a reCAPTCHA widget: %s %+v, want success", env.Status, env.Errors)
	}
}

func TestScrapePageRobots(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{
		"/robots.txt":   func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("User-agent: *\nDisallow: /private\n")) },
		"/private/page": htmlPage(`<html><title>private</title></html>`),
		"/public":       htmlPage(`<html><title>public</title></html>`),
		"/moved":        func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/private/page", http.StatusFound) },
	})
	ts := newTools(t, loopbackOnly())
	_, env := ts.call(t, context.Background(), NameScrapePage, map[string]any{"url": s.URL + "/private/page"})
	if !env.hasCode(CodeForbidden) || !strings.Contains(env.Errors[0].Message, "robots.txt") || env.Errors[0].Details["reason"] != ReasonRobotsTxt {
		t.Errorf("robots-disallowed page: %+v", env.Errors)
	}
	// An allowed URL that redirects to a disallowed one is refused at the hop.
	_, env = ts.call(t, context.Background(), NameScrapePage, map[string]any{"url": s.URL + "/moved"})
	if !env.hasCode(CodeForbidden) || !strings.Contains(env.Errors[0].Message, "redirected to") || env.Errors[0].Details["reason"] != ReasonRobotsTxt {
		t.Errorf("redirect to a robots-disallowed page: %+v", env.Errors)
	}
	if n := s.count("/private/page"); n != 0 {
		t.Errorf("the disallowed page was fetched %d times", n)
	}
	_, env = ts.call(t, context.Background(), NameScrapePage, map[string]any{"url": s.URL + "/public"})
	if env.Status != StatusSuccess {
		t.Errorf("allowed page: %+v", env.Errors)
	}
	ts.call(t, context.Background(), NameScrapePage, map[string]any{"url": s.URL + "/public"})
	if n := s.count("/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times for four calls, want 1 (cached)", n)
	}

	off := false
	cfg := loopbackOnly()
	cfg.RespectRobots = &off
	ts = newTools(t, cfg)
	_, env = ts.call(t, context.Background(), NameScrapePage, map[string]any{"url": s.URL + "/private/page"})
	if env.Status != StatusSuccess || s.count("/private/page") != 1 {
		t.Errorf("respect_robots = false: %s %+v", env.Status, env.Errors)
	}
}

func TestScrapePageArguments(t *testing.T) {
	ts := newTools(t, loopbackOnly())
	for name, args := range map[string]map[string]any{
		"no url":             {},
		"timeout too small":  {"url": "http://127.0.0.1:1/", "timeout": 1},
		"timeout too big":    {"url": "http://127.0.0.1:1/", "timeout": 300},
		"unknown argument":   {"url": "http://127.0.0.1:1/", "bogus": true},
		"bad selector value": {"url": "http://127.0.0.1:1/", "selectors": map[string]any{"a": 5}},
		"wait_for alone":     {"url": "http://127.0.0.1:1/", "wait_for": "h1"},
		"proxy with render":  {"url": "http://127.0.0.1:1/", "render_js": true, "proxy": "http://127.0.0.1:2"},
	} {
		res, env := ts.call(t, context.Background(), NameScrapePage, args)
		if !res.IsError || !env.hasCode(CodeInvalidParams) {
			t.Errorf("%s: %+v, want INVALID_PARAMS", name, env.Errors)
		}
	}
}

func TestScrapePageProxy(t *testing.T) {
	site := newSite(t, map[string]http.HandlerFunc{"/p": htmlPage(`<h1>direct</h1>`)})
	proxy := newSite(t, map[string]http.HandlerFunc{"/p": htmlPage(`<h1>via proxy</h1>`)})
	ts := newTools(t, loopbackOnly())
	_, env := ts.call(t, context.Background(), NameScrapePage, map[string]any{
		"url": site.URL + "/p", "proxy": proxy.URL, "selectors": map[string]any{"h": "h1"},
	})
	if data := decode[struct{ Data map[string]any }](t, env).Data; data["h"] != "via proxy" {
		t.Errorf("through the proxy: %#v %+v", data, env.Errors)
	}

	strict := newTools(t, config.Tools{})
	_, env = strict.call(t, context.Background(), NameScrapePage, map[string]any{"url": "http://93.184.216.34/", "proxy": proxy.URL})
	if !env.hasCode(CodeForbidden) || env.Errors[0].Field != "proxy" {
		t.Errorf("a proxy on loopback without an exception: %+v", env.Errors)
	}
	if n := proxy.all.Load(); n != 2 { // robots.txt and the page, through the allowed proxy
		t.Errorf("proxy saw %d requests, want 2", n)
	}

	// A refused proxy's password (or token as user name) stays out of the
	// envelope, which the model reads; the proxy is named once.
	for raw, secret := range map[string]string{"http://u:PROXYPW@10.9.9.9:3128": "PROXYPW", "http://PROXYTOKEN@10.9.9.9:3128": "PROXYTOKEN"} {
		res, env := strict.call(t, context.Background(), NameScrapePage, map[string]any{"url": "http://93.184.216.34/", "proxy": raw})
		text := res.Content[0].(*mcp.TextContent).Text
		if !env.hasCode(CodeForbidden) || strings.Contains(text, secret) {
			t.Errorf("proxy %s: the envelope leaks %q or is not FORBIDDEN:\n%s", raw, secret, text)
			continue
		}
		e := env.Errors[0]
		if u, _ := e.Details["url"].(string); !strings.Contains(u, "****@10.9.9.9:3128") {
			t.Errorf("proxy %s: details.url = %q, want the userinfo masked", raw, u)
		}
		if !strings.Contains(e.Message, "refused to connect to proxy 10.9.9.9: private") || strings.Contains(e.Message, "(10.9.9.9)") {
			t.Errorf("proxy %s: message %q, want the proxy named once", raw, e.Message)
		}
	}
}
