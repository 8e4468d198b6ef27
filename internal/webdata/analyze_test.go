package webdata

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/tool"
)

// wordpressSite is a server-rendered WordPress-like site behind nginx/PHP,
// with robots.txt (crawl delay, a disallowed area, a sitemap) and a sitemap.
func wordpressSite(t *testing.T) *site {
	var s *site
	s = newSite(t, map[string]http.HandlerFunc{
		"/": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Server", "nginx/1.25.3")
			w.Header().Set("X-Powered-By", "PHP/8.2.1")
			http.SetCookie(w, &http.Cookie{Name: "PHPSESSID", Value: "abc"})
			htmlPage(`<!doctype html><html><head><title>Otter News</title>
				<meta name="generator" content="WordPress 6.4.2">
				<link rel="stylesheet" href="/wp-content/themes/otter/style.css">
				<script src="/wp-includes/js/jquery/jquery.min.js"></script>
				<script src="https://www.googletagmanager.com/gtag/js?id=G-XYZ"></script>
				</head><body><header><nav><a href="/about">About</a> <a href="/news/1">News</a> <a href="/private/admin">Admin</a></nav></header>
				<main><article><h1>Otters return to the river</h1>
				<p>`+strings.Repeat("After decades away, otters are back in the river and the town is delighted. ", 8)+`</p></article></main>
				</body></html>`)(w, r)
		},
		"/robots.txt": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "User-agent: *\nDisallow: /private/\nCrawl-delay: 5\n\nSitemap: %s/sitemap_index.xml\n", s.URL)
		},
		"/sitemap_index.xml": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
				<url><loc>%[1]s/</loc></url><url><loc>%[1]s/about</loc></url><url><loc>%[1]s/news/1</loc></url></urlset>`, s.URL)
		},
		"/about":         htmlPage(`<html><title>About</title><body><p>We write about otters.</p></body></html>`),
		"/news/1":        htmlPage(`<html><title>News</title><body><p>Otters.</p></body></html>`),
		"/private/admin": htmlPage(`<html><title>Admin</title></html>`),
	})
	return s
}

func TestAnalyzeSiteServerRendered(t *testing.T) {
	s := wordpressSite(t)
	ts := newTools(t, loopbackOnly())
	var reports []tool.Progress
	ctx := tool.WithProgress(context.Background(), func(p tool.Progress) { reports = append(reports, p) })
	_, env := ts.call(t, ctx, NameAnalyzeSite, map[string]any{"url": s.URL + "/", "depth": "deep"})
	if len(reports) != 5 || reports[4].Progress != 4 || reports[4].Total != 4 {
		t.Errorf("progress reports = %+v, want 0..4 of 4", reports)
	}
	if env.Status != StatusSuccess {
		t.Fatalf("status %s: %+v", env.Status, env.Errors)
	}
	rep := decode[SiteReport](t, env)
	tech := map[string]string{}
	for _, x := range rep.SiteInfo.TechStack {
		tech[x.Name] = x.Category
	}
	for _, want := range []string{"WordPress", "nginx", "PHP", "jQuery", "Google Analytics"} {
		if _, ok := tech[want]; !ok {
			t.Errorf("tech stack %v lacks %s", rep.SiteInfo.TechStack, want)
		}
	}
	if _, ok := tech["Cloudflare"]; ok {
		t.Errorf("Cloudflare detected on a site without it: %v", rep.SiteInfo.TechStack)
	}
	if rep.SiteInfo.RenderMode != RenderServer || rep.SiteInfo.Title != "Otter News" || rep.SiteInfo.Domain != "127.0.0.1" {
		t.Errorf("site info = %+v", rep.SiteInfo)
	}
	if rep.Robots == nil || !rep.Robots.Found || rep.Robots.CrawlDelay != 5 || len(rep.Robots.Sitemaps) != 1 {
		t.Errorf("robots = %+v", rep.Robots)
	}
	if rep.Sitemap == nil || !rep.Sitemap.Found || rep.Sitemap.Kind != "urlset" || rep.Sitemap.Count != 3 || rep.Sitemap.URL != s.URL+"/sitemap_index.xml" {
		t.Errorf("sitemap = %+v", rep.Sitemap)
	}
	if rep.AntiCrawl.Level != LevelLow {
		t.Errorf("anti-crawl = %+v, want LOW", rep.AntiCrawl)
	}
	st := rep.RecommendedStrategy
	if st.Approach != "static_http" || st.RateLimit.RequestsPerMinute != 12 || st.RateLimit.DelaySeconds != 5 {
		t.Errorf("strategy = %+v, want static_http at the crawl delay (12/min)", st)
	}
	sampled := map[string]SampledPage{}
	for _, p := range rep.Samples {
		sampled[strings.TrimPrefix(p.URL, s.URL)] = p
	}
	if sampled["/about"].StatusCode != 200 || sampled["/news/1"].StatusCode != 200 || sampled["/private/admin"].Error == "" {
		t.Errorf("sampled pages = %+v", rep.Samples)
	}
	if n := s.count("/private/admin"); n != 0 {
		t.Errorf("deep analysis fetched a robots-disallowed page %d times", n)
	}

	// quick: the page only, no sitemap, no samples.
	_, env = ts.call(t, context.Background(), NameAnalyzeSite, map[string]any{"url": s.URL + "/", "depth": "quick"})
	rep = decode[SiteReport](t, env)
	if rep.Sitemap != nil || rep.Samples != nil || len(rep.SiteInfo.TechStack) == 0 || rep.RecommendedStrategy.RateLimit.RequestsPerMinute != 12 {
		t.Errorf("quick analysis = %+v", rep)
	}
}

func TestAnalyzeSiteClientAppAndDefences(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{
		"/app": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cf-Ray", "8a1b2c3d4e5f-AMS")
			w.Header().Set("Server", "cloudflare")
			http.SetCookie(w, &http.Cookie{Name: "__cf_bm", Value: "x"})
			htmlPage(`<!doctype html><html><head><title>Otter App</title>
				<script defer src="/static/js/react-dom.production.min.js"></script>
				<script defer src="/static/js/main.4f2a.js"></script></head>
				<body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div></body></html>`)(w, r)
		},
		"/walled": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cf-Mitigated", "challenge")
			w.Header().Set("Cf-Ray", "8a1b2c3d4e5f-AMS")
			w.WriteHeader(http.StatusForbidden)
			htmlPage(`<html><head><title>Just a moment...</title></head><body><script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1"></script></body></html>`)(w, r)
		},
		"/shop": func(w http.ResponseWriter, r *http.Request) {
			http.SetCookie(w, &http.Cookie{Name: "_abck", Value: "x"})
			http.SetCookie(w, &http.Cookie{Name: "bm_sz", Value: "y"})
			htmlPage(`<html><head><title>Shop</title></head><body><h1>Shop</h1><p>`+strings.Repeat("Products for otters. ", 20)+`</p>
				<form><div class="g-recaptcha" data-sitekey="k"></div></form></body></html>`)(w, r)
		},
	})
	ts := newTools(t, loopbackOnly())
	analyze := func(path string) SiteReport {
		_, env := ts.call(t, context.Background(), NameAnalyzeSite, map[string]any{"url": s.URL + path})
		return decode[SiteReport](t, env)
	}

	app := analyze("/app")
	if app.SiteInfo.RenderMode != RenderClient || app.RecommendedStrategy.Approach != "render_js" {
		t.Errorf("client app: render %s (%v), approach %s", app.SiteInfo.RenderMode, app.SiteInfo.RenderEvidence, app.RecommendedStrategy.Approach)
	}
	if app.AntiCrawl.Level != LevelMedium || !hasTech(app.SiteInfo.TechStack, "Cloudflare") || !hasTech(app.SiteInfo.TechStack, "React") {
		t.Errorf("client app behind Cloudflare: %+v %+v", app.AntiCrawl, app.SiteInfo.TechStack)
	}

	walled := analyze("/walled")
	if walled.AntiCrawl.Level != LevelExtreme || walled.RecommendedStrategy.Approach != "do_not_crawl" || walled.RecommendedStrategy.RateLimit.RequestsPerMinute != 0 {
		t.Errorf("challenge page: %+v %+v", walled.AntiCrawl, walled.RecommendedStrategy)
	}

	shop := analyze("/shop")
	if shop.AntiCrawl.Level != LevelHigh || !shop.AntiCrawl.SignatureRequired || !hasTech(shop.SiteInfo.TechStack, "Akamai Bot Manager") || !hasTech(shop.SiteInfo.TechStack, "reCAPTCHA") {
		t.Errorf("bot-managed shop: %+v %+v", shop.AntiCrawl, shop.SiteInfo.TechStack)
	}
	if shop.RecommendedStrategy.RateLimit.RequestsPerMinute != 4 {
		t.Errorf("HIGH should recommend 4 requests a minute: %+v", shop.RecommendedStrategy)
	}
}

func TestAnalyzeSiteRespectsRobots(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{
		"/robots.txt": func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: otter\nDisallow: /\n") },
		"/":           htmlPage(`<html><title>home</title></html>`),
	})
	ts := newTools(t, loopbackOnly())
	_, env := ts.call(t, context.Background(), NameAnalyzeSite, map[string]any{"url": s.URL + "/"})
	rep := decode[SiteReport](t, env)
	if rep.SiteInfo.Fetched || rep.RecommendedStrategy.Approach != "do_not_crawl" || s.count("/") != 0 {
		t.Errorf("robots.txt disallowing otter: fetched=%v approach=%s hits=%d", rep.SiteInfo.Fetched, rep.RecommendedStrategy.Approach, s.count("/"))
	}
}
