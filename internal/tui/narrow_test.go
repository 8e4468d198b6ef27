package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/llm"
)

// The no-provider help is meant to be copied into a shell or a config
// file: at 80 and 60 columns a comment that wraps goes on with "#" on each
// of its lines, so no line of the snippet turns into a command.
func TestNoProviderSnippetWrapsCommentsAsComments(t *testing.T) {
	t.Parallel()
	for _, width := range []int{80, 60} {
		b := &fakeBackend{provider: Provider{Help: llm.HowToConfigure()}}
		h := start(t, b)
		h.tm.Send(tea.WindowSizeMsg{Width: width, Height: 40})
		h.enterLine("hello")
		s := h.waitFor("export ANTHROPIC_API_KEY=", "Ollama needs")
		if !strings.Contains(s, "ANTHROPIC_BASE_URL") {
			t.Errorf("at %d columns, a variable's name is cut:\n%s", width, s)
		}
		for _, word := range []string{"(Claude)", "proxy)", "OPENAI_BASE_URL", `"anthropic"`, "Ollama", "needs no key"} {
			for _, line := range strings.Split(s, "\n") {
				if !strings.HasPrefix(line, "    ") { // prose, not the snippet
					continue
				}
				if i := strings.Index(line, word); i >= 0 && !strings.Contains(line[:i], "#") {
					t.Errorf("at %d columns, %q continues a comment without #:\n%s", width, line, s)
				}
			}
		}
	}
}
