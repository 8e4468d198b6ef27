package tool

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Capture keeps what fits whole and cuts a longer output at a character
// boundary even when a character is split between two writes, counts
// characters as TextForModel does, and spills all of it.
func TestCapture(t *testing.T) {
	dir := t.TempDir()
	c := NewCapture(5, dir)
	io.WriteString(c, "héllo")
	if c.Close() != nil || c.Text() != "héllo" || c.Note() != "" {
		t.Fatalf("an output that fits: %q (note %q)", c.Text(), c.Note())
	}

	c = NewCapture(5, dir)
	whole := "ab€€€€ and more"
	b := []byte(whole)
	for i := range b { // a byte at a time: characters split between writes
		if n, err := c.Write(b[i : i+1]); n != 1 || err != nil {
			t.Fatal(n, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	text := c.Text()
	cut, note, ok := strings.Cut(text, "\n\n")
	if !ok || cut != "ab€€€" || !strings.HasPrefix(note, "[output truncated: showing 5 of 15 characters; the full output is in "+dir) {
		t.Fatalf("cut output %q", text)
	}
	path := strings.TrimSuffix(note[strings.Index(note, dir):], "]")
	if data, err := os.ReadFile(path); err != nil || string(data) != whole {
		t.Fatalf("the spill file holds %q (%v), want the whole output", data, err)
	}
	s := NewSet(Options{MaxOutputChars: 5, SpillDir: dir})
	if want := s.TextForModel(&Result{Content: []mcp.Content{&mcp.TextContent{Text: whole}}}); !strings.HasPrefix(want, cut+"\n\n[output truncated: showing 5 of 15 characters; the full output is in ") {
		t.Errorf("a tool result is cut as %q, a capture as %q", want, text)
	}
}

// The spill file stops at its bound and the note says it holds the first
// part only; a spill directory that cannot be made is named in the note.
func TestCaptureSpillBounds(t *testing.T) {
	c := NewCapture(3, t.TempDir())
	c.spillMax = 10
	io.WriteString(c, strings.Repeat("x", 25))
	c.Close()
	if note := c.Note(); !strings.Contains(note, "showing 3 of 25 characters; its first 10 bytes are in ") {
		t.Errorf("note %q", note)
	}
	file := t.TempDir() + "/file"
	os.WriteFile(file, nil, 0o600)
	c = NewCapture(3, file+"/sub")
	io.WriteString(c, "abcdef")
	c.Close()
	if note := c.Note(); c.Text() != "abc\n\n"+note || !strings.Contains(note, "it could not be saved (create output directory: ") {
		t.Errorf("text %q", c.Text())
	}
}
