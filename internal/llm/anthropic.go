package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// DefaultAnthropicMaxTokens is the max_tokens sent when neither the request
// nor [agent].max_tokens sets one (the Messages API requires it).
const DefaultAnthropicMaxTokens = 8192

// Anthropic is a Provider speaking the Messages API.
type Anthropic struct {
	name   string
	base   string
	client anthropic.Client
}

// NewAnthropic returns a Provider for the Anthropic Messages API.
func NewAnthropic(opts Options) *Anthropic {
	name, base, retries := opts.resolve("anthropic", "https://api.anthropic.com/")
	ro := []option.RequestOption{
		// Settings come from otter's config only, never from the SDK's
		// own environment variables or profile files.
		option.WithoutEnvironmentDefaults(),
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
	return &Anthropic{name: name, base: base, client: anthropic.NewClient(ro...)}
}

// Name implements Provider.
func (p *Anthropic) Name() string { return p.name }

// Stream implements Provider.
func (p *Anthropic) Stream(ctx context.Context, req Request, emit func(Event)) (*Response, error) {
	params := anthropicParams(req)
	return streamCall(ctx, p.name, p.base, emit, func(ctx context.Context, emit func(Event)) (*Response, error) {
		return p.stream(ctx, params, emit)
	})
}

func (p *Anthropic) stream(ctx context.Context, params anthropic.MessageNewParams, emit func(Event)) (*Response, error) {
	resp := &Response{StopReason: StopOther}
	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()

	type block struct {
		toolIndex int // index into calls, or -1 for non-tool blocks
		thinking  int // index into resp.Reasoning, or -1
	}
	type partial struct {
		id, name string
		args     []byte
	}
	var calls []*partial
	blocks := map[int64]block{}
	stopped := false
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			resp.Usage = anthropicUsage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens)
		case "content_block_start":
			b := block{toolIndex: -1, thinking: -1}
			switch ev.ContentBlock.Type {
			case "tool_use":
				b.toolIndex = len(calls)
				calls = append(calls, &partial{id: ev.ContentBlock.ID, name: ev.ContentBlock.Name})
				emit(ToolCallDelta{Index: b.toolIndex, ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name})
			case "thinking":
				b.thinking = len(resp.Reasoning)
				resp.Reasoning = append(resp.Reasoning, Reasoning{Text: ev.ContentBlock.Thinking, Signature: ev.ContentBlock.Signature})
				if ev.ContentBlock.Thinking != "" {
					emit(ReasoningDelta{Text: ev.ContentBlock.Thinking})
				}
			case "redacted_thinking":
				resp.Reasoning = append(resp.Reasoning, Reasoning{Redacted: ev.ContentBlock.Data})
				emit(ReasoningDelta{Redacted: true})
			}
			blocks[ev.Index] = b
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				if ev.Delta.Text != "" {
					resp.Text += ev.Delta.Text
					emit(TextDelta{Text: ev.Delta.Text})
				}
			case "thinking_delta":
				if b, ok := blocks[ev.Index]; ok && b.thinking >= 0 && ev.Delta.Thinking != "" {
					resp.Reasoning[b.thinking].Text += ev.Delta.Thinking
					emit(ReasoningDelta{Text: ev.Delta.Thinking})
				}
			case "signature_delta":
				if b, ok := blocks[ev.Index]; ok && b.thinking >= 0 {
					resp.Reasoning[b.thinking].Signature += ev.Delta.Signature
				}
			case "input_json_delta":
				if b, ok := blocks[ev.Index]; ok && b.toolIndex >= 0 {
					c := calls[b.toolIndex]
					c.args = append(c.args, ev.Delta.PartialJSON...)
				}
			}
		case "message_delta":
			if ev.Usage.OutputTokens > 0 {
				resp.Usage.OutputTokens = ev.Usage.OutputTokens
			}
			if u := ev.Usage; u.InputTokens > 0 || u.CacheReadInputTokens > 0 || u.CacheCreationInputTokens > 0 {
				// Cumulative counts, when the delta carries them.
				resp.Usage = anthropicUsage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, resp.Usage.OutputTokens)
			}
			switch ev.Delta.StopReason {
			case anthropic.StopReasonEndTurn, anthropic.StopReasonStopSequence:
				resp.StopReason = StopEndTurn
			case anthropic.StopReasonToolUse:
				resp.StopReason = StopToolUse
			case anthropic.StopReasonMaxTokens:
				resp.StopReason = StopMaxTokens
			}
		case "message_stop":
			stopped = true
		}
	}
	for _, c := range calls {
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: c.id, Name: c.name, Args: normalizeArgs(c.args)})
	}
	// Thinking counts as output; the API gives no separate figure.
	for _, r := range resp.Reasoning {
		resp.Usage.ReasoningTokens += int64(len(r.Text)+3) / 4
	}
	resp.Usage.ReasoningTokens = min(resp.Usage.ReasoningTokens, resp.Usage.OutputTokens)
	if err := stream.Err(); err != nil {
		return resp, p.wrapErr(ctx, err)
	}
	if !stopped {
		return resp, fmt.Errorf("%s: %w", p.name, ErrStreamCut)
	}
	return resp, nil
}

// anthropicUsage adds up the Messages API's separate input counts: its
// input_tokens leaves out what was read from or written to the cache.
func anthropicUsage(input, cacheRead, cacheWrite, output int64) Usage {
	return Usage{InputTokens: input + cacheRead + cacheWrite, OutputTokens: output, CachedTokens: cacheRead, CacheWriteTokens: cacheWrite}
}

func (p *Anthropic) wrapErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		e := &Error{Provider: p.name, StatusCode: apiErr.StatusCode, Message: apiMessage(apiErr.RawJSON()), Err: err}
		if e.StatusCode < 400 { // an "error" event in a stream that began with 200
			e.StatusCode, e.Type = 0, string(apiErr.Type())
		}
		return e
	}
	return streamError(p.name, p.base, err)
}

func anthropicParams(req Request) anthropic.MessageNewParams {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultAnthropicMaxTokens
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(req.Model),
		MaxTokens: int64(maxTokens),
	}
	thinking := req.Thinking.On() && thinkingAllowed(req.Messages)
	if thinking {
		// max_tokens covers the thinking and the answer; the budget must
		// stay below it.
		budget := req.Thinking.BudgetTokens()
		params.MaxTokens = int64(maxTokens + budget)
		params.Thinking = anthropic.ThinkingConfigParamOfEnabled(int64(budget))
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	for _, m := range req.Messages {
		if !thinking {
			m.Reasoning = nil // the API refuses thinking blocks in a final assistant turn without thinking on
		}
		mp, ok := anthropicMessage(m)
		if !ok {
			continue
		}
		// The API wants user and assistant turns to alternate: merge
		// consecutive messages of one role (e.g. tool results followed by
		// a new user message after an interrupted turn).
		if n := len(params.Messages); n > 0 && params.Messages[n-1].Role == mp.Role {
			params.Messages[n-1].Content = append(params.Messages[n-1].Content, mp.Content...)
			continue
		}
		params.Messages = append(params.Messages, mp)
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: anthropicTool(t)})
	}
	cacheBreakpoints(&params)
	if req.HasTemperature && !thinking { // thinking works at the default temperature only
		params.Temperature = anthropic.Float(req.Temperature)
	}
	if len(req.StopSequences) > 0 {
		params.StopSequences = req.StopSequences
	}
	return params
}

// anthropicThinking reports whether m holds thinking the Messages API can
// take back (a signed or redacted block).
func anthropicThinking(m Message) bool {
	for _, r := range m.Reasoning {
		if r.Signature != "" || r.Redacted != "" {
			return true
		}
	}
	return false
}

// thinkingAllowed reports whether thinking may be turned on for a request
// with these messages: with thinking on, the API refuses a tool loop in
// progress whose assistant turn has no thinking block (one begun with
// thinking off, or by another provider's model), so that request goes
// without; thinking comes back with the next message.
func thinkingAllowed(msgs []Message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		switch msgs[i].Role {
		case RoleTool:
			continue
		case RoleAssistant:
			if len(msgs[i].ToolCalls) > 0 && i < len(msgs)-1 {
				return anthropicThinking(msgs[i])
			}
		}
		return true
	}
	return true
}

// cacheBreakpoints marks the prompt cache's breakpoints: the tools, the
// system prompt and the latest turn, so that each request of a session
// reads what the one before wrote (prompts shorter than the model's
// minimum are simply not cached).
func cacheBreakpoints(params *anthropic.MessageNewParams) {
	cc := anthropic.NewCacheControlEphemeralParam()
	if n := len(params.Tools); n > 0 && params.Tools[n-1].OfTool != nil {
		params.Tools[n-1].OfTool.CacheControl = cc
	}
	if n := len(params.System); n > 0 {
		params.System[n-1].CacheControl = cc
	}
	if n := len(params.Messages); n > 0 {
		if blocks := params.Messages[n-1].Content; len(blocks) > 0 {
			if p := blocks[len(blocks)-1].GetCacheControl(); p != nil {
				*p = cc
			}
		}
	}
}

func anthropicTool(t ToolSpec) *anthropic.ToolParam {
	var schema map[string]any
	if len(t.InputSchema) > 0 {
		_ = json.Unmarshal(t.InputSchema, &schema)
	}
	in := anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}
	for k, v := range schema {
		switch k {
		case "type":
		case "properties":
			in.Properties = v
		case "required":
			if req, ok := v.([]any); ok {
				for _, r := range req {
					if s, ok := r.(string); ok {
						in.Required = append(in.Required, s)
					}
				}
			}
		default:
			in.ExtraFields[k] = v
		}
	}
	if in.Properties == nil {
		in.Properties = map[string]any{}
	}
	tp := &anthropic.ToolParam{Name: t.Name, InputSchema: in}
	if t.Description != "" {
		tp.Description = anthropic.String(t.Description)
	}
	return tp
}

// anthropicImageTypes are the media types the Messages API accepts.
var anthropicImageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

func anthropicImages(imgs []Image) (blocks []anthropic.ContentBlockParamUnion, described string) {
	var other []Image
	for _, img := range imgs {
		if !anthropicImageTypes[img.MIMEType] {
			other = append(other, img)
			continue
		}
		blocks = append(blocks, anthropic.NewImageBlockBase64(img.MIMEType, base64.StdEncoding.EncodeToString(img.Data)))
	}
	return blocks, describeImages(other)
}

func anthropicMessage(m Message) (anthropic.MessageParam, bool) {
	switch m.Role {
	case RoleUser:
		imgs, desc := anthropicImages(m.Images)
		var blocks []anthropic.ContentBlockParamUnion
		if text := m.Text + desc; text != "" {
			blocks = append(blocks, anthropic.NewTextBlock(text))
		}
		blocks = append(blocks, imgs...)
		return anthropic.NewUserMessage(blocks...), len(blocks) > 0
	case RoleAssistant:
		var blocks []anthropic.ContentBlockParamUnion
		// Thinking first, as the model wrote it, signatures unaltered.
		for _, r := range m.Reasoning {
			switch {
			case r.Redacted != "":
				blocks = append(blocks, anthropic.NewRedactedThinkingBlock(r.Redacted))
			case r.Signature != "":
				blocks = append(blocks, anthropic.NewThinkingBlock(r.Signature, r.Text))
			}
		}
		if text := assistantText(m); text != "" {
			blocks = append(blocks, anthropic.NewTextBlock(text))
		}
		for _, c := range m.ToolCalls {
			// The API wants an object; arguments that were not one were
			// refused by the tool layer, and the model was told so.
			var input any = map[string]any{}
			var obj map[string]any
			if json.Unmarshal(c.Args, &obj) == nil && obj != nil {
				input = json.RawMessage(c.Args)
			}
			blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, input, c.Name))
		}
		return anthropic.NewAssistantMessage(blocks...), len(blocks) > 0
	case RoleTool:
		var blocks []anthropic.ContentBlockParamUnion
		for _, r := range m.ToolResults {
			// The text of a result already describes its images; those
			// the API accepts are passed along as images too.
			imgs, _ := anthropicImages(r.Images)
			tr := anthropic.ToolResultBlockParam{ToolUseID: r.CallID}
			if r.Text != "" || len(imgs) == 0 {
				tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: nonEmpty(r.Text)}})
			}
			for _, img := range imgs {
				tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: img.OfImage})
			}
			if r.IsError {
				tr.IsError = anthropic.Bool(true)
			}
			blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolResult: &tr})
		}
		return anthropic.NewUserMessage(blocks...), len(blocks) > 0
	}
	return anthropic.MessageParam{}, false
}

// nonEmpty avoids empty text blocks, which the Messages API rejects.
func nonEmpty(s string) string {
	if s == "" {
		return "(no output)"
	}
	return s
}
