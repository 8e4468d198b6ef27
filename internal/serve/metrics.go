package serve

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// metrics are the Prometheus metrics of one Server, in its own set (so
// several servers in one process, as in tests, do not collide).
//
// They are kept with github.com/VictoriaMetrics/metrics, not Prometheus's
// client_golang: the exposition is the same text format, but client_golang
// links protobuf, procfs and expvar into every otter command and their
// package initialisation cost about 3 ms and 160 page faults at each start
// of `otter` (measured with GODEBUG=inittrace=1 and perf stat), for an
// endpoint only `otter mcp serve` has. The trade-off: no `# HELP` lines —
// docs/serve.md's table describes each metric.
type metrics struct {
	set          *vm.Set
	requests     counterFamily   // method, status
	latency      histogramFamily // method
	toolCalls    counterFamily   // tool, outcome
	toolLatency  histogramFamily // tool
	errors       counterFamily   // kind
	rateLimited  counterFamily   // tool
	httpRequests counterFamily   // code, method (counted by the HTTP handler)
	storeLatency histogramFamily // op (the shared limits store)
	storeErrors  counterFamily   // op
}

func newMetrics() *metrics {
	set := vm.NewSet()
	return &metrics{
		set:          set,
		requests:     counterFamily{set, "otter_serve_requests_total", []string{"method", "status"}},
		latency:      histogramFamily{set, "otter_serve_request_duration_seconds", []string{"method"}, []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}},
		toolCalls:    counterFamily{set, "otter_serve_tool_calls_total", []string{"outcome", "tool"}},
		toolLatency:  histogramFamily{set, "otter_serve_tool_call_duration_seconds", []string{"tool"}, vm.ExponentialBuckets(0.005, 2.5, 12)},
		errors:       counterFamily{set, "otter_serve_errors_total", []string{"kind"}},
		rateLimited:  counterFamily{set, "otter_serve_rate_limited_total", []string{"tool"}},
		httpRequests: counterFamily{set, "otter_serve_http_requests_total", []string{"code", "method"}},
		storeLatency: histogramFamily{set, "otter_serve_store_duration_seconds", []string{"op"}, []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}},
		storeErrors:  counterFamily{set, "otter_serve_store_errors_total", []string{"op"}},
	}
}

// counterFamily is a counter with labels; labels are listed in sorted
// order, as Prometheus writes them.
type counterFamily struct {
	set    *vm.Set
	name   string
	labels []string
}

// inc adds one to the series of these label values (in the family's label order).
func (f counterFamily) inc(values ...string) {
	f.set.GetOrCreateCounter(series(f.name, f.labels, values)).Inc()
}

// histogramFamily is a Prometheus histogram (le buckets) with labels.
type histogramFamily struct {
	set     *vm.Set
	name    string
	labels  []string
	buckets []float64
}

func (f histogramFamily) observe(v float64, values ...string) {
	f.set.GetOrCreatePrometheusHistogramExt(series(f.name, f.labels, values), f.buckets).Update(v)
}

// series names one series: name{label="value",…}, values escaped as the
// text format wants (backslash, double quote, newline).
func series(name string, labels, values []string) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, l := range labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l)
		b.WriteString(`="`)
		b.WriteString(labelEscaper.Replace(values[i]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// write writes the server's metrics, then the Go runtime's and the process's.
func (m *metrics) write(w io.Writer) {
	m.set.WritePrometheus(w)
	vm.WriteProcessMetrics(w)
}

// handler serves /metrics.
func (m *metrics) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.write(w)
	})
}

// countHTTP counts every HTTP request by status code and method.
func (m *metrics) countHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		code := sw.code
		if code == 0 {
			code = http.StatusOK
		}
		m.httpRequests.inc(strconv.Itoa(code), strings.ToLower(r.Method))
	})
}

// statusWriter remembers the status code written through it.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush supports SSE streams through the wrapper.
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
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
			m.errors.inc("rpc")
		}
		m.requests.inc(label, status)
		m.latency.observe(time.Since(start).Seconds(), label)
		return res, err
	}
}

// toolCall records one finished tool call.
func (m *metrics) toolCall(name, outcome string, d time.Duration) {
	m.toolCalls.inc(outcome, name)
	m.toolLatency.observe(d.Seconds(), name)
	switch outcome {
	case OutcomeError:
		m.errors.inc("tool")
	case OutcomeRateLimited, OutcomeDenied:
		m.rateLimited.inc(name)
	}
}
