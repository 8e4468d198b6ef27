package serve

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/webdata"
)

// A tool call through otter's handler with the limits in a local Redis
// (one script round trip per call: quota and bucket) against the same call
// with the limits in process memory, same process, calls alternating.
//
//	serve-redis-call: otter=… baseline=… ratio=…     (mean time of a call, Redis/in-memory; target ≤ 1.3)
//	serve-redis-call-p99: otter=… baseline=… ratio=… (p99 latency, Redis/in-memory)
func BenchmarkServeRedisCall(b *testing.B) {
	url, _ := privateRedis(b)
	name := testTools()[0].Info().Name
	call := func(ctx context.Context, cs *mcp.ClientSession) error {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		return err
	}
	rates, err := webdata.NewRateLimits(nil)
	if err != nil {
		b.Fatal(err)
	}
	withStore := benchServer(b, Options{DailyQuota: 1 << 30, RateLimits: rates, Store: &StoreOptions{URL: url}}, false)
	// Stateless too, as a replica serves: only where the limits live differs.
	inMemory := benchServer(b, Options{DailyQuota: 1 << 30}, true)
	benchCompare(b, "serve-redis-call", withStore, inMemory, call, true)
}

// benchServer serves testTools through otter's handler with opts.
func benchServer(b *testing.B, opts Options, stateless bool) string {
	set := tool.NewSet(tool.Options{SpillDir: b.TempDir()})
	set.SetBuiltins(testTools())
	opts.Tools, opts.Logger = set, slog.New(slog.DiscardHandler)
	opts.AuditLog = filepath.Join(b.TempDir(), "audit.jsonl")
	s, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	s.statelessHTTP = stateless
	ts := httptest.NewServer(s.Handler())
	b.Cleanup(ts.Close)
	return ts.URL + PathMCP
}

// privateRedis starts a private redis-server on a random loopback port;
// it returns its URL and process.
func privateRedis(b testing.TB) (string, *os.Process) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		b.Fatal("redis-server is not installed: run `make test-deps` or `apt-get install -y redis-server`")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("redis-server", "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", b.TempDir())
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	for i := 0; rdb.Ping(context.Background()).Err() != nil; i++ {
		if i > 200 {
			b.Fatal("redis-server did not answer PING in 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "redis://" + addr, cmd.Process
}
