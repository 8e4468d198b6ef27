package webdata

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/tool"
)

func TestRateLimitPerToolAndClient(t *testing.T) {
	cfg := loopbackOnly()
	// One token a minute refills far slower than the test runs.
	cfg.RateLimits[NameListPresets] = config.RateLimit{RPM: 1, Burst: 2}
	ts := newTools(t, cfg)
	ctx := context.Background()

	for i := range 2 {
		_, env := ts.call(t, ctx, NameListPresets, map[string]any{})
		if env.Status != StatusSuccess {
			t.Fatalf("call %d within the burst: %+v", i+1, env.Errors)
		}
		if rl := env.Metadata.RateLimit; rl == nil || rl.Limit != 1 || rl.Burst != 2 || rl.Remaining != 1-i || *env.Metadata.QuotaRemaining != 1-i {
			t.Errorf("call %d: rate_limit %+v", i+1, rl)
		}
	}
	res, env := ts.call(t, ctx, NameListPresets, map[string]any{})
	if !res.IsError || !env.hasCode(CodeRateLimited) {
		t.Fatalf("call over the burst: %+v", env.Errors)
	}
	e := env.Errors[0]
	retry, _ := e.Details["retry_after"].(float64)
	if retry < 1 || retry > 60 || !e.Recoverable || env.Metadata.RateLimit.RetryAfter != int(retry) || env.Metadata.RateLimit.Remaining != 0 {
		t.Errorf("RATE_LIMITED error %+v, metadata %+v: want retry_after in 1..60 s", e, env.Metadata.RateLimit)
	}
	if !env.Metadata.RateLimit.ResetAt.After(time.Now()) {
		t.Errorf("reset_at %v is not in the future", env.Metadata.RateLimit.ResetAt)
	}

	// Another client has its own bucket; another tool too.
	_, env = ts.call(t, WithClient(ctx, "key:alice"), NameListPresets, map[string]any{})
	if env.Status != StatusSuccess {
		t.Errorf("another client was limited: %+v", env.Errors)
	}
	_, env = ts.call(t, ctx, NameGetStatus, map[string]any{})
	if env.Status != StatusSuccess {
		t.Errorf("another tool was limited: %+v", env.Errors)
	}

	// Invalid arguments do not use up the quota.
	_, env = ts.call(t, WithClient(ctx, "key:bob"), NameListPresets, map[string]any{"bogus": 1})
	if !env.hasCode(CodeInvalidParams) {
		t.Errorf("invalid arguments: %+v", env.Errors)
	}
	for range 2 {
		if _, env = ts.call(t, WithClient(ctx, "key:bob"), NameListPresets, map[string]any{}); env.Status != StatusSuccess {
			t.Errorf("bob's burst was used by an invalid call: %+v", env.Errors)
		}
	}
}

func TestRateLimitDefaultsAndConfig(t *testing.T) {
	ts := newTools(t, config.Tools{})
	for name, want := range map[string]config.RateLimit{
		NameScrapePage: {RPM: 10, Burst: 3}, NameScrapeAPI: {RPM: 30, Burst: 5}, NameAnalyzeSite: {RPM: 5, Burst: 2},
		NameExportData: {RPM: 20, Burst: 5}, NameGetStatus: {RPM: 60, Burst: 10}, NameListPresets: {RPM: 60, Burst: 10},
	} {
		if got := DefaultRateLimits[name]; got != want {
			t.Errorf("default limit of %s = %+v, want seed 000's %+v", name, got, want)
		}
	}
	// The default scrape_page burst of 3 refuses the 4th quick call.
	s := newSite(t, nil)
	for i := range 4 {
		_, env := ts.call(t, context.Background(), NameScrapePage, map[string]any{"url": s.URL + "/x"})
		if limited := env.hasCode(CodeRateLimited); limited != (i == 3) {
			t.Errorf("scrape_page call %d: %+v", i+1, env.Errors)
		}
	}

	// The config loader refuses a [tools.rate_limits.TOOL] of any other
	// name, at its line: the two lists are one.
	if got := slices.Sorted(maps.Keys(DefaultRateLimits)); !slices.Equal(got, slices.Sorted(slices.Values(config.RateLimitedTools))) {
		t.Errorf("DefaultRateLimits has %v, config.RateLimitedTools %v", got, config.RateLimitedTools)
	}
	if _, err := Tools(Options{Config: config.Tools{RateLimits: map[string]config.RateLimit{"scrape_everything": {RPM: 1}}}}); err == nil ||
		!strings.Contains(err.Error(), "rate_limits.scrape_everything") {
		t.Errorf("unknown tool in rate_limits: %v", err)
	}
	for _, rpm := range []float64{math.NaN(), math.Inf(1)} {
		_, err := Tools(Options{Config: config.Tools{RateLimits: map[string]config.RateLimit{NameScrapePage: {RPM: rpm}}}})
		if err == nil || !strings.Contains(err.Error(), "rate_limits.scrape_page") || !strings.Contains(err.Error(), "-1 for no limit") {
			t.Errorf("rpm = %g: %v, want an error saying -1 means no limit", rpm, err)
		}
	}
	// rpm = 0 is what an absent rpm reads as: the default stays, burst applies.
	zero := newTools(t, config.Tools{RateLimits: map[string]config.RateLimit{NameListPresets: {RPM: 0, Burst: 2}}})
	if _, env := zero.call(t, context.Background(), NameListPresets, map[string]any{}); env.Metadata.RateLimit == nil ||
		env.Metadata.RateLimit.Limit != 60 || env.Metadata.RateLimit.Burst != 2 {
		t.Errorf("rpm = 0, burst = 2: rate limit %+v, want the default 60 rpm with burst 2", env.Metadata.RateLimit)
	}
	unlimited := loopbackOnly()
	unlimited.RateLimits[NameGetStatus] = config.RateLimit{RPM: -1}
	ts = newTools(t, unlimited)
	for range 20 {
		if _, env := ts.call(t, context.Background(), NameGetStatus, map[string]any{}); env.Status != StatusSuccess || env.Metadata.RateLimit != nil {
			t.Fatalf("rpm = -1 should disable the limit: %+v", env)
		}
	}
}

func TestGetStatus(t *testing.T) {
	start := time.Date(2026, 1, 27, 10, 30, 0, 0, time.UTC)
	ts := newTools(t, loopbackOnly(), func(o *Options) {
		o.Servers = func() []ServerStatus {
			return []ServerStatus{
				{Name: "zeta", Transport: "stdio", State: "failed", Error: "exec: \"zeta\": not found"},
				{Name: "alpha", Transport: "http", State: "connected", Tools: 4, Calls: 7, Errors: 1},
			}
		}
		o.Recent = func(caller string, n int) []tool.CallRecord {
			if caller != "key:carol" {
				t.Errorf("get_status asked for the calls of %q, want only the calling client's (key:carol)", caller)
			}
			all := []tool.CallRecord{
				{Tool: "scrape_page", Start: start, Duration: 1500 * time.Millisecond},
				{Tool: "get-sum", Server: "alpha", Start: start, Duration: time.Second, IsError: true, Err: "boom"},
				{Tool: "list_presets", Start: start},
			}
			return all[:min(n, len(all))]
		}
	})
	ctx := WithClient(context.Background(), "key:carol")
	ts.call(t, ctx, NameScrapeAPI, map[string]any{"url": "file:///x"}) // uses one scrape_api token
	_, env := ts.call(t, ctx, NameGetStatus, map[string]any{"recent": 2})
	rep := decode[StatusReport](t, env)
	if len(rep.Servers) != 2 || rep.Servers[0].Name != "alpha" || rep.Servers[0].State != "connected" || rep.Servers[0].Tools != 4 ||
		rep.Servers[1].Error == "" {
		t.Errorf("servers = %+v", rep.Servers)
	}
	if len(rep.RecentCalls) != 2 || rep.RecentCalls[0].DurationMS != 1500 || !rep.RecentCalls[1].IsError || rep.RecentCalls[1].Error != "boom" || rep.RecentCalls[1].Server != "alpha" {
		t.Errorf("recent calls = %+v", rep.RecentCalls)
	}
	if rep.Client != "key:carol" || len(rep.Quotas) != 6 {
		t.Fatalf("quotas = %+v for %s", rep.Quotas, rep.Client)
	}
	for _, q := range rep.Quotas {
		want := 1000
		if q.Tool == NameScrapeAPI || q.Tool == NameGetStatus {
			want = 999
		}
		if q.Remaining != want {
			t.Errorf("quota of %s = %d, want %d", q.Tool, q.Remaining, want)
		}
	}

	// Without Servers and Recent it still answers.
	_, env = newTools(t, loopbackOnly()).call(t, context.Background(), NameGetStatus, nil)
	if rep := decode[StatusReport](t, env); env.Status != StatusSuccess || rep.Servers == nil || rep.RecentCalls == nil || rep.Client != "local" {
		t.Errorf("bare get_status = %+v", rep)
	}
}

func TestPresets(t *testing.T) {
	presets := Presets()
	names := map[string]Preset{}
	for _, p := range presets {
		names[p.Name] = p
		if p.Description == "" || len(p.Selectors) == 0 {
			t.Errorf("preset %s is incomplete", p.Name)
		}
	}
	for _, want := range []string{"article", "product", "links", "metadata"} {
		if _, ok := names[want]; !ok {
			t.Errorf("no %s preset", want)
		}
	}
	// A preset survives a JSON round trip (serve offers them as resources).
	b, err := json.Marshal(names["links"])
	if err != nil {
		t.Fatal(err)
	}
	var back Preset
	if err := json.Unmarshal(b, &back); err != nil || !back.Selectors["urls"][0].All || back.Selectors["urls"][0].Attr != "href" {
		t.Errorf("links preset round trip %s: %+v %v", b, back, err)
	}

	ts := newTools(t, loopbackOnly())
	_, env := ts.call(t, context.Background(), NameListPresets, map[string]any{})
	if got := decode[struct{ Presets []Preset }](t, env).Presets; len(got) != len(presets) {
		t.Errorf("list_presets returned %d presets, want %d", len(got), len(presets))
	}
	_, env = ts.call(t, context.Background(), NameListPresets, map[string]any{"name": "product"})
	if got := decode[struct{ Presets []Preset }](t, env).Presets; len(got) != 1 || got[0].Name != "product" {
		t.Errorf("list_presets name=product: %+v", got)
	}
	_, env = ts.call(t, context.Background(), NameListPresets, map[string]any{"name": "nope"})
	if !env.hasCode(CodeInvalidParams) {
		t.Errorf("unknown preset: %+v", env.Errors)
	}
}

func TestParseField(t *testing.T) {
	for in, want := range map[string]Field{
		"h1.title":             {Selector: "h1.title"},
		"a.next@href":          {Selector: "a.next", Attr: "href"},
		"img@data-src":         {Selector: "img", Attr: "data-src"},
		`[data-x="a@b"]`:       {Selector: `[data-x="a@b"]`},
		"meta[name=x]@content": {Selector: "meta[name=x]", Attr: "content"},
		"a@":                   {Selector: "a@"},
	} {
		if got := ParseField(in); got != want {
			t.Errorf("ParseField(%q) = %+v, want %+v", in, got, want)
		}
	}
	var fs FieldSpec
	if err := json.Unmarshal([]byte(`{"selector":"a","bogus":1}`), &fs); err == nil {
		t.Error("unknown key in a field object was accepted")
	}
}

func TestCancelledCallReturnsError(t *testing.T) {
	ts := newTools(t, loopbackOnly())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ts[NameScrapePage].Call(ctx, json.RawMessage(`{"url":"http://127.0.0.1:1/"}`))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v, want context.Canceled", err)
	}
}
