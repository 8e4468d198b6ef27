package servebin

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	keyA = "key-a-0123456789abcdef0123456789abcdef"
	keyB = "key-b-fedcba9876543210fedcba9876543210"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// rawRequest sends one MCP request with key and session id ("" for none).
func rawRequest(ctx context.Context, hc *http.Client, method, url, key, session, body string) (*http.Response, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	return hc.Do(req)
}

// openStream opens a session with key and holds its GET (SSE) stream
// open until the server ends it or ctx is done; ended is closed then.
func openStream(ctx context.Context, hc *http.Client, base, key string, ended chan<- struct{}) error {
	resp, err := rawRequest(ctx, hc, http.MethodPost, base+"/mcp", key, "", initializeBody)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		return &statusError{resp.StatusCode}
	}
	resp, err = rawRequest(ctx, hc, http.MethodPost, base+"/mcp", key, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	stream, err := rawRequest(ctx, hc, http.MethodGet, base+"/mcp", key, sid, "")
	if err != nil {
		return err
	}
	if stream.StatusCode != http.StatusOK {
		stream.Body.Close()
		return &statusError{stream.StatusCode}
	}
	go func() {
		defer close(ended)
		defer stream.Body.Close()
		r := bufio.NewReader(stream.Body)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
		}
	}()
	return nil
}

type statusError struct{ code int }

func (e *statusError) Error() string { return http.StatusText(e.code) }

// TestSSESessionsOfOneKeyDoNotPushOutOthers: one key holder opens 1,200
// sessions, each holding its GET (SSE) stream open, while a client of
// another key keeps calling a tool. Every one of that client's calls must
// succeed, the holder keeps at most max_sessions_per_key (100) sessions,
// and the closings are logged as a rate — one summary line — not one line
// each.
//
// Before, a session with an open GET stream counted as busy and was never
// closed: past max_sessions (1000) the only idle session left was the
// other client's, closed again and again (532 ok and 14,379 "404 session
// not found" in the probe), with a WARN line per closing (13,889 in 15 s).
func TestSSESessionsOfOneKeyDoNotPushOutOthers(t *testing.T) {
	requireBinary(t)
	h := newHome(t, "[serve]\napi_keys = [\"${KEY_A}\", \"${KEY_B}\"]\n\n[tools.rate_limits.list_presets]\nrpm = -1\n", "KEY_A="+keyA, "KEY_B="+keyB)
	srv := startHTTP(t, h, nil)
	ctx := ctxFor(t, 3*time.Minute)

	// The other key's client: one session, calling a tool in a loop.
	victimHC := &http.Client{Transport: bearerTransport{keyB}}
	victim, err := mcp.NewClient(&mcp.Implementation{Name: "victim", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.base + "/mcp", HTTPClient: victimHC}, nil)
	if err != nil {
		t.Fatalf("connect the other key's client: %v", err)
	}
	defer victim.Close()
	var ok, failed atomic.Int64
	var firstErr atomic.Value
	stopVictim := make(chan struct{})
	victimDone := make(chan struct{})
	go func() {
		defer close(victimDone)
		for {
			select {
			case <-stopVictim:
				return
			default:
			}
			res, err := victim.CallTool(ctx, &mcp.CallToolParams{Name: "list_presets", Arguments: map[string]any{}})
			switch {
			case err != nil:
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
				time.Sleep(20 * time.Millisecond)
			case res.IsError:
				failed.Add(1)
				text := ""
				if len(res.Content) > 0 {
					if tc, ok := res.Content[0].(*mcp.TextContent); ok {
						text = tc.Text
					}
				}
				firstErr.CompareAndSwap(nil, "tool error: "+text)
			default:
				ok.Add(1)
			}
		}
	}()

	// The holder: 1,200 sessions with their streams open, 24 at a time.
	const holders = 1200
	tr := &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 0}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	holdCtx, stopHolding := context.WithCancel(ctx)
	defer stopHolding()
	ended := make([]chan struct{}, holders)
	var opened, refused atomic.Int64
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= holders {
					return
				}
				ended[i] = make(chan struct{})
				if err := openStream(holdCtx, hc, srv.base, keyA, ended[i]); err != nil {
					refused.Add(1)
					close(ended[i])
					continue
				}
				opened.Add(1)
			}
		}()
	}
	wg.Wait()
	// Calls go on while the streams are held: 20 more answered (or
	// failed: the assertions below say which).
	held := ok.Load() + failed.Load()
	waitUntil(t, "20 more calls while the streams are held", time.Minute, func() bool { return ok.Load()+failed.Load() >= held+20 })
	close(stopVictim)
	<-victimDone

	stillOpen := 0
	for settle := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		stillOpen = 0
		for _, e := range ended {
			select {
			case <-e:
			default:
				stillOpen++
			}
		}
		if stillOpen <= 100 || time.Now().After(settle) {
			break
		}
	}
	t.Logf("holder: %d sessions opened (%d refused), %d streams still open; other client: %d calls ok, %d failed",
		opened.Load(), refused.Load(), stillOpen, ok.Load(), failed.Load())
	if failed.Load() > 0 {
		t.Errorf("the other key's client had %d failed calls (first: %v) and %d ok, want every call ok", failed.Load(), firstErr.Load(), ok.Load())
	}
	if ok.Load() < 10 {
		t.Errorf("the other key's client made only %d calls", ok.Load())
	}
	if opened.Load() != holders {
		t.Errorf("%d of %d sessions opened: a new session is never refused, older idle ones are closed", opened.Load(), holders)
	}
	if stillOpen > 100 {
		t.Errorf("%d of the holder's streams are still open, want at most max_sessions_per_key = 100", stillOpen)
	}
	stopHolding()

	// The closings are reported as one summary line per interval (10 s),
	// the last one when the server stops.
	srv.stop()
	lines := srv.stderr.logLines("closed idle MCP sessions")
	if len(lines) == 0 || len(lines) > 3 {
		t.Fatalf("%d log lines about closed sessions, want 1 to 3 (one per 10 s); stderr's end:\n%s", len(lines), tail(srv.stderr.String(), 3000))
	}
	closed := 0.0
	for _, l := range lines {
		c, _ := l["closed"].(float64)
		closed += c
	}
	if closed < holders-100 {
		t.Errorf("the summary lines count %v closed sessions, want at least %d: %v", closed, holders-100, lines)
	}
}

type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}
