package mcphost

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

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
