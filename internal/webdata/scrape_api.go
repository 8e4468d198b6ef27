package webdata

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

const scrapeAPISchema = `{
  "type": "object",
  "required": ["url"],
  "additionalProperties": false,
  "properties": {
    "url": {"type": "string", "format": "uri", "description": "The endpoint's full http:// or https:// URL."},
    "method": {"type": "string", "enum": ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"], "default": "GET"},
    "headers": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Request headers, e.g. {\"Accept\": \"application/json\"}."},
    "query": {
      "type": "object",
      "description": "Query parameters added to the URL; a list repeats the parameter.",
      "additionalProperties": {
        "anyOf": [
          {"type": ["string", "number", "boolean"]},
          {"type": "array", "items": {"type": ["string", "number", "boolean"]}}
        ]
      }
    },
    "body": {"description": "Request body: a JSON value is sent as application/json, a string as it is."},
    "path": {"type": "string", "description": "A GJSON path that narrows the JSON response, e.g. \"data.items\", \"items.#.name\" or \"items.#(price>10)#\"."},
    "timeout": {"type": "integer", "default": 30, "minimum": 5, "maximum": 120, "description": "Seconds for the whole call."}
  }
}`

type scrapeAPIArgs struct {
	URL     string                     `json:"url"`
	Method  string                     `json:"method"`
	Headers map[string]string          `json:"headers"`
	Query   map[string]json.RawMessage `json:"query"`
	Body    json.RawMessage            `json:"body"`
	Path    string                     `json:"path"`
	Timeout int                        `json:"timeout"`
}

// apiResult is scrape_api's result.
type apiResult struct {
	URL         string            `json:"url"`
	StatusCode  int               `json:"status_code"`
	ContentType string            `json:"content_type"`
	Headers     map[string]string `json:"headers,omitempty"`
	ElapsedMS   int64             `json:"elapsed_ms"`
	Path        string            `json:"path,omitempty"`
	Data        json.RawMessage   `json:"data"`           // the JSON (narrowed by path); null if none
	Text        string            `json:"text,omitempty"` // the body, when it is not JSON
}

// apiHeaders are the response headers reported back.
var apiHeaders = []string{"Content-Type", "Content-Length", "Etag", "Last-Modified", "Link", "Location",
	"Retry-After", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "Ratelimit", "Ratelimit-Policy"}

// maxAPIText caps the text of a non-JSON answer in the result.
const maxAPIText = 20000

func (k *toolkit) scrapeAPIDef() def {
	return def{
		name:  NameScrapeAPI,
		title: "Call an HTTP JSON API",
		description: "Call an HTTP API (method, headers, query, body) and return its JSON answer, optionally narrowed by a GJSON path " +
			"(\"data.items\", \"items.#.name\"). Methods other than GET and HEAD may change data on the remote side.",
		schema: scrapeAPISchema,
		annotations: &mcp.ToolAnnotations{
			Title: "Call an HTTP JSON API",
			// Not read-only: POST, PUT, PATCH and DELETE change remote state.
			ReadOnlyHint:    false,
			DestructiveHint: ptr(true),
			OpenWorldHint:   ptr(true),
		},
		run: k.scrapeAPI,
	}
}

func (k *toolkit) scrapeAPI(ctx context.Context, raw json.RawMessage) outcome {
	var a scrapeAPIArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return failed(invalidParams("", "%v", err))
	}
	u, bad := k.checkURL("url", a.URL)
	if bad != nil {
		return failed(*bad)
	}
	if len(a.Query) > 0 {
		q := u.Query()
		keys := make([]string, 0, len(a.Query))
		for key := range a.Query {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			vals, err := queryValues(a.Query[key])
			if err != nil {
				return failed(invalidParams("query", "query parameter %q: %v", key, err))
			}
			for _, v := range vals {
				q.Add(key, v)
			}
		}
		u.RawQuery = q.Encode()
	}
	method := a.Method
	if method == "" {
		method = http.MethodGet
	}

	var body io.Reader
	contentType := ""
	if len(a.Body) > 0 && string(a.Body) != "null" {
		var s string
		if err := json.Unmarshal(a.Body, &s); err == nil {
			body, contentType = strings.NewReader(s), "text/plain; charset=utf-8"
		} else {
			body, contentType = bytes.NewReader(a.Body), "application/json"
		}
	}

	ctx, cancel, timeout := withTimeout(ctx, a.Timeout, 30)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return failed(invalidParams("", "%v", err))
	}
	req.Header.Set("Accept", "application/json, */*;q=0.5")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for name, v := range a.Headers {
		req.Header.Set(name, v)
	}
	p, err := k.fetch(k.client, req)
	if err != nil {
		return failed(fetchError(err, u.String(), timeout))
	}

	res := apiResult{
		URL:         p.URL.String(),
		StatusCode:  p.Status,
		ContentType: p.ContentType,
		Headers:     map[string]string{},
		ElapsedMS:   p.Elapsed.Milliseconds(),
		Path:        a.Path,
		Data:        json.RawMessage("null"),
	}
	for _, h := range apiHeaders {
		if v := p.Header.Get(h); v != "" {
			res.Headers[h] = v
		}
	}
	if e := statusError(p); e != nil {
		e.Details["body"] = errorBody(p.Body)
		return failed(*e)
	}
	if method == http.MethodHead || len(bytes.TrimSpace(p.Body)) == 0 {
		return outcome{result: res}
	}
	if !json.Valid(p.Body) {
		res.Text = bodyExcerpt(p.Body)
		mt, _, _ := mime.ParseMediaType(p.ContentType)
		e := newError(CodeParseError, fmt.Sprintf("%s answered with %s, not JSON", res.URL, orUnknown(mt)), "the body is in result.text; use scrape_page for HTML pages")
		e.Recoverable = false
		return outcome{result: res, errs: []ErrorInfo{e}}
	}
	if a.Path == "" {
		res.Data = json.RawMessage(p.Body)
		return outcome{result: res}
	}
	r := gjson.GetBytes(p.Body, a.Path)
	if !r.Exists() {
		e := newError(CodeParseError, fmt.Sprintf("path %q matches nothing in the response", a.Path), "call again without path to see the whole response")
		e.Field = "path"
		return outcome{result: res, errs: []ErrorInfo{e}}
	}
	if json.Valid([]byte(r.Raw)) {
		res.Data = json.RawMessage(r.Raw)
	} else {
		v, _ := json.Marshal(r.Value())
		res.Data = v
	}
	return outcome{result: res}
}

// queryValues reads a query argument: a scalar or a list of scalars.
func queryValues(raw json.RawMessage) ([]string, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		list = []json.RawMessage{raw}
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		var s string
		if err := json.Unmarshal(item, &s); err == nil {
			out = append(out, s)
			continue
		}
		var v any
		if err := json.Unmarshal(item, &v); err != nil {
			return nil, err
		}
		switch v.(type) {
		case float64, bool:
			out = append(out, string(bytes.TrimSpace(item)))
		default:
			return nil, fmt.Errorf("must be a string, number or boolean, or a list of them")
		}
	}
	return out, nil
}

// bodyExcerpt returns the start of a body as text.
func bodyExcerpt(b []byte) string {
	if len(b) > maxAPIText {
		return strings.ToValidUTF8(string(b[:maxAPIText]), "") + "…[truncated]"
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// errorBody is an error response's body for the error details: its JSON,
// or the start of its text.
func errorBody(b []byte) any {
	if len(b) <= maxAPIText && json.Valid(b) {
		return json.RawMessage(b)
	}
	return bodyExcerpt(b)
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown content type"
	}
	return s
}
