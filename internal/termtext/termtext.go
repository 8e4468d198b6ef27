// Package termtext makes text that came from outside otter — an MCP
// server's tool names, descriptions, results and errors, a model's answer,
// a name in a config file — safe to show on a terminal. A terminal acts on
// what such text may hold: OSC 52 sets the clipboard, OSC 0 the window
// title, OSC 8 hides a link behind a word, CSI moves the cursor and erases,
// a carriage return writes over a line, and bidirectional controls
// (U+202E) show text in another order than it is. Both front ends clean
// through this one package: the TUI for the names and descriptions it
// lays out, the headless commands for everything they write (cmd/otter
// wraps stdout and stderr in a Writer; --json output goes around it, exact).
//
// Three strengths:
//
//   - Text, for prose (a result, an answer, an error): escape sequences
//     (ESC and the C1 introducers, with their parameters and strings)
//     are dropped whole, and so are the other C0 and C1 controls and DEL,
//     but newline and tab; a carriage return ends a line (CRLF is one
//     newline); bidirectional embeddings, overrides and isolates
//     (U+202A–U+202E, U+2066–U+2069) go; bytes that are not UTF-8 become
//     U+FFFD. Zero-width joiners and the like stay: emoji and some scripts
//     need them.
//   - Visible, for names and descriptions: Text, and every invisible
//     character goes too (format characters such as U+200B and U+FEFF,
//     tag characters, variation selectors, Hangul fillers), so that what
//     is shown is all there is.
//   - Line, for one cell of a table or one line of a message: Visible, with
//     newlines and tabs as spaces, so that text cannot forge a row.
//
// It is a leaf package: it imports only the standard library.
package termtext

import (
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Text returns s with escape sequences and controls other than newline
// and tab dropped, a carriage return made a newline, bidirectional
// overrides dropped and bytes that are not UTF-8 replaced (see the package
// comment).
func Text(s string) string { return clean(s, false, false) }

// Visible is Text without invisible characters either: for names and
// descriptions, where each character should be one a person sees.
func Visible(s string) string { return clean(s, true, false) }

// Line is Visible on one line: newlines and tabs become spaces.
func Line(s string) string { return clean(s, true, true) }

// Unsafe returns the first character of s that Line would drop or change
// (a control, newline and tab included, an invisible or bidirectional
// character, or U+FFFD for a byte that is not UTF-8), and whether there
// is one: a name with one is refused rather than cleaned.
func Unsafe(s string) (rune, bool) {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return r, true
			}
		}
		if unicode.IsControl(r) || lineBreak(r) || bidi(r) || invisible(r) {
			return r, true
		}
	}
	return 0, false
}

// clean is the one scanner behind Text, Visible and Line.
func clean(s string, visible, oneLine bool) string {
	if plain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	newline := func() {
		if oneLine {
			b.WriteByte(' ')
		} else {
			b.WriteByte('\n')
		}
	}
	st := ground
	for i := 0; i < len(s); {
		if c := s[i]; st == ground && c >= ' ' && c < 0x7f {
			b.WriteByte(c) // printable ASCII, the most of most text
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			r = invalid
		}
		next := st.step(r)
		if next == reprocess {
			st = ground
			continue // r starts over in the ground state, unread
		}
		i += size
		if st != ground || next != ground {
			st = next
			continue // part of an escape sequence
		}
		switch {
		case r == '\n':
			newline()
		case r == '\r':
			if !strings.HasPrefix(s[i:], "\n") {
				newline()
			}
		case r == '\t':
			if oneLine {
				b.WriteByte(' ')
			} else {
				b.WriteByte('\t')
			}
		case lineBreak(r):
			newline()
		case r == invalid:
			b.WriteRune(utf8.RuneError)
		case unicode.IsControl(r), bidi(r), visible && invisible(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// plain reports whether s is printable ASCII, newlines and tabs: nothing
// to clean.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\n' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// invalid stands for a byte that is not UTF-8 (utf8.RuneError is a valid
// character too).
const invalid rune = -1

// state is where the scanner is in an escape sequence.
type state uint8

const (
	ground    state = iota // text
	esc                    // after ESC
	escInter               // after ESC and an intermediate byte (ESC ( B)
	csi                    // in a control sequence (ESC [ or U+009B)
	str                    // in a string: OSC, DCS, SOS, PM, APC
	strEsc                 // after ESC in a string (ESC \ ends it)
	reprocess              // the sequence ended before r: read r again as text
)

// step returns the state after r. A sequence broken off by a character
// that cannot be part of it ends there (as terminals end it), and that
// character is read again as text. A string ends at BEL, ST, CAN, SUB or
// a newline — terminals read on past a newline, but text shown here does
// not vanish past the line an unterminated string began on.
func (st state) step(r rune) state {
	switch st {
	case ground:
		switch r {
		case 0x1b:
			return esc
		case 0x9b:
			return csi
		case 0x90, 0x98, 0x9d, 0x9e, 0x9f: // DCS, SOS, OSC, PM, APC
			return str
		}
		return ground
	case esc:
		switch {
		case r == '[':
			return csi
		case r == ']' || r == 'P' || r == 'X' || r == '^' || r == '_':
			return str
		case r >= 0x20 && r <= 0x2f:
			return escInter
		case r >= 0x30 && r <= 0x7e:
			return ground
		}
		return reprocess
	case escInter:
		switch {
		case r >= 0x20 && r <= 0x2f:
			return escInter
		case r >= 0x30 && r <= 0x7e:
			return ground
		}
		return reprocess
	case csi:
		switch {
		case r >= 0x20 && r <= 0x3f:
			return csi
		case r >= 0x40 && r <= 0x7e:
			return ground
		}
		return reprocess
	case str:
		switch r {
		case 0x07, 0x9c, 0x18, 0x1a: // BEL, ST, CAN, SUB
			return ground
		case 0x1b:
			return strEsc
		case '\n':
			return reprocess
		}
		return str
	case strEsc:
		if r == '\\' {
			return ground
		}
		return esc.step(r) // the ESC ended the string and begins a sequence
	}
	return ground
}

// bidi reports the bidirectional embeddings, overrides and isolates: they
// reorder the text after them.
func bidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// lineBreak reports the Unicode line and paragraph separators.
func lineBreak(r rune) bool { return r == 0x2028 || r == 0x2029 }

// invisible reports characters that take no room and show nothing: the
// format characters (U+200B–U+200F, U+2060–U+2064, U+FEFF, U+00AD, the
// tags U+E0000–U+E007F, …), the variation selectors, the combining
// grapheme joiner and the Hangul fillers.
func invisible(r rune) bool {
	switch {
	case unicode.Is(unicode.Cf, r),
		r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef, // variation selectors
		r >= 0x180b && r <= 0x180f, // Mongolian variation selectors
		r == 0x034f, r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0:
		return true
	}
	return false
}

// Writer writes through Text: each Write is cleaned on its own (an escape
// sequence split across two writes loses its head in the first and shows
// the rest as text in the second — never a control), except that a
// character split across writes is joined. Raw returns the writer under
// it, for output that must stay exact (JSON, a protocol).
type Writer struct {
	w    io.Writer
	mu   sync.Mutex
	tail []byte // the start of a character the last Write ended in
}

// NewWriter returns a Writer over w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p cleaned; it reports len(p) written when the cleaned text
// was.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	if len(w.tail) > 0 {
		p = append(w.tail, p...)
		w.tail = nil
	}
	if cut := partialRune(p); cut < len(p) {
		w.tail = append([]byte(nil), p[cut:]...)
		p = p[:cut]
	}
	if _, err := io.WriteString(w.w, Text(string(p))); err != nil {
		return 0, err
	}
	return n, nil
}

// Raw returns the writer w writes to.
func (w *Writer) Raw() io.Writer { return w.w }

// Raw returns the writer under w when w is a Writer, else w: where output
// must be exact, such as JSON, whose encoding escapes controls itself.
func Raw(w io.Writer) io.Writer {
	if tw, ok := w.(*Writer); ok {
		return tw.w
	}
	return w
}

// partialRune returns where a character that p ends in before it is
// complete begins, or len(p).
func partialRune(p []byte) int {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				return i
			}
			break
		}
	}
	return len(p)
}
