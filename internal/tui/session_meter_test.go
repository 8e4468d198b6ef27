package tui

import (
	"context"
	"testing"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/session"
)

// sessionFake saves conversations: each has its own use of the window,
// which the core reports once the TUI switches to it.
type sessionFake struct{ *fakeBackend }

func (f sessionFake) setUsed(used int) {
	f.mu.Lock()
	f.ctxState = agent.ContextState{Window: 200_000, WindowKnown: true, Used: used}
	f.mu.Unlock()
}

func (f sessionFake) NewSession(context.Context) error {
	f.record("new")
	f.setUsed(0)
	return nil
}

func (f sessionFake) ForkSession(context.Context) (session.Info, error) {
	f.setUsed(40_000)
	return session.Info{ID: "bbbbbbbbbb", ParentID: "aaaaaaaaaa"}, nil
}

func (f sessionFake) RenameSession(context.Context, string) error { return nil }

func (f sessionFake) FindSessions(context.Context, string) ([]session.Info, error) { return nil, nil }

func (f sessionFake) ResumeSession(_ context.Context, id string) (session.Info, []session.Entry, error) {
	f.setUsed(100_000)
	return session.Info{ID: id + "cccccccc", Title: "otters", Messages: 8}, nil, nil
}

func (f sessionFake) SessionDir() string { return "" }

// The status bar's share of the window is the conversation's on screen:
// /new empties it, /resume and /fork show theirs, at once, without
// waiting for the next message.
func TestContextMeterFollowsTheConversation(t *testing.T) {
	t.Parallel()
	b := sessionFake{&fakeBackend{}}
	b.send = func(ctx context.Context, text string, emit func(agent.Event)) error {
		b.setUsed(14_000)
		emit(agent.TurnFinished{Text: "ok"})
		return nil
	}
	h := startWith(t, b, b.fakeBackend)
	h.enterLine("hello")
	h.waitFor("7% of 200.0k")
	h.enterLine("/new")
	h.waitFor("a new conversation")
	h.waitFor("0% of 200.0k")
	h.enterLine("/resume 12345678")
	h.waitFor("Continuing session 12345678", "50% of 200.0k")
	h.enterLine("/fork")
	h.waitFor("forked: you now continue", "20% of 200.0k")
}
