package tui

import (
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/servers"
)

// While the first message waits for servers the TUI says so, and esc sends
// it at once instead of cancelling it.
func TestEscSendsTheFirstMessageWithoutWaiting(t *testing.T) {
	t.Parallel()
	// Two servers that never finish starting: the first message waits for
	// them (app.Conversation's wait) until esc sends it now.
	b := &fakeHost{
		servers: []servers.Status{{Name: "slow", State: servers.StatePending}, {Name: "slower", State: servers.StatePending}},
		replies: []llmtest.Reply{{Text: []string{"sent without them"}}},
	}
	h := start(t, b)
	h.enterLine("hello")
	h.waitFor("waiting for 2 servers to start — esc sends now")
	if b.did("send hello") {
		t.Fatal("the first message went to the model before the servers settled or esc was pressed")
	}
	h.press("esc")
	s := h.waitFor("sent without them")
	h.waitGone("esc sends now")
	if strings.Contains(s, "canceled") {
		t.Errorf("esc cancelled the message instead of sending it:\n%s", s)
	}
	if !b.did("send hello") {
		t.Errorf("the model did not receive the message esc sent; it got %q", b.sent())
	}
}
