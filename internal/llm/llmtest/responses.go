package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// The OpenAI Responses API (POST /v1/responses), as a Server of kind
// Responses speaks it: the stream's event types and shapes, reasoning
// items with summaries and encrypted content, and the refusals of a
// stateless (store=false) conversation, in the API's words:
//   - a function_call without its function_call_output: "No tool output
//     found for function call call_…." (400, param input);
//   - a function_call_output without its call: "No tool call found for
//     function call output with call_id call_…." (400, param input);
//   - with store=false, a function_call that came after a reasoning item,
//     sent with its item id but without that reasoning item: "Item 'fc_…'
//     of type 'function_call' was provided without its required
//     'reasoning' item: 'rs_…'." (400, param input);
//   - a reasoning item not followed by an item of its own response: "Item
//     'rs_…' of type 'reasoning' was provided without its required
//     following item." (400, param input);
//   - with store=false, a reasoning item without its encrypted_content:
//     "Item with id 'rs_…' not found. Items are not persisted when `store`
//     is set to false. …" (404);
//   - encrypted content that is not what the server gave: "The encrypted
//     content for item rs_… could not be verified. …" (400,
//     invalid_encrypted_content);
//   - more than 128 tools, as Chat Completions (400, array_above_max_length);
//   - a prompt over ContextWindow: an error event inside the stream (the
//     response had begun with HTTP 200), code context_length_exceeded,
//     "Your input exceeds the context window of this model. …".
//
// The API pairs the items of a response by their ids even when it stores
// nothing; so does the fake, through the ids it issued (a registry shared
// by every Server of the test binary, as one API serves every client).

// Responses is the OpenAI Responses API protocol.
const Responses Kind = "responses"

// issued remembers, for each message and function_call item a response
// gave after a reasoning item, that reasoning item's id.
var issued = struct {
	sync.Mutex
	after map[string]string
}{after: map[string]string{}}

// responseSeq makes the ids of every response unique in the test binary.
var responseSeq atomic.Int64

func reasoningAfter(itemID string) string {
	issued.Lock()
	defer issued.Unlock()
	return issued.after[itemID]
}

// encryptReasoning is the encrypted_content the fake gives a reasoning
// item: its thinking, readable by the fake only in that it is signed with
// the item's id, so a client can only send back what it was given.
func encryptReasoning(id, thinking string) string {
	return "gAAAAB" + base64.StdEncoding.EncodeToString([]byte(thinking)) + "." + Sign(id+"\x00"+thinking)
}

// decryptReasoning returns the thinking of encrypted content the fake
// gave the item id, or false.
func decryptReasoning(id, enc string) (string, bool) {
	body, ok := strings.CutPrefix(enc, "gAAAAB")
	data, sig, found := strings.Cut(body, ".")
	if !ok || !found {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil || Sign(id+"\x00"+string(b)) != sig {
		return "", false
	}
	return string(b), true
}

// refusal is an API error with the status, param and code the real API
// gives it.
type refusal struct {
	status      int
	param, code string
	message     string
}

func (r *refusal) Error() string { return r.message }

func inputRefusal(format string, a ...any) *refusal {
	return &refusal{status: http.StatusBadRequest, param: "input", message: fmt.Sprintf(format, a...)}
}

// writeRefusal answers r in the OpenAI error shape.
func writeRefusal(w http.ResponseWriter, r *refusal) {
	var param, code any
	if r.param != "" {
		param = r.param
	}
	if r.code != "" {
		code = r.code
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(r.status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": r.message, "type": "invalid_request_error", "param": param, "code": code}})
}

// parseResponses reads a Responses API request body and checks its input
// as the API does.
func parseResponses(body map[string]any) (Request, error) {
	req := Request{Model: str(body["model"]), Stream: body["stream"] == true, MaxTokens: num(body["max_output_tokens"])}
	if req.Model == "" {
		return req, &refusal{status: http.StatusBadRequest, param: "model", message: "Missing required parameter: 'model'."}
	}
	req.System = str(body["instructions"])
	if eff := str(asMap(body["reasoning"])["effort"]); eff != "" {
		req.Effort = eff
	}
	for i, t := range asList(body["tools"]) {
		tm := asMap(t)
		if str(tm["type"]) != "function" {
			return req, &refusal{status: http.StatusBadRequest, param: fmt.Sprintf("tools[%d].type", i), message: fmt.Sprintf("Invalid value: '%s'. Supported values are: 'function', 'file_search', 'web_search' and others.", str(tm["type"]))}
		}
		if _, ok := tm["parameters"].(map[string]any); !ok {
			return req, &refusal{status: http.StatusBadRequest, param: fmt.Sprintf("tools[%d].parameters", i), message: fmt.Sprintf("Invalid type for 'tools[%d].parameters': expected an object, but got null instead.", i)}
		}
		req.Tools = append(req.Tools, str(tm["name"]))
	}
	stored := body["store"] != false // the API stores by default
	items := asList(body["input"])
	if s, ok := body["input"].(string); ok {
		items = []any{map[string]any{"role": "user", "content": s}}
	}
	var pending []string // call ids awaiting their output, in order
	calls := map[string]bool{}
	assistant := func() *Message {
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "assistant" {
			return &req.Messages[n-1]
		}
		req.Messages = append(req.Messages, Message{Role: "assistant"})
		return &req.Messages[len(req.Messages)-1]
	}
	for i, it := range items {
		im := asMap(it)
		typ := str(im["type"])
		if typ == "" && im["role"] != nil {
			typ = "message"
		}
		switch typ {
		case "message":
			role := str(im["role"])
			text := contentText(im["content"])
			switch role {
			case "system", "developer":
				req.System += text
			case "user":
				req.Messages = append(req.Messages, Message{Role: "user", Text: text, Images: contentImages(im["content"])})
			case "assistant":
				if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "assistant" && len(req.Messages[n-1].ToolCalls) > 0 {
					req.Messages = append(req.Messages, Message{Role: "assistant"})
				}
				assistant().Text += text
			default:
				return req, &refusal{status: http.StatusBadRequest, param: fmt.Sprintf("input[%d].role", i), message: fmt.Sprintf("Invalid value: '%s'. Supported values are: 'assistant', 'system', 'developer', and 'user'.", role)}
			}
		case "reasoning":
			id := str(im["id"])
			enc, hasEnc := im["encrypted_content"].(string)
			if !hasEnc && !stored {
				return req, &refusal{status: http.StatusNotFound, param: "input", message: fmt.Sprintf(
					"Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", id)}
			}
			thinking, ok := decryptReasoning(id, enc)
			if hasEnc && !ok {
				return req, &refusal{status: http.StatusBadRequest, code: "invalid_encrypted_content", message: fmt.Sprintf(
					"The encrypted content for item %s could not be verified. Reason: Encrypted content could not be decrypted or parsed.", id)}
			}
			if i+1 >= len(items) || reasoningAfter(str(asMap(items[i+1])["id"])) != id {
				return req, inputRefusal("Item '%s' of type 'reasoning' was provided without its required following item.", id)
			}
			a := assistant()
			if len(a.ToolCalls) > 0 { // a new turn's reasoning
				req.Messages = append(req.Messages, Message{Role: "assistant"})
				a = &req.Messages[len(req.Messages)-1]
			}
			a.Thinking = append(a.Thinking, thinking)
		case "function_call":
			id, callID := str(im["id"]), str(im["call_id"])
			if rs := reasoningAfter(id); rs != "" && !stored && !reasoningBefore(items, i, rs) {
				return req, inputRefusal("Item '%s' of type 'function_call' was provided without its required 'reasoning' item: '%s'.", id, rs)
			}
			if callID == "" {
				return req, &refusal{status: http.StatusBadRequest, param: fmt.Sprintf("input[%d].call_id", i), message: fmt.Sprintf("Missing required parameter: 'input[%d].call_id'.", i)}
			}
			a := assistant()
			a.ToolCalls = append(a.ToolCalls, Call{ID: callID, Name: str(im["name"]), Args: str(im["arguments"])})
			pending = append(pending, callID)
			calls[callID] = true
		case "function_call_output":
			callID := str(im["call_id"])
			if !calls[callID] {
				return req, inputRefusal("No tool call found for function call output with call_id %s.", callID)
			}
			for j, p := range pending {
				if p == callID {
					pending = append(pending[:j], pending[j+1:]...)
					break
				}
			}
			tr := ToolResult{CallID: callID}
			if s, ok := im["output"].(string); ok {
				tr.Text = s
			} else {
				for _, p := range asList(im["output"]) {
					pm := asMap(p)
					switch str(pm["type"]) {
					case "input_text":
						tr.Text += str(pm["text"])
					case "input_image":
						tr.Images++
					}
				}
			}
			tr.IsError = strings.HasPrefix(tr.Text, "Error: ")
			if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
				req.Messages[n-1].ToolResults = append(req.Messages[n-1].ToolResults, tr)
			} else {
				req.Messages = append(req.Messages, Message{Role: "tool", ToolResults: []ToolResult{tr}})
			}
		default:
			return req, &refusal{status: http.StatusBadRequest, param: fmt.Sprintf("input[%d]", i), message: fmt.Sprintf("Invalid value: '%s'. Supported values are: 'message', 'reasoning', 'function_call', 'function_call_output' and others.", typ)}
		}
	}
	if len(pending) > 0 {
		return req, inputRefusal("No tool output found for function call %s.", pending[0])
	}
	return req, nil
}

// reasoningBefore reports whether the items of the turn that holds
// items[i] (the assistant's message, reasoning and function_call items
// just before it) include the reasoning item rs.
func reasoningBefore(items []any, i int, rs string) bool {
	for j := i - 1; j >= 0; j-- {
		im := asMap(items[j])
		switch str(im["type"]) {
		case "reasoning":
			if str(im["id"]) == rs {
				return true
			}
		case "function_call":
		case "message":
			if str(im["role"]) != "assistant" {
				return false
			}
		default:
			return false
		}
	}
	return false
}

// reasoningOn reports whether a Responses request has the model reason,
// whether it asks for the summaries and for the encrypted content.
func reasoningOn(body map[string]any) (on, summary, encrypted bool) {
	r := asMap(body["reasoning"])
	eff := str(r["effort"])
	on = eff != "" && eff != "none"
	summary = str(r["summary"]) != ""
	for _, inc := range asList(body["include"]) {
		if str(inc) == "reasoning.encrypted_content" {
			encrypted = true
		}
	}
	return on, summary, encrypted
}

// streamResponses plays reply as the Responses API streams a response.
func (s *Server) streamResponses(w http.ResponseWriter, r *http.Request, reply Reply, model string, body map[string]any) {
	e := startSSE(w)
	seq := 0
	send := func(typ string, ev map[string]any) {
		ev["type"], ev["sequence_number"] = typ, seq
		seq++
		e.send(typ, ev)
	}
	n := responseSeq.Add(1)
	h := fmt.Sprintf("%08x%016x", 0x68f1e0, n)
	response := map[string]any{"id": "resp_" + h, "object": "response", "created_at": 1700000000, "status": "in_progress",
		"model": model, "output": []any{}, "usage": nil, "error": nil, "incomplete_details": nil, "store": body["store"] != false}
	snapshot := func() map[string]any {
		c := map[string]any{}
		for k, v := range response {
			c[k] = v
		}
		return c
	}
	send("response.created", map[string]any{"response": snapshot()})
	send("response.in_progress", map[string]any{"response": snapshot()})
	if reply.Cut {
		panic(http.ErrAbortHandler)
	}
	if reply.StreamError != "" {
		response["status"] = "failed"
		response["error"] = map[string]any{"code": reply.StreamError, "message": "The server had an error processing your request. Sorry about that! You can retry your request."}
		send("response.failed", map[string]any{"response": snapshot()})
		return
	}
	if reply.Malformed {
		e.raw("event: response.output_item.added\ndata: {\"type\": \"response.output_item.added\", oops\n\n")
		return
	}
	var output []any
	added := func(item map[string]any) int {
		send("response.output_item.added", map[string]any{"output_index": len(output), "item": item})
		return len(output)
	}
	done := func(item map[string]any) {
		send("response.output_item.done", map[string]any{"output_index": len(output), "item": item})
		output = append(output, item)
	}
	var reasoningTokens int64
	on, summary, encrypted := reasoningOn(body)
	rsID := ""
	if on && len(reply.Thinking) > 0 {
		rsID = "rs_" + h + "00"
		thinking := strings.Join(reply.Thinking, "")
		reasoningTokens = int64(EstimateTokens([]byte(thinking)))
		oi := added(map[string]any{"id": rsID, "type": "reasoning", "summary": []any{}})
		summaries := []any{}
		if summary {
			part := func(text string) map[string]any { return map[string]any{"type": "summary_text", "text": text} }
			send("response.reasoning_summary_part.added", map[string]any{"item_id": rsID, "output_index": oi, "summary_index": 0, "part": part("")})
			for _, t := range reply.Thinking {
				send("response.reasoning_summary_text.delta", map[string]any{"item_id": rsID, "output_index": oi, "summary_index": 0, "delta": t})
			}
			send("response.reasoning_summary_text.done", map[string]any{"item_id": rsID, "output_index": oi, "summary_index": 0, "text": thinking})
			send("response.reasoning_summary_part.done", map[string]any{"item_id": rsID, "output_index": oi, "summary_index": 0, "part": part(thinking)})
			summaries = append(summaries, part(thinking))
		}
		item := map[string]any{"id": rsID, "type": "reasoning", "summary": summaries}
		if encrypted {
			item["encrypted_content"] = encryptReasoning(rsID, thinking)
		}
		done(item)
	}
	follows := func(id string) {
		if rsID != "" {
			issued.Lock()
			issued.after[id] = rsID
			issued.Unlock()
		}
	}
	if len(reply.Text) > 0 {
		id := "msg_" + h + "01"
		follows(id)
		oi := added(map[string]any{"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}})
		send("response.content_part.added", map[string]any{"item_id": id, "output_index": oi, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		if !textChunks(r, reply, func(t string) {
			send("response.output_text.delta", map[string]any{"item_id": id, "output_index": oi, "content_index": 0, "delta": t, "logprobs": []any{}})
		}) {
			return
		}
		text := strings.Join(reply.Text, "")
		part := map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
		send("response.output_text.done", map[string]any{"item_id": id, "output_index": oi, "content_index": 0, "text": text, "logprobs": []any{}})
		send("response.content_part.done", map[string]any{"item_id": id, "output_index": oi, "content_index": 0, "part": part})
		done(map[string]any{"id": id, "type": "message", "status": "completed", "role": "assistant", "content": []any{part}})
	}
	for i, c := range reply.Calls {
		id := fmt.Sprintf("fc_%s%02d", h, i+2)
		follows(id)
		oi := added(map[string]any{"id": id, "type": "function_call", "status": "in_progress", "call_id": c.ID, "name": c.Name, "arguments": ""})
		for _, p := range argPieces(c.Args) {
			send("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": oi, "delta": p})
		}
		send("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": oi, "arguments": c.Args})
		done(map[string]any{"id": id, "type": "function_call", "status": "completed", "call_id": c.ID, "name": c.Name, "arguments": c.Args})
	}
	out := max(reply.OutputTokens, reasoningTokens)
	response["output"] = output
	response["usage"] = map[string]any{
		"input_tokens": reply.InputTokens, "input_tokens_details": map[string]any{"cached_tokens": reply.CachedTokens},
		"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": reasoningTokens},
		"total_tokens": reply.InputTokens + out,
	}
	if reply.AtLimit {
		response["status"] = "incomplete"
		response["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
		send("response.incomplete", map[string]any{"response": snapshot()})
		return
	}
	response["status"] = "completed"
	send("response.completed", map[string]any{"response": snapshot()})
}

// streamContextError refuses a prompt over the window as the Responses API
// does: the stream has begun (HTTP 200) when it finds out.
func streamContextError(w http.ResponseWriter, model, message string) {
	e := startSSE(w)
	response := map[string]any{"id": fmt.Sprintf("resp_%08x%016x", 0x68f1e0, responseSeq.Add(1)), "object": "response",
		"created_at": 1700000000, "status": "in_progress", "model": model, "output": []any{}, "usage": nil, "error": nil}
	e.send("response.created", map[string]any{"type": "response.created", "sequence_number": 0, "response": response})
	e.send("response.in_progress", map[string]any{"type": "response.in_progress", "sequence_number": 1, "response": response})
	e.send("error", map[string]any{"type": "error", "sequence_number": 2, "error": map[string]any{
		"type": "invalid_request_error", "code": "context_length_exceeded", "message": message, "param": "input"}})
}
