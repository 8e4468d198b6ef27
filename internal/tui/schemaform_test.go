package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/tool"
)

// answerSchema is asked as a form and serves as a tool's input schema.
const answerSchema = `{"type":"object","properties":{
	"count":{"type":"integer","minimum":1,"maximum":100},
	"code":{"type":"string","pattern":"^[A-Z]{3}$"}},"required":["count","code"]}`

type schemaTool struct{}

func (schemaTool) Info() tool.Info {
	return tool.Info{Name: "order", InputSchema: json.RawMessage(answerSchema)}
}

func (schemaTool) Call(context.Context, json.RawMessage) (*tool.Result, error) {
	return &tool.Result{}, nil
}

// The same bad answer gets the same message from the TUI's form, the
// headless prompt and the validation of a tool call's arguments: all three
// read and check it with internal/schema.
func TestSameBadAnswerSameMessageEverywhere(t *testing.T) {
	const want = "count: must be at least 1, got 0"

	s := tool.NewSet(tool.Options{})
	s.SetBuiltins([]tool.Tool{schemaTool{}})
	err := s.CheckArguments("order", json.RawMessage(`{"count":0,"code":"ABC"}`))
	if err == nil || !strings.HasSuffix(err.Error(), ": "+want) {
		t.Errorf("tool arguments: err = %v, want it to end %q", err, want)
	}

	var out strings.Builder
	r, err := cli.NewPolicyAsker(cli.ElicitAsk, strings.NewReader("a\n0\n7\nABC\n"), &out, nil).
		Elicit(t.Context(), ask.Elicitation{Server: "shop", Message: "Order?", Mode: "form", Schema: json.RawMessage(answerSchema)})
	if err != nil || r.Action != ask.Accept {
		t.Fatalf("headless prompt: %+v, %v", r, err)
	}
	if !strings.Contains(out.String(), "  "+want+"\n") {
		t.Errorf("headless prompt: want %q after the answer 0:\n%s", want, out.String())
	}

	h := start(t, &fakeHost{})
	h.waitFor("/help")
	done := make(chan ask.ElicitReply, 1)
	go func() {
		r, _ := h.ui.Elicit(context.Background(), ask.Elicitation{Server: "shop", Message: "Order?", Mode: "form", Schema: json.RawMessage(answerSchema)})
		done <- r
	}()
	h.waitFor("shop asks for input", "count *")
	h.typeText("0")
	h.press("enter")
	h.waitFor(want)
	h.press("ctrl+d")
	recv(t, done, "reply after ctrl+d")
}
