package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/redis/go-redis/v9"

	"github.com/otter-sh/otter/internal/secret"
	"github.com/otter-sh/otter/internal/webdata"
)

// StoreOptions configure the store replicas share their limits through
// ([serve.store]).
type StoreOptions struct {
	// URL is redis://… or rediss://… (TLS). Never logged unmasked.
	URL string
	// OnError is OnStoreErrorDeny (default) or OnStoreErrorLocal.
	OnError string
	// Prefix namespaces the keys; "" is "otter".
	Prefix string
}

// What to do with a call while the store is unreachable.
const (
	// OnStoreErrorDeny refuses the call with a JSON-RPC error naming the
	// cause: no replica spends beyond a limit while they cannot agree.
	OnStoreErrorDeny = "deny"
	// OnStoreErrorLocal applies this process's own limits instead, and
	// logs that it does: each replica then allows a full limit.
	OnStoreErrorLocal = "local"
)

// CodeStoreUnavailable is the JSON-RPC error code of a call refused
// because the shared limits store could not be reached (on_store_error =
// "deny"). It is in the range JSON-RPC leaves to servers.
const CodeStoreUnavailable = -32050

// storeRetry is how long after a failed round trip calls skip the store
// (refused or limited locally at once) before it is tried again.
const storeRetry = time.Second

// verdict is the answer of the limits to one call.
type verdict struct {
	ok bool
	// quota: refused by the daily quota, which resets at reset.
	quota bool
	reset time.Time
	// rate: refused by the tool's bucket; a token comes in retryAfter.
	rate       bool
	retryAfter time.Duration
}

// limits decides whether a call may go ahead, spending the quota and
// the tool's token when it may. The in-process one keeps only the quota
// (the tools keep their buckets); the shared one keeps both in Redis.
type limits interface {
	spend(ctx context.Context, tool, client string, now time.Time) (verdict, error)
	// report is what get_status shows of client's limits on tools.
	report(ctx context.Context, tools []string, client string, now time.Time) webdata.LimitsReport
}

// dayOf is the quota day of t in loc: its start and the next one's.
func dayOf(t time.Time, loc *time.Location) (start, next time.Time) {
	t = t.In(loc)
	start = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
	return start, start.AddDate(0, 0, 1)
}

// memLimits is the daily quota kept in this process.
type memLimits struct{ q *quotas }

func (m memLimits) spend(_ context.Context, _, client string, now time.Time) (verdict, error) {
	ok, reset := m.q.take(client, now)
	return verdict{ok: ok, quota: !ok, reset: reset}, nil
}

// report is the quota; the tools report their own buckets.
func (m memLimits) report(_ context.Context, _ []string, client string, now time.Time) webdata.LimitsReport {
	rep := webdata.LimitsReport{LimitsStatus: webdata.LimitsStatus{Store: webdata.LimitsStoreMemory}}
	if used, reset, ok := m.q.peek(client, now); ok {
		rep.DailyQuota = dailyQuota(m.q.limit, used, reset)
	}
	return rep
}

func dailyQuota(limit, used int, reset time.Time) *webdata.DailyQuota {
	return &webdata.DailyQuota{Limit: limit, Used: used, Remaining: max(0, limit-used), ResetAt: reset.UTC()}
}

// spendScript checks the daily quota and the tool's token bucket and
// spends both, or neither, in one atomic round trip. The bucket is a GCRA
// (generic cell rate algorithm): KEYS[2] holds the theoretical arrival
// time in microseconds of Redis's clock, so replicas' clocks do not
// matter for it. Both keys expire once they carry no information.
//
// KEYS: quota counter, bucket. ARGV: quota limit (0: none), quota key
// TTL in seconds, emission interval in µs (0: no bucket), burst.
// Returns {0, used, remaining} or {1, used} (quota) or {2, retry µs}.
var spendScript = redis.NewScript(`
local limit = tonumber(ARGV[1])
local used = 0
if limit > 0 then
  used = tonumber(redis.call('GET', KEYS[1]) or '0')
  if used >= limit then return {1, used, 0} end
end
local remaining = -1
local interval = tonumber(ARGV[3])
if interval > 0 then
  local burst = tonumber(ARGV[4])
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local tat = tonumber(redis.call('GET', KEYS[2]) or '0')
  if tat < now then tat = now end
  local new_tat = tat + interval
  local allow_at = new_tat - burst * interval
  if now < allow_at then return {2, allow_at - now, 0} end
  redis.call('SET', KEYS[2], string.format('%d', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1000)
  remaining = math.floor((now - allow_at) / interval)
end
if limit > 0 then
  used = redis.call('INCR', KEYS[1])
  if used == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
end
return {0, used, remaining}
`)

// storeLimits keeps the daily quotas and the tools' token buckets in
// Redis, shared by every replica using the same store and prefix.
type storeLimits struct {
	rdb     *redis.Client
	url     string // masked, for messages
	prefix  string
	onError string
	quota   int
	loc     *time.Location
	rates   *webdata.RateLimits // the tools' specs, and the local fallback's buckets
	local   memLimits           // the local fallback's quota
	logger  *slog.Logger
	metrics *metrics

	mu       sync.Mutex
	down     bool
	lastErr  error
	retryAt  time.Time
	fellBack int // calls decided locally or refused since the store went down
}

// storeDownError is the refusal of a call while the store is unreachable.
type storeDownError struct {
	url string
	err error
}

func (e *storeDownError) Error() string {
	return fmt.Sprintf("the shared limits store %s is unreachable (%v): the call is refused rather than risk spending beyond a rate limit or quota; it will be tried again with the next call", e.url, e.err)
}

func (e *storeDownError) Unwrap() error { return e.err }

func newStoreLimits(o StoreOptions, quota int, loc *time.Location, rates *webdata.RateLimits, logger *slog.Logger, m *metrics) (*storeLimits, error) {
	masked := secret.MaskDSN(o.URL)
	ropts, err := redis.ParseURL(o.URL)
	if err != nil {
		// The parser's message may quote the URL, or a piece of a password
		// it took for a port: name the URL masked instead.
		return nil, fmt.Errorf("[serve.store] url %s is not a Redis URL: write redis://[:password@]host:port[/db], or rediss:// for TLS, "+
			"with any '/', '?', '#' or '%%' in the password percent-encoded ('/' as %%2F)", masked)
	}
	ropts.DialTimeout = time.Second
	ropts.ReadTimeout = time.Second
	ropts.WriteTimeout = time.Second
	// A failed call is decided by on_store_error, not retried behind the
	// client's back (-1: go-redis reads 0 as its default, 3 retries): a
	// retry after a timeout doubled the wait, and could send the script
	// again to a Redis that had run it.
	ropts.MaxRetries = -1
	// One dial a call: go-redis's default of 5, with a pause between, held
	// a call up to 5 s (dial timeouts) when the store's host was down.
	ropts.DialerRetries = 1
	// go-redis logs in plain text to stderr, between the JSON lines of the
	// log; its logger is one per process, so the latest store's is used.
	redis.SetLogger(redisLog{logger.With("component", "redis")})
	if o.OnError == "" {
		o.OnError = OnStoreErrorDeny
	}
	if o.Prefix == "" {
		o.Prefix = "otter"
	}
	return &storeLimits{
		rdb: redis.NewClient(ropts), url: masked, prefix: o.Prefix, onError: o.OnError, quota: quota, loc: loc,
		rates: rates, local: memLimits{newQuotas(quota, loc)}, logger: logger, metrics: m,
	}, nil
}

func (s *storeLimits) spend(ctx context.Context, tool, client string, now time.Time) (verdict, error) {
	if err := s.skip(now); err != nil {
		return s.fallback(ctx, tool, client, now, err)
	}
	dayStart, reset := dayOf(now, s.loc)
	var interval int64
	burst := 0
	if rpm, b, limited := s.rates.Spec(tool); limited && rpm > 0 {
		interval = gcraInterval(rpm)
		burst = b
	}
	keys := []string{s.quotaKey(client, dayStart), s.rateKey(client, tool)}
	ttl := int64(reset.Sub(now).Seconds()) + 3600
	start := time.Now()
	res, err := spendScript.Run(ctx, s.rdb, keys, s.quota, ttl, interval, burst).Int64Slice()
	s.metrics.storeLatency.observe(time.Since(start).Seconds(), "spend")
	if err != nil {
		if ctx.Err() != nil {
			return verdict{}, ctx.Err()
		}
		s.metrics.storeErrors.inc("spend")
		s.failed(now, err)
		return s.fallback(ctx, tool, client, now, err)
	}
	s.recovered()
	switch {
	case len(res) < 2:
		return verdict{}, fmt.Errorf("the shared limits store %s answered %v, not the script's result", s.url, res)
	case res[0] == 1:
		return verdict{quota: true, reset: reset}, nil
	case res[0] == 2:
		return verdict{rate: true, retryAfter: time.Duration(res[1]) * time.Microsecond}, nil
	}
	return verdict{ok: true}, nil
}

// gcraInterval is the time between two tokens of a bucket of rpm calls a
// minute, in microseconds.
func gcraInterval(rpm float64) int64 { return int64(math.Ceil(60e6 / rpm)) }

// quotaKey counts client's calls of the day starting at dayStart; rateKey
// holds client's bucket for tool. Both carry the client in braces: one
// hash slot per client, for Redis Cluster.
func (s *storeLimits) quotaKey(client string, dayStart time.Time) string {
	return s.prefix + ":{" + client + "}:quota:" + dayStart.Format("2006-01-02")
}

func (s *storeLimits) rateKey(client, tool string) string {
	return s.prefix + ":{" + client + "}:rate:" + tool
}

// report reads client's quota and buckets from the store in one round
// trip, without spending anything. A bucket's figures are on Redis's
// clock, like the script's.
func (s *storeLimits) report(ctx context.Context, tools []string, client string, now time.Time) webdata.LimitsReport {
	rep := webdata.LimitsReport{LimitsStatus: webdata.LimitsStatus{Store: webdata.LimitsStoreRedis}, Quotas: []webdata.Quota{}}
	dayStart, reset := dayOf(now, s.loc)
	type bucket struct {
		tool  string
		rpm   float64
		burst int
		tat   *redis.StringCmd
	}
	var (
		buckets []bucket
		clock   *redis.TimeCmd
		used    *redis.StringCmd
	)
	start := time.Now()
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		clock = p.Time(ctx)
		if s.quota > 0 {
			used = p.Get(ctx, s.quotaKey(client, dayStart))
		}
		for _, t := range tools {
			if rpm, burst, limited := s.rates.Spec(t); limited && rpm > 0 {
				buckets = append(buckets, bucket{t, rpm, burst, p.Get(ctx, s.rateKey(client, t))})
			}
		}
		return nil
	})
	s.metrics.storeLatency.observe(time.Since(start).Seconds(), "status")
	if err != nil && !errors.Is(err, redis.Nil) { // Nil: a key not there yet, an unused quota or a full bucket
		s.metrics.storeErrors.inc("status")
		rep.Error = fmt.Sprintf("the shared limits store %s could not be read: %v", s.url, err)
		return rep
	}
	if used != nil {
		n, _ := used.Int()
		rep.DailyQuota = dailyQuota(s.quota, n, reset)
	}
	redisNow := clock.Val().UnixMicro()
	for _, b := range buckets {
		tat, _ := b.tat.Int64()
		ahead := max(0, tat-redisNow) // how far the bucket is from full
		interval := gcraInterval(b.rpm)
		rep.Quotas = append(rep.Quotas, webdata.Quota{Tool: b.tool, RateLimitInfo: webdata.RateLimitInfo{
			Limit: b.rpm, Burst: b.burst,
			Remaining: max(0, b.burst-int((ahead+interval-1)/interval)),
			ResetAt:   now.Add(time.Duration(ahead) * time.Microsecond).UTC().Truncate(time.Second),
		}})
	}
	return rep
}

// skip reports the last error while calls skip the store after a failure.
func (s *storeLimits) skip(now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down && now.Before(s.retryAt) {
		return s.lastErr
	}
	return nil
}

func (s *storeLimits) failed(now time.Time, err error) {
	s.mu.Lock()
	was := s.down
	s.down, s.lastErr, s.retryAt = true, err, now.Add(storeRetry)
	s.mu.Unlock()
	if !was {
		what := "calls are refused until it answers again (on_store_error = \"deny\")"
		if s.onError == OnStoreErrorLocal {
			what = "EACH REPLICA NOW APPLIES ITS OWN LIMITS: together they allow more than the configured limits until the store answers again (on_store_error = \"local\")"
		}
		s.logger.Error("the shared limits store is unreachable; "+what, "store", s.url, "err", err)
	}
}

func (s *storeLimits) recovered() {
	s.mu.Lock()
	was, n := s.down, s.fellBack
	s.down, s.fellBack = false, 0
	s.mu.Unlock()
	if was {
		s.logger.Warn("the shared limits store answers again; limits are shared again", "store", s.url, "calls_decided_without_it", n)
	}
}

// fallback decides a call the store could not: refused (deny) or by this
// process's own quota and buckets (local).
func (s *storeLimits) fallback(ctx context.Context, tool, client string, now time.Time, cause error) (verdict, error) {
	s.mu.Lock()
	s.fellBack++
	s.mu.Unlock()
	if s.onError != OnStoreErrorLocal {
		return verdict{}, &storeDownError{url: s.url, err: cause}
	}
	v, err := s.local.spend(ctx, tool, client, now)
	if err != nil || !v.ok {
		return v, err
	}
	if ri, ok := s.rates.Take(tool, client); !ok {
		return verdict{rate: true, retryAfter: time.Duration(ri.RetryAfter) * time.Second}, nil
	}
	return v, nil
}

// redisLog passes go-redis's messages (a failed dial, say) to the log.
type redisLog struct{ logger *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.logger.WarnContext(ctx, secret.MaskText(strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: ")))
}

// ping checks the store for /health.
func (s *storeLimits) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	start := time.Now()
	err := s.rdb.Ping(ctx).Err()
	s.metrics.storeLatency.observe(time.Since(start).Seconds(), "ping")
	if err != nil {
		s.metrics.storeErrors.inc("ping")
	}
	return err
}

func (s *storeLimits) close() error { return s.rdb.Close() }

// storeRPCError is the JSON-RPC error of a call refused for want of the store.
func storeRPCError(err error) error {
	var down *storeDownError
	if errors.As(err, &down) {
		return &jsonrpc.Error{Code: CodeStoreUnavailable, Message: down.Error()}
	}
	return err
}

// defaultReplicaID names a replica: host name and process id.
func defaultReplicaID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "otter"
	}
	return host + "-" + strconv.Itoa(os.Getpid())
}
