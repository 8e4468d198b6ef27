package servebin

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestWrongKeysFromOneAddressAreRefused429: 200 wrong keys from one
// address soon get 429 with Retry-After, while a client with the good key
// on the same address (127.0.0.1) goes on working through the flood: it
// opens a session and calls a tool, and a raw request with the key gets
// 200 after the flood.
//
// Before, every wrong key was answered 401, as fast as the server could
// (6,538 a second from one client in the issue).
func TestWrongKeysFromOneAddressAreRefused429(t *testing.T) {
	requireBinary(t)
	h := newHome(t, "[serve]\napi_keys = [\"${KEY_A}\"]\n\n[tools.rate_limits.list_presets]\nrpm = -1\n", "KEY_A="+keyA)
	srv := startHTTP(t, h, nil)
	ctx := ctxFor(t, 60*time.Second)

	// The good client connects before the flood, and calls during it.
	good, err := mcp.NewClient(&mcp.Implementation{Name: "good", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.base + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{keyA}}}, nil)
	if err != nil {
		t.Fatalf("the good client could not connect: %v", err)
	}
	defer good.Close()

	const wrong = 200
	var (
		mu        sync.Mutex
		codes     = map[int]int{}
		first429  = -1
		retryBad  []string
		sent      atomic.Int64
		floodDone = make(chan struct{})
	)
	go func() {
		defer close(floodDone)
		hc := &http.Client{}
		for i := range wrong {
			resp, err := rawRequest(ctx, hc, http.MethodPost, srv.base+"/mcp", fmt.Sprintf("wrong-key-%04d-0123456789abcdef", i), "", initializeBody)
			if err != nil {
				mu.Lock()
				codes[-1]++
				mu.Unlock()
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			sent.Add(1)
			mu.Lock()
			codes[resp.StatusCode]++
			if resp.StatusCode == http.StatusTooManyRequests {
				if first429 < 0 {
					first429 = i
				}
				if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n < 1 || n > 60 {
					retryBad = append(retryBad, fmt.Sprintf("request %d: Retry-After %q", i, resp.Header.Get("Retry-After")))
				}
			}
			mu.Unlock()
		}
	}()

	calls := 0
	for flooding := true; flooding; calls++ {
		select {
		case <-floodDone:
			flooding = false
		default:
		}
		res, err := good.CallTool(ctx, &mcp.CallToolParams{Name: "list_presets", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("call %d of the good client during the flood (after %d wrong keys): %v %+v", calls+1, sent.Load(), err, res)
		}
	}

	// A new connection with the good key, after the flood, is let in.
	resp, err := rawRequest(ctx, &http.Client{}, http.MethodPost, srv.base+"/mcp", keyA, "", initializeBody)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a new request with the good key after the flood: %d, want 200", resp.StatusCode)
	}

	mu.Lock()
	defer mu.Unlock()
	t.Logf("wrong keys: %v; first 429 at request %d; the good client made %d calls meanwhile", codes, first429, calls)
	if first429 < 0 || first429 > 50 {
		t.Errorf("first 429 at wrong key %d of %d (-1: none), want within the first 50; answers %v", first429, wrong, codes)
	}
	if codes[http.StatusTooManyRequests] < wrong-50 {
		t.Errorf("%d of %d wrong keys answered 429, want at least %d: %v", codes[http.StatusTooManyRequests], wrong, wrong-50, codes)
	}
	if len(retryBad) > 0 {
		t.Errorf("429 without a usable Retry-After (whole seconds, 1–60): %v", retryBad[:min(5, len(retryBad))])
	}
	if lines := srv.stderr.logLines("too many failed authentications"); len(lines) != 1 {
		t.Errorf("%d log lines about the throttled address, want 1 (one per episode): %v", len(lines), lines)
	}
}

// TestShortAPIKeyRefusedAtStart: a 10-character key is refused before
// anything listens, naming the entry and where it comes from, never the
// key itself. Before, otter served with it.
func TestShortAPIKeyRefusedAtStart(t *testing.T) {
	requireBinary(t)
	const short = "abcdef1234"
	h := newHome(t, "[serve]\napi_keys = [\"0123456789abcdef0123\", \"${SHORT_KEY}\"]\n", "SHORT_KEY="+short)
	cmd := exec.Command(otterBin, "mcp", "serve", "--http", "127.0.0.1:0")
	cmd.Dir, cmd.Env = h.dir, h.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := -1
		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
		if err == nil || code != 2 {
			t.Errorf("exit %d (%v), want 2", code, err)
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("otter mcp serve with a 10-character key did not stop in 20 s; it serves:\n%s", stderr.String())
	}
	out := stderr.String()
	for _, want := range []string{"entry 2", "$SHORT_KEY", "config.toml:2", "10 characters", "at least 16", "openssl rand -hex 32"} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, short) {
		t.Errorf("stderr shows the key:\n%s", out)
	}
	if strings.Contains(out, "serving MCP") {
		t.Errorf("otter served with the short key:\n%s", out)
	}
}
