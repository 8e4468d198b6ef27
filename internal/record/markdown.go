package record

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/otter-sh/otter/internal/llm"
)

// Markdown renders a stored conversation: its prompts as typed (with what
// the model was sent, when that was more), answers, tool calls with their
// arguments and results (a call never run says denied), notices, and its
// compactions (cs, which may be nil) at the end.
func Markdown(info Info, entries []Entry, cs []Compaction) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", cmp.Or(info.Title, "(untitled)"))
	fmt.Fprintf(&b, "- Session: `%s`\n- Directory: `%s`\n", info.ID, info.Cwd)
	if info.Model != "" {
		fmt.Fprintf(&b, "- Model: %s\n", strings.TrimPrefix(info.Provider+" / "+info.Model, " / "))
	}
	if info.ParentID != "" {
		fmt.Fprintf(&b, "- Forked from: `%s`\n", info.ParentID)
	}
	fmt.Fprintf(&b, "- Started: %s, last message %s\n", info.Created.Format(time.DateTime), info.Updated.Format(time.DateTime))
	for _, e := range entries {
		m := e.Message
		switch m.Role {
		case llm.RoleUser:
			switch {
			case e.Shown.Hidden:
				fmt.Fprintf(&b, "\n## Sent on your behalf\n\n%s\n", m.Text)
			case e.Shown.Typed != "":
				fmt.Fprintf(&b, "\n## You\n\n%s\n\n<details><summary>Sent to the model</summary>\n\n%s\n\n</details>\n", e.Shown.Typed, fence(m.Text))
			default:
				fmt.Fprintf(&b, "\n## You\n\n%s\n", m.Text)
			}
			for _, img := range m.Images {
				fmt.Fprintf(&b, "\n[%s image, %d bytes]\n", img.MIMEType, len(img.Data))
			}
		case llm.RoleAssistant:
			b.WriteString("\n## otter\n")
			if m.Text != "" {
				fmt.Fprintf(&b, "\n%s\n", m.Text)
			}
			if m.Interrupted {
				b.WriteString("\n*(interrupted)*\n")
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "\n**Tool call** `%s`\n\n```json\n%s\n```\n", c.Name, strings.TrimSpace(string(c.Args)))
			}
		case llm.RoleTool:
			for _, r := range m.ToolResults {
				label := "Result"
				switch {
				case r.IsError && r.Denied:
					label = "Denial"
				case r.IsError:
					label = "Error"
				}
				fmt.Fprintf(&b, "\n**%s** of `%s`\n\n%s\n", label, r.Name, fence(r.Text))
			}
		case RoleNotice:
			text := m.Text
			switch e.Notice {
			case NoticeError:
				text = "**Error:** " + text
			case NoticeAttached:
				text = "Attached: " + strings.ReplaceAll(text, "\n", ", ")
			}
			fmt.Fprintf(&b, "\n> %s\n", strings.ReplaceAll(text, "\n", "\n> "))
		}
	}
	return b.String() + compactionsText(cs)
}

// compactionsText renders a session's compactions in Markdown.
func compactionsText(cs []Compaction) string {
	if len(cs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Compactions\n\nThe model was sent a summary instead of the messages up to each boundary; the messages above are all kept.\n")
	for i, c := range cs {
		fmt.Fprintf(&b, "\n### %d. after message %d (%s): %d → %d tokens\n\n%s\n", i+1, c.UpTo, c.Time.Local().Format("2006-01-02 15:04"), c.TokensBefore, c.TokensAfter, strings.TrimSpace(c.Summary))
	}
	return b.String()
}

// fence puts text in a code block whose fence is longer than any run of
// backticks in it.
func fence(text string) string {
	f := "```"
	for strings.Contains(text, f) {
		f += "`"
	}
	return f + "\n" + strings.TrimRight(text, "\n") + "\n" + f
}
