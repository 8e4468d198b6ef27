package webdata

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fieldSchema is the schema of one extraction field (inlined rather than
// a $ref, which some model APIs do not accept).
const fieldSchema = `{
  "anyOf": [
    {"type": "string", "minLength": 1},
    {
      "type": "object",
      "required": ["selector"],
      "additionalProperties": false,
      "properties": {
        "selector": {"type": "string", "minLength": 1},
        "attr": {"type": "string", "description": "Take this attribute instead of the text; relative href and src become absolute URLs."},
        "all": {"type": "boolean", "description": "Every match, as a list."},
        "html": {"type": "boolean", "description": "Inner HTML instead of text."}
      }
    }
  ]
}`

var scrapePageSchema = `{
  "type": "object",
  "required": ["url"],
  "additionalProperties": false,
  "properties": {
    "url": {"type": "string", "format": "uri", "description": "The page's full http:// or https:// URL."},
    "selectors": {
      "type": "object",
      "description": "Output field name → what to extract. A string is a CSS selector whose first match's text is taken; \"a.next@href\" takes an attribute. An object {\"selector\", \"attr\", \"all\", \"html\"} can ask for every match (all: true → a list) or inner HTML. An array of those is a list of fallbacks, the first that matches wins.",
      "additionalProperties": {
        "anyOf": [
          ` + fieldSchema + `,
          {"type": "array", "minItems": 1, "items": ` + fieldSchema + `}
        ]
      },
      "examples": [{"title": "h1.title", "price": ".price-value", "links": {"selector": "a", "attr": "href", "all": true}}]
    },
    "preset": {"type": "string", "description": "A named set of selectors (see list_presets), e.g. article, product, links, metadata; selectors given as well add to or override its fields."},
    "render_js": {"type": "boolean", "default": false, "description": "Load the page in headless Chromium and run its JavaScript first (for client-rendered sites). Needs Chromium installed."},
    "wait_for": {"type": "string", "description": "With render_js: a CSS selector to wait for before extracting."},
    "timeout": {"type": "integer", "default": 30, "minimum": 5, "maximum": 120, "description": "Seconds for the whole fetch."},
    "proxy": {"type": "string", "description": "Optional proxy URL (http, https, socks5 or socks5h); it must not be on a private network."}
  }
}`

type scrapePageArgs struct {
	URL       string               `json:"url"`
	Selectors map[string]FieldSpec `json:"selectors"`
	Preset    string               `json:"preset"`
	RenderJS  bool                 `json:"render_js"`
	WaitFor   string               `json:"wait_for"`
	Timeout   int                  `json:"timeout"`
	Proxy     string               `json:"proxy"`
}

// defaultFields are extracted when neither selectors nor a preset is given.
var defaultFields = map[string]FieldSpec{
	"title":       {{Selector: "title"}, {Selector: "h1"}},
	"description": {{Selector: "meta[name='description']", Attr: "content"}, {Selector: "meta[property='og:description']", Attr: "content"}},
	"text":        {{Selector: "body"}},
}

// pageMeta is the metadata part of scrape_page's result.
type pageMeta struct {
	URL         string `json:"url"`
	FinalURL    string `json:"final_url,omitempty"`
	StatusCode  int    `json:"status_code"`
	ContentType string `json:"content_type"`
	ElapsedMS   int64  `json:"elapsed_ms"`
	Rendered    bool   `json:"rendered"`
	Preset      string `json:"preset,omitempty"`
	// Refused lists requests of a rendered page that the address policy
	// refused (subresources, redirects).
	Refused []string `json:"refused_requests,omitempty"`
}

func (k *toolkit) scrapePageDef() def {
	return def{
		name:  NameScrapePage,
		title: "Scrape a web page",
		description: "Fetch a web page and extract structured data with CSS selectors (or a named preset from list_presets). " +
			"Returns {data: field → value, metadata}. Set render_js for pages built by JavaScript. " +
			"Respects robots.txt; pages behind a captcha or a block are reported (CAPTCHA_REQUIRED, BLOCKED), never circumvented.",
		schema: scrapePageSchema,
		annotations: &mcp.ToolAnnotations{
			Title:          "Scrape a web page",
			ReadOnlyHint:   true,
			IdempotentHint: true,
			OpenWorldHint:  ptr(true),
		},
		run: k.scrapePage,
	}
}

func ptr[T any](v T) *T { return &v }

func (k *toolkit) scrapePage(ctx context.Context, raw json.RawMessage) outcome {
	var a scrapePageArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return failed(invalidParams("", "%v", err))
	}
	u, bad := k.checkURL("url", a.URL)
	if bad != nil {
		return failed(*bad)
	}
	fields, preset, bad := k.fieldsFor(a.Selectors, a.Preset)
	if bad != nil {
		return failed(*bad)
	}
	if a.WaitFor != "" && !a.RenderJS {
		return failed(invalidParams("wait_for", "wait_for needs render_js: true (a static page does not change while waiting)"))
	}
	if a.Proxy != "" && a.RenderJS {
		return failed(invalidParams("proxy", "proxy cannot be combined with render_js"))
	}

	ctx, cancel, timeout := withTimeout(ctx, a.Timeout, 30)
	defer cancel()
	client := k.client
	if a.Proxy != "" {
		c, err := k.policy.Client(withProxy(k.clientOpt, a.Proxy))
		if err != nil {
			e := fetchError(err, a.Proxy, 0)
			e.Field = "proxy"
			return failed(e)
		}
		defer c.CloseIdleConnections()
		client = c
	}
	if e := k.robotsRefusal(ctx, client, u); e != nil {
		return failed(*e)
	}

	var p *page
	var refused []string
	if a.RenderJS {
		var e *ErrorInfo
		p, refused, e = k.render(ctx, u, a.WaitFor, timeout)
		if e != nil {
			return failed(*e)
		}
	} else {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return failed(invalidParams("url", "%v", err))
		}
		req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5")
		p, err = k.fetch(k.obeyingRobots(client), req)
		var refused *robotsRefused
		if errors.As(err, &refused) {
			return failed(refused.info)
		}
		if err != nil {
			return failed(fetchError(err, u.String(), timeout))
		}
	}
	if e := statusError(p); e != nil {
		return failed(*e)
	}
	if mt, _, _ := mime.ParseMediaType(p.ContentType); p.ContentType != "" && !strings.Contains(mt, "html") && !strings.Contains(mt, "xml") {
		e := newError(CodeParseError, fmt.Sprintf("%s is %s, not an HTML page", p.URL, mt), "use scrape_api for JSON and other APIs")
		e.Recoverable = false
		return failed(e)
	}
	doc, err := parseHTML(p.Body, p.ContentType)
	if err != nil {
		return failed(newError(CodeParseError, fmt.Sprintf("parsing %s: %v", p.URL, err), "the page is not valid HTML"))
	}
	data, errs := extractFields(doc, baseURL(doc, p.URL), fields)
	if preset == "" && len(a.Selectors) == 0 {
		errs = nil // the default fields are a convenience: a page without a description is fine
	}
	meta := pageMeta{
		URL:         u.String(),
		StatusCode:  p.Status,
		ContentType: p.ContentType,
		ElapsedMS:   p.Elapsed.Milliseconds(),
		Rendered:    p.Rendered,
		Preset:      preset,
		Refused:     refused,
	}
	if final := p.URL.String(); final != meta.URL {
		meta.FinalURL = final
	}
	return outcome{result: map[string]any{"data": data, "metadata": meta}, errs: errs}
}

// fieldsFor merges a preset and explicit selectors.
func (k *toolkit) fieldsFor(selectors map[string]FieldSpec, preset string) (map[string]FieldSpec, string, *ErrorInfo) {
	fields := map[string]FieldSpec{}
	if preset != "" {
		p, ok := k.presets[preset]
		if !ok {
			names := make([]string, 0, len(k.presets))
			for n := range k.presets {
				names = append(names, n)
			}
			sort.Strings(names)
			e := invalidParams("preset", "no preset named %q; the presets are %s", preset, strings.Join(names, ", "))
			return nil, "", &e
		}
		for f, s := range p.Selectors {
			fields[f] = s
		}
	}
	for f, s := range selectors {
		fields[f] = s
	}
	if len(fields) == 0 {
		fields = defaultFields
	}
	return fields, preset, nil
}
