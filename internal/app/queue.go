package app

import (
	"errors"
	"slices"
)

// The turn's policies both front ends share: what a failed turn's error
// means once its events told it, and the messages typed while a turn runs.

// ErrReported is matched (errors.Is) by the error of a turn whose failure
// its agent.TurnFinished event already carried: a front end that shows the
// events has shown it, and need not say it again. The error's text is the
// failure's own, so a front end that reports errors (otter -p's exit
// status) reads it as before.
var ErrReported = errors.New("the turn's events reported the failure")

type reportedError struct{ error }

func (e reportedError) Unwrap() error        { return e.error }
func (e reportedError) Is(target error) bool { return target == ErrReported }

// App is the App the conversation runs in: its servers, tools,
// configuration and sessions.
func (c *Conversation) App() *App { return c.app }

// Enqueue keeps a message typed while a turn runs, to send when it ends
// (Dequeue); until then it can be taken back (Unqueue) or the queue
// dropped (ClearQueue).
func (c *Conversation) Enqueue(text string) {
	c.mu.Lock()
	c.queue = append(c.queue, text)
	c.mu.Unlock()
}

// Queued are the messages waiting, oldest first.
func (c *Conversation) Queued() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.queue)
}

// Dequeue takes the oldest waiting message, to send now that the turn is
// over.
func (c *Conversation) Dequeue() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		return "", false
	}
	text := c.queue[0]
	c.queue = c.queue[1:]
	return text, true
}

// Unqueue takes the newest waiting message back, to edit or drop it.
func (c *Conversation) Unqueue() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.queue)
	if n == 0 {
		return "", false
	}
	text := c.queue[n-1]
	c.queue = c.queue[:n-1]
	return text, true
}

// ClearQueue drops every waiting message and says how many there were.
func (c *Conversation) ClearQueue() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.queue)
	c.queue = nil
	return n
}
