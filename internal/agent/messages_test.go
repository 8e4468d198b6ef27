package agent_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/tool"
)

// A prompt's messages reach the model in order with their roles and
// images; a tool otter cannot call is never offered.
func TestSendMessagesAndUnsupportedTools(t *testing.T) {
	t.Parallel()
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		t.Parallel()
		task := unsupported{lookupWord()}
		h := newHarness(t, kind, setup{builtins: []tool.Tool{lookupWord(), task}}, llmtest.Reply{Text: []string{"done"}})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		png := []byte("\x89PNG\r\n\x1a\n")
		err := h.agent.SendMessages(ctx,
			llm.Message{Role: llm.RoleUser, Text: "look at this", Images: []llm.Image{{MIMEType: "image/png", Data: png}}},
			llm.Message{Role: llm.RoleAssistant, Text: "I see a picture."},
			llm.Message{Role: llm.RoleUser, Text: "describe it"})
		if err != nil {
			t.Fatal(err)
		}
		req := h.srv.Requests()[0]
		var roles []string
		for _, m := range req.Messages {
			roles = append(roles, m.Role)
		}
		if !slices.Equal(roles, []string{"user", "assistant", "user"}) || req.Messages[0].Images != 1 || req.Messages[2].Text != "describe it" {
			t.Errorf("messages = %+v", req.Messages)
		}
		if slices.Contains(req.Tools, "research") || !slices.Contains(req.Tools, "lookup_word") {
			t.Errorf("tools offered = %v", req.Tools)
		}
	})
}

// unsupported is a tool otter lists but cannot call.
type unsupported struct{ *fakeTool }

func (u unsupported) Info() tool.Info {
	info := u.fakeTool.Info()
	info.Name, info.Unsupported = "research", "needs MCP tasks (not supported yet)"
	return info
}
