package tui

import (
	"os"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// TestReadingAndCopyingInTmux runs the real binary in a 60-column tmux
// pane with set-clipboard on: a Markdown heading shows without its "##",
// /copy puts the answer's Markdown as written (not wrapped for the
// screen) on tmux's clipboard through OSC 52, /copy code a code block.
func TestReadingAndCopyingInTmux(t *testing.T) {
	t.Parallel()
	long := "This sentence is long enough that the screen wraps it at sixty columns, but the copy does not."
	model := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Text: []string{"## Steps\n\n", long + "\n\n", "```sh\necho hi\n```\n"}},
	)
	dir := t.TempDir()
	p := startTmux(t, dir, fakeModelConfig(model.URL), 60, 24)
	p.tm("set-option", "-s", "set-clipboard", "on")
	p.waitFor("/help")
	p.keys("show me the steps", "Enter")
	s := p.waitFor("Steps", "echo hi", "sixty columns")
	if strings.Contains(s, "## Steps") {
		t.Errorf("the heading shows its Markdown marks:\n%s", s)
	}
	p.keys("/copy", "Enter")
	p.waitFor("copied the last answer")
	if buf := p.tm("show-buffer"); !strings.Contains(buf, "## Steps") || !strings.Contains(buf, long) {
		t.Errorf("the clipboard holds %q; want the answer's Markdown with unwrapped lines", buf)
	}
	p.keys("/copy code", "Enter")
	p.waitFor("copied code block 1 of 1 of the last answer (1 line)")
	if buf := p.tm("show-buffer"); buf != "echo hi\n" {
		t.Errorf("the clipboard holds %q after /copy code, want the code block", buf)
	}
	p.keys("/copy 2", "Enter")
	p.waitFor("this conversation has one answer")

	// auto_reload turned on while otter runs takes effect at once; a
	// config that does not load changes nothing and says so.
	cfg := fakeModelConfig(model.URL) + "\n[mcp]\nauto_reload = true\n"
	if err := os.WriteFile(p.cfgFile, []byte(strings.Replace(cfg, `"fake-model"`, `"fake-model-2"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	p.waitFor("config changed on disk; reloaded", "model fake/fake-model-2")
	if err := os.WriteFile(p.cfgFile, []byte(cfg+"\n[agent\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.waitFor("config changed on disk but not reloaded, nothing changed")
}
