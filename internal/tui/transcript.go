package tui

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"time"

	"charm.land/bubbles/v2/progress"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/markdown"
	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/tool"
)

type itemKind int

const (
	itemUser itemKind = iota
	itemAssistant
	itemTool
	itemInfo
	itemError
	itemThinking // the model's thinking (thinking.go)
)

type toolState int

const (
	toolRunning toolState = iota
	toolOK
	toolFailed
	toolCanceled
	toolDenied // not run: permission was denied
)

// item is one entry of the transcript. Finished items keep their rendered
// lines; only live ones (streaming text, running tools) render again.
type item struct {
	kind  itemKind
	text  strings.Builder // user/assistant/info/error text
	short string          // a user message with its long pastes as placeholders

	// tool calls
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

	rawCall bool               // a /call: keep the raw result
	cancel  context.CancelFunc // stops a /call

	streaming   bool     // assistant text (or thinking) still arriving
	redacted    bool     // thinking the provider sent encrypted
	stream      streamed // what of the streaming text is rendered already
	pendingText bool     // text arrived since the last frame
	stale       bool     // must render again

	lines   []string // rendered, with a trailing blank separator
	gen     int      // render generation lines belong to
	renders int      // how many times lines were made (the window cache's key)
}

// callNote is a notice shown inside a tool call's block.
type callNote struct {
	kind itemKind // itemInfo or itemError
	text string
}

func (it *item) live() bool { return it.kind == itemTool && it.state == toolRunning }

// transcript is the list of items and their render state.
type transcript struct {
	items  []*item
	gen    int // bumps on resize, theme or expand changes: every cache is stale
	width  int
	expand bool     // tool blocks show full results
	view   viewport // where the window is (following, or scrolled back)
	window window   // the last window drawn
}

func (t *transcript) add(it *item) *item {
	t.items = append(t.items, it)
	return it
}

func (t *transcript) invalidate() { t.gen++ }

// itemLines returns it rendered, from cache when possible.
func (m *model) itemLines(it *item) []string {
	t := &m.tr
	if it.lines != nil && it.gen == t.gen && !it.stale && !it.live() {
		return it.lines
	}
	s := m.renderItem(it)
	it.lines = strings.Split(s, "\n")
	it.lines = append(it.lines, "")
	it.gen = t.gen
	it.stale = false
	it.renders++
	return it.lines
}

func (m *model) renderItem(it *item) string {
	w := max(m.tr.width, 20)
	st := m.st
	wrap := lipgloss.NewStyle().Width(w - 2)
	switch it.kind {
	case itemUser:
		text := it.text.String()
		if it.short != "" && !m.tr.expand {
			text = it.short
		}
		// Later lines indent under the first, not under the "›".
		body := strings.ReplaceAll(wrap.Render(text), "\n", "\n  ")
		if it.short != "" && !m.tr.expand {
			body += "\n  " + st.dim.Render("ctrl+o shows the paste")
		}
		return st.user.Render("› ") + body
	case itemInfo:
		return st.info.Render(hangingWrap(it.text.String(), w-2))
	case itemError: // paths and names stay whole, as in notices
		return st.errText.Render(hangingWrap(it.text.String(), w-2))
	case itemAssistant:
		if it.streaming {
			return m.renderStreaming(it)
		}
		it.stream = streamed{}
		return m.renderMarkdown(it.text.String())
	case itemTool:
		return m.renderTool(it, w)
	case itemThinking:
		return m.renderThinking(it, w)
	}
	return ""
}

func (m *model) renderMarkdown(text string) string {
	return markdown.Render(text, markdown.Options{Width: max(m.tr.width-2, 20), Dark: m.st.dark})
}

const previewLines = 4

// askingPermission reports whether a permission prompt for the tool is
// open: its call has not started, it waits for the person.
func (m *model) askingPermission(tool string) bool {
	for _, q := range m.questions {
		if p, ok := q.md.(*permissionModal); ok && p.tool == tool && !p.finished() {
			return true
		}
	}
	return false
}

func (m *model) renderTool(it *item, w int) string {
	st := m.st
	var b strings.Builder
	var mark, status string
	switch it.state {
	case toolRunning:
		mark = st.accent.Render(m.spin.View())
		status = st.dim.Render("running " + fmtDuration(time.Since(it.start)))
		if m.askingPermission(it.name) {
			status = st.warn.Render("waiting for your answer")
		}
	case toolOK:
		mark = st.ok.Render("●")
		status = st.ok.Render("✓ ") + st.dim.Render(fmtDuration(it.elapsed))
	case toolFailed:
		mark = st.fail.Render("●")
		status = st.fail.Render("✗ failed ") + st.dim.Render(fmtDuration(it.elapsed))
	case toolCanceled:
		mark = st.warn.Render("●")
		status = st.warn.Render("canceled ") + st.dim.Render(fmtDuration(it.elapsed))
	case toolDenied:
		mark = st.warn.Render("●")
		status = st.warn.Render("✗ denied")
	}
	head := mark + " " + st.toolName.Render(it.name)
	room := w - lipgloss.Width(head) - lipgloss.Width(status) - 3
	if it.args != "" && room > 5 {
		head += " " + st.dim.Render(ansi.Truncate(it.args, room, "…"))
	}
	if gap := w - lipgloss.Width(head) - lipgloss.Width(status); gap > 0 {
		head += strings.Repeat(" ", gap)
	} else {
		head += " "
	}
	b.WriteString(head + status)

	if it.state == toolRunning && it.progress != nil {
		p := it.progress
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

	for _, n := range it.notes {
		style := st.info
		if n.kind == itemError {
			style = st.errText
		}
		b.WriteString("\n" + style.Render("  "+strings.ReplaceAll(ansi.Wrap(n.text, max(w-4, 10), ""), "\n", "\n  ")))
	}

	body := it.result
	if !m.tr.expand && !it.rawCall {
		if data := envelopeData(body); data != "" {
			body = data
		}
	}
	if it.raw != "" {
		// A /call shows its content decoded (text as text, binary content
		// by placeholder), then the result's other fields as JSON.
		body = strings.TrimRight(body, "\n") + "\n" + it.raw
	}
	if body == "" {
		return b.String()
	}
	lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
	limit := previewLines
	expanded := m.tr.expand || it.rawCall
	if it.name == agent.ToolSearchName { // the matches are the point: show them all
		limit = len(lines)
	}
	if expanded {
		limit = 200
	}
	textStyle := st.dim
	if it.state == toolFailed {
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
	for _, l := range m.imageLines(it) {
		b.WriteString("\n" + l)
	}
	return b.String()
}

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return d.Truncate(time.Second).String()
	}
}

// compactJSON renders tool arguments on one line.
func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	s := string(b)
	if s == "{}" || s == "null" {
		return ""
	}
	return s
}

// envelopeData is what a preview shows of a built-in tool's result
// envelope ({"id", "tool", "timestamp", …, "result", "errors"}): the data,
// then the errors, without the boilerplate before them. "" when text is no
// envelope.
func envelopeData(text string) string {
	var env map[string]json.RawMessage
	if !strings.HasPrefix(strings.TrimSpace(text), "{") || json.Unmarshal([]byte(text), &env) != nil {
		return ""
	}
	for _, k := range []string{"id", "tool", "timestamp", "status", "result"} {
		if _, ok := env[k]; !ok {
			return ""
		}
	}
	var out []string
	if r := prettyJSON(env["result"], math.MaxInt); r != "" {
		out = append(out, r)
	}
	var errs []struct{ Code, Message string }
	_ = json.Unmarshal(env["errors"], &errs)
	for _, e := range errs {
		out = append(out, fmt.Sprintf("error %s: %s", e.Code, e.Message))
	}
	if len(out) == 0 {
		var status string
		_ = json.Unmarshal(env["status"], &status)
		out = append(out, status+", no data")
	}
	return strings.Join(out, "\n")
}

// describeResult turns a tool result into text for a person, as
// render.Terminal words it, with images and audio saved under imageDir and
// named by a placeholder. It also returns the images, for the terminals
// that can show them.
func describeResult(res *tool.Result, imageDir string) (string, []*toolImage) {
	var images []*toolImage
	text := render.Terminal(res, func(c sdk.Content) string {
		switch c := c.(type) {
		case *sdk.ImageContent:
			img := newToolImage(c.MIMEType, c.Data, imageDir)
			images = append(images, img)
			return img.label
		case *sdk.AudioContent:
			s, _ := placeholder("audio", c.MIMEType, "", c.Data, imageDir)
			return s
		}
		return ""
	})
	return text, images
}

// resultFields is what /call shows of a result besides its content (which
// describeResult decodes): structured content, isError, _meta, as JSON
// under a label; "" when there is nothing else.
func resultFields(res *tool.Result) string {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(mustJSON(res), &fields); err != nil {
		return err.Error()
	}
	if len(res.Content) > 0 {
		delete(fields, "content")
	} else if res.StructuredContent != nil {
		delete(fields, "content")
		delete(fields, "structuredContent") // describeResult shows it
	}
	if len(fields) == 0 {
		return ""
	}
	return "── result fields\n" + prettyJSON(mustJSON(fields), 500)
}

// placeholder describes binary content (detail, e.g. an image's pixel
// size, is optional) and saves it under dir; path is where ("" when not).
func placeholder(kind, mimeType, detail string, data []byte, dir string) (text, path string) {
	s := fmt.Sprintf("[%s %s, ", kind, mimeType)
	if detail != "" {
		s += detail + ", "
	}
	s += humanBytes(len(data))
	if dir != "" && len(data) > 0 {
		sum := sha256.Sum256(data)
		ext := ".bin"
		if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
			ext = exts[len(exts)-1]
		}
		p := filepath.Join(dir, hex.EncodeToString(sum[:8])+ext)
		if err := os.MkdirAll(dir, 0o700); err == nil {
			if err = os.WriteFile(p, data, 0o600); err == nil {
				s += ", saved to " + p
				path = p
			} else {
				slog.Warn("saving tool result content", "path", p, "err", err)
			}
		}
	}
	return s + "]", path
}

func humanBytes(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
}
