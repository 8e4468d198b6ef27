package tui

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/markdown"
)

const copyUsage = "usage: /copy (the last answer) · /copy N (the Nth answer back) · /copy code [N] (code block N of the last answer, the last one without N)"

// copyCommand puts an answer's Markdown, as the model wrote it (not
// wrapped for the screen), or one of its code blocks on the clipboard
// through OSC 52, which works over SSH and in tmux (set-clipboard on).
func (m *model) copyCommand(arg string) tea.Cmd {
	var answers []string
	for _, it := range m.tr.items {
		if it, ok := it.(*assistantItem); ok && it.text.Len() > 0 {
			answers = append(answers, it.text.String())
		}
	}
	fail := func(msg string) tea.Cmd {
		m.notice(itemError, msg)
		return nil
	}
	if len(answers) == 0 {
		return fail("nothing to copy yet: no answer in this conversation")
	}
	fields := strings.Fields(arg)
	back, code := 1, 0 // the answer, counted from the last; code block (0: none)
	switch {
	case len(fields) == 0:
	case fields[0] == "code" && len(fields) <= 2:
		code = -1 // the last one
		if len(fields) == 2 {
			n, err := strconv.Atoi(fields[1])
			if err != nil || n < 1 {
				return fail(copyUsage)
			}
			code = n
		}
	case len(fields) == 1:
		n, err := strconv.Atoi(fields[0])
		if err != nil || n < 1 {
			return fail(copyUsage)
		}
		if n > len(answers) {
			if len(answers) == 1 {
				return fail("this conversation has one answer: /copy copies it")
			}
			return fail(fmt.Sprintf("this conversation has %d answers; /copy %d is the first", len(answers), len(answers)))
		}
		back = n
	default:
		return fail(copyUsage)
	}
	answer := answers[len(answers)-back]
	what := "the last answer"
	if back > 1 {
		what = fmt.Sprintf("answer %d back", back)
	}
	content := answer
	if code != 0 {
		blocks := markdown.CodeBlocks(answer)
		if len(blocks) == 0 {
			return fail("the last answer has no code block")
		}
		if code == -1 {
			code = len(blocks)
		}
		if code > len(blocks) {
			return fail("the last answer has " + countOf(len(blocks), "code block"))
		}
		content = blocks[code-1]
		what = fmt.Sprintf("code block %d of %d of the last answer", code, len(blocks))
	}
	size := countOf(strings.Count(strings.TrimRight(content, "\n"), "\n")+1, "line")
	m.notice(itemInfo, fmt.Sprintf("copied %s (%s) to the clipboard", what, size))
	return tea.SetClipboard(content)
}
