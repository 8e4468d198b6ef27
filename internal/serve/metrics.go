package serve

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the Prometheus metrics of one Server, in its own registry
// (so several servers in one process, as in tests, do not collide).
type metrics struct {
	registry     *prometheus.Registry
	requests     *prometheus.CounterVec   // method, status
	latency      *prometheus.HistogramVec // method
	toolCalls    *prometheus.CounterVec   // tool, outcome
	toolLatency  *prometheus.HistogramVec // tool
	errors       *prometheus.CounterVec   // kind
	rateLimited  *prometheus.CounterVec   // tool
	httpRequests *prometheus.CounterVec   // code, method (set up by the HTTP handler)
	storeLatency *prometheus.HistogramVec // op (the shared limits store)
	storeErrors  *prometheus.CounterVec   // op
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otter_serve_requests_total",
			Help: "MCP requests handled, by JSON-RPC method and status (ok or error).",
		}, []string{"method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "otter_serve_request_duration_seconds",
			Help:    "Time to handle an MCP request, by JSON-RPC method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"method"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otter_serve_tool_calls_total",
			Help: "Tool calls, by tool and outcome (ok, error, denied, rate_limited: otter's own limit; a site's 429 is an error).",
		}, []string{"tool", "outcome"}),
		toolLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "otter_serve_tool_call_duration_seconds",
			Help:    "Duration of tool calls, by tool.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12),
		}, []string{"tool"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otter_serve_errors_total",
			Help: "Errors, by kind: rpc (a request failed), tool (a tool call failed), unauthorized, forbidden_host, forbidden_origin.",
		}, []string{"kind"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otter_serve_rate_limited_total",
			Help: "Tool calls refused by otter's own rate limit or per-client quota, by tool (not a site's 429).",
		}, []string{"tool"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otter_serve_http_requests_total",
			Help: "HTTP requests, by status code and HTTP method.",
		}, []string{"code", "method"}),
		storeLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "otter_serve_store_duration_seconds",
			Help:    "Round trips to the shared limits store ([serve.store]), by operation (spend: a call's limits; ping: /health).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}, []string{"op"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otter_serve_store_errors_total",
			Help: "Failed round trips to the shared limits store, by operation.",
		}, []string{"op"}),
	}
	m.registry.MustRegister(m.requests, m.latency, m.toolCalls, m.toolLatency, m.errors, m.rateLimited, m.httpRequests,
		m.storeLatency, m.storeErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// knownMethods bounds the method label: anything else counts as "other".
var knownMethods = map[string]bool{
	"initialize": true, "ping": true, "notifications/initialized": true, "notifications/cancelled": true,
	"notifications/progress": true, "notifications/roots/list_changed": true,
	"tools/list": true, "tools/call": true, "resources/list": true, "resources/read": true,
	"resources/templates/list": true, "resources/subscribe": true, "resources/unsubscribe": true,
	"prompts/list": true, "prompts/get": true, "logging/setLevel": true, "completion/complete": true,
}

// middleware counts and times every request the MCP server receives.
func (m *metrics) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		start := time.Now()
		res, err := next(ctx, method, req)
		label := method
		if !knownMethods[label] {
			label = "other"
		}
		status := "ok"
		if err != nil {
			status = "error"
			m.errors.WithLabelValues("rpc").Inc()
		}
		m.requests.WithLabelValues(label, status).Inc()
		m.latency.WithLabelValues(label).Observe(time.Since(start).Seconds())
		return res, err
	}
}

// toolCall records one finished tool call.
func (m *metrics) toolCall(name, outcome string, d time.Duration) {
	m.toolCalls.WithLabelValues(name, outcome).Inc()
	m.toolLatency.WithLabelValues(name).Observe(d.Seconds())
	switch outcome {
	case OutcomeError:
		m.errors.WithLabelValues("tool").Inc()
	case OutcomeRateLimited, OutcomeDenied:
		m.rateLimited.WithLabelValues(name).Inc()
	}
}
