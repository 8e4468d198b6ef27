package record

import (
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm"
)

// The Markdown of a conversation shows what the person saw: a prompt as
// typed, with what the model was sent beside it, a denied call as denied,
// an error notice as an error, a message sent on their behalf as such.
func TestMarkdownShowsWhatWasShown(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	entries := []Entry{
		{Message: llm.Message{Role: llm.RoleUser, Text: "Review #42.\n\nContext from the hook."}, Shown: Shown{Typed: "/review:pr 42"}},
		{Message: llm.Message{Role: RoleNotice, Text: "@docs:readme (text, 12 B)\n@a.go (text, 1 kB)"}, Notice: NoticeAttached},
		{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "echo", Args: []byte(`{}`)}}}},
		{Message: llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "c1", Name: "echo", Text: "permission to run the tool was denied by a PreToolUse hook: no", IsError: true, Denied: true}}}},
		{Message: llm.Message{Role: llm.RoleUser, Text: "Stop hook feedback:\nsay bye"}, Shown: Shown{Hidden: true}},
		{Message: llm.Message{Role: RoleNotice, Text: "fake: request failed (HTTP 400)"}, Notice: NoticeError},
		{Message: llm.Message{Role: llm.RoleUser, Text: "plain"}},
	}
	md := Markdown(Info{ID: "abc", Cwd: "/proj", Created: now, Updated: now}, entries, nil)
	for _, want := range []string{
		"## You\n\n/review:pr 42\n\n<details><summary>Sent to the model</summary>\n\n```\nReview #42.\n\nContext from the hook.\n```\n\n</details>\n",
		"> Attached: @docs:readme (text, 12 B), @a.go (text, 1 kB)\n",
		"**Denial** of `echo`",
		"## Sent on your behalf\n\nStop hook feedback:\nsay bye\n",
		"> **Error:** fake: request failed (HTTP 400)\n",
		"## You\n\nplain\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
}
