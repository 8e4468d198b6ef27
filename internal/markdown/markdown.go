// Package markdown renders Markdown for a terminal: the TUI's answers,
// and `-p`'s when it writes to a terminal. It parses with goldmark
// (CommonMark with GitHub's tables, strikethrough, task lists and bare
// links) and styles with lipgloss.
//
// It replaces glamour, which linked chroma's every lexer and style,
// goldmark's emoji tables and bluemonday into every command otter runs:
// 40 ms of package initialisation before `otter --version` printed a
// word. Here nothing is set up until something is rendered: the parser on
// the first Render, the code highlighter (a curated set of chroma's XML
// lexer definitions, embedded) on the first fenced block that names a
// language it knows.
//
// What a person sees: headings as styled text (never the "## " that wrote
// them), paragraphs wrapped at spaces (never inside a word, nor at a
// hyphen), lists with bullets or numbers and nested lists indented under
// their item's text, block quotes behind a bar, tables with column rules,
// links as their text and their address, code blocks under their
// language's name, highlighted.
package markdown

import (
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// Options say how to render.
type Options struct {
	// Width is the number of columns a line may take; text wraps to it.
	Width int
	// Dark says the terminal's background is dark; the colours suit it.
	Dark bool
}

// margin is the indent of every line: the text stands apart from what
// frames it (the "›" of the person's messages, tool blocks).
const margin = 2

// minWidth is the narrowest a text is wrapped to, however narrow the
// terminal: below it a line of text is no longer readable anyway.
const minWidth = 16

// parse returns the parser, made on first use: a command that renders no
// Markdown pays nothing for it.
var parse = sync.OnceValue(func() parser.Parser {
	return goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser()
})

// Render returns src for a terminal: styled lines no wider than o.Width,
// without blank lines before or after.
func Render(src string, o Options) string {
	if strings.TrimSpace(src) == "" {
		return ""
	}
	r := renderer{src: []byte(src), th: themeFor(o.Dark)}
	doc := parse().Parse(text.NewReader(r.src))
	width := max(o.Width, minWidth+margin) - margin
	lines := r.children(doc, width, false)
	pad := strings.Repeat(" ", margin)
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
}

// CodeBlocks returns the contents of src's code blocks, fenced and
// indented, in order, as written (for copying one).
func CodeBlocks(src string) []string {
	b := []byte(src)
	doc := parse().Parse(text.NewReader(b))
	var out []string
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			out = append(out, linesText(n, b))
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return out
}

// linesText is the text of a block's lines (a code block's, an HTML
// block's), as written.
func linesText(n ast.Node, src []byte) string {
	var b strings.Builder
	ls := n.Lines()
	for i := range ls.Len() {
		seg := ls.At(i)
		b.Write(seg.Value(src))
	}
	return b.String()
}
