package tool

import (
	"fmt"
	"os"
)

// MaxSpillBytes bounds the file a Capture writes: a program that writes
// without end (yes) fills neither memory nor the disk.
const MaxSpillBytes = 256 << 20

// Capture is an io.Writer for the output of a program whose text goes to a
// model, capped as a tool's result is (TextForModel): it keeps the first
// max characters in memory and, once the output runs past them, writes the
// whole of it (up to MaxSpillBytes) to a spill file, so that memory stays
// bounded whatever the program writes. Text returns the kept part, with the
// note a cut tool result ends with when it was cut. It is not safe for
// concurrent use; give each stream its own.
//
// Capture has no ReadFrom on purpose: io.Copy then reads through Write, a
// buffer at a time, rather than into a buffer that grows without bound.
type Capture struct {
	max      int
	spillDir string

	head      []byte // the first max characters, whole
	headChars int
	cut       bool  // a character past max came: head takes no more
	bytes     int64 // written
	chars     int64 // characters written: bytes that start a UTF-8 sequence
	spill     *os.File
	spillPath string
	spilled   int64
	spillMax  int64 // MaxSpillBytes
	spillErr  error
}

// NewCapture returns a Capture keeping max characters (DefaultMaxOutputChars
// when max ≤ 0) that spills a longer output into dir ("": as
// CreateSpillFile does).
func NewCapture(max int, dir string) *Capture {
	if max <= 0 {
		max = DefaultMaxOutputChars
	}
	return &Capture{max: max, spillDir: dir, spillMax: MaxSpillBytes}
}

// Write keeps what fits and spills the rest. It never fails, so that the
// program writing is not stopped by a full disk or a missing directory;
// Text says what could not be saved.
func (c *Capture) Write(p []byte) (int, error) {
	c.bytes += int64(len(p))
	c.chars += int64(countChars(p))
	rest := p
	if !c.cut {
		k := charPrefix(p, c.max-c.headChars)
		c.head = append(c.head, p[:k]...)
		c.headChars += countChars(p[:k])
		rest = p[k:]
		if len(rest) > 0 {
			c.cut = true
			c.startSpill() // with the head
		}
	}
	if c.cut {
		c.toSpill(rest)
	}
	return len(p), nil
}

// startSpill creates the spill file and writes the head to it.
func (c *Capture) startSpill() {
	c.spill, c.spillErr = CreateSpillFile(c.spillDir, ".txt")
	if c.spillErr == nil {
		c.spillPath = c.spill.Name()
		c.toSpill(c.head)
	}
}

func (c *Capture) toSpill(p []byte) {
	if c.spill == nil || c.spillErr != nil {
		return
	}
	p = p[:min(int64(len(p)), max(c.spillMax-c.spilled, 0))]
	if len(p) == 0 {
		return
	}
	n, err := c.spill.Write(p)
	c.spilled += int64(n)
	if err != nil {
		c.spillErr = fmt.Errorf("save the output in %s: %w", c.spillPath, err)
	}
}

// Close closes the spill file, if any. Call it when the program is done,
// before Text.
func (c *Capture) Close() error {
	if c.spill == nil {
		return nil
	}
	err := c.spill.Close()
	c.spill = nil
	if err != nil && c.spillErr == nil {
		c.spillErr = fmt.Errorf("save the output in %s: %w", c.spillPath, err)
	}
	return c.spillErr
}

// Text is the output when it fit; else its first max characters and a note
// of how long it was and where the whole of it is.
func (c *Capture) Text() string {
	if !c.cut {
		return string(c.head)
	}
	return string(c.head) + "\n\n" + c.Note()
}

// Note is the note Text ends with when the output was cut: how long it was
// and where the whole of it is; "" when it fit.
func (c *Capture) Note() string {
	if !c.cut {
		return ""
	}
	whole := c.spillErr == nil && c.spilled == c.bytes
	where := spillWhere(c.spillPath, c.spillErr)
	if !whole && c.spillErr == nil {
		where = fmt.Sprintf("its first %d bytes are in %s", c.spilled, c.spillPath)
	}
	return truncNote(c.max, c.chars, where)
}

// countChars counts the characters of p, a piece of UTF-8 text: the bytes
// that are not continuation bytes, so that a character split between two
// writes counts once (an invalid byte counts as a character, as in
// utf8.RuneCount).
func countChars(p []byte) int {
	n := 0
	for _, b := range p {
		if b&0xC0 != 0x80 {
			n++
		}
	}
	return n
}

// charPrefix returns how many bytes of p hold its first n characters
// together with the continuation bytes of the last: the offset of the
// (n+1)th character's first byte, or len(p).
func charPrefix(p []byte, n int) int {
	for i, b := range p {
		if b&0xC0 != 0x80 {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return len(p)
}
