// Package llmtest provides fake model servers for tests: httptest servers
// that speak the real wire protocols of the OpenAI Chat Completions API, the
// OpenAI Responses API (see Responses) and the Anthropic Messages API,
// streaming included (server-sent events as the
// real APIs send them), play scripted replies, check the requests as the
// real APIs would (every tool call answered, with matching ids) and record
// them, normalised, for assertions.
//
// Like the real services, a Server refuses what they refuse at their limits,
// with the same status, error type, code and wording:
//   - an OpenAI request offering more than 128 tools (400,
//     code "array_above_max_length", param "tools"); see Server.MaxTools;
//   - a request over the model's context window, when Server.ContextWindow is
//     set: OpenAI's "context_length_exceeded", Anthropic's
//     "prompt is too long: N tokens > M maximum" (and, when the prompt fits
//     but prompt + max_tokens does not, each API's wording for that);
//   - a history with a tool call that is not answered right after it;
//   - with Anthropic extended thinking on, a tool loop whose assistant turn
//     does not start with its thinking block, or whose thinking block's
//     signature is not the one the server gave (see checkThinking).
//
// An OpenAI-protocol Server can also pretend to be Ollama, vLLM, LM Studio
// or OpenRouter (Host), saying its models' context windows where each does.
//
// Tokens are estimated from the request's JSON (EstimateTokens), so a test
// can reason about the window without a tokenizer.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm"
)

// Kind is the wire protocol a Server speaks.
type Kind string

const (
	OpenAI    Kind = "openai"
	Anthropic Kind = "anthropic"
)

// Kinds lists the Chat Completions and Messages protocols, for table
// tests; the Responses protocol has tests of its own.
var Kinds = []Kind{OpenAI, Anthropic}

// Call is a tool call a scripted reply makes.
type Call struct {
	ID   string
	Name string
	Args string // JSON, streamed in a few pieces
}

// Reply is one scripted response.
type Reply struct {
	Text  []string // text chunks, streamed in order
	Calls []Call

	// Status ≥ 400 makes the reply an API error with Message; Header is
	// sent with it (e.g. "Retry-After").
	Status  int
	Message string
	Header  map[string]string

	// StreamError, when set, answers 200 and opens the stream, then sends
	// an error in it with this type (e.g. "overloaded_error"), as the APIs
	// do when they fail after the response has started.
	StreamError string
	// Malformed opens the stream, then sends an event whose data is not
	// JSON.
	Malformed bool

	// CutAfter > 0 drops the connection after that many text chunks,
	// without the events that end a response; Cut drops it before any
	// text (after the events that open a response).
	CutAfter int
	Cut      bool
	// Hold, when set, pauses the stream after the first text chunk until
	// it is closed or the client goes away.
	Hold <-chan struct{}

	InputTokens, OutputTokens int64
	// CachedTokens of InputTokens are reported read from the prompt cache,
	// CacheWriteTokens written to it (Anthropic), each in the API's own
	// usage fields.
	CachedTokens, CacheWriteTokens int64

	// AtLimit ends the reply as a model that ran into its output limit
	// does: finish_reason "length", stop_reason "max_tokens".
	AtLimit bool

	// Thinking (Anthropic, or the Responses API's reasoning summary) is
	// streamed before the text when the request turned thinking (or
	// reasoning) on, and ignored otherwise, as the real models do; each
	// string is one delta of one thinking block, signed by the server.
	// Redacted adds a redacted_thinking block with this data.
	Thinking []string
	Redacted string

	// WholeCalls (OpenAI only) streams each tool call in one chunk, all
	// with index 0, ending with finish_reason "stop", as some compatible
	// servers (older Ollama versions) do.
	WholeCalls bool
}

// ToolResult is a tool result as a request carried it.
type ToolResult struct {
	CallID  string
	Text    string
	IsError bool
	Images  int // images sent with the result
}

// Message is a request's message, normalised across protocols.
type Message struct {
	Role        string // "user", "assistant" or "tool"
	Text        string
	Images      int
	ToolCalls   []Call
	ToolResults []ToolResult
	// Thinking holds the text of the thinking blocks an assistant message
	// sent back (their signatures checked), Redacted how many
	// redacted_thinking blocks; for the Responses API, the summaries and
	// the encrypted reasoning items.
	Thinking []string
	Redacted int
}

// Request is a request the server received.
type Request struct {
	Received  time.Time
	Header    http.Header
	Body      map[string]any // the JSON body as sent
	Model     string
	System    string
	Tools     []string // names of the tools offered
	Messages  []Message
	Stream    bool
	MaxTokens int
	// Thinking is the thinking budget an Anthropic request asked for (0:
	// thinking off); Effort the Responses API's reasoning.effort.
	Thinking int
	Effort   string
	// InputTokens is the server's estimate of the prompt's size
	// (EstimateTokens of the body), what it compares with ContextWindow.
	InputTokens int
	// Refused is the error the server answered instead of a reply (a limit
	// or an invalid history), "" when it played a reply.
	Refused string
}

// LastToolResults returns the tool results of the request's last message
// that has any.
func (r Request) LastToolResults() []ToolResult {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if len(r.Messages[i].ToolResults) > 0 {
			return r.Messages[i].ToolResults
		}
	}
	return nil
}

// OpenAIMaxTools is the number of tools the OpenAI API accepts in one
// request; more is refused with 400 array_above_max_length.
const OpenAIMaxTools = 128

// Server is a fake model API.
type Server struct {
	Kind Kind
	URL  string // base URL for the provider (…/v1 for OpenAI)

	// MaxTools caps the tools one request may offer (0: OpenAIMaxTools for
	// the OpenAI protocol, no cap for Anthropic; -1: no cap). Set it before
	// the first request.
	MaxTools int
	// ContextWindow, when > 0, is the model's context window in tokens:
	// requests whose prompt (EstimateTokens) does not fit, or whose prompt
	// plus max_tokens does not fit, are refused as the real API refuses
	// them. Replies that script no token counts then report the estimate as
	// usage, as the real APIs report theirs. Set it before the first request.
	ContextWindow int
	// ExpectInvalid makes a request that the real API would refuse as
	// invalid (say, a tool call without its result) a plain 400, as the API
	// answers it; by default such a request also fails the test, since
	// otter must never send one.
	ExpectInvalid bool
	// Models are the models GET /v1/models lists (none by default), with
	// those Info describes.
	Models []string
	// Host is the server an OpenAI-protocol fake pretends to be (see
	// Host); Info what it says of its models. Set them before the first
	// request.
	Host Host
	Info map[string]ModelInfo
	// Respond, when set, answers each request that finds no scripted reply
	// left, from what it asks: for long conversations whose replies are
	// easier computed than listed. Set it before the first request.
	Respond func(Request) Reply

	t       testing.TB
	srv     *httptest.Server
	mu      sync.Mutex
	replies []Reply
	reqs    []Request
	// hostCalls counts the requests to the host's own endpoints.
	hostCalls map[string]int
}

// New starts a fake server of the given kind that plays replies in order;
// requests beyond them get a 500 and fail the test.
func New(t testing.TB, kind Kind, replies ...Reply) *Server {
	s := &Server{Kind: kind, t: t, replies: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL
	if kind == OpenAI || kind == Responses {
		s.URL += "/v1"
	}
	return s
}

// Push appends scripted replies.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Provider returns an llm.Provider pointed at the server.
func (s *Server) Provider() llm.Provider {
	switch s.Kind {
	case Anthropic:
		return llm.NewAnthropic(llm.Options{Name: "fake-anthropic", BaseURL: s.URL, APIKey: "test-key"})
	case Responses:
		return llm.NewResponses(llm.Options{Name: "fake-responses", BaseURL: s.URL, APIKey: "test-key"})
	}
	return llm.NewOpenAI(llm.Options{Name: "fake-openai", BaseURL: s.URL, APIKey: "test-key"})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	want := "/v1/chat/completions"
	switch s.Kind {
	case Anthropic:
		want = "/v1/messages"
	case Responses:
		want = "/v1/responses"
	}
	if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
		s.count("models")
		s.serveModels(w)
		return
	}
	if s.serveHost(w, r) {
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != want {
		s.writeError(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path, nil)
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		s.writeError(w, http.StatusBadRequest, "body is not JSON: "+err.Error(), nil)
		return
	}
	var req Request
	switch s.Kind {
	case Anthropic:
		req, err = parseAnthropic(body)
		if err == nil {
			err = checkThinking(body)
		}
	case Responses:
		req, err = parseResponses(body)
	default:
		req, err = parseOpenAI(body)
	}
	req.Received = time.Now()
	req.Header = r.Header.Clone()
	req.Body = body
	req.InputTokens = EstimateTokens(data)
	limit := s.checkLimits(req)
	if err != nil {
		req.Refused = err.Error()
	} else if limit != nil {
		req.Refused = limit.message
	}

	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	var reply Reply
	// A refused request consumes no scripted reply: the real API never got
	// as far as the model.
	ok := len(s.replies) > 0
	respond := !ok && s.Respond != nil && req.Refused == ""
	if ok && req.Refused == "" {
		reply = s.replies[0]
		s.replies = s.replies[1:]
	}
	s.mu.Unlock()
	if respond {
		reply, ok = s.Respond(req), true
	}

	if err != nil {
		if !s.ExpectInvalid {
			s.t.Errorf("llmtest: invalid %s request: %v", s.Kind, err)
		}
		if rf, ok := err.(*refusal); ok {
			writeRefusal(w, rf)
			return
		}
		s.writeError(w, http.StatusBadRequest, err.Error(), nil)
		return
	}
	if limit != nil {
		if s.Kind == Responses && limit.code == "context_length_exceeded" {
			streamContextError(w, req.Model, limit.message)
			return
		}
		s.writeLimit(w, *limit)
		return
	}
	if !ok {
		s.t.Errorf("llmtest: unexpected request %d (no scripted reply left)", len(s.Requests()))
		s.writeError(w, http.StatusInternalServerError, "no scripted reply", nil)
		return
	}
	if reply.Status >= 400 {
		s.writeError(w, reply.Status, reply.Message, reply.Header)
		return
	}
	if s.ContextWindow > 0 {
		if reply.InputTokens == 0 {
			reply.InputTokens = int64(req.InputTokens)
		}
		if reply.OutputTokens == 0 {
			reply.OutputTokens = int64(EstimateTokens([]byte(strings.Join(reply.Text, "") + strings.Join(reply.Thinking, ""))))
			for _, c := range reply.Calls {
				reply.OutputTokens += int64(EstimateTokens([]byte(c.Name + c.Args)))
			}
		}
	}
	switch s.Kind {
	case Anthropic:
		s.streamAnthropic(w, r, reply, req.Model, req.Thinking > 0)
	case Responses:
		s.streamResponses(w, r, reply, req.Model, body)
	default:
		s.streamOpenAI(w, r, reply, req.Model)
	}
}

func (s *Server) writeError(w http.ResponseWriter, status int, msg string, header map[string]string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	// Retries are decided by the status and retry-after headers.
	w.WriteHeader(status)
	var body any
	if s.Kind == Anthropic {
		body = map[string]any{"type": "error", "error": map[string]any{"type": errorType(status), "message": msg}}
	} else {
		body = map[string]any{"error": map[string]any{"message": msg, "type": errorType(status), "param": nil, "code": nil}}
	}
	_ = json.NewEncoder(w).Encode(body)
}

func errorType(status int) string {
	switch {
	case status == 401:
		return "authentication_error"
	case status == 429:
		return "rate_limit_error"
	case status >= 500:
		return "api_error"
	}
	return "invalid_request_error"
}

// sse writes server-sent events and flushes after each.
type sse struct {
	w http.ResponseWriter
}

func (e sse) send(event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(e.w, "event: %s\n", event)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	e.w.(http.Flusher).Flush()
}

// raw writes text as is, for events a real API would never send.
func (e sse) raw(text string) {
	fmt.Fprint(e.w, text)
	e.w.(http.Flusher).Flush()
}

func startSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

// textChunks plays a reply's text, honouring CutAfter and Hold; it returns
// false when the stream must stop (cut or client gone).
func textChunks(r *http.Request, reply Reply, send func(string)) bool {
	for i, chunk := range reply.Text {
		send(chunk)
		if reply.CutAfter > 0 && i+1 >= reply.CutAfter {
			// Drop the connection mid-stream, as a broken network would.
			panic(http.ErrAbortHandler)
		}
		if i == 0 && reply.Hold != nil {
			select {
			case <-reply.Hold:
			case <-r.Context().Done():
				return false
			}
		}
	}
	return true
}

// argPieces splits JSON arguments into a few pieces, as models stream them.
func argPieces(args string) []string {
	if len(args) < 4 {
		return []string{args}
	}
	third := len(args) / 3
	return []string{args[:third], args[third : 2*third], args[2*third:]}
}

func (s *Server) streamOpenAI(w http.ResponseWriter, r *http.Request, reply Reply, model string) {
	e := startSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
		}
	}
	e.send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if reply.Cut {
		panic(http.ErrAbortHandler)
	}
	if reply.StreamError != "" {
		e.send("", map[string]any{"error": map[string]any{"message": "The server had an error while processing your request.", "type": reply.StreamError, "code": nil, "param": nil}})
		return
	}
	if reply.Malformed {
		e.raw("data: {\"choices\": [oops\n\n")
		return
	}
	if !textChunks(r, reply, func(t string) { e.send("", chunk(map[string]any{"content": t}, nil)) }) {
		return
	}
	for i, c := range reply.Calls {
		if reply.WholeCalls {
			e.send("", chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": 0, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args},
			}}}, nil))
			continue
		}
		e.send("", chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""},
		}}}, nil))
		for _, p := range argPieces(c.Args) {
			e.send("", chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": p},
			}}}, nil))
		}
	}
	finish := "stop"
	switch {
	case reply.AtLimit:
		finish = "length"
	case len(reply.Calls) > 0 && !reply.WholeCalls:
		finish = "tool_calls"
	}
	e.send("", chunk(map[string]any{}, finish))
	e.send("", map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000, "model": model, "choices": []any{},
		"usage": map[string]any{"prompt_tokens": reply.InputTokens, "completion_tokens": reply.OutputTokens, "total_tokens": reply.InputTokens + reply.OutputTokens,
			"prompt_tokens_details": map[string]any{"cached_tokens": reply.CachedTokens}},
	})
	fmt.Fprint(w, "data: [DONE]\n\n")
	w.(http.Flusher).Flush()
}

func (s *Server) streamAnthropic(w http.ResponseWriter, r *http.Request, reply Reply, model string, thinking bool) {
	e := startSSE(w)
	e.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "content": []any{}, "model": model,
		"stop_reason": nil, "stop_sequence": nil,
		// input_tokens leaves out the tokens read from or written to the cache.
		"usage": map[string]any{"input_tokens": reply.InputTokens - reply.CachedTokens - reply.CacheWriteTokens, "output_tokens": 1,
			"cache_read_input_tokens": reply.CachedTokens, "cache_creation_input_tokens": reply.CacheWriteTokens},
	}})
	if reply.Cut {
		panic(http.ErrAbortHandler)
	}
	if reply.StreamError != "" {
		msg := "Internal server error"
		if reply.StreamError == "overloaded_error" {
			msg = "Overloaded"
		}
		e.send("error", map[string]any{"type": "error", "error": map[string]any{"type": reply.StreamError, "message": msg}})
		return
	}
	if reply.Malformed {
		e.raw("event: content_block_start\ndata: {\"type\": \"content_block_start\", oops\n\n")
		return
	}
	index := 0
	if thinking {
		if len(reply.Thinking) > 0 {
			e.send("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for _, t := range reply.Thinking {
				e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "thinking_delta", "thinking": t}})
			}
			e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "signature_delta", "signature": Sign(strings.Join(reply.Thinking, ""))}})
			e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
			index++
		}
		if reply.Redacted != "" {
			e.send("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "redacted_thinking", "data": reply.Redacted}})
			e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
			index++
		}
	}
	if len(reply.Text) > 0 {
		e.send("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		e.send("ping", map[string]any{"type": "ping"})
		if !textChunks(r, reply, func(t string) {
			e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": t}})
		}) {
			return
		}
		e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for _, c := range reply.Calls {
		e.send("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{
			"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{},
		}})
		for _, p := range argPieces(c.Args) {
			e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	stop := "end_turn"
	switch {
	case reply.AtLimit:
		stop = "max_tokens"
	case len(reply.Calls) > 0:
		stop = "tool_use"
	}
	e.send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": reply.OutputTokens}})
	e.send("message_stop", map[string]any{"type": "message_stop"})
}

// --- the services' limits ---

// EstimateTokens is the server's token count of a request body or a text:
// one token per four bytes, rounded up, which is close to what the real
// tokenizers give for English prose and JSON.
func EstimateTokens(b []byte) int { return (len(b) + 3) / 4 }

// limitError is a refusal at one of the services' limits.
type limitError struct {
	param, code, message string
}

// checkLimits returns the refusal a real service would give req, or nil.
func (s *Server) checkLimits(req Request) *limitError {
	maxTools := s.MaxTools
	if maxTools == 0 && (s.Kind == OpenAI || s.Kind == Responses) {
		maxTools = OpenAIMaxTools
	}
	if maxTools > 0 && len(req.Tools) > maxTools {
		// OpenAI's wording, word for word.
		return &limitError{param: "tools", code: "array_above_max_length", message: fmt.Sprintf(
			"Invalid 'tools': array too long. Expected an array with maximum length %d, but got an array with length %d instead.",
			maxTools, len(req.Tools))}
	}
	window := s.ContextWindow
	if window <= 0 {
		return nil
	}
	in, out := req.InputTokens, req.MaxTokens
	switch {
	case s.Kind == Responses && in > window:
		// The Responses API names neither figure, and finds out once the
		// response has begun (see streamContextError).
		return &limitError{param: "input", code: "context_length_exceeded",
			message: "Your input exceeds the context window of this model. Please adjust your input and try again."}
	case s.Kind == Anthropic && in > window:
		return &limitError{message: fmt.Sprintf("prompt is too long: %d tokens > %d maximum", in, window)}
	case s.Kind == Anthropic && in+out > window:
		return &limitError{message: fmt.Sprintf(
			"input length and `max_tokens` exceed context limit: %d + %d > %d, decrease input length or `max_tokens` and try again",
			in, out, window)}
	case s.Kind == OpenAI && in > window:
		return &limitError{param: "messages", code: "context_length_exceeded", message: fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.",
			window, in)}
	case s.Kind == OpenAI && in+out > window:
		return &limitError{param: "messages", code: "context_length_exceeded", message: fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			window, in+out, in, out)}
	}
	return nil
}

// writeLimit answers a refusal at a limit as the API does: 400
// invalid_request_error, with OpenAI's param and code.
func (s *Server) writeLimit(w http.ResponseWriter, e limitError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	var body any
	if s.Kind == Anthropic {
		body = map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": e.message}}
	} else {
		body = map[string]any{"error": map[string]any{"message": e.message, "type": "invalid_request_error", "param": e.param, "code": e.code}}
	}
	_ = json.NewEncoder(w).Encode(body)
}

// --- request parsing and checking, as the real APIs would ---

func str(v any) string { s, _ := v.(string); return s }

func num(v any) int { f, _ := v.(float64); return int(f) }

func parseOpenAI(body map[string]any) (Request, error) {
	req := Request{Model: str(body["model"]), Stream: body["stream"] == true}
	req.MaxTokens = num(body["max_tokens"]) + num(body["max_completion_tokens"])
	if req.Model == "" {
		return req, fmt.Errorf("model is required")
	}
	for _, t := range asList(body["tools"]) {
		fn, _ := asMap(t)["function"].(map[string]any)
		if _, ok := fn["parameters"].(map[string]any); !ok {
			return req, fmt.Errorf("tool %q: parameters must be a JSON Schema object", str(fn["name"]))
		}
		req.Tools = append(req.Tools, str(fn["name"]))
	}
	pending := map[string]bool{} // tool call ids awaiting a result
	for i, m := range asList(body["messages"]) {
		mm := asMap(m)
		role := str(mm["role"])
		if len(pending) > 0 && role != "tool" {
			return req, openAIUnanswered(i, pending)
		}
		switch role {
		case "system", "developer":
			req.System += contentText(mm["content"])
		case "user":
			req.Messages = append(req.Messages, Message{Role: "user", Text: contentText(mm["content"]), Images: contentImages(mm["content"])})
		case "assistant":
			msg := Message{Role: "assistant", Text: contentText(mm["content"])}
			for _, tc := range asList(mm["tool_calls"]) {
				tcm := asMap(tc)
				fn := asMap(tcm["function"])
				msg.ToolCalls = append(msg.ToolCalls, Call{ID: str(tcm["id"]), Name: str(fn["name"]), Args: str(fn["arguments"])})
				pending[str(tcm["id"])] = true
			}
			req.Messages = append(req.Messages, msg)
		case "tool":
			id := str(mm["tool_call_id"])
			if !pending[id] {
				return req, fmt.Errorf("messages[%d]: tool message for tool_call_id %q, which no preceding tool call has", i, id)
			}
			delete(pending, id)
			text := contentText(mm["content"])
			tr := ToolResult{CallID: id, Text: text, IsError: strings.HasPrefix(text, "Error: ")}
			if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
				req.Messages[n-1].ToolResults = append(req.Messages[n-1].ToolResults, tr)
			} else {
				req.Messages = append(req.Messages, Message{Role: "tool", ToolResults: []ToolResult{tr}})
			}
		default:
			return req, fmt.Errorf("messages[%d]: unknown role %q", i, role)
		}
	}
	if len(pending) > 0 {
		return req, openAIUnanswered(len(asList(body["messages"])), pending)
	}
	return req, nil
}

// openAIUnanswered is OpenAI's refusal of a history in which the assistant
// message before messages[i] has tool calls that no tool message answers.
func openAIUnanswered(i int, pending map[string]bool) error {
	return fmt.Errorf("Invalid parameter: messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s",
		i, strings.Join(keys(pending), ", "))
}

// anthropicUnanswered is Anthropic's refusal of a history in which the
// assistant message before messages[i] has tool_use blocks that the next
// message does not answer.
func anthropicUnanswered(i int, pending map[string]bool) error {
	return fmt.Errorf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
		i, strings.Join(keys(pending), ", "))
}

func parseAnthropic(body map[string]any) (Request, error) {
	req := Request{Model: str(body["model"]), Stream: body["stream"] == true, MaxTokens: num(body["max_tokens"])}
	if req.Model == "" || req.MaxTokens <= 0 {
		return req, fmt.Errorf("model and max_tokens are required")
	}
	if th := asMap(body["thinking"]); str(th["type"]) == "enabled" {
		req.Thinking = num(th["budget_tokens"])
	}
	if s, ok := body["system"].(string); ok {
		req.System = s
	} else {
		req.System = contentText(body["system"])
	}
	for _, t := range asList(body["tools"]) {
		tm := asMap(t)
		schema, ok := tm["input_schema"].(map[string]any)
		if !ok || schema["type"] != "object" {
			return req, fmt.Errorf("tool %q: input_schema must be an object schema", str(tm["name"]))
		}
		req.Tools = append(req.Tools, str(tm["name"]))
	}
	pending := map[string]bool{}
	lastRole := ""
	for i, m := range asList(body["messages"]) {
		mm := asMap(m)
		role := str(mm["role"])
		if role == lastRole {
			return req, fmt.Errorf("messages[%d]: roles must alternate between user and assistant", i)
		}
		lastRole = role
		if i == 0 && role != "user" {
			return req, fmt.Errorf("messages[0]: the first message must use the user role")
		}
		blocks := asList(mm["content"])
		if s, ok := mm["content"].(string); ok {
			blocks = []any{map[string]any{"type": "text", "text": s}}
		}
		if len(blocks) == 0 {
			return req, fmt.Errorf("messages[%d]: content must not be empty", i)
		}
		switch role {
		case "user":
			var results []ToolResult
			user := Message{Role: "user"}
			for j, b := range blocks {
				bm := asMap(b)
				switch str(bm["type"]) {
				case "tool_result":
					if user.Text != "" || user.Images > 0 {
						return req, fmt.Errorf("messages[%d].content[%d]: tool_result blocks must come first", i, j)
					}
					id := str(bm["tool_use_id"])
					if !pending[id] {
						return req, fmt.Errorf("messages[%d].content[%d]: unexpected tool_use_id %q in tool_result blocks: each tool_result block must have a corresponding tool_use block in the previous message", i, j, id)
					}
					delete(pending, id)
					tr := ToolResult{CallID: id, IsError: bm["is_error"] == true}
					if s, ok := bm["content"].(string); ok {
						tr.Text = s
					} else {
						tr.Text = contentText(bm["content"])
						tr.Images = contentImages(bm["content"])
					}
					results = append(results, tr)
				case "text":
					if str(bm["text"]) == "" {
						return req, fmt.Errorf("messages[%d].content[%d]: text content blocks must be non-empty", i, j)
					}
					user.Text += str(bm["text"])
				case "image":
					user.Images++
				default:
					return req, fmt.Errorf("messages[%d].content[%d]: unexpected block type %q", i, j, str(bm["type"]))
				}
			}
			if len(pending) > 0 {
				return req, anthropicUnanswered(i-1, pending)
			}
			if len(results) > 0 {
				req.Messages = append(req.Messages, Message{Role: "tool", ToolResults: results})
			}
			if user.Text != "" || user.Images > 0 {
				req.Messages = append(req.Messages, user)
			}
		case "assistant":
			msg := Message{Role: "assistant"}
			for j, b := range blocks {
				bm := asMap(b)
				switch str(bm["type"]) {
				case "text":
					if str(bm["text"]) == "" {
						return req, fmt.Errorf("messages[%d].content[%d]: text content blocks must be non-empty", i, j)
					}
					msg.Text += str(bm["text"])
				case "thinking":
					if Sign(str(bm["thinking"])) != str(bm["signature"]) {
						return req, fmt.Errorf("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
					}
					msg.Thinking = append(msg.Thinking, str(bm["thinking"]))
				case "redacted_thinking":
					if str(bm["data"]) == "" {
						return req, fmt.Errorf("messages.%d.content.%d.data: Field required", i, j)
					}
					msg.Redacted++
				case "tool_use":
					args, _ := json.Marshal(bm["input"])
					if _, ok := bm["input"].(map[string]any); !ok {
						return req, fmt.Errorf("messages[%d].content[%d]: tool_use input must be an object", i, j)
					}
					msg.ToolCalls = append(msg.ToolCalls, Call{ID: str(bm["id"]), Name: str(bm["name"]), Args: string(args)})
					pending[str(bm["id"])] = true
				default:
					return req, fmt.Errorf("messages[%d].content[%d]: unexpected block type %q", i, j, str(bm["type"]))
				}
			}
			req.Messages = append(req.Messages, msg)
		default:
			return req, fmt.Errorf("messages[%d]: unknown role %q", i, role)
		}
	}
	if len(pending) > 0 {
		return req, anthropicUnanswered(len(asList(body["messages"]))-1, pending)
	}
	return req, nil
}

func asList(v any) []any { l, _ := v.([]any); return l }

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// keys returns m's keys in order, so that messages are stable.
func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// contentText concatenates the text of a string or a list of content
// parts/blocks.
func contentText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var b strings.Builder
	for _, p := range asList(v) {
		pm := asMap(p)
		if str(pm["type"]) == "text" {
			b.WriteString(str(pm["text"]))
		}
	}
	return b.String()
}

func contentImages(v any) int {
	n := 0
	for _, p := range asList(v) {
		switch str(asMap(p)["type"]) {
		case "image", "image_url":
			n++
		}
	}
	return n
}

// serveModels answers GET /v1/models in the API's shape, in one page.
func (s *Server) serveModels(w http.ResponseWriter) {
	data := []any{}
	for _, m := range s.modelNames() {
		if s.Kind == Anthropic {
			data = append(data, map[string]any{"id": m, "type": "model", "display_name": m, "created_at": "2026-01-01T00:00:00Z"})
		} else {
			data = append(data, s.openAIModel(m))
		}
	}
	body := map[string]any{"object": "list", "data": data}
	if s.Kind == Anthropic {
		body = map[string]any{"data": data, "has_more": false, "first_id": nil, "last_id": nil}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}
