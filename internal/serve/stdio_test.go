package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/tool"
)

// stdioPeer drives RunStdio as a client process would: raw lines in, raw
// lines out.
type stdioPeer struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string // what the server writes, line by line; closed at its end
	done  chan error
}

func startStdio(t *testing.T, s *Server) *stdioPeer {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, in: inW, lines: make(chan string, 16), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	go func() {
		p.done <- s.RunStdio(context.Background(), inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("writing %q: %v", line, err)
	}
}

// next is the next message the server writes, decoded.
func (p *stdioPeer) next() map[string]any {
	p.t.Helper()
	var line string
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatal("the server ended its output")
		}
		line = l
	case <-time.After(30 * time.Second):
		p.t.Fatal("the server wrote nothing for 30 s")
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		p.t.Fatalf("the server wrote a line that is not JSON: %q", line)
	}
	return m
}

// waitDone waits for RunStdio to return, after the peer closed its input.
func (p *stdioPeer) waitDone() {
	p.t.Helper()
	select {
	case err := <-p.done:
		if err != nil {
			p.t.Errorf("RunStdio after EOF: %v", err)
		}
	case <-time.After(30 * time.Second):
		p.t.Fatal("RunStdio did not return after its input ended")
	}
}

func (p *stdioPeer) initialize() {
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := p.next(); m["result"] == nil {
		p.t.Fatalf("initialize: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func errorCodeOf(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// A client that writes a broken line gets a JSON-RPC error for it, and the
// session goes on.
func TestStdioMalformedLinesAreAnsweredNotFatal(t *testing.T) {
	p := startStdio(t, newTestServer(t, Options{}))
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"`) // cut short
	if m := p.next(); errorCodeOf(m) != -32700 || m["id"] != nil {
		t.Errorf("broken JSON: got %v, want a -32700 error with id null", m)
	}
	p.send(`{"hello":"world"}`)
	if m := p.next(); errorCodeOf(m) != -32600 {
		t.Errorf("not JSON-RPC: got %v, want a -32600 error", m)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}`)
	m := p.next()
	if m["id"] != float64(3) || !strings.Contains(mustJSON(m["result"]), "still here") {
		t.Errorf("a call after the broken lines: %v", m)
	}
	p.in.Close()
	p.waitDone()
}

// A JSON-RPC batch, empty or not, is answered with a -32600 error (id
// null) and the session goes on. (Before, the SDK ended the session on it:
// `otter mcp serve` exited 2 with "empty batch" and no answer.)
func TestStdioBatchIsAnsweredNotFatal(t *testing.T) {
	p := startStdio(t, newTestServer(t, Options{}))
	p.initialize()
	for _, batch := range []string{`[]`, `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`} {
		p.send(batch)
		if m := p.next(); errorCodeOf(m) != -32600 || m["id"] != nil || !strings.Contains(mustJSON(m), "batches are not supported") {
			t.Errorf("batch %s: got %v, want a -32600 error with id null that says batches are not supported", batch, m)
		}
	}
	p.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if m := p.next(); m["id"] != float64(4) || m["result"] == nil {
		t.Errorf("a ping after the batches: %v", m)
	}
	p.in.Close()
	p.waitDone()
}

// A client that sends a call and closes its end at once still gets the
// answer: the session ends when the calls in flight have answered.
func TestStdioAnswersCallsInFlightAfterEOF(t *testing.T) {
	set := tool.NewSet(tool.Options{SpillDir: t.TempDir()})
	set.SetBuiltins([]tool.Tool{&fakeTool{
		info: tool.Info{Name: "wait", InputSchema: json.RawMessage(`{"type":"object"}`)},
		call: func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
			select {
			case <-time.After(300 * time.Millisecond):
				return tool.TextResult("finished"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	}})
	p := startStdio(t, newTestServer(t, Options{Tools: set}))
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	p.in.Close()
	m := p.next()
	if m["id"] != float64(7) || !strings.Contains(mustJSON(m["result"]), "finished") {
		t.Errorf("the call in flight at EOF: %v", m)
	}
	p.waitDone()
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A client line longer than MaxMessageBytes is answered with an error
// while it is read — the server keeps none of it — and the session goes
// on. (Before, with no line limit, a 512 MiB line peaked at 5.8 GB.)
func TestStdioHugeLineIsRefusedWithoutBufferingIt(t *testing.T) {
	p := startStdio(t, newTestServer(t, Options{}))
	p.initialize()
	const size = 64 << 20 // 16× the limit
	head := []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`)
	filler := bytes.Repeat([]byte("x"), 1<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	go func() {
		p.in.Write(head)
		for range size >> 20 {
			if _, err := p.in.Write(filler); err != nil {
				return
			}
		}
		io.WriteString(p.in, "\"}}}\n")
	}()
	m := p.next()
	runtime.ReadMemStats(&after)
	if errorCodeOf(m) != -32600 || !strings.Contains(mustJSON(m), "longer than 4 MiB") {
		t.Errorf("a 64 MiB line: got %v, want a -32600 error naming the 4 MiB limit", m)
	}
	// A buffer that doubles up to the limit allocates less than twice it;
	// the rest is the session's own work. Reading the line whole would
	// be 64 MiB and more.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 5*MaxMessageBytes {
		t.Errorf("reading the 64 MiB line allocated %d MiB, want under 5× the 4 MiB limit", alloc>>20)
	}
	p.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}`)
	if m := p.next(); m["id"] != float64(10) || !strings.Contains(mustJSON(m["result"]), "still here") {
		t.Errorf("a call after the huge line: %v", m)
	}
	p.in.Close()
	p.waitDone()
}
