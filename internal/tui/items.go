package tui

import (
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/otter-sh/otter/internal/markdown"
)

// item is one entry of the transcript. Each kind (a message of the
// person's, an answer, a tool call, the model's thinking, a notice) is its
// own type that draws itself and takes the events that change it; the
// transcript only asks for lines, and keeps those of finished items.
type item interface {
	// render draws the item as v says: at what width, in which styles,
	// folded or expanded (ctrl+o).
	render(v *itemView) string
	// finished reports whether the item is done changing on its own: its
	// render is kept until the width, theme or ctrl+o change (or it says
	// it changed, see rendered.drop). An unfinished item — an answer
	// streaming, a running tool with its clock — renders at every draw.
	finished() bool
	cache() *rendered
}

// rendered is an item's kept render; item types embed it.
type rendered struct {
	lines    []string // rendered, with a trailing blank separator
	gen      int      // the transcript generation lines belong to
	finished bool     // the item was finished when lines were made
	renders  int      // how many times lines were made (the window cache's key)
	// text is what lines were split from, for an unfinished item: drawn
	// again unchanged (a streaming answer between frames), its lines stay.
	text string
}

func (r *rendered) cache() *rendered { return r }

// drop forgets the kept render of a finished item that changed after all
// (an image the terminal refused, a retry notice updated in place).
func (r *rendered) drop() { r.lines = nil }

// itemView is what an item needs to know of the screen to draw itself.
type itemView struct {
	width  int // the transcript's width, at least 20
	st     *styles
	expand bool // ctrl+o: tool results, thinking and pastes show whole
	gen    int  // the transcript's render generation (a streaming answer's blocks)

	spinner string                   // the spinner's frame, for running tools
	asking  func(tool string) bool   // a permission prompt waits for the tool
	images  func(*toolItem) []string // the lines of a tool block's images
}

// markdown renders an answer's Markdown for the transcript.
func (v *itemView) markdown(text string) string {
	return markdown.Render(text, markdown.Options{Width: max(v.width-2, 20), Dark: v.st.dark})
}

// transcript is the list of items and their render state.
type transcript struct {
	items  []item
	gen    int // bumps on resize, theme or expand changes: every cache is stale
	width  int
	expand bool     // tool blocks show full results
	view   viewport // where the window is (following, or scrolled back)
	window window   // the last window drawn
}

func (t *transcript) add(it item) { t.items = append(t.items, it) }

func (t *transcript) invalidate() { t.gen++ }

// kept reports whether the lines kept for it are still what it shows.
func (t *transcript) kept(it item) bool {
	c := it.cache()
	return c.lines != nil && c.gen == t.gen && c.finished && it.finished()
}

// itemLines returns it rendered, from cache when possible.
func (m *model) itemLines(it item) []string {
	t := &m.tr
	if t.kept(it) {
		return it.cache().lines
	}
	c := it.cache()
	finished := it.finished() // before render: what it drew is what it was
	s := it.render(m.itemView())
	if !finished && c.lines != nil && c.gen == t.gen && s == c.text {
		return c.lines
	}
	c.text = ""
	if !finished {
		c.text = s
	}
	c.lines = append(strings.Split(s, "\n"), "")
	c.finished, c.gen = finished, t.gen
	c.renders++
	return c.lines
}

// itemView describes the screen to the items that render.
func (m *model) itemView() *itemView {
	return &itemView{
		width: max(m.tr.width, 20), st: &m.st, expand: m.tr.expand, gen: m.tr.gen,
		spinner: m.spin.View(), asking: m.askingPermission, images: m.imageLines,
	}
}

// userItem is a message the person sent.
type userItem struct {
	rendered
	text  string
	short string // the message with its long pastes as placeholders ("": none)
}

func (u *userItem) finished() bool { return true }

func (u *userItem) render(v *itemView) string {
	text := u.text
	folded := u.short != "" && !v.expand
	if folded {
		text = u.short
	}
	// Later lines indent under the first, not under the "›".
	body := strings.ReplaceAll(lipgloss.NewStyle().Width(v.width-2).Render(text), "\n", "\n  ")
	if folded {
		body += "\n  " + v.st.dim.Render("ctrl+o shows the paste")
	}
	return v.st.user.Render("› ") + body
}

// noticeKind is what a notice says: information, or that something failed.
type noticeKind int

const (
	itemInfo noticeKind = iota
	itemError
)

// noticeItem is a line (or a few) of otter's own: a server connected, a
// reload, a retry, an error.
type noticeItem struct {
	rendered
	kind noticeKind
	text string
}

func (n *noticeItem) finished() bool { return true }

func (n *noticeItem) render(v *itemView) string {
	style := v.st.info
	if n.kind == itemError {
		style = v.st.errText
	}
	return style.Render(hangingWrap(n.text, v.width-2)) // paths and names stay whole
}

// set replaces what the notice says (a retry notice, updated in place).
func (n *noticeItem) set(text string) {
	n.text = text
	n.drop()
}

// assistantItem is an answer of the model's. While it streams, the text
// that arrived shows once a frame (show), not at each delta: a delta can
// be a single word, and rendering Markdown for each would cost more than
// the screen can show.
type assistantItem struct {
	rendered
	text      strings.Builder
	streaming bool     // text still arriving
	shown     int      // bytes of text the next render shows, while streaming
	stream    streamed // what of the streaming text is rendered already (stream.go)
}

func (a *assistantItem) finished() bool { return !a.streaming }

// newAnswer returns a finished answer that says text.
func newAnswer(text string) *assistantItem {
	a := &assistantItem{}
	a.text.WriteString(text)
	return a
}

// add appends a delta of the streaming text; it shows at the next frame.
func (a *assistantItem) add(text string) { a.text.WriteString(text) }

// show makes the text that arrived so far the text the answer shows.
func (a *assistantItem) show() { a.shown = a.text.Len() }

// end marks the answer as whole: it renders once more, as one document.
func (a *assistantItem) end() { a.streaming = false }

func (a *assistantItem) render(v *itemView) string {
	if a.streaming {
		if a.renders == 0 || a.stream.gen != v.gen {
			a.show() // its first words, or drawn again at a new width: all there is
		}
		return a.stream.render(v, a.text.String()[:a.shown])
	}
	a.stream = streamed{}
	return v.markdown(a.text.String())
}
