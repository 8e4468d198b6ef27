package servebin

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
)

// redisServer is a private redis-server on a random loopback port.
type redisServer struct {
	t    testing.TB
	port int
	// listen are the arguments that open its port ("--port P" plain, or
	// TLS only) and set its password.
	listen []string
	// client is how the test itself reaches it.
	client redis.Options
	scheme string // redis or rediss
	auth   string // userinfo for the URL ("" or ":PASSWORD" percent-encoded)
	cmd    *exec.Cmd
	done   chan struct{}
}

func startRedis(t testing.TB) *redisServer {
	t.Helper()
	port := freePort(t)
	r := &redisServer{t: t, port: port, scheme: "redis", listen: []string{"--port", fmt.Sprint(port)}}
	r.client = redis.Options{Addr: r.addr()}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// start runs redis-server, empty (no persistence), and waits for PONG.
func (r *redisServer) start() {
	r.t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		r.t.Fatal("redis-server is not installed: run `make test-deps` (scripts/install-system-deps.sh) or `apt-get install -y redis-server`")
	}
	args := append(slices.Clone(r.listen), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", r.t.TempDir(), "--loglevel", "warning")
	r.cmd = exec.Command("redis-server", args...)
	r.done = make(chan struct{})
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	go func(c *exec.Cmd, d chan struct{}) { _ = c.Wait(); close(d) }(r.cmd, r.done)
	rdb := r.dial()
	defer rdb.Close()
	for i := 0; ; i++ {
		err := rdb.Ping(context.Background()).Err()
		if err == nil {
			return
		}
		select {
		case <-r.done:
			r.t.Fatalf("redis-server %v exited: %v", args, err)
		default:
		}
		if i > 200 {
			r.t.Fatalf("redis-server did not answer PING in 10 s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dial is a client of the server for the test itself.
func (r *redisServer) dial() *redis.Client {
	o := r.client
	return redis.NewClient(&o)
}

func (r *redisServer) addr() string { return fmt.Sprintf("127.0.0.1:%d", r.port) }

func (r *redisServer) url() string {
	at := ""
	if r.auth != "" {
		at = r.auth + "@"
	}
	return r.scheme + "://" + at + r.addr()
}

func (r *redisServer) stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.done
}

// restartEmpty kills redis-server (SIGKILL, as a crash) and starts it
// again on the same port with nothing in it: no keys, no cached scripts.
func (r *redisServer) restartEmpty() {
	r.t.Helper()
	r.stop()
	r.start()
}

// pause stops redis-server (SIGSTOP) for d: connections stay open and
// every command times out, as with a hung or partitioned server.
func (r *redisServer) pause(d time.Duration) {
	_ = r.cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(d)
	_ = r.cmd.Process.Signal(syscall.SIGCONT)
}

const replicaKey = "replica-key-0123456789abcdef0123456789"

// startReplicas starts n replicas of otter mcp serve --http sharing the
// store at storeURL, each with its own audit ledger, and extra config.
func startReplicas(t *testing.T, n int, storeURL, extraCfg, storeCfg string, args ...string) ([]*httpServer, []string) {
	t.Helper()
	return startReplicasEnv(t, n, storeURL, extraCfg, storeCfg, nil, args...)
}

// startReplicasEnv is startReplicas with extra environment variables.
func startReplicasEnv(t *testing.T, n int, storeURL, extraCfg, storeCfg string, env []string, args ...string) ([]*httpServer, []string) {
	t.Helper()
	var srvs []*httpServer
	var ledgers []string
	for i := range n {
		dir := t.TempDir()
		ledger := filepath.Join(dir, "audit.jsonl")
		cfg := fmt.Sprintf("[serve]\napi_keys = [\"${KEY}\"]\naudit_log = %q\nreplica_id = \"r%d\"\n\n[serve.store]\nurl = \"${STORE_URL}\"\n%s\n%s\n",
			ledger, i+1, storeCfg, extraCfg)
		h := newHome(t, cfg, append([]string{"KEY=" + replicaKey, "STORE_URL=" + storeURL}, env...)...)
		srvs = append(srvs, startHTTP(t, h, nil, args...))
		ledgers = append(ledgers, ledger)
	}
	return srvs, ledgers
}

// connectClients connects n clients, client i to replica i%len(srvs).
func connectClients(t *testing.T, ctx context.Context, srvs []*httpServer, n int) []*mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearerTransport{replicaKey}}
	var out []*mcp.ClientSession
	for i := range n {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("client-%d", i), Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: srvs[i%len(srvs)].base + "/mcp", HTTPClient: hc}, nil)
		if err != nil {
			t.Fatalf("client %d to replica %d: %v", i, i%len(srvs)+1, err)
		}
		t.Cleanup(func() { cs.Close() })
		out = append(out, cs)
	}
	return out
}

// tally counts the outcomes of calls.
type tally struct {
	ok, quota, rate, store, other atomic.Int64
	mu                            sync.Mutex
	firstOther                    string
	perReplicaOther               [8]atomic.Int64
}

func (c *tally) String() string {
	return fmt.Sprintf("ok=%d quota_refused=%d rate_limited=%d store_refused=%d other_errors=%d",
		c.ok.Load(), c.quota.Load(), c.rate.Load(), c.store.Load(), c.other.Load())
}

// call makes one list_presets call and counts its outcome.
func (c *tally) call(ctx context.Context, cs *mcp.ClientSession, replica int) {
	c.callTool(ctx, cs, replica, "list_presets")
}

// callTool makes one call of a tool without arguments and counts its outcome.
func (c *tally) callTool(ctx context.Context, cs *mcp.ClientSession, replica int, name string) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	text := ""
	if res != nil && len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	switch {
	case err != nil && strings.Contains(err.Error(), "shared limits store"):
		c.store.Add(1)
	case err != nil:
		c.other.Add(1)
		c.perReplicaOther[replica].Add(1)
		c.note(err.Error())
	case res.IsError && strings.Contains(text, "QUOTA_EXCEEDED"):
		c.quota.Add(1)
	case res.IsError && strings.Contains(text, "RATE_LIMITED"):
		c.rate.Add(1)
	case res.IsError:
		c.other.Add(1)
		c.perReplicaOther[replica].Add(1)
		c.note(text)
	default:
		c.ok.Add(1)
	}
}

func (c *tally) note(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.firstOther == "" {
		c.firstOther = s
	}
}

// ledgerCount counts a ledger's records by outcome, and checks each names
// the replica.
func ledgerCount(t *testing.T, path, replica string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("ledger of %s: %v", replica, err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct{ Replica, Outcome string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("ledger of %s: a line is not JSON: %q", replica, sc.Text())
		}
		if rec.Replica != replica {
			t.Errorf("ledger of %s: a record names replica %q", replica, rec.Replica)
		}
		out[rec.Outcome]++
	}
	return out
}

// TestReplicasShareTheDailyQuota: three replicas, 64 clients spread over
// them, one key with a daily quota of 1,000 and 1,300 calls: exactly 1,000
// succeed and 300 are refused with QUOTA_EXCEEDED; the ledgers of the
// three hold one line per call, 1,000 of them ok.
func TestReplicasShareTheDailyQuota(t *testing.T) {
	requireBinary(t)
	rs := startRedis(t)
	srvs, ledgers := startReplicas(t, 3, rs.url(), "[tools.rate_limits.list_presets]\nrpm = -1\n", "", "--daily-quota", "1000")
	ctx := ctxFor(t, 3*time.Minute)
	clients := connectClients(t, ctx, srvs, 64)

	const calls = 1300
	var c tally
	var next atomic.Int64
	var wg sync.WaitGroup
	for i, cs := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= calls {
				c.call(ctx, cs, i%3)
			}
		}()
	}
	wg.Wait()
	for _, s := range srvs {
		s.stop()
	}
	var lines []string
	total, okLines := 0, 0
	for i, l := range ledgers {
		n := ledgerCount(t, l, fmt.Sprintf("r%d", i+1))
		sum := 0
		for _, v := range n {
			sum += v
		}
		total += sum
		okLines += n["ok"]
		lines = append(lines, fmt.Sprintf("r%d: %d lines (%d ok, %d denied)", i+1, sum, n["ok"], n["denied"]))
	}
	t.Logf("%d calls by 64 clients over 3 replicas: %s; ledgers: %s", calls, &c, strings.Join(lines, ", "))
	if c.ok.Load() != 1000 || c.quota.Load() != calls-1000 || c.other.Load()+c.store.Load() != 0 {
		t.Errorf("%s, want exactly 1000 ok and %d refused with QUOTA_EXCEEDED (first other error: %s)", &c, calls-1000, c.firstOther)
	}
	if total != calls || okLines != 1000 {
		t.Errorf("the ledgers hold %d lines, %d ok; want %d lines, 1000 ok", total, okLines, calls)
	}
}

// TestReplicasShareTheRateLimit: a bucket of 10 calls a second (rpm = 600,
// burst 5) admits 10 a second ± 10 % (past its burst) across three
// replicas hammered by 64 clients for 6 s.
func TestReplicasShareTheRateLimit(t *testing.T) {
	requireBinary(t)
	rs := startRedis(t)
	srvs, _ := startReplicas(t, 3, rs.url(), "[tools.rate_limits.list_presets]\nrpm = 600\nburst = 5\n", "")
	ctx := ctxFor(t, 3*time.Minute)
	clients := connectClients(t, ctx, srvs, 64)

	const window = 6 * time.Second
	var c tally
	start := time.Now()
	loadCtx, stop := context.WithDeadline(ctx, start.Add(window))
	defer stop()
	var wg sync.WaitGroup
	for i, cs := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for loadCtx.Err() == nil {
				c.call(ctx, cs, i%3)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	rate := float64(c.ok.Load()-5) / elapsed.Seconds() // the burst's 5 tokens come at once
	t.Logf("%s in %s: %.2f admitted a second", &c, elapsed.Round(time.Millisecond), rate)
	if rate < 9 || rate > 11 {
		t.Errorf("%.2f calls a second admitted across 3 replicas, want 10 ± 10 %%", rate)
	}
	if c.rate.Load() == 0 || c.other.Load() != 0 {
		t.Errorf("%s: want many RATE_LIMITED refusals and no other error (%s)", &c, c.firstOther)
	}
}

// TestReplicaKilledMidLoad: kill -9 one of three replicas while 63
// clients call; the clients of the other two see no error.
func TestReplicaKilledMidLoad(t *testing.T) {
	requireBinary(t)
	rs := startRedis(t)
	srvs, _ := startReplicas(t, 3, rs.url(), "[tools.rate_limits.list_presets]\nrpm = -1\n", "")
	ctx := ctxFor(t, 3*time.Minute)
	clients := connectClients(t, ctx, srvs, 63)

	var c tally
	loadCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for i, cs := range clients {
		if i%3 == 2 {
			continue // the killed replica's clients
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for loadCtx.Err() == nil {
				c.call(ctx, cs, i%3)
			}
		}()
	}
	// The load runs before the kill and goes on after it: 100 calls
	// answered, the kill, 200 more.
	waitUntil(t, "100 calls answered before the kill", time.Minute, func() bool { return c.ok.Load() >= 100 || c.other.Load() > 0 })
	srvs[2].kill()
	before := c.ok.Load()
	waitUntil(t, "200 calls answered after the kill", time.Minute, func() bool { return c.ok.Load() >= before+200 || c.other.Load() > 0 })
	stop()
	wg.Wait()
	t.Logf("clients of the two replicas left: %s", &c)
	if c.other.Load() != 0 || c.ok.Load() < 300 {
		t.Errorf("clients of the replicas left: %s (first error: %s), want no error", &c, c.firstOther)
	}
}

// TestStoreOutage: Redis stops answering (SIGSTOP) for 5 s mid-load, 64
// clients over three replicas. Under "deny" the calls in that time are
// refused with a JSON-RPC error naming the store, and no call passes the
// quota; under "local" the calls go on; both recover by themselves.
func TestStoreOutage(t *testing.T) {
	requireBinary(t)
	for _, mode := range []string{"deny", "local"} {
		t.Run(mode, func(t *testing.T) {
			rs := startRedis(t)
			const quota = 1500
			srvs, _ := startReplicas(t, 3, rs.url(), "[tools.rate_limits.list_presets]\nrpm = -1\n",
				fmt.Sprintf("on_store_error = %q\n", mode), "--daily-quota", fmt.Sprint(quota))
			ctx := ctxFor(t, 3*time.Minute)
			clients := connectClients(t, ctx, srvs, 64)

			var c, during tally
			var outage atomic.Bool
			loadCtx, stop := context.WithTimeout(ctx, 10*time.Second)
			defer stop()
			var wg sync.WaitGroup
			for i, cs := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for loadCtx.Err() == nil {
						if outage.Load() {
							during.call(ctx, cs, i%3)
						} else {
							c.call(ctx, cs, i%3)
						}
						time.Sleep(100 * time.Millisecond)
					}
				}()
			}
			time.Sleep(1500 * time.Millisecond)
			outage.Store(true)
			rs.pause(5 * time.Second)
			outage.Store(false)
			wg.Wait()
			ok := c.ok.Load() + during.ok.Load()
			t.Logf("outside the outage: %s; during it: %s", &c, &during)
			if n := c.other.Load() + during.other.Load(); n != 0 {
				t.Errorf("%d calls failed otherwise (first: %s %s)", n, c.firstOther, during.firstOther)
			}
			switch mode {
			case "deny":
				if during.store.Load() == 0 {
					t.Errorf("no call was refused naming the store during the outage: %s", &during)
				}
				if ok > quota {
					t.Errorf("%d calls succeeded, %d beyond the quota of %d", ok, ok-quota, quota)
				}
			case "local":
				if during.ok.Load() == 0 || during.store.Load() != 0 {
					t.Errorf("during the outage: %s, want calls going on under local limits", &during)
				}
			}
			// Recovered by itself: the stdout/stderr say the store answers again.
			if c.ok.Load() == 0 {
				t.Errorf("no call succeeded outside the outage: %s", &c)
			}
			back := false
			for _, s := range srvs {
				if len(s.stderr.logLines("answers again")) > 0 {
					back = true
				}
			}
			if !back {
				t.Errorf("no replica logged that the store answers again")
			}
			// /metrics counted the failed round trips and timed them all.
			var failed, timed float64
			for _, s := range srvs {
				failed += metricValue(t, ctx, s.base, `otter_serve_store_errors_total{op="spend"}`)
				timed += metricValue(t, ctx, s.base, `otter_serve_store_duration_seconds_count{op="spend"}`)
			}
			if failed == 0 || timed < float64(c.ok.Load()) {
				t.Errorf("/metrics: %g failed store round trips and %g timed, want some failed and at least the %d successes timed", failed, timed, c.ok.Load())
			}
		})
	}
}

// metricValue reads one series of a replica's /metrics (0 when absent).
func metricValue(t *testing.T, ctx context.Context, base, series string) float64 {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	resp, err := (&http.Client{Transport: bearerTransport{replicaKey}}).Do(req)
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("/metrics: %s = %q", series, v)
			}
			return f
		}
	}
	return 0
}
