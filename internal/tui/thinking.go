package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/llm"
)

// This file shows the model's thinking (Anthropic extended thinking, the
// Responses API's reasoning summaries). Thinking is long and mostly of
// interest when an answer surprises, so it is one collapsed line in the
// transcript, "thinking… 1.2k chars", that ctrl+o expands as it expands
// tool output: the key a person already uses to see what is folded away.

// thinkingItem is the model's thinking of one step of the turn.
type thinkingItem struct {
	rendered
	text      strings.Builder
	streaming bool // still arriving
	redacted  bool // some of it the provider sent encrypted
}

func (t *thinkingItem) finished() bool { return !t.streaming }

// add takes a piece of thinking as it arrives.
func (t *thinkingItem) add(ev agent.ThinkingDelta) {
	t.redacted = t.redacted || ev.Redacted
	t.text.WriteString(ev.Text)
}

// end marks the thinking as whole.
func (t *thinkingItem) end() { t.streaming = false }

// thinkingDelta adds a piece of thinking to the thinking item still
// arriving, or starts one (thinking after text or a tool call is a new
// step of the turn, so a new item, in the order the model worked).
func (m *model) thinkingDelta(ev agent.ThinkingDelta) tea.Cmd {
	m.retry = nil
	if m.thinking == nil {
		m.endStreaming()
		m.thinking = &thinkingItem{streaming: true}
		m.tr.add(m.thinking)
	}
	m.thinking.add(ev)
	return m.frameTick()
}

// endThinking marks the thinking item still arriving as finished.
func (m *model) endThinking() {
	if it := m.thinking; it != nil {
		it.end()
		m.thinking = nil
	}
}

// replayThinking adds the thinking a stored assistant message kept, as
// the conversation showed it: one finished item.
func (m *model) replayThinking(rs []llm.Reasoning) {
	it := &thinkingItem{}
	for _, r := range rs {
		it.text.WriteString(r.Text)
		it.redacted = it.redacted || r.Redacted != "" || r.Encrypted != "" && r.Text == ""
	}
	if it.text.Len() > 0 || it.redacted {
		m.tr.add(it)
	}
}

// thinkingLimit is how many lines of thinking an expanded item shows: as
// many as an expanded tool result, so one long chain of thought does not
// bury the rest of the transcript.
const thinkingLimit = 200

// render draws the thinking: its one-line head with the size, then,
// expanded, its text dimmed and indented.
func (t *thinkingItem) render(v *itemView) string {
	st := v.st
	text := strings.TrimSpace(t.text.String())
	head := "✻ thinking"
	if t.streaming {
		head += "…"
	}
	size := app.TokenCount(int64(len([]rune(text)))) + " chars"
	if t.redacted && text == "" {
		size = "redacted by the provider"
	} else if t.redacted {
		size += " (some redacted by the provider)"
	}
	line := st.dim.Render(head + " · " + size)
	if text == "" || !v.expand {
		if text != "" {
			line += st.dim.Render(" · ctrl+o expands")
		}
		return line
	}
	var b strings.Builder
	b.WriteString(line)
	lines := strings.Split(ansi.Wrap(text, max(v.width-4, 10), ""), "\n")
	for i, l := range lines {
		if i == thinkingLimit {
			b.WriteString("\n    " + st.dim.Render("… +"+countOf(len(lines)-thinkingLimit, "line")))
			break
		}
		b.WriteString("\n  " + st.dim.Render(l))
	}
	return b.String()
}
