package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// /export writes the conversation as Markdown, as `otter sessions export`
// does: the prompt, the answer and the tool call. It never overwrites a
// file: a second /export to the same name is refused and the file is kept.
func TestExportWritesTheConversationAsMarkdown(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Text: []string{"Let me look."}, Calls: []llmtest.Call{{ID: "call_1", Name: "otter_no_such_tool", Args: `{"q":"otters"}`}}},
		llmtest.Reply{Text: []string{"Sea otters hold hands while they sleep."}},
	)
	p := startTmux(t, dir, fakeModelConfig(model.URL), 100, 30)
	p.waitFor("fake/fake-model")
	p.keys("/export", "Enter")
	p.waitFor("nothing of this conversation is saved yet")
	p.keys("tell me about otters", "Enter")
	p.waitFor("while they sleep.")
	p.keys("/export notes.md", "Enter")
	p.waitFor("exported the conversation as Markdown to")
	file := filepath.Join(p.work, "notes.md")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## You\n\ntell me about otters", "## otter\n\nLet me look.", "**Tool call** `otter_no_such_tool`", `{"q":"otters"}`, "Sea otters hold hands while they sleep."} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the export lacks %q:\n%s", want, data)
		}
	}
	if err := os.WriteFile(file, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.keys("/export notes.md", "Enter")
	p.waitFor("not exporting to", "name another file")
	if data, _ := os.ReadFile(file); string(data) != "mine" {
		t.Errorf("the person's file was overwritten: %q", data)
	}
	p.quit()
}
