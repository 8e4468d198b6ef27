package webdata

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/otter-sh/otter/internal/safehttp"
	"github.com/otter-sh/otter/internal/tool"
)

// Reasons in the details of INVALID_PARAMS and FORBIDDEN errors, telling
// apart the refusals that share a code.
const (
	ReasonInvalidURL     = "invalid_url"     // the URL's syntax or scheme was refused
	ReasonBlockedAddress = "blocked_address" // the address policy refused the host, a redirect or a proxy
	ReasonRobotsTxt      = "robots_txt"      // robots.txt disallows the page
	ReasonHTTPStatus     = "http_status"     // the site itself answered 403
)

// page is a fetched response.
type page struct {
	URL         *url.URL // after redirects
	Status      int
	Header      http.Header
	Body        []byte
	ContentType string
	Elapsed     time.Duration
	Rendered    bool
}

// fetch sends req with client and reads the whole (capped) body.
func (k *toolkit) fetch(client *http.Client, req *http.Request) (*page, error) {
	start := k.now()
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &page{
		URL:         resp.Request.URL,
		Status:      resp.StatusCode,
		Header:      resp.Header,
		Body:        body,
		ContentType: resp.Header.Get("Content-Type"),
		Elapsed:     k.now().Sub(start),
	}, nil
}

// get fetches u with the shared client.
func (k *toolkit) get(ctx context.Context, u string) (*page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	return k.fetch(k.client, req)
}

// checkURL parses and checks a URL argument; the ErrorInfo is set when
// it is refused.
func (k *toolkit) checkURL(field, raw string) (*url.URL, *ErrorInfo) {
	u, err := k.policy.CheckURL(raw)
	if err != nil {
		e := fetchError(err, raw, 0)
		e.Field = field
		return nil, &e
	}
	return u, nil
}

// fetchError turns an error from fetching u into an envelope error. u's
// userinfo is masked (a proxy's password must not reach the transcript).
func fetchError(err error, u string, timeout time.Duration) ErrorInfo {
	u = safehttp.RedactURL(u)
	var be *safehttp.BlockedError
	var tl *safehttp.BodyTooLargeError
	var ne net.Error
	switch {
	case errors.Is(err, safehttp.ErrInvalidURL):
		e := newError(CodeInvalidParams, unwrapURLError(err).Error(), "give an absolute http:// or https:// URL with a host name or a dotted-decimal address")
		e.Field = "url"
		e.Details = map[string]any{"url": u, "reason": ReasonInvalidURL}
		return e
	case errors.As(err, &be):
		e := newError(CodeForbidden, be.Error(),
			"otter does not fetch loopback, private, link-local or other internal addresses; if this one is intended, the user (not a tool call) must allow it in their config, as the message says")
		e.Details = map[string]any{"url": u, "reason": ReasonBlockedAddress, "address": be.Addr.String(), "range": be.Range}
		return e
	case errors.As(err, &tl):
		e := newError(CodeNetworkError, tl.Error(), "raise [tools] max_body_bytes if the page is meant to be this large")
		e.Recoverable = false
		e.Details = map[string]any{"url": u, "limit_bytes": tl.Limit}
		return e
	case errors.Is(err, safehttp.ErrTooManyRedirects):
		e := newError(CodeNetworkError, unwrapURLError(err).Error(), "the site redirects in a loop; try the final URL directly")
		e.Details = map[string]any{"url": u}
		return e
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		msg := fmt.Sprintf("no answer from %s in time", u)
		details := map[string]any{"url": u}
		if timeout > 0 {
			msg = fmt.Sprintf("no answer from %s within %s", u, timeout)
			details["timeout"] = int(timeout.Seconds())
		}
		e := newError(CodeNetworkTimeout, msg, "raise the timeout argument or check that the site is up")
		e.Details = details
		return e
	default:
		e := newError(CodeNetworkError, unwrapURLError(err).Error(), "check the URL and that the site is reachable, then retry")
		e.Details = map[string]any{"url": u}
		return e
	}
}

// unwrapURLError drops net/http's `Get "url": ` prefix when the inner
// error says enough.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		var se *safehttp.URLError
		if errors.As(ue.Err, &se) {
			return se
		}
		if errors.Is(ue.Err, safehttp.ErrTooManyRedirects) {
			return ue.Err
		}
	}
	return err
}

// statusError reports an HTTP response that is not a usable page: a
// captcha or challenge, a block, an error status. It returns nil for a
// 2xx or 3xx page without a challenge.
func statusError(p *page) *ErrorInfo {
	u := safehttp.RedactURL(p.URL.String())
	if c := detectChallenge(p.Status, p.Header, p.Body); c != nil {
		switch c.kind {
		case challengeCaptcha:
			e := newError(CodeCaptchaRequired,
				fmt.Sprintf("%s answered %d with a %s challenge page (%s)", u, p.Status, c.provider, c.evidence),
				"otter does not solve captchas or bypass bot checks: open the page in a browser yourself, or use the site's official API")
			e.Details = map[string]any{"url": u, "status_code": p.Status, "provider": c.provider, "evidence": c.evidence}
			return &e
		case challengeBlock:
			e := newError(CodeBlocked,
				fmt.Sprintf("%s refused the request (%d, %s: %s)", u, p.Status, c.provider, c.evidence),
				"the site blocks automated access from this address; respect it, or ask the site owner for access or an API")
			e.Details = map[string]any{"url": u, "status_code": p.Status, "provider": c.provider, "evidence": c.evidence}
			return &e
		}
	}
	if p.Status < 400 {
		return nil
	}
	details := map[string]any{"url": u, "status_code": p.Status}
	var e ErrorInfo
	switch {
	case p.Status == http.StatusUnauthorized:
		e = newError(CodeUnauthorized, fmt.Sprintf("%s needs authentication (401)", u), "pass credentials in headers (scrape_api) if you are entitled to them")
	case p.Status == http.StatusForbidden:
		e = newError(CodeForbidden, fmt.Sprintf("%s answered 403 Forbidden", u), "the page is not public; check the URL")
		details["reason"] = ReasonHTTPStatus
	case p.Status == http.StatusNotFound || p.Status == http.StatusGone:
		e = newError(CodeNotFound, fmt.Sprintf("%s does not exist (%d)", u, p.Status), "check the URL")
	case p.Status == http.StatusTooManyRequests:
		// The site's limit, not otter's (RATE_LIMITED): see CodeUpstreamRateLimited.
		retry := retryAfter(p.Header.Get("Retry-After"), time.Now())
		e = newError(CodeUpstreamRateLimited, fmt.Sprintf("the site answered 429 Too Many Requests: %s is rate limiting otter's requests", u),
			"slow down and wait before retrying; the site set no Retry-After")
		if retry > 0 {
			details["retry_after"] = retry
			e.Message += fmt.Sprintf(" (Retry-After: %d s)", retry)
			e.Suggestion = fmt.Sprintf("wait %d seconds (the site's Retry-After) before retrying, and slow down", retry)
		}
	case p.Status >= 500:
		e = newError(CodeNetworkError, fmt.Sprintf("%s failed on the server side (%d)", u, p.Status), "retry later")
	default:
		e = newError(CodeInvalidParams, fmt.Sprintf("%s rejected the request (%d)", u, p.Status), "check the URL, method and parameters")
	}
	e.Details = details
	return &e
}

// retryAfter reads a Retry-After header (seconds or an HTTP date) as seconds.
func retryAfter(v string, now time.Time) int {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return n
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return int(d.Seconds() + 0.999)
		}
	}
	return 0
}

// withTimeout applies a tool's timeout argument (seconds; def if 0).
func withTimeout(ctx context.Context, seconds, def int) (context.Context, context.CancelFunc, time.Duration) {
	if seconds <= 0 {
		seconds = def
	}
	d := time.Duration(seconds) * time.Second
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, cancel, d
}

// withProxy returns o with a proxy URL.
func withProxy(o safehttp.ClientOptions, proxy string) safehttp.ClientOptions {
	o.Proxy = proxy
	return o
}

// progress reports step of total of a long call (MCP progress notifications
// when served, the TUI's status otherwise).
func progress(ctx context.Context, step, total int, msg string) {
	tool.ReportProgress(ctx, tool.Progress{Progress: float64(step), Total: float64(total), Message: msg})
}
