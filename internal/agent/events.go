package agent

import (
	"encoding/json"
	"time"

	"github.com/otter-sh/otter/internal/tool"
)

// Event is something that happened while the agent worked on a message.
// Events are delivered to Options.OnEvent in order for one tool call or one
// stream; progress and results of tool calls that run in parallel may
// interleave.
type Event interface{ isEvent() }

// Outside is embedded by the events of a layer above the agent that travel
// on the same stream as the agent's own (internal/app's conversation
// events: waiting for servers, attachments, notices): a front end then
// reads one stream of one type. The agent never emits them.
type Outside struct{}

func (Outside) isEvent() {}

// TextDelta is a piece of the model's answer, as it arrives.
type TextDelta struct{ Text string }

// ToolCallStarted reports a tool call the model made, before the
// permission check; a ToolCallFinished with the same ID always follows.
type ToolCallStarted struct {
	ID   string
	Name string // qualified tool name
	Args json.RawMessage
}

// ToolCallRunning reports that a tool call was allowed and starts to run;
// the Elapsed of its ToolCallFinished counts from here.
type ToolCallRunning struct{ ID string }

// ToolProgress is a progress report of a running tool call.
type ToolProgress struct {
	ID       string
	Progress tool.Progress
}

// ToolCallFinished reports the end of a tool call. Err is set when the call
// could not run or complete: it wraps ErrDenied when permission was
// refused, ErrUnknownTool for a name the tool set does not hold, or the
// context's error when canceled. A tool that ran and failed has
// Result.IsError set instead.
type ToolCallFinished struct {
	ID      string
	Name    string
	Result  *tool.Result
	Err     error
	Elapsed time.Duration
}

// Usage reports the tokens one model call used (see llm.Usage).
type Usage struct {
	InputTokens      int64
	OutputTokens     int64
	CachedTokens     int64
	CacheWriteTokens int64
	ReasoningTokens  int64
}

// ThinkingDelta is a piece of the model's thinking (or reasoning summary),
// as it arrives; Redacted marks thinking the provider sent encrypted, with
// nothing to show.
type ThinkingDelta struct {
	Text     string
	Redacted bool
}

// Retrying reports that a model call failed before anything was streamed
// and is tried again after Delay.
type Retrying struct {
	Attempt int
	Delay   time.Duration
	Err     error
}

// TurnFinished ends the work on one message. Text is the final answer (or
// the partial answer when Canceled or when Err is set). Canceled is set when
// the context was canceled; the partial answer is kept in the conversation,
// marked as interrupted. Err is set when the turn failed (a provider error,
// or ErrMaxTurns).
// TruncatedNote is what front ends say of a Truncated answer.
const TruncatedNote = "The answer stopped at the model's output limit: ask it to continue, or raise [agent] max_tokens."

type TurnFinished struct {
	Text     string
	Canceled bool
	Err      error
	// Truncated: the model stopped at its output limit ([agent] max_tokens
	// or the provider's default), so Text is cut short.
	Truncated bool
}

func (TextDelta) isEvent()        {}
func (ThinkingDelta) isEvent()    {}
func (ToolCallStarted) isEvent()  {}
func (ToolCallRunning) isEvent()  {}
func (ToolProgress) isEvent()     {}
func (ToolCallFinished) isEvent() {}
func (Usage) isEvent()            {}
func (Retrying) isEvent()         {}
func (TurnFinished) isEvent()     {}
func (HookMessage) isEvent()      {}
