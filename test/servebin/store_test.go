package servebin

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/otter-sh/otter/internal/testpeer"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and its key
// into dir; the certificate is its own CA.
func writeCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "otter test redis"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "redis.crt"), filepath.Join(dir, "redis.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// startRedisTLS starts a redis-server that speaks TLS only (no plain
// port) and wants password; caFile is the certificate to trust.
func startRedisTLS(t *testing.T, password string) (r *redisServer, caFile string) {
	t.Helper()
	certFile, keyFile, pool := writeCert(t, t.TempDir())
	port := freePort(t)
	r = &redisServer{t: t, port: port, scheme: "rediss",
		auth: url.UserPassword("", password).String(),
		listen: []string{"--port", "0", "--tls-port", fmt.Sprint(port), "--tls-cert-file", certFile, "--tls-key-file", keyFile,
			"--tls-ca-cert-file", certFile, "--tls-auth-clients", "no", "--requirepass", password}}
	r.client = redis.Options{Addr: r.addr(), Password: password, TLSConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}}
	r.start()
	t.Cleanup(r.stop)
	return r, certFile
}

// getHealth reads a replica's /health.
func getHealth(t *testing.T, ctx context.Context, base string) (raw string, body struct {
	Status string
	Store  struct{ Status, URL, Error string }
}) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("/health: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("/health answered %q: %v", b, err)
	}
	return string(b), body
}

// runOtter runs the otter binary in h and returns its output and exit
// code; a run past a minute fails the test.
func runOtter(t *testing.T, h *home, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := testpeer.Cmd{Path: otterBin, Dir: h.dir, Env: h.env}.Run(t, ctx, args...)
	return r.Stdout, r.Stderr, r.Code
}

// leaks names the places where any of secrets appears.
func leaks(places map[string]string, secrets ...string) []string {
	var out []string
	for where, text := range places {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				out = append(out, fmt.Sprintf("%s shows %q", where, s))
			}
		}
	}
	return out
}

// tlsPassword has the characters that must be percent-encoded in a URL's
// userinfo ('/'), and some that need not ('+', '=').
const tlsPassword = "Zk9/q+Rx2wTLS=="

// TestStoreOverTLS: two replicas reach a redis-server that speaks only
// TLS and wants a password, through rediss:// with the password from the
// environment and the server's CA given by SSL_CERT_FILE. They share one
// daily quota of 5 (8 calls: 5 succeed, 3 refused with QUOTA_EXCEEDED);
// /health reports the store up with the password masked; the password
// appears in no log line, /health body or ledger.
func TestStoreOverTLS(t *testing.T) {
	requireBinary(t)
	rs, ca := startRedisTLS(t, tlsPassword)
	srvs, ledgers := startReplicasEnv(t, 2, rs.url(), "[tools.rate_limits.list_presets]\nrpm = -1\n", "",
		[]string{"SSL_CERT_FILE=" + ca}, "--daily-quota", "5")
	ctx := ctxFor(t, 2*time.Minute)
	clients := connectClients(t, ctx, srvs, 2)

	var c tally
	for i := range 8 {
		c.call(ctx, clients[i%2], i%2)
	}
	if c.ok.Load() != 5 || c.quota.Load() != 3 {
		t.Errorf("%s over rediss://, want 5 ok and 3 refused with QUOTA_EXCEEDED (first other error: %s)", &c, c.firstOther)
	}

	places := map[string]string{}
	wantURL := fmt.Sprintf("rediss://:****@%s", rs.addr())
	for i, s := range srvs {
		raw, h := getHealth(t, ctx, s.base)
		if h.Status != "ok" || h.Store.Status != "ok" || h.Store.URL != wantURL {
			t.Errorf("replica %d /health = %s, want status ok and store {status ok, url %s}", i+1, raw, wantURL)
		}
		places[fmt.Sprintf("replica %d /health", i+1)] = raw
	}
	for i, s := range srvs {
		s.stop()
		ledger, err := os.ReadFile(ledgers[i])
		if err != nil {
			t.Fatal(err)
		}
		places[fmt.Sprintf("replica %d stderr", i+1)] = s.stderr.String()
		places[fmt.Sprintf("replica %d stdout", i+1)] = s.stdout.String()
		places[fmt.Sprintf("replica %d ledger", i+1)] = string(ledger)
		if len(s.stderr.logLines("serving MCP over HTTP")) == 0 || !strings.Contains(s.stderr.String(), wantURL) {
			t.Errorf("replica %d does not log its store as %s:\n%.1500s", i+1, wantURL, s.stderr.String())
		}
	}
	for _, l := range leaks(places, tlsPassword, url.UserPassword("", tlsPassword).String()[1:], "Zk9") {
		t.Error(l)
	}
}

// TestStoreURLPasswordNeverShown: `otter config show` masks the store
// URL's password, even one holding '/', '?' and '#' unescaped (as a
// base64 password pasted into the variable is), which ends a URL's
// userinfo early by the URL grammar; and `otter mcp serve`, refusing such
// a URL, names it masked and says to percent-encode. Before, both printed
// redis://:Zk9/q+Rx?2w#==@… whole.
func TestStoreURLPasswordNeverShown(t *testing.T) {
	requireBinary(t)
	const pw = "Zk9/q+Rx?2w#=="
	cfg := "[serve]\napi_keys = [\"${KEY}\"]\n\n[serve.store]\nurl = \"${STORE_URL}\"\n"
	for _, tc := range []struct{ name, url, want string }{
		{"unescaped", "redis://:" + pw + "@127.0.0.1:6379/0", "redis://:****@127.0.0.1:6379/0"},
		{"percent-encoded", "rediss://otter" + url.UserPassword("", pw).String() + "@redis.internal:6380", "rediss://otter:****@redis.internal:6380"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHome(t, cfg, "KEY="+replicaKey, "STORE_URL="+tc.url)
			out, errOut, code := runOtter(t, h, "config", "show")
			if code != 0 || !strings.Contains(out, fmt.Sprintf("url = %q", tc.want)) {
				t.Errorf("otter config show (exit %d) does not show url = %q:\n%s%s", code, tc.want, out, errOut)
			}
			for _, l := range leaks(map[string]string{"config show": out + errOut}, pw, "Zk9", "+Rx") {
				t.Error(l)
			}
		})
	}
	h := newHome(t, cfg, "KEY="+replicaKey, "STORE_URL=redis://:"+pw+"@127.0.0.1:6379/0")
	out, errOut, code := runOtter(t, h, "mcp", "serve", "--http", "127.0.0.1:0")
	if code == 0 || !strings.Contains(errOut, "redis://:****@127.0.0.1:6379/0 is not a Redis URL") || !strings.Contains(errOut, "percent-encoded") {
		t.Errorf("otter mcp serve with an unparsable store URL: exit %d, stderr:\n%s\nwant a refusal naming the URL masked and saying to percent-encode", code, errOut)
	}
	for _, l := range leaks(map[string]string{"mcp serve": out + errOut}, pw, "Zk9", "+Rx") {
		t.Error(l)
	}
}

// evalCalls is how many EVAL commands redis-server ran: go-redis sends
// EVALSHA, and the whole script with EVAL only after a NOSCRIPT.
func evalCalls(t *testing.T, ctx context.Context, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if rest, ok := strings.CutPrefix(line, "cmdstat_eval:calls="); ok {
			n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			return n
		}
	}
	return 0
}

// twoReplicasQuota10 starts a private Redis and two replicas sharing it,
// with a daily quota of 10, a get_status bucket of burst 3 refilled every
// 10 s (rpm 6), and tool's rpm and burst; it connects a client to each.
func twoReplicasQuota10(t *testing.T, tool string, rpm, burst int) (*redisServer, []*httpServer, context.Context, []*mcp.ClientSession) {
	t.Helper()
	requireBinary(t)
	rs := startRedis(t)
	limits := fmt.Sprintf("[tools.rate_limits.get_status]\nrpm = 6\nburst = 3\n\n[tools.rate_limits.%s]\nrpm = %d\n", tool, rpm)
	if burst > 0 {
		limits += fmt.Sprintf("burst = %d\n", burst)
	}
	srvs, _ := startReplicas(t, 2, rs.url(), limits, "", "--daily-quota", "10")
	ctx := ctxFor(t, 2*time.Minute)
	return rs, srvs, ctx, connectClients(t, ctx, srvs, 2)
}

// TestStoreRestartsEmpty: Redis loses everything mid-run — FLUSHALL with
// SCRIPT FLUSH, then a crash and a restart with no persistence — and the
// two replicas go on applying the limits without being restarted: the
// script is loaded again after NOSCRIPT, and the quota counter and the
// bucket are created again, expiring, starting over (as docs/serve.md says: a
// client may make a full quota again that day). Each round, against a
// quota of 10 and a get_status bucket of burst 3 (one token per 10 s):
// 3 get_status ok, the 4th RATE_LIMITED, 7 list_presets ok, the 8th
// QUOTA_EXCEEDED. While Redis is down, a call is refused naming the
// store (on_store_error = "deny").
func TestStoreRestartsEmpty(t *testing.T) {
	rs, srvs, ctx, clients := twoReplicasQuota10(t, "list_presets", -1, 0)

	round := func(when string) {
		t.Helper()
		var c tally
		for i := range 4 {
			c.callTool(ctx, clients[i%2], i%2, "get_status")
		}
		for i := range 8 {
			c.call(ctx, clients[i%2], i%2)
		}
		t.Logf("%s: %s", when, &c)
		if c.ok.Load() != 10 || c.rate.Load() != 1 || c.quota.Load() != 1 || c.store.Load()+c.other.Load() != 0 {
			t.Errorf("%s: %s, want 10 ok, 1 rate_limited, 1 quota_refused (first other error: %s)", when, &c, c.firstOther)
		}
	}
	round("first")

	rdb := rs.dial()
	evals := evalCalls(t, ctx, rdb)
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	round("after FLUSHALL and SCRIPT FLUSH")
	if n := evalCalls(t, ctx, rdb); n <= evals {
		t.Errorf("EVAL ran %d times before SCRIPT FLUSH and %d after: the replicas did not load the script again", evals, n)
	}
	rdb.Close()

	rs.stop()
	var down tally
	down.call(ctx, clients[0], 0)
	if down.store.Load() != 1 {
		t.Errorf("a call while Redis is down: %s, want it refused naming the shared limits store (%s)", &down, down.firstOther)
	}
	rs.start()
	for i, s := range srvs {
		deadline := time.Now().Add(10 * time.Second)
		for {
			raw, h := getHealth(t, ctx, s.base)
			if h.Store.Status == "ok" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica %d /health after Redis restarted: %s", i+1, raw)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	time.Sleep(1100 * time.Millisecond) // the replica that failed skips the store for a second
	round("after a restart with nothing kept")

	rdb = rs.dial()
	defer rdb.Close()
	keys, err := rdb.Keys(ctx, "otter:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Errorf("keys after the restart: %q, want the client's quota counter and its get_status bucket", keys)
	}
	for _, k := range keys {
		if ttl := rdb.PTTL(ctx, k).Val(); ttl <= 0 {
			t.Errorf("key %s has TTL %s: it would never expire", k, ttl)
		}
	}
	// The Redis client's own complaints go through the replicas' JSON log,
	// not in plain text between its lines.
	for i, s := range srvs {
		for line := range strings.Lines(s.stderr.String()) {
			if !json.Valid([]byte(line)) {
				t.Errorf("replica %d stderr has a line that is not JSON: %q", i+1, line)
			}
		}
	}
}

// TestGetStatusShowsTheSharedStore: with a store, get_status on one
// replica reports the figures the store holds for the client — calls
// spent through another replica included — and says where they are kept.
// Before, it showed no bucket at all: the tools' own buckets are unused
// (unlimited) when the server keeps the limits, and the quota was not shown.
func TestGetStatusShowsTheSharedStore(t *testing.T) {
	_, _, ctx, clients := twoReplicasQuota10(t, "list_presets", 6, 10)
	var c tally
	for range 4 {
		c.call(ctx, clients[0], 0)
	}
	if c.ok.Load() != 4 {
		t.Fatalf("4 calls through replica 1: %s (%s)", &c, c.firstOther)
	}
	res, err := clients[1].CallTool(ctx, &mcp.CallToolParams{Name: "get_status", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_status through replica 2: %v %+v", err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var env struct {
		Result struct {
			Limits struct {
				Store      string
				Error      string
				DailyQuota *struct{ Limit, Used, Remaining int } `json:"daily_quota"`
			}
			Quotas []struct {
				Tool      string
				Burst     int
				Remaining int
				ResetAt   time.Time `json:"reset_at"`
			}
		}
	}
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		t.Fatalf("get_status: %v\n%s", err, text)
	}
	l := env.Result.Limits
	if l.Store != "redis" || l.Error != "" || l.DailyQuota == nil || *l.DailyQuota != (struct{ Limit, Used, Remaining int }{10, 5, 5}) {
		t.Errorf("get_status limits = %+v, want store redis and 5 of 10 calls used\n%s", l, text)
	}
	want := map[string]int{"list_presets": 6, "get_status": 2}
	for _, q := range env.Result.Quotas {
		if w, ok := want[q.Tool]; ok {
			if q.Remaining != w || !q.ResetAt.After(time.Now()) {
				t.Errorf("%s bucket = %+v, want %d tokens left and a reset to come", q.Tool, q, w)
			}
			delete(want, q.Tool)
		}
	}
	if len(want) > 0 {
		t.Errorf("get_status shows no bucket for %v:\n%s", want, text)
	}
}

// TestLedgerOnStdout: audit_log = "-" writes one JSON line per call to
// stdout, each naming the replica, for a log collector; over stdio, where
// stdout carries the MCP messages, otter refuses to start with it.
func TestLedgerOnStdout(t *testing.T) {
	requireBinary(t)
	rs := startRedis(t)
	cfg := "[serve]\napi_keys = [\"${KEY}\"]\naudit_log = \"-\"\nreplica_id = \"r-stdout\"\n\n[serve.store]\nurl = \"${STORE_URL}\"\n"
	h := newHome(t, cfg, "KEY="+replicaKey, "STORE_URL="+rs.url())
	srv := startHTTP(t, h, nil, "--daily-quota", "3")
	ctx := ctxFor(t, time.Minute)
	cs := connectClients(t, ctx, []*httpServer{srv}, 1)[0]
	var c tally
	for range 5 {
		c.call(ctx, cs, 0)
	}
	srv.stop()
	outcomes := map[string]int{}
	for line := range strings.Lines(srv.stdout.String()) {
		var rec struct{ Replica, Tool, Outcome string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("stdout holds a line that is not a JSON record: %q", line)
		}
		if rec.Replica != "r-stdout" || rec.Tool != "list_presets" {
			t.Errorf("record %s: want replica r-stdout and tool list_presets", line)
		}
		outcomes[rec.Outcome]++
	}
	if c.ok.Load() != 3 || outcomes["ok"] != 3 || outcomes["denied"] != 2 {
		t.Errorf("calls %s; stdout records by outcome %v, want 3 ok and 2 denied", &c, outcomes)
	}

	_, errOut, code := runOtter(t, h, "mcp", "serve")
	if code != 2 || !strings.Contains(errOut, "stdout carries the MCP messages") {
		t.Errorf("otter mcp serve over stdio with audit_log = \"-\": exit %d, stderr %q; want exit 2 saying why", code, errOut)
	}
}
