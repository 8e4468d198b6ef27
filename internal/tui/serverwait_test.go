//go:build seamwip

package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/agent"
)

// waiterFake's first message waits for servers until SendNow.
type waiterFake struct {
	*fakeHost
	now chan struct{}
}

func (f waiterFake) SendNow() bool { close(f.now); return true }

// While the first message waits for servers the TUI says so, and esc sends
// it at once instead of cancelling it.
func TestEscSendsTheFirstMessageWithoutWaiting(t *testing.T) {
	t.Parallel()
	b := waiterFake{&fakeHost{}, make(chan struct{})}
	b.send = func(ctx context.Context, text string, emit func(agent.Event)) error {
		emit(agent.WaitingForServers{Servers: []agent.PendingServer{{Name: "slow"}, {Name: "slower"}}})
		select {
		case <-b.now:
		case <-ctx.Done():
			return ctx.Err()
		}
		emit(agent.ServersReady{})
		emit(agent.TurnFinished{Text: "sent without them"})
		return nil
	}
	h := startWith(t, b, b.fakeHost)
	h.enterLine("hello")
	h.waitFor("waiting for 2 servers to start — esc sends now")
	h.press("esc")
	s := h.waitFor("sent without them")
	h.waitGone("esc sends now")
	if strings.Contains(s, "canceled") {
		t.Errorf("esc cancelled the message instead of sending it:\n%s", s)
	}
}
