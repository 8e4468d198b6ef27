package agent

import "github.com/otter-sh/otter/internal/llm"

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
