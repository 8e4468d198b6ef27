//go:build !race

// Tests that move hundreds of megabytes run without the race detector, which
// makes them five to ten times slower and finds nothing in them: what they
// check is memory and output bounds, and the code paths they cover run
// under -race in the smaller tests of the package. `make test` runs them in
// a race-free pass (scripts/test-without-race.sh); plain `go test` runs them too.

package mcphost

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

// TestReturns50MB: a 50 MiB result, over the 16 MiB kept of one message,
// comes back shrunk — the note naming the file first, then the text's
// first MiB — and the file holds the whole answer the server sent.
func TestReturns50MB(t *testing.T) {
	h := newHarness(t, configOf(stdioServer(t, "big", "normal")), servers.Options{})
	h.m.Start(context.Background())
	h.waitState("big", servers.StateConnected)
	got := h.callText("big", "big", `{}`)
	note, text, _ := strings.Cut(got, "\n")
	if !strings.HasPrefix(note, "[otter: the server's answer was 50.0 MiB") || !strings.HasPrefix(text, "0123456789") ||
		!strings.HasSuffix(text, cutMarker(50<<20)) || len(got) > cutStringBytes+1024 {
		t.Fatalf("result is %d bytes: %.300q … %q", len(got), got, got[max(len(got)-60, 0):])
	}
	path := strings.TrimSuffix(note[strings.LastIndex(note, " is in ")+len(" is in "):], "]")
	if st, err := os.Stat(path); err != nil || st.Size() < 50<<20 {
		t.Errorf("the file %s: %v, %v; want the whole answer", path, st, err)
	}
}

// TestHugeResultIsShrunkWhileRead: a stdio server's 300 MiB answer (over
// the old 256 MiB refusal) is read without being held: the SDK gets a
// message of a few MiB whose text keeps its first MiB, cut with a marker,
// after a note naming the file that holds the first 256 MiB as
// sent; the id (here after the result, as TypeScript servers write it),
// isError and the next message come through. Before, the line was kept
// whole up to the limit and refused (2 GB peak for 200 MiB accepted).
func TestHugeResultIsShrunkWhileRead(t *testing.T) {
	const size = 300 << 20
	src := io.MultiReader(
		strings.NewReader(`{"result":{"content":[{"type":"text","text":"HEAD `),
		&repeatReader{b: strings.Repeat("é", 512), n: size / 1024},
		strings.NewReader(` TAIL"}],"isError":true},"jsonrpc":"2.0","id":7}`+"\n"),
		strings.NewReader(`{"jsonrpc":"2.0","id":8,"result":{"content":[]}}`+"\n"),
	)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	msgs, tail, dir := filterLines(t, src)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 80<<20 {
		t.Errorf("reading a 300 MiB message allocated %d MiB in all, want under 80 (the 16 MiB kept whole, doubling up, and the shrunk copy)", alloc>>20)
	}
	if len(msgs) != 2 {
		t.Fatalf("got %d messages, want 2", len(msgs))
	}
	if len(msgs[0]) > 6<<20 {
		t.Errorf("the shrunk message has %d MiB, want under 6", len(msgs[0])>>20)
	}
	var r toolResult
	if err := json.Unmarshal([]byte(msgs[0]), &r); err != nil {
		t.Fatalf("the shrunk message does not decode: %v", err)
	}
	if string(r.ID) != "7" || !r.Result.IsError || len(r.Result.Content) != 2 {
		t.Fatalf("id %s, isError %v, %d content items; want 7, true, 2 (the note, the text)", r.ID, r.Result.IsError, len(r.Result.Content))
	}
	text := r.Result.Content[1].Text
	if !strings.HasPrefix(text, "HEAD éé") || !strings.HasSuffix(text, cutMarker(int64(size+len("HEAD  TAIL")))) || len(text) > cutStringBytes+100 {
		t.Errorf("the text is %d bytes, %q … %q; want its first MiB and the cut marker", len(text), text[:min(len(text), 20)], text[max(len(text)-60, 0):])
	}
	note := r.Result.Content[0].Text
	files, _ := os.ReadDir(dir)
	if len(files) != 1 {
		t.Fatalf("%d files in the output directory, want 1", len(files))
	}
	path := dir + "/" + files[0].Name()
	st, _ := os.Stat(path)
	for _, want := range []string{"was 300.0 MiB", "more than the 16 MiB", "1 string longer than 1024 KiB was cut", "its first 256.0 MiB", path} {
		if !strings.Contains(note, want) {
			t.Errorf("the note %q does not say %q", note, want)
		}
	}
	if st == nil || st.Size() != spillMessageBytes {
		t.Errorf("the file holds %v bytes, want the first %d", st, spillMessageBytes)
	}
	if len(tail) != 1 || !strings.Contains(tail[0], path) {
		t.Errorf("stderr tail = %q, want the note", tail)
	}
	if !strings.Contains(msgs[1], `"id":8`) {
		t.Errorf("the next message is %q", msgs[1])
	}
}

// TestShrinkLeavesOutItemsPastTheBudget: an answer of 200,000 content
// items (20 MiB) keeps the items of its first 4 MiB, says how many it left
// out, and a base64 image too long to keep is left empty (a cut one would
// not decode). Its file holds it whole.
func TestShrinkLeavesOutItemsPastTheBudget(t *testing.T) {
	item := `{"type":"text","text":"` + strings.Repeat("y", 80) + `"},`
	const items = 200_000
	src := io.MultiReader(
		strings.NewReader(`{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"image","mimeType":"image/png","data":"`),
		&repeatReader{b: "QUFB", n: (2 << 20) / 4},
		strings.NewReader(`"},`),
		&repeatReader{b: item, n: items},
		strings.NewReader(`{"type":"text","text":"last"}], "extra": 1}, "bogus": {"x": 1}}`),
	)
	msgs, _, dir := filterLines(t, src)
	if len(msgs) != 1 {
		t.Fatalf("got %d messages, want 1", len(msgs))
	}
	if len(msgs[0]) > shrinkBudget+1<<20 {
		t.Errorf("the shrunk message has %d bytes, want about the %d budget", len(msgs[0]), shrinkBudget)
	}
	if strings.Contains(msgs[0], "bogus") {
		t.Error("a member that is not a JSON-RPC field was kept")
	}
	var r toolResult
	if err := json.Unmarshal([]byte(msgs[0]), &r); err != nil {
		t.Fatalf("the shrunk message does not decode: %v", err)
	}
	c := r.Result.Content
	if len(c) < 1000 || c[1].Type != "image" || len(c[1].Data) != 0 {
		t.Fatalf("%d items, the second %q with %d bytes of data; want thousands, the image left empty", len(c), c[1].Type, len(c[1].Data))
	}
	kept := len(c) - 2 // the note and the image; left out: the other items, "last" and "extra"
	note := c[0].Text
	if want := " and " + itoa(items+2-kept) + " items past the first 4.0 MiB were left out"; !strings.Contains(note, want) {
		t.Errorf("the note %q does not say %q", note, want)
	}
	files, _ := os.ReadDir(dir)
	if st, err := os.Stat(dir + "/" + files[0].Name()); err != nil || !strings.Contains(note, "the whole answer") || st.Size() < items*int64(len(item)) {
		t.Errorf("the file: %v, %v; note %q", st, err, note)
	}
}

// TestHugeJSONBodyIsShrunk: a streamable HTTP server answering with an
// application/json body (not SSE) of 50 MiB — which the SDK reads whole
// with io.ReadAll — reaches the tool result shrunk, its note first, and
// the file holds the whole body.
func TestHugeJSONBodyIsShrunk(t *testing.T) {
	srv := newTestServer("normal")
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(ts.Close)
	h := newHarness(t, configOf(remote("big", config.TransportHTTP, ts.URL)), servers.Options{})
	h.m.Start(context.Background())
	h.waitState("big", servers.StateConnected)
	got := h.callText("big", "big", `{}`)
	note, text, _ := strings.Cut(got, "\n")
	if !strings.HasPrefix(note, "[otter: the server's answer was 50.0 MiB") || !strings.HasPrefix(text, "0123456789") || len(got) > cutStringBytes+1024 {
		t.Fatalf("result is %d bytes: %.300q", len(got), got)
	}
	path := strings.TrimSuffix(note[strings.LastIndex(note, " is in ")+len(" is in "):], "]")
	if st, err := os.Stat(path); err != nil || st.Size() < 50<<20 {
		t.Errorf("the file %s: %v, %v; want the whole answer", path, st, err)
	}
}

func TestSchemaOrderBounded(t *testing.T) {
	o := newSchemaOrder()
	n := orderMaxEntries + 100
	for i := range n {
		o.record(reordered(i, 0))
	}
	if len(o.orig) > orderMaxEntries || len(o.keys) != len(o.orig) {
		t.Errorf("%d entries (%d keys), want at most %d", len(o.orig), len(o.keys), orderMaxEntries)
	}
	if got := o.restore(canonicalOf(t, reordered(n-1, 0))); !bytes.Equal(got, reordered(n-1, 0)) {
		t.Errorf("the newest schema is not restored: %s", got)
	}
	if got := o.restore(canonicalOf(t, reordered(0, 0))); bytes.Equal(got, reordered(0, 0)) {
		t.Errorf("the oldest schema is still kept past the bound")
	}

	// Bytes: large schemas push the older out.
	o = newSchemaOrder()
	big := orderMaxBytes / 10
	for i := range 30 {
		o.record(reordered(i, big))
	}
	if o.bytes > orderMaxBytes {
		t.Errorf("%d bytes kept, want at most %d", o.bytes, orderMaxBytes)
	}
	sum := 0
	for k, v := range o.orig {
		sum += len(k) + len(v)
	}
	if sum != o.bytes {
		t.Errorf("bytes counted %d, held %d", o.bytes, sum)
	}
	if got := o.restore(canonicalOf(t, reordered(29, big))); !bytes.Equal(got, reordered(29, big)) {
		t.Error("the newest large schema is not restored")
	}
	// One schema too large to keep is not kept at all.
	o.record(reordered(99, orderMaxBytes/2))
	if got := o.restore(canonicalOf(t, reordered(99, orderMaxBytes/2))); bytes.Equal(got, reordered(99, orderMaxBytes/2)) {
		t.Error("a schema of half the bound was kept")
	}
}

func TestSchemaOrderSSETap(t *testing.T) {
	o := newSchemaOrder()
	huge := strings.Repeat("x", orderMaxMessage+10)
	first := elicitMessage(1, `{"properties":{"b":{},"a":{}}}`)
	half := strings.Index(first, `"a"`)
	stream := strings.Join([]string{
		": a comment\r\n",
		"event: message\r\nid: 1\r\n",
		// One message over two data lines, CRLF line ends.
		"data: " + first[:half] + "\r\n",
		"data:" + first[half:] + "\r\n\r\n",
		// Malformed: mentions elicitation but is no JSON-RPC message.
		`data: {"method":"elicitation/create","params":` + "\n\n",
		// Too large to look into, with a schema at its end.
		"data: " + huge + elicitMessage(2, `{"properties":{"big2":{},"big1":{}}}`) + "\n\n",
		// The stream goes on after it; its last event ends with the stream.
		"data: " + elicitMessage(3, `{"properties":{"d":{},"c":{}}}`),
	}, "")
	tapThrough(t, o, "text/event-stream; charset=utf-8", stream)
	for _, want := range []string{`{"properties":{"b":{},"a":{}}}`, `{"properties":{"d":{},"c":{}}}`} {
		if got := o.restore(canonicalOf(t, json.RawMessage(want))); string(got) != want {
			t.Errorf("restore = %s, want %s", got, want)
		}
	}
	if len(o.orig) != 2 {
		t.Errorf("%d entries, want 2 (the huge event is not looked into)", len(o.orig))
	}
}

func TestSchemaOrderJSONTap(t *testing.T) {
	o := newSchemaOrder()
	tools := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"y":{},"x":{}}}},{"name":"b","inputSchema":true}]}}`
	tapThrough(t, o, "application/json", tools)
	want := `{"type":"object","properties":{"y":{},"x":{}}}`
	if got := o.restore(canonicalOf(t, json.RawMessage(want))); string(got) != want {
		t.Errorf("restore = %s, want %s", got, want)
	}
	// Malformed and huge bodies pass through unchanged and add nothing.
	tapThrough(t, o, "application/json", tools[:len(tools)/2])
	tapThrough(t, o, "application/json", `{"result":{"inputSchema":`+strings.Repeat(" ", orderMaxMessage)+`{"properties":{"b":{},"a":{}}}}}`)
	if len(o.orig) != 1 {
		t.Errorf("%d entries, want 1", len(o.orig))
	}
}

// TestTwentyThousandToolsConnectQuickly serves 20,000 tools from a go-sdk
// server in the test process, over streamable HTTP, and times otter's part:
// from starting the manager until every tool is in the tool set. (The
// server is built first: the SDK's own 2.5 s for adding 20,000 tools is
// the server's start-up, not otter's.) The hardening probe of issue 24
// measured 14.7 s for this in the TUI. Here it takes about 2.7 s on an
// idle machine, most of it the SDK's: serving 40 pages of 500 tools, and
// on otter's side decoding them and re-checking each tool's schema (1 s);
// building the tool set is 0.2 s. 10 s leaves room for a loaded machine
// while catching per-tool work that grows with the number of tools.
func TestTwentyThousandToolsConnectQuickly(t *testing.T) {
	const n = 20_000
	t.Setenv(envTools, "20000")
	ts := streamableServer(t, "many")
	set := tool.NewSet(tool.Options{})
	srv := remote("many", config.TransportHTTP, ts.URL)
	start := time.Now()
	m := New(config.MCP{Servers: []config.Server{srv}}, servers.Options{Tools: set})
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	m.Start(ctx)
	if err := m.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	got := set.ServerToolCounts()["many"]
	if got < n {
		t.Fatalf("%d tools of server many in the set after it settled, want at least %d (statuses %+v)", got, n, m.Statuses())
	}
	t.Logf("20,000 tools: connected with %d tools in the set in %s", got, elapsed)
	// Logged, not asserted: a timed bound under -race on a busy machine
	// fails for reasons that are not otter's.
}
