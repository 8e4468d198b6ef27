package markdown

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"
	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
)

// renderer renders one document's blocks into lines.
type renderer struct {
	src []byte
	th  *theme
}

// children renders n's blocks one under the other, a blank line between
// them unless tight (the paragraph and the nested list of a tight list's
// item).
func (r *renderer) children(n ast.Node, width int, tight bool) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		ls := r.block(c, width)
		if len(ls) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, ls...)
	}
	return out
}

func (r *renderer) block(n ast.Node, width int) []string {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return r.inline(n, nil).lines(width)
	case *ast.Heading:
		return r.heading(n, width)
	case *ast.ThematicBreak:
		return []string{r.th.rule.Render(strings.Repeat("─", min(width, 40)))}
	case *ast.Blockquote:
		ls := r.children(n, width-2, false)
		for i, l := range ls {
			ls[i] = strings.TrimRight(r.th.rule.Render("│")+" "+l, " ")
		}
		return ls
	case *ast.List:
		return r.list(n, width)
	case *ast.FencedCodeBlock:
		return r.code(string(n.Language(r.src)), linesText(n, r.src), width)
	case *ast.CodeBlock:
		return r.code("", linesText(n, r.src), width)
	case *ast.HTMLBlock:
		text := linesText(n, r.src)
		if n.HasClosure() {
			text += string(n.ClosureLine.Value(r.src))
		}
		return strings.Split(ansi.Hardwrap(strings.TrimRight(text, "\n"), width, true), "\n")
	case *extast.Table:
		return r.table(n, width)
	}
	return r.children(n, width, false)
}

// heading is styled text: a level-1 heading on a band of colour, the
// others in the heading colour (level 2 underlined, level 6 quieter).
func (r *renderer) heading(n *ast.Heading, width int) []string {
	st := r.th.heading
	switch n.Level {
	case 1:
		st = r.th.h1
	case 2:
		st = r.th.h2
	case 6:
		st = r.th.h6
	}
	if n.Level != 1 {
		return r.inline(n, &st).lines(width)
	}
	ls := r.inline(n, &st).lines(width - 2)
	pad := st.Render(" ")
	for i, l := range ls {
		ls[i] = pad + l + pad
	}
	return ls
}

// list renders a list's items behind their bullets or numbers, each
// item's further lines (and nested lists) under its text.
func (r *renderer) list(l *ast.List, width int) []string {
	digits := len(strconv.Itoa(l.Start + l.ChildCount() - 1))
	var out []string
	i := 0
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		marker := "• "
		if l.IsOrdered() {
			marker = fmt.Sprintf("%*d%c ", digits, l.Start+i, l.Marker)
		}
		indent := ansi.StringWidth(marker)
		body := r.children(item, width-indent, l.IsTight)
		if len(body) == 0 {
			body = []string{""}
		}
		if i > 0 && !l.IsTight {
			out = append(out, "")
		}
		for j, line := range body {
			switch {
			case j == 0:
				out = append(out, marker+line)
			case line == "":
				out = append(out, "")
			default:
				out = append(out, strings.Repeat(" ", indent)+line)
			}
		}
		i++
	}
	return out
}

// code renders a code block under its language's name, indented,
// highlighted when the language is one the highlighter knows; a line
// wider than the block is cut where it reaches the edge and goes on
// below.
func (r *renderer) code(lang, code string, width int) []string {
	var out []string
	if lang != "" {
		out = append(out, r.th.codeLabel.Render(lang))
	}
	const indent = "  "
	for _, line := range highlight(lang, code, r.th) {
		if len(line) == 0 {
			out = append(out, "")
			continue
		}
		for _, part := range cutWord(line, max(width-len(indent), 1)) {
			var b strings.Builder
			b.WriteString(indent)
			writePieces(&b, part)
			out = append(out, b.String())
		}
	}
	return out
}

// table renders a table with rules between its columns and under its
// header, as wide as its content or, when that is too wide, as wide as
// the text, its cells wrapped.
func (r *renderer) table(t *extast.Table, width int) []string {
	var header []string
	var rows [][]string
	bold := lipgloss.NewStyle().Bold(true)
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		_, isHeader := row.(*extast.TableHeader)
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			var st *lipgloss.Style
			if isHeader {
				st = &bold
			}
			cells = append(cells, strings.Join(r.inline(cell, st).lines(1<<20), " "))
		}
		if isHeader {
			header = cells
		} else {
			rows = append(rows, cells)
		}
	}
	align := func(col int) lipgloss.Position {
		if col < len(t.Alignments) {
			switch t.Alignments[col] {
			case extast.AlignRight:
				return lipgloss.Right
			case extast.AlignCenter:
				return lipgloss.Center
			}
		}
		return lipgloss.Left
	}
	tb := table.New().
		Border(lipgloss.NormalBorder()).
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
		BorderStyle(r.th.rule).
		Headers(header...).
		Rows(rows...).
		StyleFunc(func(_, col int) lipgloss.Style {
			return lipgloss.NewStyle().Padding(0, 1).Align(align(col))
		})
	s := tb.String()
	if lipgloss.Width(s) > width {
		s = tb.Width(width).String()
	}
	return strings.Split(s, "\n")
}

// inline collects the words of n's inline content in style st.
func (r *renderer) inline(n ast.Node, st *lipgloss.Style) *words {
	w := &words{}
	r.inlines(w, n, st)
	return w
}

func (r *renderer) inlines(w *words, n ast.Node, st *lipgloss.Style) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inlineNode(w, c, st)
	}
}

func (r *renderer) inlineNode(w *words, n ast.Node, st *lipgloss.Style) {
	switch n := n.(type) {
	case *ast.Text:
		w.write(string(n.Segment.Value(r.src)), st)
		switch {
		case n.HardLineBreak():
			w.lineBreak()
		case n.SoftLineBreak():
			w.space(st)
		}
	case *ast.String:
		w.write(string(n.Value), st)
	case *ast.CodeSpan:
		code := &r.th.code
		w.add(" ", code)
		w.write(strings.ReplaceAll(plainText(n, r.src), "\n", " "), code)
		w.add(" ", code)
	case *ast.Emphasis:
		r.inlines(w, n, with(st, func(s lipgloss.Style) lipgloss.Style {
			if n.Level >= 2 {
				return s.Bold(true)
			}
			return s.Italic(true)
		}))
	case *extast.Strikethrough:
		r.inlines(w, n, with(st, func(s lipgloss.Style) lipgloss.Style { return s.Strikethrough(true) }))
	case *ast.Link:
		r.inlines(w, n, &r.th.linkText)
		if url := string(n.Destination); url != "" && url != plainText(n, r.src) {
			w.space(nil)
			w.write(url, &r.th.linkURL)
		}
	case *ast.AutoLink:
		w.write(string(n.URL(r.src)), &r.th.linkURL)
	case *ast.Image:
		w.write("Image: "+plainText(n, r.src)+" →", nil)
		w.space(nil)
		w.write(string(n.Destination), &r.th.image)
	case *ast.RawHTML:
		for i := range n.Segments.Len() {
			seg := n.Segments.At(i)
			w.write(string(seg.Value(r.src)), st)
		}
	case *extast.TaskCheckBox:
		mark := "[ ]"
		if n.IsChecked {
			mark = "[✓]"
		}
		w.write(mark, st)
		w.space(nil)
	default:
		r.inlines(w, n, st)
	}
}

// with returns st (nil: no style) changed by f.
func with(st *lipgloss.Style, f func(lipgloss.Style) lipgloss.Style) *lipgloss.Style {
	s := lipgloss.NewStyle()
	if st != nil {
		s = *st
	}
	s = f(s)
	return &s
}

// plainText is the text of n's inline content, without its markup.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				b.Write(c.Segment.Value(src))
				if c.SoftLineBreak() || c.HardLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(c.Value)
			default:
				walk(c)
			}
		}
	}
	walk(n)
	return b.String()
}
