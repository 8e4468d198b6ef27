package servebin

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestHealthAnswersUnder1100IdleConnections: under a file limit of 1024
// (prlimit, as `ulimit -n 1024` would), clients hold 1,100 connections
// open — accepted and silent, or kept alive after a request, or trickling
// a request body without a key — and open new ones as theirs are closed.
// /health must answer every probe, each within 3 s, and the server must
// never run out of file descriptors.
//
// Before, the connections took every descriptor: accept failed with
// "too many open files" and /health failed 23 of 50 probes.
func TestHealthAnswersUnder1100IdleConnections(t *testing.T) {
	requireBinary(t)
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Fatal("prlimit (util-linux) is needed to lower the server's file limit")
	}
	h := newHome(t, "")
	srv := startHTTP(t, h, []string{prlimit, "--nofile=1024:1024", "--"})
	addr := strings.TrimPrefix(srv.base, "http://")
	ctx := ctxFor(t, 2*time.Minute)

	const holders = 1100
	const attack = 15 * time.Second
	attackCtx, stop := context.WithTimeout(ctx, attack)
	defer stop()
	var dials, refusedDials atomic.Int64
	var wg sync.WaitGroup
	for i := range holders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var d net.Dialer
			for attackCtx.Err() == nil { // keep a connection open, re-dialling when it is closed
				c, err := d.DialContext(attackCtx, "tcp", addr)
				if err != nil {
					refusedDials.Add(1)
					time.Sleep(50 * time.Millisecond)
					continue
				}
				dials.Add(1)
				switch i % 3 {
				case 1: // a request, then idle keep-alive
					fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
				case 2: // a body trickled without a key
					fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", addr)
				}
				go func() { <-attackCtx.Done(); c.Close() }()
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						break
					}
				}
				c.Close()
			}
		}()
	}

	// The probes start once every holder has dialled (the connections
	// piled up), or the server refuses more.
	waitUntil(t, fmt.Sprintf("%d connections held", holders), attack, func() bool { return dials.Load() >= holders || refusedDials.Load() > 0 })
	var probes, failures int
	var worst time.Duration
	var firstFailure string
	for attackCtx.Err() == nil {
		probes++
		start := time.Now()
		err := probeHealth(ctx, srv.base, 3*time.Second)
		if d := time.Since(start); d > worst {
			worst = d
		}
		if err != nil {
			failures++
			if firstFailure == "" {
				firstFailure = err.Error()
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	stop()
	wg.Wait()
	t.Logf("%d connections dialled (%d dials refused); /health: %d probes, %d failed, slowest %s",
		dials.Load(), refusedDials.Load(), probes, failures, worst.Round(time.Millisecond))
	if failures > 0 {
		t.Errorf("/health failed %d of %d probes (first: %s)", failures, probes, firstFailure)
	}
	// Each probe has 3 s to answer (a failure above); the count only
	// checks that the probing ran through the attack. A busy 2-core CI
	// machine managed 19 in 15 s with none failed, so the floor is low.
	if probes < 8 {
		t.Errorf("only %d probes in %s", probes, attack)
	}
	if strings.Contains(srv.stderr.String(), "too many open files") {
		t.Errorf("the server ran out of file descriptors:\n%.2000s", srv.stderr.String())
	}
	if err := probeHealth(ctx, srv.base, 3*time.Second); err != nil {
		t.Errorf("/health after the clients left: %v", err)
	}
}

// probeHealth GETs /health on a new connection within d.
func probeHealth(ctx context.Context, base string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if resp.StatusCode != http.StatusOK || !strings.Contains(line, `"status":"ok"`) {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, line)
	}
	return nil
}

// TestInterruptFinishesTheCleanupDespiteSilentClients: clients that
// connect and send nothing, or half a request, keep net/http's graceful
// shutdown waiting (a connection that has not sent its first request is
// not idle for 5 s). Ctrl+C must still end `otter mcp serve` through its
// cleanup — the summary of closed sessions, the audit log, the shared
// store — not by the forced exit otter takes when the cleanup overruns
// (that lost the summary line in CI: TestSSESessionsOfOneKeyDoNotPushOutOthers).
func TestInterruptFinishesTheCleanupDespiteSilentClients(t *testing.T) {
	requireBinary(t)
	h := newHome(t, "")
	srv := startHTTP(t, h, nil)
	ctx := ctxFor(t, time.Minute)
	addr := strings.TrimPrefix(srv.base, "http://")
	var d net.Dialer
	for i := range 4 {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if i%2 == 1 {
			fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: %s\r\n", addr) // and never the blank line
		}
	}
	// The server has accepted them: /health answers on a fifth.
	if err := probeHealth(ctx, srv.base, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	srv.stop()
	out := srv.stderr.String()
	if strings.Contains(out, "without finishing the cleanup") {
		t.Fatalf("otter gave up on its cleanup:\n%s", tail(out, 2000))
	}
	if len(srv.stderr.logLines("stopped serving")) != 1 {
		t.Fatalf("no \"stopped serving\" line:\n%s", tail(out, 2000))
	}
}
