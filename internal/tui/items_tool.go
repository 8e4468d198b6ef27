package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/progress"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/tool"
)

type toolState int

const (
	toolRunning toolState = iota
	toolOK
	toolFailed
	toolCanceled
	toolDenied // not run: permission was denied
)

// toolItem is a tool call: the model's, a /call, or a `!` shell line.
type toolItem struct {
	rendered
	id       string
	name     string
	args     string // compact JSON
	state    toolState
	start    time.Time
	elapsed  time.Duration
	result   string // what the result says, for a person
	raw      string // the result's fields besides its content, as JSON (/call)
	progress *tool.Progress
	images   []*toolImage // images of the result, in order

	notes []callNote // said during the call (the person's answers to its server)

	rawCall bool               // a /call or a shell line: keep the raw result, show it whole
	cancel  context.CancelFunc // stops a /call
}

// callNote is a notice shown inside a tool call's block.
type callNote struct {
	kind noticeKind
	text string
}

func (t *toolItem) finished() bool { return t.state != toolRunning }

// running says the call was allowed and runs: its time counts from now.
func (t *toolItem) running() { t.start = time.Now() }

// progressed takes the progress the tool reported; the running block
// shows the latest.
func (t *toolItem) progressed(p tool.Progress) { t.progress = &p }

// note adds a notice to the call's block, under its head.
func (t *toolItem) note(kind noticeKind, text string) {
	t.notes = append(t.notes, callNote{kind: kind, text: text})
}

// stopped marks a call the turn's end left running as canceled.
func (t *toolItem) stopped() {
	t.state, t.elapsed = toolCanceled, time.Since(t.start)
}

// finish takes the call's outcome: res, or err; canceled tells a call
// stopped by Esc or by quitting from one that failed. It returns the
// result's images, saved under imageDir, to number and show.
func (t *toolItem) finish(res *tool.Result, err error, elapsed time.Duration, canceled bool, imageDir string) []*toolImage {
	if elapsed == 0 {
		elapsed = time.Since(t.start)
	}
	t.elapsed = elapsed
	var images []*toolImage
	switch {
	case errors.Is(err, agent.ErrDenied):
		t.state = toolDenied
		t.result = strings.TrimPrefix(err.Error(), agent.ErrDenied.Error()+": ")
	case err != nil && canceled:
		t.state = toolCanceled // the status says so: no body
	case err != nil:
		t.state = toolFailed
		t.result = err.Error()
	case res != nil && res.IsError:
		t.state = toolFailed
		t.result, images = describeResult(res, imageDir)
	default:
		t.state = toolOK
		t.result, images = describeResult(res, imageDir)
	}
	if query, body, ok := searchBlock(t.name, res); ok {
		t.args, t.result = query, body
	}
	if t.rawCall && res != nil {
		t.raw = resultFields(res)
	}
	t.cancel = nil
	return images
}

const previewLines = 4

func (t *toolItem) render(v *itemView) string {
	st, w := v.st, v.width
	var b strings.Builder
	var mark, status string
	switch t.state {
	case toolRunning:
		mark = st.accent.Render(v.spinner)
		status = st.dim.Render("running " + fmtDuration(time.Since(t.start)))
		if v.asking(t.name) {
			status = st.warn.Render("waiting for your answer")
		}
	case toolOK:
		mark = st.ok.Render("●")
		status = st.ok.Render("✓ ") + st.dim.Render(fmtDuration(t.elapsed))
	case toolFailed:
		mark = st.fail.Render("●")
		status = st.fail.Render("✗ failed ") + st.dim.Render(fmtDuration(t.elapsed))
	case toolCanceled:
		mark = st.warn.Render("●")
		status = st.warn.Render("canceled ") + st.dim.Render(fmtDuration(t.elapsed))
	case toolDenied:
		mark = st.warn.Render("●")
		status = st.warn.Render("✗ denied")
	}
	head := mark + " " + st.toolName.Render(t.name)
	room := w - lipgloss.Width(head) - lipgloss.Width(status) - 3
	if t.args != "" && room > 5 {
		head += " " + st.dim.Render(ansi.Truncate(t.args, room, "…"))
	}
	if gap := w - lipgloss.Width(head) - lipgloss.Width(status); gap > 0 {
		head += strings.Repeat(" ", gap)
	} else {
		head += " "
	}
	b.WriteString(head + status)

	if t.state == toolRunning && t.progress != nil {
		p := t.progress
		line := "  "
		if p.Total > 0 {
			bar := progress.New(progress.WithWidth(min(40, w-12)), progress.WithDefaultBlend())
			line += bar.ViewAs(min(p.Progress/p.Total, 1))
		} else {
			line += st.dim.Render(fmt.Sprintf("progress %g", p.Progress))
		}
		if p.Message != "" {
			line += " " + st.dim.Render(ansi.Truncate(p.Message, max(w-lipgloss.Width(line)-1, 0), "…"))
		}
		b.WriteString("\n" + line)
	}

	for _, n := range t.notes {
		style := st.info
		if n.kind == itemError {
			style = st.errText
		}
		b.WriteString("\n" + style.Render("  "+strings.ReplaceAll(ansi.Wrap(n.text, max(w-4, 10), ""), "\n", "\n  ")))
	}

	if summary, diff, ok := changeOf(t.name, t.result); ok && t.state == toolOK && !t.rawCall {
		return b.String() + t.renderChange(v, summary, diff) // diff.go
	}

	body := t.result
	if !v.expand && !t.rawCall {
		if data := envelopeData(body); data != "" {
			body = data
		}
	}
	if t.raw != "" {
		// A /call shows its content decoded (text as text, binary content
		// by placeholder), then the result's other fields as JSON.
		body = strings.TrimRight(body, "\n") + "\n" + t.raw
	}
	if body == "" {
		return b.String()
	}
	lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
	limit := previewLines
	expanded := v.expand || t.rawCall
	if t.name == agent.ToolSearchName { // the matches are the point: show them all
		limit = len(lines)
	}
	if expanded {
		limit = 200
	}
	textStyle := st.dim
	if t.state == toolFailed {
		textStyle = st.fail
	}
	for i, l := range lines {
		if i == limit {
			b.WriteString("\n    " + st.dim.Render("… +"+countOf(len(lines)-limit, "line")+" (ctrl+o expands)"))
			break
		}
		prefix := "    "
		if i == 0 {
			prefix = "  ⎿ "
		}
		if !expanded {
			b.WriteString("\n" + prefix + textStyle.Render(ansi.Truncate(l, w-5, "…")))
			continue
		}
		// Expanded, nothing is cut: long lines wrap under the indent.
		for j, part := range strings.Split(ansi.Wrap(l, max(w-5, 10), ""), "\n") {
			if j > 0 {
				prefix = "    "
			}
			b.WriteString("\n" + prefix + textStyle.Render(part))
		}
	}
	for _, l := range v.images(t) {
		b.WriteString("\n" + l)
	}
	return b.String()
}
