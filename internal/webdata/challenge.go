package webdata

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

const (
	challengeCaptcha = "captcha" // a captcha or JavaScript challenge stands in front of the content
	challengeBlock   = "block"   // the request was refused outright
)

// challenge is a bot check detected on a response.
type challenge struct {
	kind     string
	provider string
	evidence string
}

// captchaMarkers are page contents that belong to captcha and challenge
// providers.
var captchaMarkers = []struct{ marker, provider string }{
	{"challenges.cloudflare.com", "Cloudflare"},
	{"cf-chl-", "Cloudflare"},
	{"_cf_chl_opt", "Cloudflare"},
	{"cf-turnstile", "Cloudflare Turnstile"},
	{"g-recaptcha", "reCAPTCHA"},
	{"google.com/recaptcha", "reCAPTCHA"},
	{"recaptcha/api.js", "reCAPTCHA"},
	{"h-captcha", "hCaptcha"},
	{"hcaptcha.com", "hCaptcha"},
	{"captcha-delivery.com", "DataDome"},
	{"px-captcha", "PerimeterX"},
	{"awswaf.com", "AWS WAF"},
	{"geetest", "GeeTest"},
	{"turing.captcha.qcloud.com", "Tencent Captcha"},
	{"tencentcaptcha", "Tencent Captcha"},
	{"aliyuncaptcha", "Aliyun Captcha"},
	{"nc_1_wrapper", "Aliyun slider"},
}

// challengeTitles are titles of interstitial check pages.
var challengeTitles = lazyRegexp(`(?i)just a moment|attention required|verify (that )?you are (a )?human|are you a robot|security check|checking your browser|bot verification|captcha|human verification|安全验证|人机验证|验证码`)

// blockTitles are titles and texts of block pages.
var blockMarkers = lazyRegexp(`(?i)access denied|you have been blocked|request blocked|error code:? 1020|sorry, you have been blocked|request unsuccessful\. incapsula|the requested url was rejected`)

var titleRE = lazyRegexp(`(?is)<title[^>]*>(.*?)</title>`)

// detectChallenge looks for a captcha, a JavaScript challenge or a block
// page. A captcha widget on an ordinary page (a login form) is not a
// challenge: the page must be an error status or an interstitial.
func detectChallenge(status int, h http.Header, body []byte) *challenge {
	if v := strings.ToLower(h.Get("Cf-Mitigated")); v == "challenge" {
		return &challenge{challengeCaptcha, "Cloudflare", "cf-mitigated: challenge header"}
	}
	if v := strings.ToLower(h.Get("X-Amzn-Waf-Action")); v == "captcha" || v == "challenge" {
		return &challenge{challengeCaptcha, "AWS WAF", "x-amzn-waf-action: " + v}
	}
	if len(body) > 512<<10 {
		body = body[:512<<10]
	}
	lower := bytes.ToLower(body)
	title := ""
	if m := titleRE().FindSubmatch(body); m != nil {
		title = strings.TrimSpace(string(m[1]))
	}
	marker, provider := "", ""
	for _, c := range captchaMarkers {
		if bytes.Contains(lower, []byte(c.marker)) {
			marker, provider = c.marker, c.provider
			break
		}
	}
	errStatus := status == http.StatusForbidden || status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
	if marker != "" && (errStatus || challengeTitles().MatchString(title)) {
		return &challenge{challengeCaptcha, provider, "page contains " + marker + titleNote(title)}
	}
	if errStatus && challengeTitles().MatchString(title) {
		return &challenge{challengeCaptcha, serverName(h), "challenge page" + titleNote(title)}
	}
	if status == http.StatusForbidden {
		if m := blockMarkers().Find(lower); m != nil {
			return &challenge{challengeBlock, serverName(h), "block page: " + string(m)}
		}
		if h.Get("X-Amzn-Waf-Action") == "block" || h.Get("X-Iinfo") != "" {
			return &challenge{challengeBlock, serverName(h), "web application firewall"}
		}
	}
	return nil
}

func titleNote(title string) string {
	if title == "" {
		return ""
	}
	return fmt.Sprintf(", title %q", clip(title, 80))
}

// serverName names the CDN or server that answered, for messages.
func serverName(h http.Header) string {
	switch {
	case h.Get("Cf-Ray") != "":
		return "Cloudflare"
	case h.Get("X-Iinfo") != "":
		return "Imperva"
	case strings.Contains(strings.ToLower(h.Get("Server")), "akamai"):
		return "Akamai"
	case h.Get("Server") != "":
		return h.Get("Server")
	}
	return "the site"
}

// lazyRegexp compiles expr on first use rather than at start-up, which
// every otter command would pay for.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
