package safehttp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkClient measures a GET through the policy-checking client
// against the same GET through a plain http.Client, on loopback, and
// reports their ratio (the cost of the checks per request).
func BenchmarkClient(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html><title>bench</title></html>")
	}))
	defer srv.Close()
	p, _ := NewPolicy([]string{"127.0.0.1/32"})
	safe, _ := p.Client(ClientOptions{})
	plain := &http.Client{Transport: &http.Transport{}}
	defer plain.CloseIdleConnections()
	defer safe.CloseIdleConnections()
	ctx := context.Background()
	run := func(c *http.Client) time.Duration {
		start := time.Now()
		for range b.N {
			if _, err := get(ctx, c, srv.URL+"/"); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	run(safe) // warm both connection pools
	run(plain)
	b.ResetTimer()
	otter := run(safe)
	baseline := run(plain)
	b.StopTimer()
	ratio := float64(otter) / float64(baseline)
	b.ReportMetric(float64(otter.Nanoseconds())/float64(b.N), "otter-ns/op")
	b.ReportMetric(float64(baseline.Nanoseconds())/float64(b.N), "baseline-ns/op")
	b.ReportMetric(ratio, "ratio")
	b.Logf("safehttp GET: otter=%s baseline=%s ratio=%.2f", otter/time.Duration(b.N), baseline/time.Duration(b.N), ratio)
}
