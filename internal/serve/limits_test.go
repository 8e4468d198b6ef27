package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/tool"
)

// serveLoopback runs s.Serve (the real http.Server with its timeouts) on
// 127.0.0.1 and returns its address.
func serveLoopback(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}

// closedWithin reports whether the server closes conn within d, reading
// and dropping what it sends.
func closedWithin(conn net.Conn, d time.Duration) bool {
	conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	return err == nil || !(errors.As(err, &ne) && ne.Timeout())
}

// TestHTTPConnectionsCannotBeHeld: a client without a key that announces a
// large body and sends none is refused at once and its connection closed;
// a client with a key cannot hold a connection by sending its body
// slowly or by idling on keep-alive. (Before, such connections stayed open
// 45 s and more; 1,100 of them exhausted the server's file descriptors.)
func TestHTTPConnectionsCannotBeHeld(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, Options{APIKeys: []string{"k1"}})
	s.timeouts = httpTimeouts{header: 2 * time.Second, body: 2 * time.Second, idle: 2 * time.Second}
	addr := serveLoopback(t, s)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	// No key, a body announced and never sent: 401, connection closed.
	c := dial()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"", addr)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a request without a key: %v", err)
	}
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Errorf("no key: %s, Connection: close=%v; want 401 and the connection closed", resp.Status, resp.Close)
	}
	if !closedWithin(c, time.Second) { // well before any timeout
		t.Error("the connection of a request without a key stayed open")
	}

	// With a key, a body sent slowly: cut at the read timeout.
	c = dial()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer k1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{", addr)
	if !closedWithin(c, 8*time.Second) {
		t.Error("a slow body held its connection past the read timeout")
	}

	// With a key, an idle keep-alive connection: closed at the idle timeout.
	c = dial()
	fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	br := bufio.NewReader(c)
	resp, err = http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /health: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	if !closedWithin(c, 8*time.Second) {
		t.Error("an idle keep-alive connection stayed open past the idle timeout")
	}
}

// TestHTTPSessionsAreCapped: past MaxSessions the sessions idle longest
// are closed; the newest work on. (Before, 5,000 never-closed sessions
// all stayed: +52 MB, 5,012 goroutines.)
func TestHTTPSessionsAreCapped(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, Options{MaxSessions: 3})
	ts := startHTTP(t, s)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	var ids []string
	for range 6 {
		resp := post(t, ts.URL+PathMCP, initialize, nil)
		id := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || id == "" {
			t.Fatalf("initialize: %s, session %q", resp.Status, id)
		}
		io.Copy(io.Discard, resp.Body)
		ids = append(ids, id)
	}
	open := 0
	for range s.mcp.Sessions() {
		open++
	}
	if open != 3 {
		t.Errorf("%d sessions open after 6 with max_sessions = 3", open)
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	for i, id := range ids {
		resp := post(t, ts.URL+PathMCP, ping, map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"})
		body, _ := io.ReadAll(resp.Body)
		if evicted := i < 3; evicted != (resp.StatusCode == http.StatusNotFound) {
			t.Errorf("session %d: ping %s %s; want the 3 oldest closed (404), the newest open", i+1, resp.Status, strings.TrimSpace(string(body)))
		}
	}
}

// TestHTTPReadTimeoutDoesNotCutLongCalls: the read timeout bounds how
// slowly a request arrives, not how long its streamed answer runs.
func TestHTTPReadTimeoutDoesNotCutLongCalls(t *testing.T) {
	t.Parallel()
	set := tool.NewSet(tool.Options{SpillDir: t.TempDir()})
	set.SetBuiltins([]tool.Tool{&fakeTool{
		info: tool.Info{Name: "wait", InputSchema: json.RawMessage(`{"type":"object"}`)},
		call: func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
			select {
			case <-time.After(1500 * time.Millisecond):
				return tool.TextResult("finished"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	}})
	s := newTestServer(t, Options{Tools: set})
	s.timeouts = httpTimeouts{header: 500 * time.Millisecond, body: 500 * time.Millisecond, idle: 500 * time.Millisecond}
	cs := connectHTTP(t, "http://"+serveLoopback(t, s), "", nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
	if err != nil || callText(t, res) != "finished" {
		t.Fatalf("a call longer than the read timeout: %v %v", res, err)
	}
}

// TestUnauthorizedClosesTheConnection: a request without a key that
// trickles its body gets its 401 at once and the connection is closed
// right after. Before, the server read on (discarding the body) until the
// 30 s read timeout before answering, holding the connection.
func TestUnauthorizedClosesTheConnection(t *testing.T) {
	s := newTestServer(t, Options{APIKeys: []string{"k-0123456789"}})
	ts := startHTTP(t, s)
	c, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer within 5 s to a request without a key: %v", err)
	}
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("status %d, Connection close %v; want 401 and the connection closed", resp.StatusCode, resp.Close)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the connection is still open after the 401 (read: %v)", err)
	}
}
