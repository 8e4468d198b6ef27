package webdata

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/otter-sh/otter/internal/config"
)

// DefaultRateLimits are the per-tool, per-client limits of seed 000 (§2.2
// and §4.3); [tools.rate_limits.TOOL] overrides them.
var DefaultRateLimits = map[string]config.RateLimit{
	NameScrapePage:  {RPM: 10, Burst: 3},
	NameScrapeAPI:   {RPM: 30, Burst: 5},
	NameAnalyzeSite: {RPM: 5, Burst: 2},
	NameExportData:  {RPM: 20, Burst: 5},
	NameGetStatus:   {RPM: 60, Burst: 10},
	NameListPresets: {RPM: 60, Burst: 10},
}

// maxBuckets bounds the buckets kept before full (idle) ones are dropped:
// a full bucket is the same as a new one.
const maxBuckets = 4096

type bucketKey struct{ tool, client string }

// limiterSet holds a token bucket per tool and client.
type limiterSet struct {
	mu      sync.Mutex
	specs   map[string]config.RateLimit // RPM < 0: unlimited
	buckets map[bucketKey]*rate.Limiter
	now     func() time.Time
}

// newLimiterSet applies the [tools.rate_limits.TOOL] overrides to the
// defaults. rpm < 0 (write rpm = -1) means no limit. rpm = 0 is a table
// that sets only burst (the config loader refuses a written rpm = 0): the
// default rpm stays. rpm = nan or inf is refused
// (inf would also make the envelope's rate_limit unencodable).
func newLimiterSet(overrides map[string]config.RateLimit, now func() time.Time) (*limiterSet, error) {
	specs := make(map[string]config.RateLimit, len(DefaultRateLimits))
	for name, l := range DefaultRateLimits {
		specs[name] = l
	}
	for name, o := range overrides {
		d, known := specs[name]
		if !known {
			return nil, fmt.Errorf("[tools.rate_limits.%s]: no built-in tool has that name (known: scrape_page, scrape_api, analyze_site, export_data, get_status, list_presets)", name)
		}
		if math.IsNaN(o.RPM) || math.IsInf(o.RPM, 1) {
			return nil, fmt.Errorf("[tools.rate_limits.%s]: rpm must be a number of calls per minute, or -1 for no limit, not %g", name, o.RPM)
		}
		if o.RPM != 0 {
			d.RPM = o.RPM
		}
		if o.Burst < 0 {
			return nil, fmt.Errorf("[tools.rate_limits.%s]: burst must be at least 1, not %d", name, o.Burst)
		}
		if o.Burst > 0 {
			d.Burst = o.Burst
		}
		specs[name] = d
	}
	return &limiterSet{specs: specs, buckets: make(map[bucketKey]*rate.Limiter), now: now}, nil
}

// bucket returns the bucket for tool and client, or nil if tool is unlimited.
// The caller holds s.mu.
func (s *limiterSet) bucket(tool, client string) (*rate.Limiter, config.RateLimit) {
	spec, ok := s.specs[tool]
	if !ok || spec.RPM < 0 {
		return nil, spec
	}
	k := bucketKey{tool, client}
	if b := s.buckets[k]; b != nil {
		return b, spec
	}
	if len(s.buckets) >= maxBuckets {
		now := s.now()
		for key, b := range s.buckets {
			if b.TokensAt(now) >= float64(b.Burst()) {
				delete(s.buckets, key)
			}
		}
	}
	b := rate.NewLimiter(rate.Limit(spec.RPM/60), spec.Burst)
	s.buckets[k] = b
	return b, spec
}

// take consumes a token. It returns the bucket's state (nil when the tool
// is unlimited) and whether the call may go ahead; when it may not,
// RetryAfter says how many seconds until a token is available.
func (s *limiterSet) take(tool, client string) (*RateLimitInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, spec := s.bucket(tool, client)
	if b == nil {
		return nil, true
	}
	now := s.now()
	if b.AllowN(now, 1) {
		return info(b, spec, now), true
	}
	ri := info(b, spec, now)
	need := 1 - b.TokensAt(now)
	ri.RetryAfter = max(1, int(math.Ceil(need/float64(b.Limit()))))
	return ri, false
}

// peek reports the state of a bucket without taking a token.
func (s *limiterSet) peek(tool, client string) *RateLimitInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, spec := s.bucket(tool, client)
	if b == nil {
		return nil
	}
	return info(b, spec, s.now())
}

// tools returns the names of the limited tools, sorted.
func (s *limiterSet) tools() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for name := range s.specs {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func info(b *rate.Limiter, spec config.RateLimit, now time.Time) *RateLimitInfo {
	tokens := b.TokensAt(now)
	missing := float64(spec.Burst) - tokens
	reset := now
	if missing > 0 {
		reset = now.Add(time.Duration(missing / float64(b.Limit()) * float64(time.Second)))
	}
	return &RateLimitInfo{
		Limit:     spec.RPM,
		Burst:     spec.Burst,
		Remaining: max(0, int(math.Floor(tokens))),
		ResetAt:   reset.UTC().Truncate(time.Second),
	}
}

// RateLimits are the token buckets per tool and client of the built-in
// tools ([tools.rate_limits]), for a caller that enforces them itself:
// `otter mcp serve` with a store shared by replicas keeps them there, and
// falls back to these when the store is unreachable.
type RateLimits struct{ set *limiterSet }

// NewRateLimits applies the [tools.rate_limits] overrides to the defaults.
func NewRateLimits(overrides map[string]config.RateLimit) (*RateLimits, error) {
	set, err := newLimiterSet(overrides, time.Now)
	if err != nil {
		return nil, err
	}
	return &RateLimits{set: set}, nil
}

// Spec is tool's limit: calls per minute and burst; limited is false for
// a tool without a limit.
func (r *RateLimits) Spec(tool string) (rpm float64, burst int, limited bool) {
	r.set.mu.Lock()
	defer r.set.mu.Unlock()
	spec, ok := r.set.specs[tool]
	if !ok || spec.RPM < 0 {
		return 0, 0, false
	}
	return spec.RPM, spec.Burst, true
}

// Take spends a token of client's bucket for tool, as a tool call does.
func (r *RateLimits) Take(tool, client string) (*RateLimitInfo, bool) {
	return r.set.take(tool, client)
}

// RateLimitedRefusal is the envelope of a call refused by otter's own
// rate limit (RATE_LIMITED), as the tools answer it.
func RateLimitedRefusal(tool string, rpm float64, burst, retryAfter int, now time.Time) ErrorInfo {
	return ErrorInfo{
		Code:        CodeRateLimited,
		Message:     fmt.Sprintf("%s is limited to %g calls per minute (burst %d) per client; try again in %d s", tool, rpm, burst, retryAfter),
		Details:     map[string]any{"retry_after": retryAfter, "limit": rpm, "burst": burst},
		Suggestion:  fmt.Sprintf("wait %d seconds before calling %s again", retryAfter, tool),
		Recoverable: true,
	}
}
