package tui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Wrapping for text that names things: paths, commands, URLs, settings.
// lipgloss and ansi.Wrap break words at hyphens and cut a long word where
// the line ends, so "mcp-server-filesystem" turned into "mcp-" and
// "server-filesystem" on two lines, and a wrapped line started at column
// 0 under an indented item. These keep each name whole where they can and
// continue a wrapped line under where its text starts.

// wrapWords wraps s to width at its spaces, never at a hyphen. A word
// wider than width (a long path, a URL) is broken after a "/", so no file
// or directory name is split; only a part that is wider than width on its
// own is cut where the line ends. Runs of spaces become one.
func wrapWords(s string, width int) []string {
	width = max(width, 1)
	var lines []string
	var cur strings.Builder
	curW := 0
	flush := func() {
		if curW > 0 {
			lines = append(lines, cur.String())
		}
		cur.Reset()
		curW = 0
	}
	put := func(piece string, w int) {
		cur.WriteString(piece)
		curW += w
	}
	for _, word := range strings.Fields(s) {
		ww := ansi.StringWidth(word)
		gap := 0
		if curW > 0 {
			gap = 1
		}
		if curW+gap+ww <= width {
			if gap > 0 {
				put(" ", 1)
			}
			put(word, ww)
			continue
		}
		if ww <= width {
			flush()
			put(word, ww)
			continue
		}
		// Wider than a line: start it here if its first part fits, and
		// go on after its slashes.
		for i, piece := range splitAfterSlashes(word) {
			pw := ansi.StringWidth(piece)
			sep := 0
			if i == 0 && curW > 0 {
				sep = 1
			}
			if curW+sep+pw > width {
				flush()
				sep = 0
			}
			if pw > width { // one name wider than a line: cut it
				parts := strings.Split(ansi.Hardwrap(piece, width-curW, false), "\n")
				for j, part := range parts {
					if j > 0 {
						flush()
					}
					put(part, ansi.StringWidth(part))
				}
				continue
			}
			if sep > 0 {
				put(" ", 1)
			}
			put(piece, pw)
		}
	}
	flush()
	if len(lines) == 0 {
		return []string{""}
	}
	return lines
}

// wrapKeys wraps a line of keys ("↑/↓ select · enter preview · esc
// close") between its items, so no line starts with a "·" and no key is
// parted from what it does.
func wrapKeys(keys string, width int) string {
	var lines []string
	cur := ""
	for _, item := range strings.Split(keys, " · ") {
		switch {
		case cur == "":
			cur = item
		case ansi.StringWidth(cur+" · "+item) <= width:
			cur += " · " + item
		default:
			lines = append(lines, cur)
			cur = item
		}
	}
	return strings.Join(append(lines, cur), "\n")
}

// cutMiddle fits s (a URI, a path) into width by leaving out its middle:
// its end, which tells it from its neighbours ("…/document/startup.md"),
// stays whole from a "/" where it can.
func cutMiddle(s string, width int) string {
	if ansi.StringWidth(s) <= width {
		return s
	}
	if width < 8 {
		return ansi.Truncate(s, width, "…")
	}
	// The tail takes up to two thirds of the width, in cells.
	r := []rune(s)
	start, w := len(r), 0
	for start > 0 {
		rw := ansi.StringWidth(string(r[start-1]))
		if w+rw > width*2/3 {
			break
		}
		start, w = start-1, w+rw
	}
	tail := string(r[start:])
	if i := strings.IndexByte(tail, '/'); i > 0 && i < len(tail)/2 {
		tail = tail[i:]
	}
	return ansi.Truncate(s, width-1-ansi.StringWidth(tail), "") + "…" + tail
}

// splitAfterSlashes splits a word after each "/" it holds:
// "/usr/local/bin" → "/", "usr/", "local/", "bin".
func splitAfterSlashes(word string) []string {
	var parts []string
	for word != "" {
		i := strings.IndexByte(word, '/')
		if i < 0 {
			return append(parts, word)
		}
		parts = append(parts, word[:i+1])
		word = word[i+1:]
	}
	return parts
}

// wrapIndented wraps each line of text that is wider than width under its
// own indent, two columns further in (indented JSON, a schema): a long
// string value goes on below its key instead of being cut.
func wrapIndented(text string, width int) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if ansi.StringWidth(line) <= width {
			out = append(out, line)
			continue
		}
		lead := len(line) - len(strings.TrimLeft(line, " "))
		if width-lead-2 < 10 {
			lead = 0
		}
		out = append(out, wrapItem(line[lead:], lead, 2, width)...)
	}
	return strings.Join(out, "\n")
}

// wrapItem lays out one item of a list (a server's command, a setting) at
// indent, wrapped to width with wrapWords; the lines it wraps onto start
// hang columns further in, so the item still reads as one.
func wrapItem(item string, indent, hang, width int) []string {
	pad := strings.Repeat(" ", indent)
	if ansi.StringWidth(item) <= width-indent {
		return []string{pad + item}
	}
	more := strings.Repeat(" ", indent+hang)
	lines := wrapWords(item, width-indent-hang)
	for i := range lines {
		if i == 0 {
			lines[i] = pad + lines[i]
		} else {
			lines[i] = more + lines[i]
		}
	}
	return lines
}

// hangingWrap wraps each line of text to width, continuing a wrapped line
// under where its text starts: under the second column of a two-column
// line ("  /mcp reload          re-read the config…", as in /help), else
// under its indent.
func hangingWrap(text string, width int) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if ansi.StringWidth(line) <= width {
			out = append(out, line)
			continue
		}
		col := len(line) - len(strings.TrimLeft(line, " "))
		if col >= 4 {
			if code, comment, ok := cutComment(line); ok {
				out = append(out, wrapComment(code, comment, col, width)...)
				continue
			}
		}
		if i := strings.Index(line[col:], "  "); i > 0 {
			gap := line[col+i:]
			col += i + len(gap) - len(strings.TrimLeft(gap, " "))
		}
		if width-col < 20 { // too narrow for columns: wrap under the indent
			col = len(line) - len(strings.TrimLeft(line, " "))
		}
		if width-col < 10 {
			out = append(out, wrapWords(line, width)...)
			continue
		}
		head, rest := line[:col], line[col:]
		for i, part := range wrapWords(rest, width-col) {
			if i == 0 {
				out = append(out, head+part)
			} else {
				out = append(out, strings.Repeat(" ", col)+strings.TrimLeft(part, " "))
			}
		}
	}
	return strings.Join(out, "\n")
}

// cutComment splits a line of a code snippet (a shell command, a TOML
// setting) at its "#" comment: one that starts the line's text or follows a
// space.
func cutComment(line string) (code, comment string, ok bool) {
	for i := 0; i < len(line); i++ {
		if line[i] == '#' && (i == 0 || line[i-1] == ' ') {
			return line[:i], strings.TrimSpace(line[i+1:]), true
		}
	}
	return "", "", false
}

// wrapComment wraps a snippet line's comment so that every line it takes
// starts with "#", so the snippet still pastes into a shell or a config
// file: beside the code when there is room, else on lines of its own above
// it (indented by indent).
func wrapComment(code, comment string, indent, width int) []string {
	var out []string
	col := ansi.StringWidth(code)
	// Words are never cut (a comment names variables and paths).
	parts := strings.Split(ansi.Wordwrap(comment, max(width-col-2, 1), ""), "\n")
	if strings.TrimSpace(code) != "" && slices.ContainsFunc(parts, func(p string) bool { return ansi.StringWidth(p) > width-col-2 }) {
		for _, part := range strings.Split(ansi.Wordwrap(comment, max(width-indent-2, 1), ""), "\n") {
			out = append(out, strings.Repeat(" ", indent)+"# "+strings.TrimSpace(part))
		}
		return append(out, strings.TrimRight(code, " "))
	}
	for i, part := range parts {
		head := code
		if i > 0 {
			head = strings.Repeat(" ", col)
		}
		out = append(out, head+"# "+strings.TrimSpace(part))
	}
	return out
}
