// Package llm is otter's provider-neutral view of a language model: a small
// model of a conversation (messages with text, images, tool calls and tool
// results, and a system prompt) and a streaming Provider interface, with
// implementations for the OpenAI Chat Completions API (and the many servers
// that speak it: Ollama, llama.cpp, vLLM, OpenRouter), the OpenAI Responses
// API and the Anthropic Messages API, all through their official SDKs.
package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Role is the author of a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries the results of the tool calls of the assistant
	// message before it.
	RoleTool Role = "tool"
)

// Image is an image sent to a model.
type Image struct {
	MIMEType string // e.g. "image/png"
	Data     []byte // raw bytes, not base64
}

// ToolCall is a model's request to call a tool.
type ToolCall struct {
	ID   string
	Name string // the qualified tool name offered to the model
	Args json.RawMessage
	// ItemID is the provider's own id of the call, when it has one apart
	// from ID: the Responses API's function_call item id (fc_…), by which
	// it pairs the call with the reasoning that led to it.
	ItemID string
}

// ToolResult answers one ToolCall.
type ToolResult struct {
	CallID  string
	Name    string
	Text    string  // the whole result as text, images described
	Images  []Image // also passed as images to providers that accept them
	IsError bool
	// Elapsed is how long the tool ran, from the moment it was allowed
	// (0: not known). Sessions record it; providers do not send it.
	Elapsed time.Duration
	// Denied marks the error result of a call that was never run: a
	// permission, a [permissions] rule or a PreToolUse hook refused it.
	// Sessions record it, so that a resumed conversation shows the call
	// as denied; providers do not send it.
	Denied bool
}

// Message is one message of a conversation.
type Message struct {
	Role   Role
	Text   string
	Images []Image // user messages only

	ToolCalls   []ToolCall   // assistant messages
	ToolResults []ToolResult // RoleTool messages

	// Interrupted marks an assistant message whose generation was cut short
	// (canceled by the person, or the stream failed); providers tell the
	// model so when the conversation continues.
	Interrupted bool

	// Reasoning is what the model thought before answering (assistant
	// messages), kept as the provider sent it: Anthropic refuses a tool-use
	// turn whose thinking blocks are not sent back with their signatures,
	// and OpenAI's reasoning models continue from their encrypted items.
	Reasoning []Reasoning
	// Abandoned marks an interrupted answer that nobody stopped: otter
	// exited (killed, crashed) while it streamed, and the text is what had
	// been saved of it by then.
	Abandoned bool
}

// Reasoning is one piece of a model's reasoning: an Anthropic thinking or
// redacted_thinking block, or an OpenAI Responses reasoning item.
type Reasoning struct {
	// Text is the thinking (Anthropic) or the reasoning summary (OpenAI),
	// what a person is shown; empty for redacted thinking.
	Text string
	// Signature proves an Anthropic thinking block unaltered; Redacted is
	// a redacted_thinking block's opaque data.
	Signature string
	Redacted  string
	// ID and Encrypted are an OpenAI reasoning item's id and
	// encrypted_content (requested because otter asks the API to store
	// nothing).
	ID        string
	Encrypted string
}

// Thinking says how much a model reasons before it answers.
type Thinking struct {
	// Effort is "low", "medium" or "high"; "" or "off" asks for none (a
	// model that always reasons still does).
	Effort string
	// Budget is the most tokens an Anthropic model thinks (≥ 1024); 0 = by
	// Effort.
	Budget int
}

// On reports whether t asks for reasoning.
func (t Thinking) On() bool { return t.Budget > 0 || t.Effort != "" && t.Effort != "off" }

// Thinking effort levels.
const (
	ThinkingOff    = "off"
	ThinkingLow    = "low"
	ThinkingMedium = "medium"
	ThinkingHigh   = "high"
)

// ParseThinking reads a thinking setting: off, low, medium, high, or a
// token budget (Anthropic, ≥ 1024).
func ParseThinking(s string) (Thinking, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "", ThinkingOff, "none":
		return Thinking{}, nil
	case ThinkingLow, ThinkingMedium, ThinkingHigh:
		return Thinking{Effort: s}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < MinThinkingBudget {
		return Thinking{}, fmt.Errorf("thinking = %q: use off, low, medium, high or a token budget of at least %d", s, MinThinkingBudget)
	}
	return Thinking{Effort: ThinkingHigh, Budget: n}, nil
}

// String is t as the configuration writes it.
func (t Thinking) String() string {
	switch {
	case t.Budget > 0:
		return strconv.Itoa(t.Budget)
	case t.On():
		return t.Effort
	}
	return ThinkingOff
}

// MinThinkingBudget is the least budget_tokens the Messages API accepts.
const MinThinkingBudget = 1024

// BudgetTokens is the Anthropic thinking budget of t: Budget, else one by
// effort (low 2,048, medium 8,192, high 24,576 tokens).
func (t Thinking) BudgetTokens() int {
	if t.Budget > 0 {
		return max(t.Budget, MinThinkingBudget)
	}
	switch t.Effort {
	case ThinkingLow:
		return 2048
	case ThinkingMedium:
		return 8192
	case ThinkingHigh:
		return 24576
	}
	return 0
}

// ToolSpec is a tool offered to a model.
type ToolSpec struct {
	Name        string
	Description string
	InputSchema json.RawMessage // a JSON Schema object
}

// Request is one call to a model.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int // 0: the provider's default
	// Temperature is used when HasTemperature is set.
	Temperature    float64
	HasTemperature bool
	StopSequences  []string
	// Thinking asks the model to reason first (Anthropic extended
	// thinking, OpenAI reasoning effort).
	Thinking Thinking
}

// StopReason says why a model stopped.
type StopReason string

const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopOther     StopReason = "other"
)

// Usage counts the tokens of one call. InputTokens is the whole prompt,
// the parts read from or written to the provider's prompt cache included
// (OpenAI counts them so; Anthropic's separate counts are added up).
type Usage struct {
	InputTokens  int64
	OutputTokens int64
	// CachedTokens of the input were read from the provider's prompt
	// cache; CacheWriteTokens were written to it (Anthropic).
	CachedTokens     int64
	CacheWriteTokens int64
	// ReasoningTokens of OutputTokens were spent reasoning (OpenAI
	// reports them; Anthropic counts thinking in output_tokens, estimated
	// here from the thinking text).
	ReasoningTokens int64
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens,
		CachedTokens: u.CachedTokens + v.CachedTokens, CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		ReasoningTokens: u.ReasoningTokens + v.ReasoningTokens}
}

// Response is the assembled result of one streamed call.
type Response struct {
	Text       string
	Reasoning  []Reasoning
	ToolCalls  []ToolCall
	StopReason StopReason
	Usage      Usage
}

// Event is something a provider streams while a response is generated.
type Event interface{ isEvent() }

// TextDelta is a piece of the answer's text, as it arrives.
type TextDelta struct{ Text string }

// ReasoningDelta is a piece of the model's thinking (or reasoning
// summary), as it arrives; Redacted is set for a redacted_thinking block,
// which has no text to show.
type ReasoningDelta struct {
	Text     string
	Redacted bool
}

// ToolCallDelta reports that the model started a tool call (Name is set
// once, when known).
type ToolCallDelta struct {
	Index int
	ID    string
	Name  string
}

// Retrying reports that a call failed before anything was streamed and is
// being tried again after Delay.
type Retrying struct {
	Attempt int
	Delay   time.Duration
	Err     error
}

func (TextDelta) isEvent()      {}
func (ReasoningDelta) isEvent() {}
func (ToolCallDelta) isEvent()  {}
func (Retrying) isEvent()       {}

// A Provider streams responses from a model.
//
// Stream calls emit (from the calling goroutine) for each event as it
// arrives and returns the assembled response. On failure it returns the
// partial response received so far (never nil) along with the error; the
// error is an *Error for failures reported by the API, ErrStreamCut when the
// stream ended early, or the context's error when ctx was canceled.
type Provider interface {
	// Name is the provider's configured name ("anthropic", "local", ...).
	Name() string
	Stream(ctx context.Context, req Request, emit func(Event)) (*Response, error)
}

// Options configure a provider's client.
type Options struct {
	Name    string // the configured provider name, for messages; "" = the type
	BaseURL string // "" = the official API
	APIKey  string
	Headers map[string]string
	// HTTPClient is used instead of the SDK's default when set.
	HTTPClient *http.Client
	// MaxRetries overrides the SDK's retry budget for 408, 409, 429, 5xx
	// and connection errors when > 0.
	MaxRetries int
}

// resolve applies the defaults: the name, the base URL and the retries.
func (o Options) resolve(defName, defBase string) (name, base string, retries int) {
	name, base, retries = o.Name, o.BaseURL, o.MaxRetries
	if name == "" {
		name = defName
	}
	if base == "" {
		base = defBase
	}
	if retries <= 0 {
		retries = sdkRetries
	}
	return name, base, retries
}

// ErrNoProvider is wrapped by the error FromConfig returns when no provider
// is configured; its message explains how to configure one.
var ErrNoProvider = errors.New("no model provider configured")

// ErrStreamCut is wrapped when a response stream ended before the model
// finished.
var ErrStreamCut = errors.New("the response stream ended before the model finished")

// Error is a failure reported by a provider's API, rewritten for a person.
type Error struct {
	Provider   string // configured provider name
	StatusCode int    // 0 for an error sent inside a response stream
	// Type is the API's error type ("overloaded_error", "server_error")
	// of an error sent inside a response stream.
	Type     string
	Code     string // the API's error code, if any ("context_length_exceeded")
	Message  string // the API's own message, if any
	Attempts int    // how many times the request was sent, when retried
	Err      error  // the SDK's error
}

func (e *Error) Error() string {
	var what string
	switch {
	case e.StatusCode == 0 && strings.Contains(e.Type, "overloaded"):
		what = fmt.Sprintf("the provider is overloaded (%s)", e.Type)
	case e.StatusCode == 0 && strings.Contains(e.Type, "rate_limit"):
		what = fmt.Sprintf("rate limited (%s)", e.Type)
	case e.StatusCode == 0:
		what = fmt.Sprintf("the provider reported an error in the middle of its response (%s)", cmp.Or(e.Type, "no type given"))
	case e.StatusCode == 401 || e.StatusCode == 403:
		what = fmt.Sprintf("authentication failed (HTTP %d): check the api_key of [providers.%s] or the API key environment variable", e.StatusCode, e.Provider)
	case e.StatusCode == 429:
		what = "rate limited (HTTP 429) even after retrying; wait a moment and send the message again"
	case e.StatusCode == 404:
		what = "not found (HTTP 404): check the model name and the base_url of [providers." + e.Provider + "]"
	case e.StatusCode >= 500:
		what = fmt.Sprintf("the provider's server failed (HTTP %d) even after retrying; try again later", e.StatusCode)
	default:
		what = fmt.Sprintf("request failed (HTTP %d)", e.StatusCode)
	}
	msg := e.Provider + ": " + what
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.StatusCode == 0 && e.retryable() {
		if e.Attempts > 1 {
			msg += fmt.Sprintf(" (tried %d times)", e.Attempts)
		}
		msg += "; try again later"
	}
	return msg
}

// retryable reports whether an error sent inside a response stream is a
// passing condition of the provider, which the SDKs did not retry since
// the response had started with HTTP 200.
func (e *Error) retryable() bool {
	if e.StatusCode != 0 {
		return false
	}
	for _, t := range []string{"overloaded", "api_error", "server_error", "rate_limit"} {
		if strings.Contains(e.Type, t) {
			return true
		}
	}
	return false
}

func (e *Error) Unwrap() error { return e.Err }

// apiMessage extracts a human message from an API error body such as
// {"error":{"message":"..."}} or {"message":"..."}.
func apiMessage(raw string) string {
	var body struct {
		Message string `json:"message"`
		Error   json.RawMessage
	}
	if json.Unmarshal([]byte(raw), &body) != nil {
		return ""
	}
	if body.Message != "" {
		return body.Message
	}
	if len(body.Error) > 0 {
		var s string
		if json.Unmarshal(body.Error, &s) == nil {
			return s
		}
		return apiMessage(string(body.Error))
	}
	return ""
}

// streamRetries bounds how many times a stream that failed before emitting
// anything is tried again (HTTP-level retries of 429 and 5xx responses are
// done by the SDKs themselves, honouring retry-after).
const streamRetries = 2

// sdkRetries is the SDKs' own retry budget for 408, 409, 429, 5xx and
// connection errors.
const sdkRetries = 4

// retryBackoff is the base delay between stream retries; attempt n waits
// n × retryBackoff. A variable so tests in this package may shorten it.
var retryBackoff = 500 * time.Millisecond

// streamCall runs one call of a provider named name at base: the SDK's own
// retries announced, the stream tried again while it fails before emitting
// anything (withStreamRetry), and a local server that refused the
// connection named as such.
func streamCall(ctx context.Context, name, base string, emit func(Event), attempt func(ctx context.Context, emit func(Event)) (*Response, error)) (*Response, error) {
	ctx, rn := withRetryNotice(ctx, emit) // before withStreamRetry, whose retries are its own
	resp, err := withStreamRetry(ctx, emit, func(emit func(Event)) (*Response, error) {
		return attempt(ctx, emit)
	})
	if refused := rn.done(); refused != nil {
		err = streamError(name, base, refused)
	}
	return resp, err
}

// withStreamRetry runs attempt until it succeeds, fails after emitting
// something, fails with a non-retryable error, or the retry budget is
// spent. attempt reports whether it emitted anything.
func withStreamRetry(ctx context.Context, emit func(Event), attempt func(emit func(Event)) (*Response, error)) (*Response, error) {
	for n := 0; ; n++ {
		emitted := false
		resp, err := attempt(func(ev Event) {
			emitted = true
			emit(ev)
		})
		if err == nil || emitted || n >= streamRetries || ctx.Err() != nil || !retryable(err) {
			var apiErr *Error
			if n > 0 && errors.As(err, &apiErr) {
				apiErr.Attempts = n + 1
			}
			return resp, err
		}
		delay := time.Duration(n+1) * retryBackoff
		emit(Retrying{Attempt: n + 1, Delay: delay, Err: err})
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return resp, ctx.Err()
		case <-t.C:
		}
	}
}

// retryable reports whether a failed stream may be tried again: API errors
// and servers that refuse connections were already retried by the SDK
// where sensible; anything else (a dropped connection, a cut stream) is
// worth another try.
func retryable(err error) bool {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr.retryable()
	}
	if isDialError(err) {
		return false
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// isDialError reports whether err is a failure to connect to the server
// (refused, no route, unknown host).
func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// streamError describes a stream that failed outside the API's own error
// responses. A server that cannot be reached at all (a local Ollama that is
// not running, a wrong base_url) is named with its URL.
func streamError(name, base string, err error) error {
	if isDialError(err) {
		var op *net.OpError
		var dns *net.DNSError
		cause := err
		if errors.As(err, &op) {
			cause = op
		} else if errors.As(err, &dns) {
			cause = dns
		}
		return fmt.Errorf("%s: cannot connect to %s: %w (is the server running? check the provider's base_url)", name, base, cause)
	}
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return fmt.Errorf("%s: the provider sent a response event that is not valid JSON (%w); if base_url points to a proxy or a compatible server, check that it speaks this API", name, err)
	}
	return fmt.Errorf("%s: the response stream failed: %w", name, err)
}

// interruptedNote is appended to the text of an interrupted assistant
// message when the conversation is sent back to a model.
const interruptedNote = "\n\n[this answer was interrupted before it was finished]"

func assistantText(m Message) string {
	switch {
	case m.Abandoned && m.Text != "":
		return m.Text + "\n\n[the answer was cut off here by otter's exit]"
	case m.Abandoned:
		return "[the answer was cut off by otter's exit before any text was produced]"
	}
	if m.Interrupted && m.Text != "" {
		return m.Text + interruptedNote
	}
	if m.Interrupted {
		return "[the answer was interrupted before any text was produced]"
	}
	return m.Text
}

// describeImages is the text that stands for images given to a provider
// that does not accept them where they occur.
func describeImages(imgs []Image) string {
	s := ""
	for _, img := range imgs {
		s += fmt.Sprintf("\n[%s image, %d bytes, not shown to the model]", img.MIMEType, len(img.Data))
	}
	return s
}
