package mcphost

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/servers"
)

// seenLog is what a test server saw (see cancelServer): in memory for an
// in-process server, in a file for a stdio one (see seenStdin).
type seenLog struct {
	file  string
	mu    sync.Mutex
	lines []string
}

func (l *seenLog) add(what string) {
	l.mu.Lock()
	l.lines = append(l.lines, what)
	l.mu.Unlock()
}

func (l *seenLog) count(what string) int {
	var lines []string
	if l.file != "" {
		b, _ := os.ReadFile(l.file)
		lines = strings.Fields(string(b))
	} else {
		l.mu.Lock()
		lines = append(lines, l.lines...)
		l.mu.Unlock()
	}
	n := 0
	for _, s := range lines {
		if s == what {
			n++
		}
	}
	return n
}

// waitCount waits until the server saw what n times, or gives up after
// within.
func (l *seenLog) waitCount(what string, n int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for l.count(what) < n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// cancelServer returns a server that records in a seenLog each tools/call
// ("call") and notifications/cancelled ("cancelled") that reaches it, and
// the name of its tool that runs until its call is cancelled. Over HTTP
// and SSE, that tool also records its end ("ended").
func cancelServer(t *testing.T, transport string) (config.Server, string, *seenLog) {
	seen := &seenLog{}
	switch transport {
	case "stdio":
		seen.file = filepath.Join(t.TempDir(), "seen")
		srv := stdioServer(t, "srv", "normal")
		srv.Env[envSeen] = seen.file
		return srv, "slow", seen
	case "http", "sse":
		// block runs until its call is cancelled, which the end of the
		// session alone does not do over HTTP and SSE; it ends with the
		// test when no cancellation comes, so that the server can close.
		srv := newTestServer("normal")
		stop := make(chan struct{})
		srv.AddTool(&sdk.Tool{Name: "block", InputSchema: objectSchema(nil)},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				seen.add("call")
				select {
				case <-ctx.Done():
					seen.add("ended")
					return nil, ctx.Err()
				case <-stop:
					return text("the test ended"), nil
				}
			})
		get := func(*http.Request) *sdk.Server { return srv }
		var h http.Handler = sdk.NewStreamableHTTPHandler(get, nil)
		if transport == "sse" {
			h = sdk.NewSSEHandler(get, nil)
		}
		// The notifications/cancelled that arrive: the SDK's server may
		// drop one it has not read yet when the session closes (though it
		// then cancels the calls left itself), so they are counted here.
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if msg, err := jsonrpc.DecodeMessage(body); err == nil && isCancelled(msg) {
					seen.add("cancelled")
				}
			}
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		t.Cleanup(func() { close(stop) }) // before ts.Close
		return remote("srv", transport, ts.URL), "block", seen
	}
	t.Fatalf("unknown transport %s", transport)
	return config.Server{}, "", nil
}

// A call cancelled just before the manager closes (the headless CLI's
// --timeout or Ctrl-C, then exit; quitting the TUI while a call is being
// interrupted) or the server is turned off still reaches the server as
// notifications/cancelled: the SDK sends it from a goroutine of its own,
// which the closing session would otherwise cut off.
func TestCancelledCallReachesServerBeforeClose(t *testing.T) {
	const calls = 10
	for _, tc := range []struct {
		transport, stop string
		returned        bool // the calls have returned before the stop
	}{
		{"http", "close", true},
		{"sse", "close", true},
		{"stdio", "close", true},
		{"http", "close", false},
		{"sse", "close", false},
		{"stdio", "close", false},
		{"http", "disable", false},
		{"stdio", "disable", true},
	} {
		name := tc.transport + "-" + tc.stop
		if !tc.returned {
			name += "-at-once"
		}
		t.Run(name, func(t *testing.T) {
			srv, slow, seen := cancelServer(t, tc.transport)
			h := newHarness(t, configOf(srv), servers.Options{})
			h.m.Start(context.Background())
			h.waitState("srv", servers.StateConnected)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, calls)
			for range calls {
				go func() {
					_, err := h.call(ctx, "srv", slow, `{}`)
					errc <- err
				}()
			}
			if !seen.waitCount("call", calls, liveness) {
				t.Fatalf("the server saw %d calls, want %d", seen.count("call"), calls)
			}
			cancel()
			checkCalls := func() {
				for range calls {
					if err := <-errc; err == nil || !strings.Contains(err.Error(), "cancelled") {
						t.Errorf("cancelled call returned %v", err)
					}
				}
			}
			if tc.returned {
				checkCalls()
			}
			start := time.Now()
			switch tc.stop {
			case "close":
				h.m.Close()
			case "disable":
				if err := h.m.SetEnabled(context.Background(), "srv", false); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("stopping took %s", time.Since(start))
			if !tc.returned {
				checkCalls()
			}
			if !seen.waitCount("cancelled", calls, 10*time.Second) {
				t.Fatalf("the server saw %d of %d cancellations", seen.count("cancelled"), calls)
			}
			if tc.transport != "stdio" && !seen.waitCount("ended", calls, liveness) {
				t.Fatalf("%d of %d calls ended on the server", seen.count("ended"), calls)
			}
		})
	}
}

// flushes runs flush in the background and reports whether it returned
// within d.
func flushes(w *cancelWatch, timeout time.Duration, ended <-chan struct{}, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		w.flush(timeout, ended, nil)
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

func TestCancelWatchFlush(t *testing.T) {
	// Nothing owed: no wait at all, however long the timeout.
	w := newCancelWatch()
	if !flushes(w, time.Hour, nil, liveness) {
		t.Fatal("flush waited with nothing owed")
	}
	// A request under way whose context has not ended owes nothing.
	ctx, cancel := context.WithCancel(context.Background())
	id := w.begin(ctx)
	if !flushes(w, time.Hour, nil, liveness) {
		t.Fatal("flush waited for a request under way")
	}
	// Its context ended: it owes a notification, which the SDK's goroutine
	// may write before the request has returned.
	cancel()
	if flushes(w, time.Hour, nil, 50*time.Millisecond) {
		t.Fatal("flush did not wait for the cancelled request under way")
	}
	w.notificationSent()
	if !flushes(w, time.Hour, nil, liveness) {
		t.Fatal("flush waited for a notification already sent")
	}
	w.end(id, true)
	if !flushes(w, time.Hour, nil, liveness) {
		t.Fatal("flush waited for a notification already sent")
	}
	// A returned request owes one until it is sent.
	w.end(w.begin(ctx), true)
	if flushes(w, time.Hour, nil, 50*time.Millisecond) {
		t.Fatal("flush did not wait for the owed notification")
	}
	w.notificationSent()
	if !flushes(w, time.Hour, nil, liveness) {
		t.Fatal("flush waited on after the notification was sent")
	}
	// A request cut off by the connection closing owes nothing.
	w.end(w.begin(ctx), false)
	if !flushes(w, time.Hour, nil, liveness) {
		t.Fatal("flush waited for a request that owes nothing")
	}
	// Owed: the timeout, or the end of the connection, ends the wait.
	w.end(w.begin(ctx), true)
	if !flushes(w, 10*time.Millisecond, nil, liveness) {
		t.Fatal("flush outlived its timeout")
	}
	ended := make(chan struct{})
	close(ended)
	if !flushes(w, time.Hour, ended, liveness) {
		t.Fatal("flush waited on a connection that ended")
	}
	// Owed for long: given up on.
	w.mu.Lock()
	w.last = time.Now().Add(-cancelLostAfter)
	w.mu.Unlock()
	if !flushes(w, time.Hour, nil, liveness) {
		t.Fatal("flush waited for a notification that was lost long ago")
	}
	var nilWatch *cancelWatch
	nilWatch.flush(time.Hour, nil, nil)
}
