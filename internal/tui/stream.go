package tui

import "strings"

// streamed is what a streaming answer has rendered so far: the Markdown
// blocks that are complete (followed by a blank line outside a code
// fence) are rendered once and kept; each frame renders only the block
// still arriving. When the answer ends it renders once more, whole.
type streamed struct {
	done    int      // bytes of the text rendered into lines
	inFence bool     // text[:done] ends inside a fenced code block
	lines   []string // text[:done] rendered
	gen     int      // the render generation lines belong to
	// The last render and the length of the text it was for: the screen
	// draws more often than text arrives (each key typed meanwhile).
	last    string
	lastLen int
}

// render renders text, the streaming answer so far: the kept lines of its
// complete blocks, then the rest.
func (s *streamed) render(v *itemView, text string) string {
	if s.gen != v.gen { // resized, or the theme changed: start over
		*s = streamed{gen: v.gen, lastLen: -1}
	}
	if len(text) == s.lastLen {
		return s.last
	}
	if end, inFence := blockBoundary(text, s.done, s.inFence); end > s.done {
		if chunk := v.markdown(text[s.done:end]); chunk != "" {
			if len(s.lines) > 0 {
				s.lines = append(s.lines, "")
			}
			s.lines = append(s.lines, strings.Split(chunk, "\n")...)
		}
		s.done, s.inFence = end, inFence
	}
	tail := ""
	if strings.TrimSpace(text[s.done:]) != "" {
		tail = v.markdown(text[s.done:])
	}
	switch {
	case len(s.lines) == 0:
		s.last = tail
	case tail == "":
		s.last = strings.Join(s.lines, "\n")
	default:
		s.last = strings.Join(s.lines, "\n") + "\n\n" + tail
	}
	s.lastLen = len(text)
	return s.last
}

// blockBoundary returns the end of the last complete Markdown block in
// text after from: just past a blank line that is outside a fenced code
// block. inFence is whether text[:from] ends inside a fence; the result's
// inFence is the same for the returned end.
func blockBoundary(text string, from int, inFence bool) (end int, endInFence bool) {
	end, endInFence = from, inFence
	pos := from
	for pos < len(text) {
		nl := strings.IndexByte(text[pos:], '\n')
		if nl < 0 {
			break // the last line is still arriving
		}
		line := text[pos : pos+nl]
		pos += nl + 1
		trimmed := strings.TrimLeft(line, " ")
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
			continue
		}
		if !inFence && strings.TrimSpace(line) == "" && pos-from > 1 {
			end, endInFence = pos, inFence
		}
	}
	return end, endInFence
}
