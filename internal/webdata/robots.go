package webdata

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/temoto/robotstxt"
)

// robotsTTL is how long a robots.txt is reused.
const robotsTTL = 30 * time.Minute

// robotsMaxBytes is how much of a robots.txt is read (Google reads 500 KiB).
const robotsMaxBytes = 500 << 10

// robotsInfo is a site's robots.txt, as fetched.
type robotsInfo struct {
	URL        string   `json:"url"`
	Found      bool     `json:"found"`
	StatusCode int      `json:"status_code,omitempty"`
	Sitemaps   []string `json:"sitemaps,omitempty"`
	CrawlDelay float64  `json:"crawl_delay_seconds,omitempty"` // for otter's agent group
	Error      string   `json:"error,omitempty"`

	data    *robotstxt.RobotsData // nil: no rules
	fetched time.Time
}

// allows reports whether robots.txt lets otter fetch u.
func (r *robotsInfo) allows(u *url.URL) bool {
	if r == nil || r.data == nil {
		return true
	}
	return r.data.TestAgent(u.RequestURI(), RobotsAgent)
}

type robotsCache struct {
	mu  sync.Mutex
	m   map[string]*robotsInfo
	now func() time.Time
}

func newRobotsCache(now func() time.Time) *robotsCache {
	return &robotsCache{m: make(map[string]*robotsInfo), now: now}
}

// robots returns the robots.txt of u's origin, fetched with client (or
// reused for robotsTTL). A robots.txt that cannot be fetched allows
// everything; a 5xx answer disallows everything (Google's rules).
func (k *toolkit) robots(ctx context.Context, client *http.Client, u *url.URL) *robotsInfo {
	origin := u.Scheme + "://" + u.Host
	c := k.robotsTxt
	c.mu.Lock()
	if r, ok := c.m[origin]; ok && c.now().Sub(r.fetched) < robotsTTL {
		c.mu.Unlock()
		return r
	}
	c.mu.Unlock()

	r := &robotsInfo{URL: origin + "/robots.txt", fetched: c.now()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	p, err := k.fetch(client, req)
	if err != nil {
		r.Error = fmt.Sprintf("could not fetch robots.txt: %v", err)
		return r // not cached: a transient failure
	}
	r.StatusCode = p.Status
	body := p.Body
	if len(body) > robotsMaxBytes {
		body = body[:robotsMaxBytes]
	}
	data, err := robotstxt.FromStatusAndBytes(p.Status, body)
	switch {
	case err != nil:
		r.Error = fmt.Sprintf("robots.txt could not be parsed, so it is ignored: %v", err)
	default:
		r.Found = p.Status >= 200 && p.Status < 300
		r.data = data
		r.Sitemaps = data.Sitemaps
		if g := data.FindGroup(RobotsAgent); g != nil {
			r.CrawlDelay = g.CrawlDelay.Seconds()
		}
	}
	c.mu.Lock()
	c.m[origin] = r
	c.mu.Unlock()
	return r
}

// robotsRefused is the error a redirect to a URL robots.txt disallows
// ends the fetch with.
type robotsRefused struct{ info ErrorInfo }

func (r *robotsRefused) Error() string { return r.info.Message }

// obeyingRobots returns client with each redirect hop also checked against
// the robots.txt of its target (the first URL is checked by the caller),
// or client itself when the tools do not respect robots.txt. A refused hop
// ends the fetch with a *robotsRefused (wrapped in a *url.Error).
func (k *toolkit) obeyingRobots(client *http.Client) *http.Client {
	if !k.robotsOn {
		return client
	}
	c := *client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if client.CheckRedirect != nil {
			if err := client.CheckRedirect(req, via); err != nil {
				return err
			}
		}
		if e := k.robotsRefusal(req.Context(), client, req.URL); e != nil {
			e.Message = fmt.Sprintf("%s redirected to %s, but %s", via[len(via)-1].URL.Redacted(), req.URL.Redacted(), e.Message)
			return &robotsRefused{info: *e}
		}
		return nil
	}
	return &c
}

// robotsRefusal checks u against robots.txt when the tools respect it.
func (k *toolkit) robotsRefusal(ctx context.Context, client *http.Client, u *url.URL) *ErrorInfo {
	if !k.robotsOn {
		return nil
	}
	r := k.robots(ctx, client, u)
	if r.allows(u) {
		return nil
	}
	e := newError(CodeForbidden,
		fmt.Sprintf("%s disallows %s for user agent %q", r.URL, u.RequestURI(), RobotsAgent),
		"respect the site's wishes; where you are entitled to fetch it anyway, set [tools] respect_robots = false")
	e.Details = map[string]any{"url": u.String(), "reason": ReasonRobotsTxt, "robots_txt": r.URL}
	return &e
}
