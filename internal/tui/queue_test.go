//go:build seamwip

package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/agent"
)

// A message typed while the agent works waits in a queue, shown above the
// input, and goes out when the turn ends; ↑ takes it back to edit, Esc
// clears the queue before it cancels the turn.
func TestMessagesTypedWhileWorkingAreQueued(t *testing.T) {
	t.Parallel()
	release := make(chan struct{}, 4)
	b := &fakeHost{}
	b.send = func(ctx context.Context, text string, emit func(agent.Event)) error {
		emit(agent.TextDelta{Text: "answer to " + text})
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		emit(agent.TurnFinished{Text: "answer to " + text})
		return nil
	}
	h := start(t, b)
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
	release <- struct{}{}
	h.waitFor("› second edited", "answer to second edited")
	h.waitGone("queued ›")
	if !b.did("send second edited") || b.did("send second") {
		t.Errorf("the queued message was not sent once, as edited; actions %v", b.actions)
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
	h.waitGone("working")
	if b.did("send third") {
		t.Errorf("a cleared queued message was sent; actions %v", b.actions)
	}
}

// Retries of the model call update one line instead of adding a notice
// each.
func TestRetriesShowOnOneUpdatingLine(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	b := &fakeHost{}
	b.send = func(ctx context.Context, text string, emit func(agent.Event)) error {
		for i := 1; i <= 4; i++ {
			emit(agent.Retrying{Attempt: i, Delay: time.Duration(i) * time.Second, Err: fmt.Errorf("HTTP 503 Service Unavailable")})
		}
		<-release
		emit(agent.TurnFinished{Err: errors.New("the provider is down")})
		return nil
	}
	h := start(t, b)
	h.enterLine("hello")
	s := h.waitFor("retrying in 4.0s (attempt 4)")
	if n := strings.Count(s, "the model call failed"); n != 1 {
		t.Errorf("%d retry notices, want one line:\n%s", n, s)
	}
	close(release)
	h.waitFor("the provider is down")
}

// /clear while otter works cancels the turn and has the core forget the
// conversation only once that turn has ended (the agent refuses to be
// reset mid-turn), not before and not never.
func TestClearWhileWorkingForgetsAfterTheTurn(t *testing.T) {
	t.Parallel()
	b := &fakeHost{}
	ended := make(chan struct{})
	b.send = func(ctx context.Context, text string, emit func(agent.Event)) error {
		emit(agent.TextDelta{Text: "thinking about " + text})
		<-ctx.Done()
		b.record("turn ended")
		close(ended)
		return ctx.Err()
	}
	h := start(t, b)
	h.enterLine("otters")
	h.waitFor("thinking about otters")
	h.enterLine("/clear")
	<-ended
	h.waitFor("conversation cleared")
	b.waitDid("reset")
	b.mu.Lock()
	actions := strings.Join(b.actions, ", ")
	b.mu.Unlock()
	if !strings.Contains(actions, "turn ended, reset") {
		t.Errorf("the conversation was not forgotten after the turn ended: %s", actions)
	}
}

// ctrl+c while otter works stops it all: the answer and what was queued
// (which is not sent next); the "again to quit" warning then expires, so
// a ctrl+c much later stops an answer instead of quitting.
func TestCtrlCStopsTheQueueAndItsWarningExpires(t *testing.T) {
	t.Parallel()
	b := &fakeHost{}
	b.send = func(ctx context.Context, text string, emit func(agent.Event)) error {
		emit(agent.TextDelta{Text: "answering " + text})
		<-ctx.Done()
		return ctx.Err()
	}
	h := start(t, b)
	h.enterLine("first")
	h.waitFor("answering first")
	h.enterLine("second")
	h.waitFor("queued › second")
	h.press("ctrl+c")
	h.waitFor("press ctrl+c again to quit")
	h.waitGone("queued › second")
	time.Sleep(300 * time.Millisecond)
	if b.did("send second") {
		t.Error("ctrl+c stopped the answer but the queued message was sent")
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
	release := make(chan struct{}, 1)
	canceled := make(chan struct{})
	b := &fakeHost{}
	b.compact = func(ctx context.Context, keep string, emit func(agent.Event)) error {
		select {
		case <-release:
			emit(agent.Compacted{Reason: "manual", TokensBefore: 9000, TokensAfter: 3000, Summarized: 4})
			return nil
		case <-ctx.Done():
			close(canceled)
			return ctx.Err()
		}
	}
	h := start(t, b)
	h.enterLine("/compact")
	h.waitFor("compacting the conversation…", "working", "esc cancels")
	h.enterLine("during compact")
	s := h.waitFor("queued › during compact")
	if strings.Contains(s, "still working") || b.did("send during compact") {
		t.Fatalf("the message typed during /compact was not queued:\n%s", s)
	}
	release <- struct{}{}
	h.waitFor("compacted the conversation because you asked", "› during compact")
	if !b.waitDid("send during compact") {
		t.Fatalf("the queued message was not sent after /compact: %v", b.actions)
	}
	h.waitGone("queued ›")

	h.enterLine("/compact again")
	h.waitFor("working")
	h.press("esc")
	recv(t, canceled, "Esc did not cancel /compact's context")
	h.waitFor("canceled")
	h.waitGone("esc cancels")
}

// A message whose @-attachment cannot be read is not sent: the error says
// what failed, and the text comes back into the input to fix and resend.
func TestMessageNotSentComesBackToTheInput(t *testing.T) {
	t.Parallel()
	b := &fakeHost{}
	b.send = func(ctx context.Context, text string, emit func(agent.Event)) error {
		if strings.Contains(text, "{resourceId}") {
			return fmt.Errorf("%w: could not read @everything:demo://resource/dynamic/blob/{resourceId}: resource not found", ErrNotSent)
		}
		emit(agent.TurnFinished{Text: "answered: " + text})
		return nil
	}
	h := start(t, b)
	h.enterLine("@everything:demo://resource/dynamic/blob/{resourceId}  what is this")
	h.waitFor("could not read @everything:demo://resource/dynamic/blob/{resourceId}:", "resource not found", "back in the input")
	// The text is in the input: Enter alone sends it again.
	h.press("enter")
	sent := "send @everything:demo://resource/dynamic/blob/{resourceId}  what is this"
	for deadline := time.Now().Add(20 * time.Second); ; {
		b.mu.Lock()
		n := len(b.actions)
		again := n == 2 && b.actions[1] == sent
		b.mu.Unlock()
		if again {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Enter on the given-back input did not send the same text again: %v", b.actions)
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.waitFor("back in the input")
	// Fixed in the input, it is sent.
	for range len("{resourceId}  what is this") {
		h.press("backspace")
	}
	h.typeText("1 what is this")
	h.press("enter")
	h.waitFor("answered: @everything:demo://resource/dynamic/blob/1 what is this")
}
