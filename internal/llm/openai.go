package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAI is a Provider speaking the Chat Completions API.
type OpenAI struct {
	name     string
	base     string
	official bool
	client   openai.Client
}

// NewOpenAI returns a Provider for the OpenAI Chat Completions API or any
// server compatible with it (Ollama, llama.cpp, vLLM, OpenRouter, ...).
func NewOpenAI(opts Options) *OpenAI {
	name, base, retries := opts.resolve("openai", "https://api.openai.com/v1")
	official := opts.BaseURL == ""
	ro := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithAPIKey(opts.APIKey),
		option.WithMaxRetries(retries),
		option.WithMiddleware(sdkRetryNotice(retries)),
	}
	if opts.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(opts.HTTPClient))
	}
	for k, v := range opts.Headers {
		ro = append(ro, option.WithHeader(k, v))
	}
	return &OpenAI{name: name, base: base, official: official, client: openai.NewClient(ro...)}
}

// Name implements Provider.
func (p *OpenAI) Name() string { return p.name }

// OpenAIMaxTools is how many tools the Chat Completions API accepts in one
// request (more: 400 array_above_max_length); compatible servers are held
// to it too.
const OpenAIMaxTools = 128

// MaxTools is the most tools a request may offer (OpenAIMaxTools).
func (p *OpenAI) MaxTools() int { return OpenAIMaxTools }

// Stream implements Provider.
func (p *OpenAI) Stream(ctx context.Context, req Request, emit func(Event)) (*Response, error) {
	params := p.params(req)
	return streamCall(ctx, p.name, p.base, emit, func(ctx context.Context, emit func(Event)) (*Response, error) {
		return p.stream(ctx, params, emit)
	})
}

func (p *OpenAI) stream(ctx context.Context, params openai.ChatCompletionNewParams, emit func(Event)) (*Response, error) {
	resp := &Response{}
	stream := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()

	type partial struct {
		pos      int
		id, name string
		args     []byte
	}
	// Calls in arrival order; byIndex maps a delta's index to its call.
	// Some compatible servers send every call whole, all with index 0 (or
	// none): a new id at a known index starts a new call.
	var calls []*partial
	byIndex := map[int64]*partial{}
	finish := ""
	for stream.Next() {
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() {
			resp.Usage = Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens,
				CachedTokens: chunk.Usage.PromptTokensDetails.CachedTokens}
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue
			}
			d := choice.Delta
			if d.Content != "" {
				resp.Text += d.Content
				emit(TextDelta{Text: d.Content})
			}
			for _, tc := range d.ToolCalls {
				c := byIndex[tc.Index]
				if c == nil || (tc.ID != "" && c.id != "" && tc.ID != c.id) {
					c = &partial{pos: len(calls)}
					calls = append(calls, c)
					byIndex[tc.Index] = c
				}
				if tc.ID != "" {
					c.id = tc.ID
				}
				if tc.Function.Name != "" && c.name == "" {
					c.name = tc.Function.Name
					emit(ToolCallDelta{Index: c.pos, ID: c.id, Name: c.name})
				}
				c.args = append(c.args, tc.Function.Arguments...)
			}
			if choice.FinishReason != "" {
				finish = choice.FinishReason
			}
		}
	}
	for i, c := range calls {
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i) // some compatible servers omit ids
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: id, Name: c.name, Args: normalizeArgs(c.args)})
	}
	switch finish {
	case "stop":
		resp.StopReason = StopEndTurn
	case "tool_calls", "function_call":
		resp.StopReason = StopToolUse
	case "length":
		resp.StopReason = StopMaxTokens
	default:
		resp.StopReason = StopOther
	}
	if err := stream.Err(); err != nil {
		return resp, p.wrapErr(ctx, err)
	}
	if finish == "" {
		return resp, fmt.Errorf("%s: %w", p.name, ErrStreamCut)
	}
	if len(resp.ToolCalls) > 0 {
		resp.StopReason = StopToolUse // some servers say "stop" with tool calls
	}
	return resp, nil
}

func (p *OpenAI) wrapErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = apiMessage(apiErr.RawJSON())
		}
		return &Error{Provider: p.name, StatusCode: apiErr.StatusCode, Code: apiErr.Code, Message: msg, Err: err}
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) { // an error object in a stream that began with 200
		var body struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
				Code    string `json:"code"`
			} `json:"error"`
		}
		json.Unmarshal(streamErr.Event.Data, &body)
		return &Error{Provider: p.name, Type: body.Error.Type, Code: body.Error.Code, Message: body.Error.Message, Err: err}
	}
	return streamError(p.name, p.base, err)
}

// normalizeArgs returns the arguments a model streamed as JSON; an empty
// string becomes {} and text that is not JSON is kept as a JSON string so
// the tool layer can report the problem to the model.
func normalizeArgs(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	s, _ := json.Marshal(string(b))
	return s
}

func (p *OpenAI) params(req Request) openai.ChatCompletionNewParams {
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		params.Messages = append(params.Messages, openaiMessages(m)...)
	}
	for _, t := range req.Tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: openaiSchema(t)}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	if req.MaxTokens > 0 {
		if p.official {
			params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(req.MaxTokens)) // what compatible servers know
		}
	}
	if req.HasTemperature {
		params.Temperature = openai.Float(req.Temperature)
	}
	if len(req.StopSequences) > 0 {
		params.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: req.StopSequences}
	}
	return params
}

// openaiResultText is r as the OpenAI APIs take a tool's output: text,
// an error marked as such in it (they have no error flag).
func openaiResultText(r ToolResult) string {
	if r.IsError {
		return "Error: " + nonEmpty(r.Text)
	}
	return nonEmpty(r.Text)
}

// openaiSchema is t's input schema as both OpenAI APIs take it: an
// object, {"type":"object","properties":{}} when t has none.
func openaiSchema(t ToolSpec) map[string]any {
	var schema map[string]any
	if len(t.InputSchema) > 0 {
		_ = json.Unmarshal(t.InputSchema, &schema)
	}
	if schema == nil {
		schema = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return schema
}

func openaiMessages(m Message) []openai.ChatCompletionMessageParamUnion {
	switch m.Role {
	case RoleUser:
		if len(m.Images) == 0 {
			return []openai.ChatCompletionMessageParamUnion{openai.UserMessage(m.Text)}
		}
		var parts []openai.ChatCompletionContentPartUnionParam
		if m.Text != "" {
			parts = append(parts, openai.TextContentPart(m.Text))
		}
		for _, img := range m.Images {
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{
				URL: dataURL(img),
			}))
		}
		return []openai.ChatCompletionMessageParamUnion{openai.UserMessage(parts)}
	case RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		if text := assistantText(m); text != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(text)
		}
		for _, c := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name: c.Name, Arguments: string(c.Args),
					},
				},
			})
		}
		return []openai.ChatCompletionMessageParamUnion{{OfAssistant: &a}}
	case RoleTool:
		// Chat Completions tool messages carry text only; the text of a
		// result already describes its images.
		var out []openai.ChatCompletionMessageParamUnion
		for _, r := range m.ToolResults {
			text := openaiResultText(r)
			out = append(out, openai.ToolMessage(text, r.CallID))
		}
		return out
	}
	return nil
}
