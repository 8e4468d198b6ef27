package webdata

import (
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/PuerkitoBio/goquery"
)

// Technology categories.
const (
	catCMS       = "cms"
	catFramework = "framework"
	catLibrary   = "js-library"
	catAnalytics = "analytics"
	catCDN       = "cdn"
	catServer    = "server"
	catLanguage  = "language"
	catAntiBot   = "anti-bot"
	catCaptcha   = "captcha"
	catPlatform  = "platform"
)

// fingerprint recognises one technology. Each matcher is optional; a
// header pattern of "" matches the header's presence.
type fingerprint struct {
	name, category string
	headers        map[string]string // canonical header name → value pattern
	cookies        string            // pattern on cookie names
	generator      string            // pattern on <meta name=generator>
	scripts        string            // pattern on <script src>
	html           string            // pattern on the raw HTML
}

// fingerprints are the technologies analyze_site knows.
var fingerprints = []fingerprint{
	// CMS and site builders
	{name: "WordPress", category: catCMS, generator: `(?i)wordpress`, scripts: `/wp-(content|includes)/`, html: `/wp-content/`, cookies: `^wordpress_|^wp-settings-`},
	{name: "Drupal", category: catCMS, generator: `(?i)drupal`, headers: map[string]string{"X-Drupal-Cache": "", "X-Generator": `(?i)drupal`}, html: `Drupal\.settings|/sites/default/files/`},
	{name: "Joomla", category: catCMS, generator: `(?i)joomla`, html: `/media/jui/`},
	{name: "Ghost", category: catCMS, generator: `(?i)^ghost`},
	{name: "Hugo", category: catCMS, generator: `(?i)^hugo`},
	{name: "Jekyll", category: catCMS, generator: `(?i)^jekyll`},
	{name: "Hexo", category: catCMS, generator: `(?i)^hexo`},
	{name: "Wix", category: catPlatform, generator: `(?i)wix\.com`, headers: map[string]string{"X-Wix-Request-Id": ""}, scripts: `static\.parastorage\.com`},
	{name: "Squarespace", category: catPlatform, generator: `(?i)squarespace`, scripts: `squarespace\.com`},
	{name: "Shopify", category: catPlatform, headers: map[string]string{"X-Shopid": "", "X-Shopify-Stage": ""}, scripts: `cdn\.shopify\.com`, cookies: `^_shopify_`},
	{name: "Magento", category: catPlatform, cookies: `^(X-Magento-Vary|mage-)`, html: `Magento_|mage/cookies`},
	{name: "Webflow", category: catPlatform, generator: `(?i)webflow`, html: `data-wf-page`},

	// Front-end frameworks and libraries
	{name: "Next.js", category: catFramework, headers: map[string]string{"X-Powered-By": `(?i)next\.js`, "X-Nextjs-Cache": ""}, scripts: `/_next/static/`, html: `id="__NEXT_DATA__"|self\.__next_f`},
	{name: "Nuxt", category: catFramework, scripts: `/_nuxt/`, html: `window\.__NUXT__|id="__nuxt"`},
	{name: "Gatsby", category: catFramework, generator: `(?i)^gatsby`, html: `id="___gatsby"`},
	{name: "SvelteKit", category: catFramework, html: `__sveltekit|data-sveltekit`},
	{name: "Astro", category: catFramework, generator: `(?i)^astro`, html: `<astro-island`},
	{name: "Angular", category: catFramework, html: `ng-version="|ng-app`},
	{name: "React", category: catLibrary, scripts: `react(-dom)?(\.production)?(\.min)?\.js`, html: `data-reactroot|id="__NEXT_DATA__"|_reactListening`},
	{name: "Vue.js", category: catLibrary, scripts: `vue(\.runtime)?(\.global)?(\.prod)?(\.min)?\.js`, html: `data-v-[0-9a-f]{8}|data-server-rendered|id="__nuxt"`},
	{name: "jQuery", category: catLibrary, scripts: `jquery[.-]?[0-9.]*(\.min)?\.js`},
	{name: "Bootstrap", category: catLibrary, scripts: `bootstrap(\.bundle)?(\.min)?\.js`, html: `bootstrap(\.min)?\.css`},
	{name: "Alpine.js", category: catLibrary, scripts: `alpine(js)?[.@-]`, html: `x-data="`},
	{name: "htmx", category: catLibrary, scripts: `htmx(\.org)?[.@/]`, html: `hx-(get|post)="`},

	// Analytics and tag managers
	{name: "Google Analytics", category: catAnalytics, scripts: `google-analytics\.com/(analytics|ga)\.js|googletagmanager\.com/gtag/js`},
	{name: "Google Tag Manager", category: catAnalytics, scripts: `googletagmanager\.com/gtm\.js`, html: `googletagmanager\.com/ns\.html`},
	{name: "Baidu Tongji", category: catAnalytics, scripts: `hm\.baidu\.com/hm\.js`, html: `hm\.baidu\.com/hm\.js`},
	{name: "Plausible", category: catAnalytics, scripts: `plausible\.io/js/`},
	{name: "Matomo", category: catAnalytics, scripts: `matomo\.js|piwik\.js`, cookies: `^_pk_id`},

	// CDNs
	{name: "Cloudflare", category: catCDN, headers: map[string]string{"Cf-Ray": "", "Server": `(?i)^cloudflare`}, cookies: `^__cf_bm$|^__cflb$|^cf_clearance$`},
	{name: "Amazon CloudFront", category: catCDN, headers: map[string]string{"X-Amz-Cf-Id": "", "Via": `(?i)cloudfront`}},
	{name: "Fastly", category: catCDN, headers: map[string]string{"X-Fastly-Request-Id": "", "X-Served-By": `(?i)cache-`}},
	{name: "Akamai", category: catCDN, headers: map[string]string{"X-Akamai-Transformed": "", "Server": `(?i)akamai`}},
	{name: "Vercel", category: catCDN, headers: map[string]string{"X-Vercel-Id": "", "Server": `(?i)^vercel`}},
	{name: "Netlify", category: catCDN, headers: map[string]string{"X-Nf-Request-Id": "", "Server": `(?i)^netlify`}},
	{name: "Varnish", category: catCDN, headers: map[string]string{"X-Varnish": "", "Via": `(?i)varnish`}},

	// Servers and languages
	{name: "nginx", category: catServer, headers: map[string]string{"Server": `(?i)^nginx`}},
	{name: "Apache HTTP Server", category: catServer, headers: map[string]string{"Server": `(?i)^apache`}},
	{name: "Microsoft IIS", category: catServer, headers: map[string]string{"Server": `(?i)^microsoft-iis`}},
	{name: "Caddy", category: catServer, headers: map[string]string{"Server": `(?i)^caddy`}},
	{name: "OpenResty", category: catServer, headers: map[string]string{"Server": `(?i)^openresty`}},
	{name: "PHP", category: catLanguage, headers: map[string]string{"X-Powered-By": `(?i)php`}, cookies: `^PHPSESSID$`},
	{name: "ASP.NET", category: catLanguage, headers: map[string]string{"X-Aspnet-Version": "", "X-Powered-By": `(?i)asp\.net`}, cookies: `^ASP\.NET_SessionId$|^\.AspNetCore\.`},
	{name: "Express", category: catFramework, headers: map[string]string{"X-Powered-By": `(?i)^express`}},
	{name: "Django", category: catFramework, cookies: `^csrftoken$|^django_language$`, html: `csrfmiddlewaretoken`},
	{name: "Laravel", category: catFramework, cookies: `^laravel_session$|^XSRF-TOKEN$`},
	{name: "Ruby on Rails", category: catFramework, headers: map[string]string{"X-Runtime": `^[0-9.]+$`}, html: `csrf-param" content="authenticity_token`},
	{name: "Java", category: catLanguage, cookies: `^JSESSIONID$`},

	// Bot management and captchas
	{name: "Cloudflare Bot Management", category: catAntiBot, headers: map[string]string{"Cf-Mitigated": ""}, cookies: `^__cf_bm$|^cf_clearance$`, scripts: `/cdn-cgi/challenge-platform/`},
	{name: "Akamai Bot Manager", category: catAntiBot, cookies: `^_abck$|^bm_sz$|^ak_bmsc$`},
	{name: "PerimeterX (HUMAN)", category: catAntiBot, cookies: `^_px(vid|hd|3|2)?$`, scripts: `client\.px-cdn\.net|/px/client/main\.min\.js`},
	{name: "DataDome", category: catAntiBot, headers: map[string]string{"X-Datadome": "", "X-Dd-B": ""}, cookies: `^datadome$`, scripts: `js\.datadome\.co|captcha-delivery\.com`},
	{name: "Imperva Incapsula", category: catAntiBot, headers: map[string]string{"X-Iinfo": "", "X-Cdn": `(?i)incapsula|imperva`}, cookies: `^(incap_ses_|visid_incap_|nlbi_)`},
	{name: "Kasada", category: catAntiBot, headers: map[string]string{"X-Kpsdk-Ct": "", "X-Kpsdk-Cd": ""}, scripts: `/ips\.js|kpsdk`},
	{name: "AWS WAF", category: catAntiBot, headers: map[string]string{"X-Amzn-Waf-Action": ""}, cookies: `^aws-waf-token$`, scripts: `awswaf\.com|token\.awswaf`},
	{name: "reCAPTCHA", category: catCaptcha, scripts: `google\.com/recaptcha|recaptcha\.net/recaptcha|gstatic\.com/recaptcha`, html: `class="g-recaptcha`},
	{name: "hCaptcha", category: catCaptcha, scripts: `hcaptcha\.com`, html: `class="h-captcha`},
	{name: "Cloudflare Turnstile", category: catCaptcha, scripts: `challenges\.cloudflare\.com/turnstile`, html: `class="cf-turnstile`},
	{name: "GeeTest", category: catCaptcha, scripts: `geetest\.com|gt4?\.js`},
}

// compiledFingerprint is a fingerprint with its patterns compiled.
type compiledFingerprint struct {
	fingerprint
	headers                           map[string]*regexp.Regexp
	cookies, generator, scripts, html *regexp.Regexp
}

// compiledFingerprints are compiled on first use: compiling them at
// start-up cost every otter command, --version included.
var compiledFingerprints = sync.OnceValue(func() []compiledFingerprint {
	re := func(s string) *regexp.Regexp {
		if s == "" {
			return nil
		}
		return regexp.MustCompile(s)
	}
	out := make([]compiledFingerprint, len(fingerprints))
	for i, f := range fingerprints {
		c := compiledFingerprint{fingerprint: f, cookies: re(f.cookies), generator: re(f.generator), scripts: re(f.scripts), html: re(f.html)}
		c.headers = make(map[string]*regexp.Regexp, len(f.headers))
		for h, p := range f.headers {
			c.headers[http.CanonicalHeaderKey(h)] = re(p)
		}
		out[i] = c
	}
	return out
})

// Tech is a technology found on a site, with what gave it away.
type Tech struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	Evidence string `json:"evidence"`
}

// pageSignals are the parts of a page fingerprints look at.
type pageSignals struct {
	header    http.Header
	cookies   []string
	generator string
	scripts   []string
	html      string
}

func signalsOf(p *page, doc *goquery.Document) pageSignals {
	s := pageSignals{header: p.Header, html: string(p.Body)}
	for _, line := range p.Header.Values("Set-Cookie") {
		if c, err := http.ParseSetCookie(line); err == nil {
			s.cookies = append(s.cookies, c.Name)
		}
	}
	if doc != nil {
		s.generator, _ = doc.Find("meta[name='generator' i]").First().Attr("content")
		doc.Find("script[src]").Each(func(_ int, sel *goquery.Selection) {
			src, _ := sel.Attr("src")
			s.scripts = append(s.scripts, src)
		})
	}
	return s
}

// detectTech returns the technologies whose fingerprints match.
func detectTech(s pageSignals) []Tech {
	var out []Tech
	for _, f := range compiledFingerprints() {
		if ev := f.match(s); ev != "" {
			out = append(out, Tech{Name: f.name, Category: f.category, Evidence: ev})
		}
	}
	return out
}

// match returns the evidence for f on a page, or "".
func (f compiledFingerprint) match(s pageSignals) string {
	for h, re := range f.headers {
		for _, v := range s.header.Values(h) {
			if re == nil || re.MatchString(v) {
				return "header " + h + ": " + clip(v, 60)
			}
		}
	}
	if f.cookies != nil {
		for _, c := range s.cookies {
			if f.cookies.MatchString(c) {
				return "cookie " + c
			}
		}
	}
	if f.generator != nil && s.generator != "" && f.generator.MatchString(s.generator) {
		return "meta generator " + clip(s.generator, 60)
	}
	if f.scripts != nil {
		for _, src := range s.scripts {
			if f.scripts.MatchString(src) {
				return "script " + clip(src, 100)
			}
		}
	}
	if f.html != nil {
		if m := f.html.FindString(s.html); m != "" {
			return "page contains " + clip(m, 60)
		}
	}
	return ""
}

// clip shortens s to at most n runes.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
