package serve

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/tool"
)

// The otter serve HTTP handler (Host/Origin guard, metrics, identity,
// audit-ready tool handlers) against the go-sdk's own minimal streamable
// HTTP server offering the same tools, in the same process. Calls
// alternate between the two so that machine noise hits both alike.
//
//	serve-ping: otter=… baseline=… ratio=…        (throughput, calls/s; ratio otter/baseline)
//	serve-ping-p99: otter=… baseline=… ratio=…    (latency; ratio otter/baseline)
func BenchmarkServePing(b *testing.B) {
	benchServe(b, "serve-ping", func(ctx context.Context, cs *mcp.ClientSession) error { return cs.Ping(ctx, nil) })
}

func BenchmarkServeToolsList(b *testing.B) {
	benchServe(b, "serve-tools-list", func(ctx context.Context, cs *mcp.ClientSession) error {
		_, err := cs.ListTools(ctx, nil)
		return err
	})
}

func benchServe(b *testing.B, name string, op func(context.Context, *mcp.ClientSession) error) {
	benchCompare(b, name, benchOtter(b), benchBaseline(b), op, false)
}

// benchCompare alternates op between the servers at otterURL and baseURL.
// Its first line is throughput (calls/s), or with perCall the mean time of
// a call, so that a ratio above 1 is otter being slower.
func benchCompare(b *testing.B, name, otterURL, baseURL string, op func(context.Context, *mcp.ClientSession) error, perCall bool) {
	ctx := b.Context()
	otter, base := benchConnect(b, otterURL), benchConnect(b, baseURL)
	for range 50 { // warm up connections and caches
		if err := op(ctx, otter); err != nil {
			b.Fatal(err)
		}
		if err := op(ctx, base); err != nil {
			b.Fatal(err)
		}
	}
	var lo, lb []time.Duration
	// With b.Loop the function runs once, so the lines below print once.
	for i := 0; b.Loop(); i++ {
		first, second, lf, ls := otter, base, &lo, &lb
		if i%2 == 1 {
			first, second, lf, ls = base, otter, &lb, &lo
		}
		start := time.Now()
		if err := op(ctx, first); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := op(ctx, second); err != nil {
			b.Fatal(err)
		}
		*lf = append(*lf, mid.Sub(start))
		*ls = append(*ls, time.Since(mid))
	}
	tpO, tpB := throughput(lo), throughput(lb)
	p99O, p99B := p99(lo), p99(lb)
	b.ReportMetric(tpO, "otter-calls/s")
	b.ReportMetric(tpB, "baseline-calls/s")
	ratio := tpO / tpB
	if perCall {
		ratio = tpB / tpO // as the line printed below: above 1 is otter slower
	}
	b.ReportMetric(ratio, "ratio")
	b.ReportMetric(float64(p99O.Microseconds()), "otter-p99-µs")
	b.ReportMetric(float64(p99B.Microseconds()), "baseline-p99-µs")
	if perCall {
		fmt.Printf("%s: otter=%.0fµs baseline=%.0fµs ratio=%.2f (mean time of a call; calls each: %d)\n", name, 1e6/tpO, 1e6/tpB, ratio, len(lo))
	} else {
		fmt.Printf("%s: otter=%.0f/s baseline=%.0f/s ratio=%.2f (calls each: %d)\n", name, tpO, tpB, ratio, len(lo))
	}
	fmt.Printf("%s-p99: otter=%s baseline=%s ratio=%.2f\n", name, p99O, p99B, float64(p99O)/float64(p99B))
}

func throughput(ls []time.Duration) float64 {
	var total time.Duration
	for _, d := range ls {
		total += d
	}
	if total == 0 {
		return 0
	}
	return float64(len(ls)) / total.Seconds()
}

func p99(ls []time.Duration) time.Duration {
	if len(ls) == 0 {
		return 0
	}
	s := slices.Clone(ls)
	slices.Sort(s)
	return s[(len(s)*99)/100]
}

// benchOtter serves testTools through otter's handler, as `otter mcp
// serve --http 127.0.0.1:…` does without keys.
func benchOtter(b *testing.B) string {
	set := tool.NewSet(tool.Options{SpillDir: b.TempDir()})
	set.SetBuiltins(testTools())
	s, err := New(Options{Tools: set, Logger: slog.New(slog.DiscardHandler),
		AuditLog: filepath.Join(b.TempDir(), "audit.jsonl"), Resources: []Resource{{URI: "otter://presets/a", Name: "a", Text: "{}"}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	ts := httptest.NewServer(s.Handler())
	b.Cleanup(ts.Close)
	return ts.URL + PathMCP
}

// benchBaseline is the go-sdk's minimal streamable server with the same
// tool definitions.
func benchBaseline(b *testing.B) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "baseline", Version: "1"}, nil)
	for _, t := range testTools() {
		in := t.Info()
		srv.AddTool(&mcp.Tool{Name: in.Name, Title: in.Title, Description: in.Description, InputSchema: in.InputSchema, Annotations: in.Annotations},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	b.Cleanup(ts.Close)
	return ts.URL
}

func benchConnect(b *testing.B, url string) *mcp.ClientSession {
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(b.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}
