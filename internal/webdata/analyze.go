package webdata

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const analyzeSiteSchema = `{
  "type": "object",
  "required": ["url"],
  "additionalProperties": false,
  "properties": {
    "url": {"type": "string", "format": "uri", "description": "A page of the site, usually its home page."},
    "depth": {
      "type": "string",
      "enum": ["quick", "standard", "deep"],
      "default": "standard",
      "description": "quick: the page only; standard: also robots.txt and the sitemap; deep: also samples up to 3 linked pages of the same site."
    }
  }
}`

// Anti-crawl levels.
const (
	LevelLow     = "LOW"
	LevelMedium  = "MEDIUM"
	LevelHigh    = "HIGH"
	LevelExtreme = "EXTREME"
)

// Render modes.
const (
	RenderServer = "server" // server-rendered HTML; no JavaScript needed
	RenderHybrid = "hybrid" // server-rendered, then hydrated by a JS framework
	RenderClient = "client" // an app shell; the content needs JavaScript (render_js)
)

type analyzeArgs struct {
	URL   string `json:"url"`
	Depth string `json:"depth"`
}

// SiteReport is analyze_site's result.
type SiteReport struct {
	SiteInfo            SiteInfo      `json:"site_info"`
	AntiCrawl           AntiCrawl     `json:"anti_crawl"`
	Robots              *robotsInfo   `json:"robots,omitempty"`
	Sitemap             *SitemapInfo  `json:"sitemap,omitempty"`
	Samples             []SampledPage `json:"sampled_pages,omitempty"`
	RecommendedStrategy Strategy      `json:"recommended_strategy"`
	Depth               string        `json:"depth"`
}

// SiteInfo describes the site.
type SiteInfo struct {
	Domain         string   `json:"domain"`
	URL            string   `json:"url"`
	FinalURL       string   `json:"final_url,omitempty"`
	StatusCode     int      `json:"status_code,omitempty"`
	Title          string   `json:"title,omitempty"`
	TechStack      []Tech   `json:"tech_stack"`
	RenderMode     string   `json:"render_mode"` // server, hybrid, client, or unknown
	RenderEvidence []string `json:"render_evidence,omitempty"`
	// Fetched is false when robots.txt disallowed the page or it could not be loaded.
	Fetched bool   `json:"fetched"`
	Error   string `json:"error,omitempty"`
}

// AntiCrawl grades the site's defences against automated access.
type AntiCrawl struct {
	Level             string    `json:"level"` // LOW, MEDIUM, HIGH or EXTREME
	Score             int       `json:"score"`
	Features          []Feature `json:"features"`
	SignatureRequired bool      `json:"signature_required"` // requests need tokens computed by the site's scripts
}

// Feature is one anti-crawl signal.
type Feature struct {
	Name     string `json:"name"`
	Evidence string `json:"evidence"`
	Weight   int    `json:"weight"`
}

// SitemapInfo summarises a sitemap.
type SitemapInfo struct {
	URL    string   `json:"url"`
	Found  bool     `json:"found"`
	Kind   string   `json:"kind,omitempty"` // urlset or sitemapindex
	Count  int      `json:"count"`          // URLs, or child sitemaps of an index
	Sample []string `json:"sample,omitempty"`
	Error  string   `json:"error,omitempty"`
}

// SampledPage is a linked page fetched at depth deep.
type SampledPage struct {
	URL        string `json:"url"`
	StatusCode int    `json:"status_code,omitempty"`
	RenderMode string `json:"render_mode,omitempty"`
	Challenge  string `json:"challenge,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Strategy is the recommended way to collect data from the site.
type Strategy struct {
	Approach  string     `json:"approach"` // static_http, render_js, embedded_json, do_not_crawl
	Modules   []string   `json:"modules"`  // otter tools and settings to use
	RateLimit PoliteRate `json:"rate_limit"`
	Notes     []string   `json:"notes,omitempty"`
}

// PoliteRate is a request rate that does not burden the site.
type PoliteRate struct {
	RequestsPerMinute float64 `json:"requests_per_minute"`
	DelaySeconds      float64 `json:"delay_seconds"`
	Concurrency       int     `json:"concurrency"`
}

func (k *toolkit) analyzeSiteDef() def {
	return def{
		name:  NameAnalyzeSite,
		title: "Analyse a web site",
		description: "Analyse a site before scraping it: technology stack (headers, meta generator, scripts, cookies), " +
			"render mode (server-rendered vs client app), robots.txt and sitemap, anti-crawl signals graded LOW to EXTREME, " +
			"and a recommended strategy with a polite request rate. depth: quick, standard (default) or deep.",
		schema: analyzeSiteSchema,
		annotations: &mcp.ToolAnnotations{
			Title:          "Analyse a web site",
			ReadOnlyHint:   true,
			IdempotentHint: true,
			OpenWorldHint:  ptr(true),
		},
		run: k.analyzeSite,
	}
}

func (k *toolkit) analyzeSite(ctx context.Context, raw json.RawMessage) outcome {
	var a analyzeArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return failed(invalidParams("", "%v", err))
	}
	if a.Depth == "" {
		a.Depth = "standard"
	}
	u, bad := k.checkURL("url", a.URL)
	if bad != nil {
		return failed(*bad)
	}
	ctx, cancel, timeout := withTimeout(ctx, 0, 60)
	defer cancel()

	rep := &SiteReport{Depth: a.Depth, SiteInfo: SiteInfo{Domain: u.Hostname(), URL: u.String(), TechStack: []Tech{}, RenderMode: "unknown"}}
	var feats []Feature
	add := func(name, evidence string, weight int) {
		feats = append(feats, Feature{Name: name, Evidence: evidence, Weight: weight})
	}

	steps := map[string]int{"quick": 2, "standard": 3, "deep": 4}[a.Depth]
	progress(ctx, 0, steps, "reading robots.txt")
	allowed := true
	var robots *robotsInfo
	if a.Depth != "quick" || k.robotsOn {
		robots = k.robots(ctx, k.client, u)
		allowed = !k.robotsOn || robots.allows(u)
		if !robots.allows(u) {
			add("robots_disallow", fmt.Sprintf("robots.txt disallows %s for %s", u.RequestURI(), RobotsAgent), 2)
		}
		if robots.CrawlDelay > 0 {
			add("crawl_delay", fmt.Sprintf("robots.txt asks for %gs between requests", robots.CrawlDelay), 1)
		}
		if a.Depth != "quick" {
			rep.Robots = robots // quick consults robots.txt without reporting it
		}
	}

	var doc *goquery.Document
	var errs []ErrorInfo
	var home *page
	progress(ctx, 1, steps, "fetching "+u.String())
	if !allowed {
		rep.SiteInfo.Error = "robots.txt disallows this page, so it was not fetched"
	} else {
		p, err := k.get(ctx, u.String())
		if err != nil {
			e := fetchError(err, u.String(), timeout)
			if e.Code == CodeInvalidParams || e.Code == CodeForbidden {
				return failed(e) // refused by the address policy: nothing to analyse
			}
			rep.SiteInfo.Error = e.Message
			errs = append(errs, e)
		} else {
			home = p
			rep.SiteInfo.Fetched = true
			rep.SiteInfo.StatusCode = p.Status
			if final := p.URL.String(); final != u.String() {
				rep.SiteInfo.FinalURL = final
			}
			doc, _ = parseHTML(p.Body, p.ContentType)
			if doc != nil {
				rep.SiteInfo.Title = strings.TrimSpace(doc.Find("title").First().Text())
			}
			rep.SiteInfo.TechStack = append(rep.SiteInfo.TechStack, detectTech(signalsOf(p, doc))...)
			rep.SiteInfo.RenderMode, rep.SiteInfo.RenderEvidence = renderMode(doc, rep.SiteInfo.TechStack)
			pageFeatures(p, rep.SiteInfo.TechStack, add)
		}
	}

	if a.Depth != "quick" {
		progress(ctx, 2, steps, "reading the sitemap")
		rep.Sitemap = k.sitemap(ctx, u, rep.Robots)
	}
	if a.Depth == "deep" && doc != nil && home != nil {
		progress(ctx, 3, steps, "sampling linked pages")
		rep.Samples = k.samplePages(ctx, home.URL, doc)
		for _, s := range rep.Samples {
			if s.Challenge != "" {
				add("challenge_on_inner_pages", s.URL+": "+s.Challenge, 3)
				break
			}
		}
	}

	progress(ctx, steps, steps, "done")
	rep.AntiCrawl = grade(feats, rep.SiteInfo.TechStack)
	rep.RecommendedStrategy = recommend(rep, robots, allowed)
	return outcome{result: rep, errs: errs}
}

// pageFeatures adds the anti-crawl signals of the fetched page.
func pageFeatures(p *page, tech []Tech, add func(string, string, int)) {
	if c := detectChallenge(p.Status, p.Header, p.Body); c != nil {
		if c.kind == challengeCaptcha {
			add("challenge_page", fmt.Sprintf("%s challenge on the first request (%d): %s", c.provider, p.Status, c.evidence), 6)
		} else {
			add("blocked", fmt.Sprintf("%s refused the request (%d): %s", c.provider, p.Status, c.evidence), 6)
		}
	} else {
		switch p.Status {
		case http.StatusTooManyRequests:
			add("rate_limited", "429 Too Many Requests on the first request", 4)
		case http.StatusForbidden:
			add("forbidden", "403 Forbidden on the first request", 4)
		}
	}
	for _, t := range tech {
		switch t.Category {
		case catAntiBot:
			weight := 3
			if t.Name == "Cloudflare Bot Management" {
				weight = 2 // its __cf_bm cookie is on most Cloudflare sites; a challenge, when it comes, is graded on its own
			}
			add("bot_management", t.Name+" ("+t.Evidence+")", weight)
		case catCaptcha:
			add("captcha_widget", t.Name+" ("+t.Evidence+")", 2)
		case catCDN:
			if t.Name == "Cloudflare" || t.Name == "Akamai" {
				add("cdn_waf", t.Name+" in front of the site ("+t.Evidence+")", 1)
			}
		}
	}
	for _, h := range []string{"X-Ratelimit-Limit", "Ratelimit-Policy", "Ratelimit-Limit", "Retry-After"} {
		if v := p.Header.Get(h); v != "" {
			add("rate_limit_headers", h+": "+clip(v, 40), 1)
			break
		}
	}
}

// grade sums the features' weights into a level.
func grade(feats []Feature, tech []Tech) AntiCrawl {
	ac := AntiCrawl{Features: feats}
	if ac.Features == nil {
		ac.Features = []Feature{}
	}
	for _, f := range feats {
		ac.Score += f.Weight
	}
	for _, t := range tech {
		switch t.Name {
		case "Akamai Bot Manager", "Kasada", "PerimeterX (HUMAN)", "DataDome":
			ac.SignatureRequired = true // their sensors compute tokens the requests must carry
		}
	}
	switch {
	case ac.Score >= 6:
		ac.Level = LevelExtreme
	case ac.Score >= 4:
		ac.Level = LevelHigh
	case ac.Score >= 2:
		ac.Level = LevelMedium
	default:
		ac.Level = LevelLow
	}
	return ac
}

// renderMode tells a server-rendered page from a client-side app shell.
func renderMode(doc *goquery.Document, tech []Tech) (string, []string) {
	if doc == nil {
		return "unknown", nil
	}
	body := doc.Find("body")
	text := len([]rune(nodeText(body.Get(0))))
	scripts := doc.Find("script").Length()
	var ev []string
	ev = append(ev, fmt.Sprintf("%d characters of visible text, %d scripts", text, scripts))
	shell := false
	doc.Find("#root, #app, #__next, #__nuxt, #___gatsby, [data-reactroot], app-root").Each(func(_ int, s *goquery.Selection) {
		if strings.TrimSpace(nodeText(s.Get(0))) == "" {
			shell = true
			id, _ := s.Attr("id")
			ev = append(ev, fmt.Sprintf("empty mount point <%s id=%q>", goquery.NodeName(s), id))
		}
	})
	noscript := strings.ToLower(doc.Find("noscript").Text())
	needsJS := strings.Contains(noscript, "enable javascript") || strings.Contains(noscript, "javascript to run") ||
		strings.Contains(noscript, "启用 javascript") || strings.Contains(noscript, "启用javascript")
	if needsJS {
		ev = append(ev, "noscript asks to enable JavaScript")
	}
	framework := ""
	for _, t := range tech {
		if t.Category == catFramework && t.Name != "Express" && t.Name != "Django" && t.Name != "Laravel" && t.Name != "Ruby on Rails" ||
			t.Name == "React" || t.Name == "Vue.js" {
			framework = t.Name
			break
		}
	}
	switch {
	case text < 200 && (shell || needsJS || scripts > 0 && framework != ""):
		return RenderClient, ev
	case framework != "":
		ev = append(ev, framework+" hydrates server-rendered HTML")
		return RenderHybrid, ev
	default:
		return RenderServer, ev
	}
}

// recommend turns the findings into a strategy.
func recommend(rep *SiteReport, robots *robotsInfo, allowed bool) Strategy {
	s := Strategy{RateLimit: PoliteRate{Concurrency: 1}}
	rpm := 20.0
	switch rep.AntiCrawl.Level {
	case LevelMedium:
		rpm = 10
	case LevelHigh:
		rpm = 4
	case LevelExtreme:
		rpm = 0
	}
	if robots != nil && robots.CrawlDelay > 0 {
		if r := 60 / robots.CrawlDelay; r < rpm {
			rpm = r
		}
		s.Notes = append(s.Notes, fmt.Sprintf("robots.txt asks for a crawl delay of %gs", robots.CrawlDelay))
	}
	switch {
	case !allowed:
		s.Approach = "do_not_crawl"
		s.Modules = []string{}
		rpm = 0
		s.Notes = append(s.Notes, "robots.txt disallows this page for otter; respect it or ask the site owner for access")
	case rep.AntiCrawl.Level == LevelExtreme:
		s.Approach = "do_not_crawl"
		s.Modules = []string{}
		s.Notes = append(s.Notes, "the site challenges or blocks automated access; otter does not solve captchas or bypass bot checks — look for an official API or data export, or ask the site owner")
	case rep.SiteInfo.RenderMode == RenderClient:
		s.Approach = "render_js"
		s.Modules = []string{"scrape_page (render_js: true, wait_for: a selector of the content)", "scrape_api (for the JSON endpoints the app calls)"}
		s.Notes = append(s.Notes, "the content is built by JavaScript; the JSON API the app uses is often simpler to call directly")
	case hasTech(rep.SiteInfo.TechStack, "Next.js") || hasTech(rep.SiteInfo.TechStack, "Nuxt"):
		s.Approach = "embedded_json"
		s.Modules = []string{`scrape_page (selectors: {"data": "script#__NEXT_DATA__"} or the page's fields)`, "scrape_page"}
		s.Notes = append(s.Notes, "server-rendered pages carry their data as JSON in a script element")
	default:
		s.Approach = "static_http"
		s.Modules = []string{"scrape_page", "export_data"}
	}
	if rep.AntiCrawl.Level == LevelHigh {
		s.Notes = append(s.Notes, "bot defences are present: keep to the rate, expect CAPTCHA_REQUIRED or BLOCKED answers and stop when they come")
	}
	if rep.Sitemap != nil && rep.Sitemap.Found {
		s.Notes = append(s.Notes, fmt.Sprintf("the sitemap %s lists %d entries: use it to find pages instead of crawling links", rep.Sitemap.URL, rep.Sitemap.Count))
	}
	s.RateLimit.RequestsPerMinute = rpm
	if rpm > 0 {
		s.RateLimit.DelaySeconds = 60 / rpm
	}
	return s
}

func hasTech(tech []Tech, name string) bool {
	for _, t := range tech {
		if t.Name == name {
			return true
		}
	}
	return false
}

// sitemap fetches and summarises the site's sitemap: the first listed in
// robots.txt, else /sitemap.xml.
func (k *toolkit) sitemap(ctx context.Context, u *url.URL, r *robotsInfo) *SitemapInfo {
	loc := u.Scheme + "://" + u.Host + "/sitemap.xml"
	if r != nil && len(r.Sitemaps) > 0 {
		loc = r.Sitemaps[0]
	}
	si := &SitemapInfo{URL: loc}
	if _, err := k.policy.CheckURL(loc); err != nil {
		si.Error = err.Error()
		return si
	}
	p, err := k.get(ctx, loc)
	if err != nil {
		si.Error = fetchError(err, loc, 0).Message
		return si
	}
	if p.Status != http.StatusOK {
		si.Error = fmt.Sprintf("status %d", p.Status)
		return si
	}
	body := p.Body
	if bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err == nil {
			body, err = io.ReadAll(io.LimitReader(zr, 50<<20))
		}
		if err != nil {
			si.Error = "gzip: " + err.Error()
			return si
		}
	}
	var doc struct {
		XMLName xml.Name
		URLs    []struct {
			Loc string `xml:"loc"`
		} `xml:"url"`
		Sitemaps []struct {
			Loc string `xml:"loc"`
		} `xml:"sitemap"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		si.Error = "not a sitemap: " + err.Error()
		return si
	}
	si.Found = true
	si.Kind = doc.XMLName.Local
	locs := doc.URLs
	if si.Kind == "sitemapindex" {
		locs = doc.Sitemaps
	}
	si.Count = len(locs)
	for i := 0; i < len(locs) && i < 5; i++ {
		si.Sample = append(si.Sample, strings.TrimSpace(locs[i].Loc))
	}
	return si
}

// samplePages fetches up to 3 same-site links of the page.
func (k *toolkit) samplePages(ctx context.Context, base *url.URL, doc *goquery.Document) []SampledPage {
	seen := map[string]bool{base.String(): true}
	var links []string
	doc.Find("a[href]").EachWithBreak(func(_ int, s *goquery.Selection) bool {
		href, _ := s.Attr("href")
		l, err := base.Parse(strings.TrimSpace(href))
		if err != nil || l.Host != base.Host || (l.Scheme != "http" && l.Scheme != "https") {
			return true
		}
		l.Fragment = ""
		if !seen[l.String()] {
			seen[l.String()] = true
			links = append(links, l.String())
		}
		return len(links) < 3
	})
	sort.Strings(links)
	var out []SampledPage
	for _, l := range links {
		sp := SampledPage{URL: l}
		lu, _ := url.Parse(l)
		if k.robotsOn && !k.robots(ctx, k.client, lu).allows(lu) {
			sp.Error = "disallowed by robots.txt; not fetched"
			out = append(out, sp)
			continue
		}
		p, err := k.get(ctx, l)
		if err != nil {
			sp.Error = fetchError(err, l, 0).Message
			out = append(out, sp)
			continue
		}
		sp.StatusCode = p.Status
		if c := detectChallenge(p.Status, p.Header, p.Body); c != nil {
			sp.Challenge = c.provider + ": " + c.evidence
		}
		if d, err := parseHTML(p.Body, p.ContentType); err == nil {
			sp.RenderMode, _ = renderMode(d, detectTech(signalsOf(p, d)))
		}
		out = append(out, sp)
	}
	return out
}
