package app

import (
	"context"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// The built-in init command is sent as the prompt to write AGENTS.md, with
// the person's words after it; the session keeps it as typed.
func TestInitAsksTheModelToWriteAgentsMD(t *testing.T) {
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"wrote it"}})
	a := convApp(t, model, "")
	ctx := context.Background()
	c, err := a.NewConversation(ctx, ConversationOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, "/"+InitCommand+" mention the Makefile", nil); err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	sent := reqs[0].Messages[len(reqs[0].Messages)-1].Text
	if !strings.HasPrefix(sent, "Look at this project and write AGENTS.md") || !strings.HasSuffix(sent, "The user adds: mention the Makefile") {
		t.Errorf("the model was sent %q", sent)
	}
	if _, entries := c.Resumed(); len(entries) != 0 {
		t.Fatalf("a new conversation came with %d rows", len(entries))
	}
	msgs, err := c.UserMessages(ctx)
	if err != nil || len(msgs) != 1 || msgs[0].Text != "/init mention the Makefile" {
		t.Errorf("saved as %+v (%v), want as typed", msgs, err)
	}
}
