package mcphost

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// endlessLine is a reader of one JSON line that never ends: `{"x":"xxxx…`.
type endlessLine struct{ n int64 }

func (r *endlessLine) Read(p []byte) (int, error) {
	if r.n == 0 && len(p) >= 6 {
		r.n += int64(copy(p, `{"x":"`))
		return 6, nil
	}
	for i := range p {
		p[i] = 'x'
	}
	r.n += int64(len(p))
	return len(p), nil
}

func (r *endlessLine) Close() error { return nil }

// TestHugeMessageIsRefusedWhileRead: a stdio server's line longer than
// the limit is refused once the limit is passed, having held at most about
// the limit — not read whole, and not buffered to a multiple of the limit
// (before, a 500 MiB result reached 2.06 GB before the 256 MiB refusal).
func TestHugeMessageIsRefusedWhileRead(t *testing.T) {
	const limit = 8 << 20
	src := &endlessLine{}
	tail := newRing(stderrLines)
	f := newStdoutFilter(src, tail, limit)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := io.Copy(io.Discard, f)
	runtime.ReadMemStats(&after)
	var tooLarge *messageTooLargeError
	if !errors.As(err, &tooLarge) || !strings.Contains(err.Error(), "more than 8 MiB") {
		t.Fatalf("reading an endless line: %v, want the message refused at 8 MiB", err)
	}
	if src.n > 2*limit { // the endless line is read to its end only by a filter that does not stop
		t.Errorf("the filter read %d MiB of it before refusing", src.n>>20)
	}
	// A buffer that doubles up to the limit allocates less than twice it
	// in all, the last one included (the race detector adds its share).
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*limit {
		t.Errorf("refusing it allocated %d MiB in all, want under 4× the 8 MiB limit", alloc>>20)
	}
	if got := tail.tail(); len(got) != 1 || !strings.Contains(got[0], "more than 8 MiB, refused") {
		t.Errorf("stderr tail = %q", got)
	}
}
