package webdata

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func apiSite(t *testing.T) *site {
	return newSite(t, map[string]http.HandlerFunc{
		"/api/items": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-RateLimit-Remaining", "99")
			io.WriteString(w, `{"data":{"total":3,"items":[{"id":9007199254740993,"name":"otter","price":5},{"id":2,"name":"beaver","price":15},{"id":3,"name":"seal","price":25}]}}`)
		},
		"/api/echo": func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{
				"method":       r.Method,
				"query":        r.URL.Query(),
				"auth":         r.Header.Get("Authorization"),
				"content_type": r.Header.Get("Content-Type"),
				"user_agent":   r.Header.Get("User-Agent"),
				"body":         string(body),
			})
		},
		"/api/denied": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"bad token"}`)
		},
		"/api/text": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "plain words")
		},
		"/api/busy": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		},
	})
}

func TestScrapeAPI(t *testing.T) {
	s := apiSite(t)
	ts := newTools(t, loopbackOnly())
	ctx := context.Background()

	_, env := ts.call(t, ctx, NameScrapeAPI, map[string]any{"url": s.URL + "/api/items"})
	res := decode[apiResult](t, env)
	if env.Status != StatusSuccess || res.StatusCode != 200 || res.Headers["X-Ratelimit-Remaining"] != "99" {
		t.Fatalf("GET items: %s %+v %+v", env.Status, res, env.Errors)
	}
	if !strings.Contains(string(res.Data), "9007199254740993") {
		t.Errorf("large ids must survive unchanged: %s", res.Data)
	}

	for path, want := range map[string]string{
		"data.total":                       `3`,
		"data.items.#.name":                `["otter","beaver","seal"]`,
		"data.items.#(price>10)#.id":       `[2,3]`,
		"data.items.0":                     `{"id":9007199254740993,"name":"otter","price":5}`,
		`data.items.#(name=="seal").price`: `25`,
	} {
		_, env := ts.call(t, ctx, NameScrapeAPI, map[string]any{"url": s.URL + "/api/items", "path": path})
		if got := compactJSON(t, decode[apiResult](t, env).Data); got != want {
			t.Errorf("path %s = %s, want %s", path, got, want)
		}
	}

	_, env = ts.call(t, ctx, NameScrapeAPI, map[string]any{"url": s.URL + "/api/items", "path": "data.nothing"})
	if env.Status != StatusPartial || !env.hasCode(CodeParseError) || env.Errors[0].Field != "path" {
		t.Errorf("unmatched path: %s %+v", env.Status, env.Errors)
	}

	_, env = ts.call(t, ctx, NameScrapeAPI, map[string]any{
		"url":     s.URL + "/api/echo?keep=1",
		"method":  "POST",
		"headers": map[string]string{"Authorization": "Bearer t0ken"},
		"query":   map[string]any{"q": "otters", "page": 2, "tag": []any{"a", "b"}, "flag": true},
		"body":    map[string]any{"name": "otter"},
	})
	var echo struct {
		Method, Auth, Body string
		ContentType        string `json:"content_type"`
		UserAgent          string `json:"user_agent"`
		Query              map[string][]string
	}
	data := decode[apiResult](t, env).Data
	if err := json.Unmarshal(data, &echo); err != nil {
		t.Fatal(err)
	}
	if echo.Method != "POST" || echo.Auth != "Bearer t0ken" || echo.Body != `{"name":"otter"}` || echo.ContentType != "application/json" ||
		strings.Join(echo.Query["tag"], ",") != "a,b" || echo.Query["page"][0] != "2" || echo.Query["keep"][0] != "1" ||
		echo.Query["flag"][0] != "true" || !strings.HasPrefix(echo.UserAgent, "otter/") {
		t.Errorf("echo = %+v", echo)
	}

	res2, env := ts.call(t, ctx, NameScrapeAPI, map[string]any{"url": s.URL + "/api/denied"})
	if !res2.IsError || !env.hasCode(CodeUnauthorized) {
		t.Errorf("401: %+v", env.Errors)
	} else if b, _ := json.Marshal(env.Errors[0].Details["body"]); string(b) != `{"error":"bad token"}` {
		t.Errorf("401 details should carry the API's error body, got %s", b)
	}

	_, env = ts.call(t, ctx, NameScrapeAPI, map[string]any{"url": s.URL + "/api/text"})
	if r := decode[apiResult](t, env); env.Status != StatusPartial || r.Text != "plain words" || !env.hasCode(CodeParseError) {
		t.Errorf("non-JSON answer: %s %+v %+v", env.Status, r, env.Errors)
	}

	_, env = ts.call(t, ctx, NameScrapeAPI, map[string]any{"url": s.URL + "/api/busy"})
	if !env.hasCode(CodeUpstreamRateLimited) || env.hasCode(CodeRateLimited) || env.Errors[0].Details["retry_after"] != float64(30) {
		t.Errorf("429 from the API: %+v, want %s with the API's retry_after, not otter's own %s", env.Errors, CodeUpstreamRateLimited, CodeRateLimited)
	}

	_, env = ts.call(t, ctx, NameScrapeAPI, map[string]any{"url": s.URL + "/api/items", "method": "TRACE"})
	if !env.hasCode(CodeInvalidParams) {
		t.Errorf("method TRACE: %+v", env.Errors)
	}
}

func compactJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestBodySizeCap(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{"/big": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"x":"`+strings.Repeat("x", 4000)+`"}`)
	}})
	cfg := loopbackOnly()
	cfg.MaxBodyBytes = 1000
	ts := newTools(t, cfg)
	for _, name := range []string{NameScrapeAPI, NameScrapePage} {
		_, env := ts.call(t, context.Background(), name, map[string]any{"url": s.URL + "/big"})
		if !env.hasCode(CodeNetworkError) || !strings.Contains(env.Errors[0].Message, "1000 bytes") || !strings.Contains(env.Errors[0].Suggestion, "max_body_bytes") {
			t.Errorf("%s: %+v, want a clear size-limit error", name, env.Errors)
		}
	}
}
