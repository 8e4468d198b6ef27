package tui

import (
	"fmt"
	"strings"
)

// position is one line of the transcript: line `line` of item `item`.
type position struct{ item, line int }

// viewport is where the transcript window is. Following (the default),
// the window shows the newest lines and moves with them. Scrolled back,
// it is pinned to its top line, so an answer streaming below does not
// move what the person reads; what arrived since is counted for the
// "↓ N new lines" marker.
type viewport struct {
	pinned bool
	top    position
	// What the transcript held when the person scrolled back: the item
	// count and the line count of the last item then.
	seenItems, seenLines int
	seenGen              int // the render generation seenLines counts in
}

// follow returns to the newest lines.
func (m *model) follow() { m.tr.view = viewport{} }

// pin fixes the window where it is now, before a scroll moves it.
func (m *model) pin() {
	v := &m.tr.view
	if v.pinned {
		return
	}
	items := m.tr.items
	v.pinned = true
	v.top = m.bottomTop(m.mainHeight())
	v.seenItems = len(items)
	v.seenGen = m.tr.gen
	if n := len(items); n > 0 {
		v.seenLines = len(m.itemLines(items[n-1]))
	}
}

// bottomTop returns the top line of a window h lines high that ends with
// the newest line, rendering only the items that reach into it.
func (m *model) bottomTop(h int) position {
	items := m.tr.items
	n := 0
	for i := len(items) - 1; i >= 0; i-- {
		n += len(m.itemLines(items[i]))
		if n >= h {
			return position{i, n - h}
		}
	}
	return position{}
}

// showTop shows the start of the transcript's last item when it is
// taller than the window (/help on a small screen): following, the window
// would show its end only, and the person would never see what it begins
// with; the rule under the window says there is more below.
func (m *model) showTop() {
	n := len(m.tr.items)
	if n == 0 || len(m.itemLines(m.tr.items[n-1])) <= m.mainHeight() {
		return
	}
	m.pin()
	m.tr.view.top = position{item: n - 1}
}

// scrollUp moves the window n lines back; it stops at the first line.
func (m *model) scrollUp(n int) {
	m.pin()
	p := &m.tr.view.top
	p.line -= n
	for p.line < 0 && p.item > 0 {
		p.item--
		p.line += len(m.itemLines(m.tr.items[p.item]))
	}
	p.line = max(p.line, 0)
}

// scrollDown moves the window n lines forward; reaching the newest line,
// it follows again.
func (m *model) scrollDown(n int) {
	v := &m.tr.view
	if !v.pinned {
		return
	}
	items := m.tr.items
	p := &v.top
	p.line += n
	for p.item < len(items)-1 && p.line >= len(m.itemLines(items[p.item])) {
		p.line -= len(m.itemLines(items[p.item]))
		p.item++
	}
	if m.linesFrom(*p, m.mainHeight()+1) <= m.mainHeight() {
		m.follow()
	}
}

// scrollTop shows the first line of the transcript.
func (m *model) scrollTop() {
	m.pin()
	m.tr.view.top = position{}
	if m.linesFrom(position{}, m.mainHeight()+1) <= m.mainHeight() {
		m.follow() // everything fits
	}
}

// linesFrom counts the lines from p on, stopping at limit.
func (m *model) linesFrom(p position, limit int) int {
	items := m.tr.items
	n := 0
	for i := p.item; i < len(items) && n < limit; i++ {
		ls := len(m.itemLines(items[i]))
		if i == p.item {
			ls -= min(p.line, ls)
		}
		n += ls
	}
	return n
}

// newLines counts the lines that arrived since the person scrolled back.
func (m *model) newLines() int {
	v := &m.tr.view
	items := m.tr.items
	if !v.pinned || v.seenItems > len(items) || v.seenItems == 0 {
		return 0
	}
	last := len(m.itemLines(items[v.seenItems-1]))
	if v.seenGen != m.tr.gen { // rewrapped (resize): count from here
		v.seenGen, v.seenLines = m.tr.gen, last
	}
	n := max(last-v.seenLines, 0)
	for _, it := range items[v.seenItems:] {
		n += len(m.itemLines(it))
	}
	return n
}

// window is the transcript window last drawn, kept while nothing in it
// changes: a keystroke redraws the screen, and with it the window, which
// need not be joined again.
type window struct {
	h     int
	view  viewport
	items int // len(transcript.items) then
	first int // the index of shown[0]
	shown []shownItem
	text  string
}

// shownItem is an item of the window and the render of it shown.
type shownItem struct {
	it      item
	renders int
}

// still reports whether the window drawn for h is still what the
// transcript shows: the same place, no item added, none in the window
// rendered again or due to.
func (w *window) still(t *transcript, h int) bool {
	if w.text == "" || w.h != h || w.view != t.view || w.items != len(t.items) {
		return false
	}
	for i, s := range w.shown {
		it := s.it
		if w.first+i >= len(t.items) || t.items[w.first+i] != it || it.cache().renders != s.renders || !t.kept(it) {
			return false
		}
	}
	return true
}

// transcriptView returns the visible window of the transcript, h lines
// high. Only the items that reach into the window are rendered.
func (m *model) transcriptView(h int) string {
	v := &m.tr.view
	items := m.tr.items
	if m.tr.window.still(&m.tr, h) {
		return m.tr.window.text
	}
	if v.pinned && (v.top.item >= len(items) || m.linesFrom(v.top, h) < h) {
		m.follow() // the transcript shrank (/clear, a wider window)
	}
	top := v.top
	if !v.pinned {
		top = m.bottomTop(h)
	}
	lines := make([]string, 0, h)
	var shown []shownItem
	for i := top.item; i < len(items) && len(lines) < h; i++ {
		ls := m.itemLines(items[i])
		shown = append(shown, shownItem{items[i], items[i].cache().renders})
		if i == top.item {
			ls = ls[min(top.line, len(ls)):]
		}
		lines = append(lines, ls[:min(len(ls), h-len(lines))]...)
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	text := strings.Join(lines, "\n")
	m.tr.window = window{h: h, view: *v, items: len(items), first: top.item, shown: shown, text: text}
	return text
}

// scrollMarker is what the rule under the transcript says while it is
// scrolled back: how much arrived below, and how to get there.
func (m *model) scrollMarker() string {
	if !m.tr.view.pinned {
		return ""
	}
	if n := m.newLines(); n > 0 {
		unit := "lines"
		if n == 1 {
			unit = "line"
		}
		return fmt.Sprintf(" ↓ %d new %s · end follows ", n, unit)
	}
	return " ↓ more below · end follows "
}
