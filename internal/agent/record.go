package agent

import (
	"strings"
	"time"

	"github.com/otter-sh/otter/internal/llm"
)

// Recorder saves the conversation as it grows (internal/session's Recorder
// implements it for the session database). The agent calls it when the
// user's message is sent, when an answer ends (also a cancelled or failed
// one: the partial text, marked Interrupted), as each tool call's result
// arrives (from tool goroutines, possibly at the same time for calls that
// run in parallel) and when a tool is allowed for the session. The calls
// are synchronous and do not take the message's context, so that a
// cancelled answer is still saved; a Recorder reports its own failures.
type Recorder interface {
	RecordMessage(m llm.Message, u llm.Usage)
	RecordToolResult(r llm.ToolResult)
	RecordAllowed(tool string)
}

// A ModelRecorder is a Recorder that also saves which provider and model
// the conversation goes on with, so that resuming it goes on with them.
type ModelRecorder interface {
	SetModel(provider, model string)
}

// A DraftRecorder is a Recorder that also saves an answer while it
// streams, so that what the person saw survives otter being killed
// mid-answer: RecordDraft gets the whole text so far, at most every
// draftEvery or draftBytes of new text; the answer's RecordMessage then
// replaces the draft.
type DraftRecorder interface {
	RecordDraft(text string)
}

// How often a streaming answer is saved: bounded batching, so that a
// long answer costs a few writes a second at most.
const (
	draftEvery = 250 * time.Millisecond
	draftBytes = 4096
)

// draft collects one model call's streamed text for a DraftRecorder.
type draft struct {
	rec   DraftRecorder
	text  strings.Builder
	saved int // len(text) when last saved
	at    time.Time
}

func (a *Agent) newDraft() *draft {
	d := &draft{}
	d.rec, _ = a.currentRecorder().(DraftRecorder)
	return d
}

// add appends streamed text and saves it when the batch is due (the first
// text at once).
func (d *draft) add(s string) {
	if d.rec == nil || s == "" {
		return
	}
	d.text.WriteString(s)
	if d.saved == 0 || d.text.Len()-d.saved >= draftBytes || time.Since(d.at) >= draftEvery {
		d.rec.RecordDraft(d.text.String())
		d.saved, d.at = d.text.Len(), time.Now()
	}
}

// restart forgets the text of a stream the provider retries from the
// beginning; the draft row is rewritten by the next text.
func (d *draft) restart() {
	d.text.Reset()
	d.saved = 0 // the next text is saved at once
}

// SetRecorder replaces the Recorder (a new, resumed or forked session);
// nil saves nothing from now on.
func (a *Agent) SetRecorder(r Recorder) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recorder = r
}

// Load replaces the conversation with history (a resumed session, whose
// tool calls all have results) and the tools allowed for the session with
// allowed. The agent keeps history itself: the caller must not change it
// afterwards. It returns ErrBusy while a message is in progress.
func (a *Agent) Load(history []llm.Message, allowed []string) error {
	if !a.busy.TryLock() {
		return ErrBusy
	}
	defer a.busy.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.history = history
	a.newConversation()
	a.session = make(map[string]bool, len(allowed))
	for _, t := range allowed {
		a.session[t] = true
	}
	return nil
}

// AllowedForSession returns the tools allowed for the session.
func (a *Agent) AllowedForSession() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.session))
	for t := range a.session {
		out = append(out, t)
	}
	return out
}

func (a *Agent) currentRecorder() Recorder {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.recorder
}

// appendRecorded adds a message to the conversation and saves it.
func (a *Agent) appendRecorded(m llm.Message, u llm.Usage) {
	a.appendMessage(m)
	if r := a.currentRecorder(); r != nil {
		r.RecordMessage(m, u)
	}
}

func (a *Agent) recordResult(res llm.ToolResult) {
	if r := a.currentRecorder(); r != nil {
		r.RecordToolResult(res)
	}
}

func (a *Agent) recordAllowed(tool string) {
	if r := a.currentRecorder(); r != nil {
		r.RecordAllowed(tool)
	}
}
