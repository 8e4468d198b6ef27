package llm

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// Responses is a Provider speaking the OpenAI Responses API, chosen with
// [providers.NAME] type = "openai-responses" (TypeOpenAIResponses). One
// key, the one that already picks the API, says which API a provider
// speaks: a value of type rather than a second key, so that no
// combination of two keys can be wrong. The official OpenAI API's
// reasoning models show their reasoning (summaries) and carry it across a
// tool loop only through this API; Chat Completions ("openai") stays the
// type for the compatible servers (Ollama, vLLM, LM Studio, OpenRouter),
// some of which speak only that.
//
// Requests ask the API to store nothing (store=false): otter keeps the
// conversation itself. With thinking on, the reasoning items come back
// with their encrypted_content, are kept in the assistant message
// (Message.Reasoning, stored in sessions) and are sent back in the tool
// loop before the calls they led to, as the API requires.
//
// It shares the Chat Completions provider's client: the models list, the
// 128-tool cap and the window probing of compatible servers are the same.
type Responses struct {
	*OpenAI
}

// NewResponses returns a Provider for the OpenAI Responses API at the
// official API or a server compatible with it.
func NewResponses(opts Options) *Responses {
	return &Responses{OpenAI: NewOpenAI(opts)}
}

// Stream implements Provider.
func (p *Responses) Stream(ctx context.Context, req Request, emit func(Event)) (*Response, error) {
	params := responsesParams(req)
	return streamCall(ctx, p.name, p.base, emit, func(ctx context.Context, emit func(Event)) (*Response, error) {
		return p.stream(ctx, params, emit)
	})
}

func (p *Responses) stream(ctx context.Context, params responses.ResponseNewParams, emit func(Event)) (*Response, error) {
	resp := &Response{StopReason: StopOther}
	stream := p.client.Responses.NewStreaming(ctx, params)
	defer stream.Close()

	calls := map[string]int{}    // function_call item id → index in resp.ToolCalls
	args := map[string][]byte{}  // function_call item id → arguments so far
	thoughts := map[string]int{} // reasoning item id → index in resp.Reasoning
	parts := map[string]int64{}  // reasoning item id → summary parts seen
	var failed error
	finished := false
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.output_item.added":
			switch it := ev.Item; it.Type {
			case "function_call":
				calls[it.ID] = len(resp.ToolCalls)
				resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: it.CallID, Name: it.Name, ItemID: it.ID})
				emit(ToolCallDelta{Index: calls[it.ID], ID: it.CallID, Name: it.Name})
			case "reasoning":
				thoughts[it.ID] = len(resp.Reasoning)
				resp.Reasoning = append(resp.Reasoning, Reasoning{ID: it.ID})
			}
		case "response.output_text.delta", "response.refusal.delta":
			if ev.Delta != "" {
				resp.Text += ev.Delta
				emit(TextDelta{Text: ev.Delta})
			}
		case "response.reasoning_summary_text.delta":
			i, ok := thoughts[ev.ItemID]
			if !ok || ev.Delta == "" {
				continue
			}
			text := ev.Delta
			// Each summary part is a paragraph of its own.
			if ev.SummaryIndex > 0 && parts[ev.ItemID] <= ev.SummaryIndex {
				text = "\n\n" + text
			}
			parts[ev.ItemID] = ev.SummaryIndex + 1
			resp.Reasoning[i].Text += text
			emit(ReasoningDelta{Text: text})
		case "response.function_call_arguments.delta":
			args[ev.ItemID] = append(args[ev.ItemID], ev.Delta...)
		case "response.function_call_arguments.done":
			args[ev.ItemID] = []byte(ev.Arguments)
		case "response.output_item.done":
			switch it := ev.Item; it.Type {
			case "function_call":
				if i, ok := calls[it.ID]; ok && it.Arguments.OfString != "" {
					args[it.ID] = []byte(it.Arguments.OfString)
					resp.ToolCalls[i].ID = it.CallID
				}
			case "reasoning":
				// The encrypted content is whole only now.
				if i, ok := thoughts[it.ID]; ok {
					resp.Reasoning[i].Encrypted = it.EncryptedContent
				}
			}
		case "response.completed", "response.incomplete":
			finished = true
			r := ev.Response
			u := r.Usage
			resp.Usage = Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
				CachedTokens: u.InputTokensDetails.CachedTokens, ReasoningTokens: u.OutputTokensDetails.ReasoningTokens}
			switch {
			case ev.Type == "response.completed" && len(resp.ToolCalls) > 0:
				resp.StopReason = StopToolUse
			case ev.Type == "response.completed":
				resp.StopReason = StopEndTurn
			case r.IncompleteDetails.Reason == "max_output_tokens":
				resp.StopReason = StopMaxTokens
			}
		case "response.failed":
			e := ev.Response.Error
			failed = &Error{Provider: p.name, Type: string(e.Code), Code: string(e.Code), Message: e.Message}
		case "error":
			failed = &Error{Provider: p.name, Type: ev.Code, Code: ev.Code, Message: ev.Message}
		}
	}
	for id, i := range calls {
		resp.ToolCalls[i].Args = normalizeArgs(args[id])
	}
	if err := stream.Err(); err != nil {
		return resp, p.wrapErr(ctx, err)
	}
	if failed != nil {
		return resp, failed
	}
	if !finished {
		return resp, fmt.Errorf("%s: %w", p.name, ErrStreamCut)
	}
	return resp, nil
}

// responsesParams builds a request. With thinking on it sets
// reasoning.effort (off, low, medium, high as configured; a token budget
// counts as high), asks for the reasoning summaries to show and for the
// encrypted reasoning to carry back; with thinking off it sends no
// reasoning settings at all, since the API refuses them (and the
// encrypted content) for models that do not reason. max_output_tokens
// covers the reasoning too, so with thinking on it gets the room the
// thinking budget would have on Anthropic; a temperature is sent only with
// thinking off, as reasoning models refuse one.
func responsesParams(req Request) responses.ResponseNewParams {
	params := responses.ResponseNewParams{
		Model: shared.ResponsesModel(req.Model),
		Store: openai.Bool(false),
	}
	if req.System != "" {
		params.Instructions = openai.String(req.System)
	}
	thinking := req.Thinking.On()
	if thinking {
		params.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(req.Thinking.Effort), Summary: shared.ReasoningSummaryAuto}
		params.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	}
	if req.MaxTokens > 0 {
		n := req.MaxTokens
		if thinking {
			n += req.Thinking.BudgetTokens()
		}
		params.MaxOutputTokens = openai.Int(int64(n))
	}
	if req.HasTemperature && !thinking {
		params.Temperature = openai.Float(req.Temperature)
	}
	var items responses.ResponseInputParam
	for _, m := range req.Messages {
		items = append(items, responsesItems(m)...)
	}
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	for _, t := range req.Tools {
		// Not strict: strict mode wants every property required and no
		// additional ones, which MCP servers' schemas seldom are.
		tool := responses.ToolParamOfFunction(t.Name, openaiSchema(t), false)
		if t.Description != "" {
			tool.OfFunction.Description = openai.String(t.Description)
		}
		params.Tools = append(params.Tools, tool)
	}
	return params
}

// responsesItems is m as input items.
//
// An assistant turn that called tools goes back as its text, then its
// reasoning items (id, summary, encrypted content), then its function
// calls with their item ids: the API pairs each call with the reasoning
// before it by those ids, and refuses a paired call whose reasoning is
// missing — so a turn whose reasoning was lost fails loudly rather than
// going on without it. A turn whose reasoning the API cannot take back
// (no encrypted content: thinking was off, or the stream was cut) sends
// its calls without ids, so that nothing is paired. The reasoning of a
// turn that called no tools is not sent: the API keeps reasoning only
// within a tool loop.
func responsesItems(m Message) []responses.ResponseInputItemUnionParam {
	switch m.Role {
	case RoleUser:
		if len(m.Images) == 0 {
			return []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage(m.Text, responses.EasyInputMessageRoleUser)}
		}
		var content responses.ResponseInputMessageContentListParam
		if m.Text != "" {
			content = append(content, responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: m.Text}})
		}
		for _, img := range m.Images {
			content = append(content, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
				Detail: responses.ResponseInputImageDetailAuto, ImageURL: openai.String(dataURL(img)),
			}})
		}
		return []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage(content, responses.EasyInputMessageRoleUser)}
	case RoleAssistant:
		var items []responses.ResponseInputItemUnionParam
		if text := assistantText(m); text != "" {
			items = append(items, responses.ResponseInputItemParamOfMessage(text, responses.EasyInputMessageRoleAssistant))
		}
		if len(m.ToolCalls) == 0 {
			return items
		}
		paired := responsesReasoning(m)
		ids := paired || len(m.Reasoning) == 0
		if paired {
			for _, r := range m.Reasoning {
				summary := []responses.ResponseReasoningItemSummaryParam{}
				if r.Text != "" {
					summary = append(summary, responses.ResponseReasoningItemSummaryParam{Text: r.Text})
				}
				items = append(items, responses.ResponseInputItemUnionParam{OfReasoning: &responses.ResponseReasoningItemParam{
					ID: r.ID, Summary: summary, EncryptedContent: openai.String(r.Encrypted),
				}})
			}
		}
		for _, c := range m.ToolCalls {
			fc := responses.ResponseFunctionToolCallParam{CallID: c.ID, Name: c.Name, Arguments: string(c.Args)}
			if ids && c.ItemID != "" {
				fc.ID = openai.String(c.ItemID)
			}
			items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCall: &fc})
		}
		return items
	case RoleTool:
		var items []responses.ResponseInputItemUnionParam
		for _, r := range m.ToolResults {
			text := openaiResultText(r)
			out := responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(text)}
			if len(r.Images) > 0 {
				// The text already describes the images; they go along
				// as images too.
				list := responses.ResponseFunctionCallOutputItemListParam{{OfInputText: &responses.ResponseInputTextContentParam{Text: text}}}
				for _, img := range r.Images {
					list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{
						ImageURL: openai.String(dataURL(img)),
					}})
				}
				out = responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfResponseFunctionCallOutputItemArray: list}
			}
			items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
				CallID: openai.String(r.CallID), Output: out,
			}})
		}
		return items
	}
	return nil
}

// responsesReasoning reports whether m's reasoning can go back to the
// Responses API whole: it has some, and each item is one of the API's
// with its id and encrypted content (the API stores nothing it could look
// the rest up in; Anthropic's thinking has neither).
func responsesReasoning(m Message) bool {
	for _, r := range m.Reasoning {
		if r.ID == "" || r.Encrypted == "" {
			return false
		}
	}
	return len(m.Reasoning) > 0
}

// dataURL is img inline, as the OpenAI APIs take images.
func dataURL(img Image) string {
	return "data:" + img.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}
