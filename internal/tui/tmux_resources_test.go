package tui

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// TestResourcesInTmux: in the real binary, /mcp resources previews
// server-everything's architecture.md, a attaches it, and the message
// reaches the model with the document's text and a chip in the transcript.
func TestResourcesInTmux(t *testing.T) {
	peers := testpeer.Require(t)
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Got it."}})
	cfg := fakeModelConfig(model.URL) + fmt.Sprintf("\n[[mcp.servers]]\nname = \"everything\"\ncommand = %q\nargs = [%q, \"stdio\"]\nenv = { OTTER_TMUX_TEST = %q }\n",
		peers.Node, peers.Everything, dir)
	p := startTmux(t, dir, cfg, 100, 30)
	p.waitFor("1/1 servers")
	p.keys("/mcp resources", "Enter")
	p.waitFor("Resources", "everything:demo://resource/static/document/architecture.md", "everything:demo://resource/dynamic/text/{resourceId}")
	p.keys("architecture")
	p.waitFor("1 shown")
	p.keys("Enter")
	p.waitFor("demo://resource/static/document/architecture.md · text/markdown", "a attach to the next message")
	p.keys("a")
	p.waitFor("› @everything:demo://resource/static/document/architecture.md")
	p.keys("summarise it", "Enter")
	p.waitFor("⎘ @everything:demo://resource/static/document/architecture.md (text/markdown", "Got it.")
	reqs := model.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[0].Text, "# Everything Server") {
		t.Fatalf("the model did not get the document: %d requests", len(reqs))
	}
	p.keys("C-c")
	p.waitFor("press ctrl+c again to quit")
	p.keys("C-c")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(p.exitFile); err == nil {
			if got := strings.TrimSpace(string(b)); got != "exit=0" {
				t.Errorf("otter ended with %s, want exit=0", got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("otter did not exit; screen:\n%s", p.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
