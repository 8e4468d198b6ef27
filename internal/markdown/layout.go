package markdown

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// A paragraph is laid out as words: each word a run of styled pieces with
// no space between them ("**otter**," is one word of two pieces), each
// line styled piece by piece, so that every line stands on its own (the
// TUI draws lines one by one, and a style left open at a line's end would
// not carry over).

// piece is a run of text in one style; a nil style is the terminal's own.
type piece struct {
	text  string
	style *lipgloss.Style
}

// word is what a line is never broken inside, unless it is wider than a
// line.
type word struct {
	pieces []piece
	width  int
	gap    *lipgloss.Style // the style of the space before it
	brk    bool            // a hard line break comes before it
}

// words collects the words of a block's inline content.
type words struct {
	list   []word
	inWord bool // the next text continues the last word
	gap    *lipgloss.Style
	brk    bool
}

// write adds text in style st, its spaces separating words.
func (w *words) write(s string, st *lipgloss.Style) {
	for s != "" {
		i := strings.IndexAny(s, " \t\n")
		if i < 0 {
			w.add(s, st)
			return
		}
		if i > 0 {
			w.add(s[:i], st)
		}
		w.space(st)
		s = s[i+1:]
	}
}

// add adds text in style st to the current word, spaces and all.
func (w *words) add(s string, st *lipgloss.Style) {
	if s == "" {
		return
	}
	if !w.inWord {
		w.list = append(w.list, word{gap: w.gap, brk: w.brk})
		w.inWord, w.gap, w.brk = true, nil, false
	}
	cur := &w.list[len(w.list)-1]
	if n := len(cur.pieces); n > 0 && cur.pieces[n-1].style == st {
		cur.pieces[n-1].text += s
	} else {
		cur.pieces = append(cur.pieces, piece{s, st})
	}
	cur.width += ansi.StringWidth(s)
}

// space ends the current word; the space between it and the next takes
// style st (the background of inline code runs on between its words).
func (w *words) space(st *lipgloss.Style) {
	if w.inWord {
		w.inWord, w.gap = false, st
	}
}

// lineBreak ends the current line.
func (w *words) lineBreak() {
	if len(w.list) > 0 {
		w.inWord, w.gap, w.brk = false, nil, true
	}
}

// lines lays the words out in lines no wider than width.
func (w *words) lines(width int) []string {
	width = max(width, 1)
	var out []string
	var line strings.Builder
	lineW := 0
	flush := func() {
		out = append(out, line.String())
		line.Reset()
		lineW = 0
	}
	for _, wd := range w.list {
		if wd.brk {
			flush()
		}
		switch {
		case lineW == 0:
		case lineW+1+wd.width <= width:
			line.WriteString(render(" ", wd.gap))
			lineW++
		default:
			flush()
		}
		if lineW+wd.width <= width {
			writePieces(&line, wd.pieces)
			lineW += wd.width
			continue
		}
		// Wider than a line: cut it, after a "/" where one falls in the
		// line (a path or a URL breaks between its names).
		for i, part := range cutWord(wd.pieces, width) {
			if i > 0 {
				flush()
			}
			writePieces(&line, part)
			lineW = piecesWidth(part)
		}
	}
	if lineW > 0 || len(out) == 0 {
		flush()
	}
	return out
}

func render(s string, st *lipgloss.Style) string {
	if st == nil {
		return s
	}
	return st.Render(s)
}

func writePieces(b *strings.Builder, ps []piece) {
	for _, p := range ps {
		b.WriteString(render(p.text, p.style))
	}
}

func piecesWidth(ps []piece) int {
	n := 0
	for _, p := range ps {
		n += ansi.StringWidth(p.text)
	}
	return n
}

// cutWord cuts pieces into parts no wider than width, each ending after
// its last "/" when it has one past its start.
func cutWord(ps []piece, width int) [][]piece {
	type cell struct {
		r     string
		w     int
		style *lipgloss.Style
	}
	var cells []cell
	for _, p := range ps {
		for _, r := range p.text {
			s := string(r)
			cells = append(cells, cell{s, ansi.StringWidth(s), p.style})
		}
	}
	var parts [][]piece
	for len(cells) > 0 {
		end, w, slash := 0, 0, 0
		for end < len(cells) && w+cells[end].w <= width {
			w += cells[end].w
			if cells[end].r == "/" {
				slash = end + 1
			}
			end++
		}
		if end == 0 {
			end = 1 // a character wider than the line
		}
		if end < len(cells) && slash > 0 {
			end = slash
		}
		var part []piece
		for _, c := range cells[:end] {
			if n := len(part); n > 0 && part[n-1].style == c.style {
				part[n-1].text += c.r
			} else {
				part = append(part, piece{c.r, c.style})
			}
		}
		parts = append(parts, part)
		cells = cells[end:]
	}
	return parts
}
