package mcphost

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/tool"
)

// repeatReader yields b n times.
type repeatReader struct {
	b   string
	n   int64
	off int // into b
}

func (r *repeatReader) Read(p []byte) (int, error) {
	i := 0
	for i < len(p) && r.n > 0 {
		c := copy(p[i:], r.b[r.off:])
		i += c
		if r.off += c; r.off == len(r.b) {
			r.off = 0
			r.n--
		}
	}
	if i == 0 {
		return 0, io.EOF
	}
	return i, nil
}

// filterLines reads what the filter hands the SDK, one message a line.
func filterLines(t *testing.T, src io.Reader) (msgs []string, tail []string, dir string) {
	t.Helper()
	dir = t.TempDir()
	ring := newRing(stderrLines)
	f := newStdoutFilter(io.NopCloser(src), ring, func() (*os.File, error) { return tool.CreateSpillFile(dir, ".json") })
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, keepMessageBytes+1<<20)
	for sc.Scan() {
		msgs = append(msgs, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return msgs, ring.tail(), dir
}

// toolResult decodes a tools/call answer as the SDK would.
type toolResult struct {
	ID     json.RawMessage `json:"id"`
	Result struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
			Data []byte `json:"data"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
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

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestHugeLineThatIsNotJSONIsPassedOver: a 20 MiB line that is not JSON
// is read without being kept, noted in the stderr tail, and its file
// removed; the next message comes through.
func TestHugeLineThatIsNotJSONIsPassedOver(t *testing.T) {
	src := io.MultiReader(
		strings.NewReader(`{"a":`),
		&repeatReader{b: "zzzz", n: (20 << 20) / 4},
		strings.NewReader("\n"+`{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"),
	)
	msgs, tail, dir := filterLines(t, src)
	if len(msgs) != 1 || !strings.Contains(msgs[0], `"id":1`) {
		t.Fatalf("messages %q", msgs)
	}
	if len(tail) != 1 || !strings.Contains(tail[0], "not JSON-RPC, ignored): a line of 20.0 MiB") {
		t.Errorf("stderr tail = %q", tail)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("%d files left for a line that was not a message", len(files))
	}
}

// TestDescriptionsAreCapped: a description over 8 KiB is cut on a
// character boundary with the marker; one the shrinker cut is left alone.
func TestDescriptionsAreCapped(t *testing.T) {
	long := strings.Repeat("ü", 1<<20) // 2 MiB
	got := capDescription(long)
	if len(got) > maxDescriptionBytes+60 || !strings.HasSuffix(got, cutMarker(int64(len(long)))) || !strings.HasPrefix(got, "üü") {
		t.Fatalf("capDescription of 2 MiB = %d bytes ending %q", len(got), got[max(len(got)-60, 0):])
	}
	if again := capDescription(got); again != got {
		t.Errorf("a cut description was cut again: %q", again[len(again)-60:])
	}
	if short := "reads a file"; capDescription(short) != short {
		t.Error("a short description changed")
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
	h := newHarness(t, servers(remote("big", config.TransportHTTP, ts.URL)), Options{})
	h.m.Start(context.Background())
	h.waitState("big", StateConnected)
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
