package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/compact"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/record"
	"github.com/otter-sh/otter/internal/tool"
)

// sessionviewSeed saves a conversation of msgs (user, assistant, … in
// turn; a message is given whole) in b's session store, in b's working
// directory, and returns it.
func sessionviewSeed(t *testing.T, b *fakeHost, title string, msgs ...llm.Message) record.Info {
	t.Helper()
	ctx := context.Background()
	store, err := b.app.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	info, err := store.Create(ctx, record.Info{Cwd: b.app.WorkDir, Title: title, FirstPrompt: msgs[0].Text,
		Provider: b.provider.Name, Model: b.provider.Model})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if _, err := store.Append(ctx, info.ID, m, llm.Usage{}); err != nil {
			t.Fatal(err)
		}
	}
	info, err = store.Get(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// sessionviewShare is the share of the window the conversation on screen
// takes now, as the status bar writes it.
func sessionviewShare(b *fakeHost) string {
	st := b.conv.Context()
	return fmt.Sprintf("%d%% of %s", int(st.Share()*100+0.5), app.TokenCount(int64(st.Window)))
}

// The status bar's share of the window is the conversation's on screen:
// /new empties it, /resume and /fork show theirs, at once, without
// waiting for the next message.
func TestContextMeterFollowsTheConversation(t *testing.T) {
	t.Parallel()
	// The model reports 14k tokens for the first message: 7% of the
	// window.
	b := &fakeHost{providerConfig: "context_window = 200000\n",
		replies: []llmtest.Reply{{Text: []string{"hi"}, InputTokens: 13_000, OutputTokens: 1_000}}}
	h := start(t, b)
	// A saved conversation that takes 40k tokens with the system prompt
	// and the tools (what an empty one takes now): 20% of the window.
	fixed := b.conv.Context().Used
	long := llm.Message{Role: llm.RoleUser, Text: strings.Repeat("otters hold hands while they sleep. ", (40_000-fixed-40)*compact.BytesPerToken/36)}
	saved := sessionviewSeed(t, b, "otters", long, llm.Message{Role: llm.RoleAssistant, Text: "noted"})

	h.enterLine("hello")
	h.waitFor("7% of 200k")
	// A fork is a copy; it takes what its messages take, by the core's
	// count of them, not the 14k the model reported for the original.
	h.enterLine("/fork")
	h.waitFor("forked: you now continue")
	forked := sessionviewShare(b)
	if forked == "7% of 200k" {
		// A core that kept the model's count across a fork would make
		// the copy's share the original's; then this test no longer tells
		// whether /fork refreshes the meter, and must make them differ.
		t.Fatalf("the fork's share is the original's (%s): the check below would not tell whether /fork refreshed the meter", forked)
	}
	h.waitFor(forked)
	h.enterLine("/resume " + saved.ID[:8])
	h.waitFor("Continuing session "+saved.ID[:8], "20% of 200k")
	h.enterLine("/new")
	h.waitFor("a new conversation")
	// Empty, the conversation takes the system prompt and the tools only.
	if n := len(b.conv.Messages()); n != 0 {
		t.Fatalf("/new left %d messages", n)
	}
	empty := sessionviewShare(b)
	if empty == "20% of 200k" {
		t.Fatalf("the empty conversation's share is the resumed one's: the check below would not tell")
	}
	h.waitFor(empty)
}

// A resumed tool call shows the time it ran, as the live view did, not
// the time since the model asked for it (which includes the wait at the
// permission panel).
func TestResumedToolCallShowsTheTimeItRan(t *testing.T) {
	t.Parallel()
	b := &fakeHost{}
	h := start(t, b)
	// The call ran 4.1s; its rows are saved a moment apart.
	saved := sessionviewSeed(t, b, "notes",
		llm.Message{Role: llm.RoleUser, Text: "write a note"},
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "write_note", Args: json.RawMessage(`{}`)}}},
		llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "c1", Name: "write_note", Text: "note written", Elapsed: 4100 * time.Millisecond}}})
	h.enterLine("/resume " + saved.ID[:8])
	s := h.waitFor("Continuing session "+saved.ID[:8], "write_note", "✓ 4.1s")
	if regexp.MustCompile(`✓ \d+ms`).MatchString(s) {
		t.Errorf("the resumed call counts the time between its saved rows:\n%s", s)
	}
}

// The live timer of a tool call runs from the moment it was allowed, as
// the finished and the resumed views count: the wait at the permission
// panel before is not the tool's time.
func TestLiveToolTimerStartsWhenAllowed(t *testing.T) {
	t.Parallel()
	// Built outside the bubble: the App's model server and session
	// database wait on the network and on files, which would keep the
	// bubble's clock from moving; the model's clock is read inside it.
	m := newTestModel(t, &fakeHost{}, Options{})
	synctest.Test(t, func(t *testing.T) {
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		m.chatEvent(agent.ToolCallStarted{ID: "c1", Name: "write_note", Args: json.RawMessage(`{}`)})
		time.Sleep(5 * time.Second) // the person reads the permission panel
		m.chatEvent(agent.ToolCallRunning{ID: "c1"})
		time.Sleep(2 * time.Second)
		if s := ansi.Strip(m.render()); !strings.Contains(s, "running 2.0s") {
			t.Errorf("the live timer, 2s after the call was allowed:\n%s", s)
		}
		m.chatEvent(agent.ToolCallFinished{ID: "c1", Name: "write_note", Result: tool.TextResult("note written"), Elapsed: 2 * time.Second})
		if s := ansi.Strip(m.render()); !strings.Contains(s, "✓ 2.0s") {
			t.Errorf("the finished call:\n%s", s)
		}
		m.stop()
	})
}
