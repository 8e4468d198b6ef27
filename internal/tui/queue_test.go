package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/servers"
)

// queueEcho has b's model answer each message with prefix and the
// message's first line, holding the answer open after its text until the
// channel hold gives for that line is closed (or the turn is canceled).
// Call it after start, before the first message.
func queueEcho(b *fakeHost, prefix string, hold func(line string) <-chan struct{}) {
	b.model.Respond = func(r llmtest.Request) llmtest.Reply {
		line := ""
		for i := len(r.Messages) - 1; i >= 0; i-- {
			if r.Messages[i].Role == "user" {
				line, _, _ = strings.Cut(r.Messages[i].Text, "\n")
				break
			}
		}
		return llmtest.Reply{Text: []string{prefix + line}, Hold: hold(line)}
	}
}

// queueHeld is a hold that lasts until the test ends: a turn that stays
// busy until Esc, ctrl+c or /clear cancels it. (Closed before the App and
// the model server close, so that a turn still running lets them.)
func queueHeld(t *testing.T) <-chan struct{} {
	ch := make(chan struct{})
	t.Cleanup(func() { close(ch) })
	return ch
}

// queueWaitWords waits until the screen shows words, wherever its lines
// wrap them.
func queueWaitWords(h *harness, words string) string {
	h.t.Helper()
	var s string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); h.nextChange() {
		if s = h.screen(); strings.Contains(strings.Join(strings.Fields(s), " "), words) {
			return s
		}
	}
	h.t.Fatalf("the screen never showed %q; last screen:\n%s", words, s)
	return ""
}

// A message typed while the agent works waits in a queue, shown above the
// input, and goes out when the turn ends; ↑ takes it back to edit, Esc
// clears the queue before it cancels the turn.
func TestMessagesTypedWhileWorkingAreQueued(t *testing.T) {
	t.Parallel()
	b := &fakeHost{}
	h := start(t, b)
	release, held := make(chan struct{}), queueHeld(t)
	queueEcho(b, "answer to ", func(line string) <-chan struct{} {
		if line == "first" {
			return release
		}
		return held
	})
	h.enterLine("first")
	h.waitFor("answer to first")
	h.enterLine("second")
	s := h.waitFor("queued › second", "esc clears the queue")
	if strings.Contains(s, "still working") {
		t.Errorf("the queued message is refused:\n%s", s)
	}
	// ↑ takes it back into the input; edited, it is queued again.
	h.press("up")
	h.waitGone("queued › second")
	h.typeText(" edited")
	h.press("enter")
	h.waitFor("queued › second edited")
	close(release)
	h.waitFor("› second edited", "answer to second edited")
	h.waitGone("queued ›")
	if !b.did("send second edited") || b.did("send second") {
		t.Errorf("the queued message was not sent once, as edited; the model got %q", b.sent())
	}

	// Esc: first the queue goes, then the turn is canceled.
	h.enterLine("third")
	h.waitFor("queued › third")
	h.press("esc")
	h.waitFor("queue cleared")
	h.waitGone("queued › third")
	h.waitFor("working")
	h.press("esc")
	h.waitFor("canceled")
	s = h.waitGone("working")
	// Once the turn is over a queued message would be on its way (shown
	// as sent at once): the cleared one is not.
	if strings.Contains(s, "› third") || b.did("send third") {
		t.Errorf("a cleared queued message was sent; the model got %q:\n%s", b.sent(), s)
	}
}

// Retries of the model call update one line instead of adding a notice
// each.
func TestRetriesShowOnOneUpdatingLine(t *testing.T) {
	t.Parallel()
	// The provider answers 503 five times: the SDK retries four times,
	// each announced (agent.Retrying), waiting what retry-after-ms says;
	// then the turn fails.
	retry := func(ms string) llmtest.Reply {
		return llmtest.Reply{Status: 503, Message: "Service Unavailable", Header: map[string]string{"retry-after-ms": ms}}
	}
	b := &fakeHost{replies: []llmtest.Reply{retry("1"), retry("1"), retry("1"), retry("4000"),
		{Status: 503, Message: "the provider is down"}}}
	h := start(t, b)
	h.enterLine("hello")
	s := h.waitFor("retrying in 4.0s (attempt 4)")
	if n := strings.Count(s, "the model call failed"); n != 1 {
		t.Errorf("%d retry notices, want one line:\n%s", n, s)
	}
	s = queueWaitWords(h, "the provider is down") // the error's last line: its text wraps
	if n := strings.Count(s, "the model call failed"); n != 1 {
		t.Errorf("after the failure, %d retry notices, want one line:\n%s", n, s)
	}
	if n := len(b.model.Requests()); n != 5 {
		t.Errorf("the model was asked %d times, want 5 (the first call and four retries)", n)
	}
}

// /clear while otter works cancels the turn and has the core forget the
// conversation only once that turn has ended (forgotten mid-turn, the
// ending turn would put the answer it cut back into the conversation), not
// before and not never.
func TestClearWhileWorkingForgetsAfterTheTurn(t *testing.T) {
	t.Parallel()
	b := &fakeHost{}
	h := start(t, b)
	held := queueHeld(t)
	queueEcho(b, "thinking about ", func(string) <-chan struct{} { return held })
	h.enterLine("otters")
	h.waitFor("thinking about otters")
	h.enterLine("/clear")
	h.waitFor("conversation cleared")
	h.waitGone("working") // the canceled turn ended
	// Not never: the core forgets the conversation once the turn is over.
	for deadline := time.Now().Add(20 * time.Second); len(b.conv.Messages()) > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("the conversation was not forgotten after the turn ended: %+v", b.conv.Messages())
		}
		h.nextChange()
	}
	// Not before: forgotten mid-turn, the canceled turn's message and the
	// answer it cut would be what the next message continues.
	queueEcho(b, "answer to ", func(string) <-chan struct{} { return nil })
	h.enterLine("again")
	h.waitFor("answer to again")
	reqs := b.model.Requests()
	last := reqs[len(reqs)-1]
	if len(last.Messages) != 1 || last.Messages[0].Text != "again" {
		t.Errorf("the message after /clear went with more than itself: %+v", last.Messages)
	}
	if s := h.screen(); strings.Contains(s, "cleared here, but") {
		t.Errorf("forgetting the conversation failed:\n%s", s)
	}
}

// ctrl+c while otter works stops it all: the answer and what was queued
// (which is not sent next); the "again to quit" warning then expires, so
// a ctrl+c much later stops an answer instead of quitting.
func TestCtrlCStopsTheQueueAndItsWarningExpires(t *testing.T) {
	t.Parallel()
	b := &fakeHost{}
	h := start(t, b)
	held := queueHeld(t)
	queueEcho(b, "answering ", func(string) <-chan struct{} { return held })
	h.enterLine("first")
	h.waitFor("answering first")
	h.enterLine("second")
	h.waitFor("queued › second")
	h.press("ctrl+c")
	h.waitFor("press ctrl+c again to quit")
	h.waitGone("queued › second")
	// Once the stopped turn is over a queued message would be on its way
	// (shown as sent at once): it is not.
	if s := h.waitGone("working"); strings.Contains(s, "› second") || b.did("send second") {
		t.Errorf("ctrl+c stopped the answer but the queued message was sent; the model got %q:\n%s", b.sent(), s)
	}
	h.waitGone("press ctrl+c again to quit") // after ctrlCWindow
	h.enterLine("third")
	h.waitFor("answering third")
	h.press("ctrl+c") // stops the answer; does not quit
	h.waitFor("press ctrl+c again to quit")
	h.enterLine("fourth")
	h.waitFor("answering fourth")
}

// /compact is a turn like a message: the status bar says otter works, a
// message typed meanwhile is queued and sent once the compaction is done,
// and Esc cancels the compaction itself.
func TestCompactIsATurnThatQueuesAndCancels(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	// A first message long enough that a summary of it is shorter; the
	// summary (the model call /compact makes) waits for release; the
	// second /compact's summary waits until Esc.
	long := strings.Repeat("otters hold hands while they sleep ", 8)
	b := &fakeHost{replies: []llmtest.Reply{
		{Text: []string{"noted"}},
		{Text: []string{"Otters", " sleep holding hands."}, Hold: release},
	}}
	h := start(t, b)
	held := queueHeld(t)
	h.enterLine(long)
	h.waitFor("noted")
	h.enterLine("/compact")
	h.waitFor("compacting the conversation…", "working", "esc cancels")
	h.enterLine("during compact")
	s := h.waitFor("queued › during compact")
	if strings.Contains(s, "still working") || b.did("send during compact") {
		t.Fatalf("the message typed during /compact was not queued:\n%s", s)
	}
	close(release)
	h.waitFor("compacted the conversation because you asked", "› during compact")
	if !b.waitDid("send during compact") {
		t.Fatalf("the queued message was not sent after /compact; the model got %q", b.sent())
	}
	h.waitGone("queued ›")
	h.waitGone("working") // its answer ("ok") is in
	before := len(b.conv.Messages())

	asked := len(b.model.Requests())
	b.model.Push(llmtest.Reply{Text: []string{"A summary"}, Hold: held})
	h.enterLine("/compact again")
	h.waitFor("working")
	for deadline := time.Now().Add(20 * time.Second); len(b.model.Requests()) == asked; { // the summary is being written
		if time.Now().After(deadline) {
			t.Fatal("the second /compact asked the model for no summary")
		}
		h.nextChange()
	}
	h.press("esc")
	s = h.waitFor("canceled")
	h.waitGone("esc cancels")
	if n := strings.Count(s, "compacted the conversation"); n != 1 || len(b.conv.Messages()) != before {
		t.Errorf("Esc did not cancel /compact: %d compaction notices, %d messages (was %d):\n%s", n, len(b.conv.Messages()), before, s)
	}
}

// A message whose @-attachment cannot be read is not sent: the error says
// what failed, and the text comes back into the input to fix and resend.
func TestMessageNotSentComesBackToTheInput(t *testing.T) {
	t.Parallel()
	b := &fakeHost{
		servers: []servers.Status{{Name: "everything", State: servers.StateConnected}},
		read: func(_ context.Context, _, uri string) (*sdk.ReadResourceResult, error) {
			if strings.Contains(uri, "{resourceId}") {
				return nil, errors.New("resource not found")
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "blob 1"}}}, nil
		},
	}
	h := start(t, b)
	queueEcho(b, "answered: ", func(string) <-chan struct{} { return nil })
	h.enterLine("@everything:demo://resource/dynamic/blob/{resourceId}  what is this")
	h.waitFor("could not read @everything:demo://resource/dynamic/blob/{resourceId}:", "resource not found", "back in the input")
	// The text is in the input: Enter alone sends it again — the core
	// tries the same mention again, and again nothing reaches the model.
	h.press("enter")
	tried := "read everything demo://resource/dynamic/blob/{resourceId}"
	for deadline := time.Now().Add(20 * time.Second); ; {
		b.mu.Lock()
		n := 0
		for _, a := range b.actions {
			if a == tried {
				n++
			}
		}
		actions := strings.Join(b.actions, ", ")
		b.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Enter on the given-back input did not send the same text again: %s", actions)
		}
		h.nextChange()
	}
	h.waitFor("back in the input")
	if n := len(b.model.Requests()); n != 0 {
		t.Errorf("a message whose attachment could not be read reached the model (%d requests)", n)
	}
	// Fixed in the input, it is sent.
	for range len("{resourceId}  what is this") {
		h.press("backspace")
	}
	h.typeText("1 what is this")
	h.press("enter")
	h.waitFor("answered: @everything:demo://resource/dynamic/blob/1 what is this")
	if sent := b.sent(); len(sent) != 1 || !strings.Contains(sent[0], "blob 1") {
		t.Errorf("the fixed message did not go with its attachment: %q", sent)
	}
}
