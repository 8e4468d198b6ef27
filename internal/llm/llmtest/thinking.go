package llmtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
)

// signKey signs the fake's thinking blocks: a client cannot forge a
// signature, only send back what it was given, as with the real API.
var signKey = []byte("llmtest thinking")

// Sign is the signature the fake Anthropic server gives a thinking block
// with this text (and checks when the block comes back).
func Sign(thinking string) string {
	m := hmac.New(sha256.New, signKey)
	m.Write([]byte(thinking))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// thinkingDocs is where the API's messages about thinking send people.
const thinkingDocs = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"

// checkThinking refuses what the Messages API refuses about extended
// thinking, with its wording: a budget under 1,024 tokens or not below
// max_tokens, a temperature with thinking on, thinking on while the final
// assistant turn of a tool loop in progress does not start with its
// thinking, and thinking blocks in the final assistant turn with thinking
// off.
func checkThinking(body map[string]any) error {
	th := asMap(body["thinking"])
	on := str(th["type"]) == "enabled"
	if on {
		budget := num(th["budget_tokens"])
		if budget < 1024 {
			return fmt.Errorf("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
		}
		if budget >= num(body["max_tokens"]) {
			return fmt.Errorf("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at %s#max-tokens-and-context-window-size", thinkingDocs)
		}
		if t, ok := body["temperature"].(float64); ok && t != 1 {
			return fmt.Errorf("`temperature` may only be set to 1 when thinking is enabled or in interleaved thinking mode. Please consult our documentation at %s#important-considerations-when-using-extended-thinking", thinkingDocs)
		}
	}
	msgs := asList(body["messages"])
	// The final assistant turn: the last assistant message, when only its
	// tool results follow it.
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if str(asMap(msgs[i])["role"]) == "assistant" {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	blocks := asList(asMap(msgs[last])["content"])
	hasToolUse := false
	for _, b := range blocks {
		if str(asMap(b)["type"]) == "tool_use" {
			hasToolUse = true
		}
	}
	inLoop := hasToolUse && last == len(msgs)-2 && onlyToolResults(asMap(msgs[last+1]))
	final := last == len(msgs)-1 || inLoop
	if on && inLoop && len(blocks) > 0 {
		first := str(asMap(blocks[0])["type"])
		if first != "thinking" && first != "redacted_thinking" {
			return fmt.Errorf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. "+
				"When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). "+
				"We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at %s", last, first, thinkingDocs)
		}
	}
	if !on && final {
		for j, b := range blocks {
			if t := str(asMap(b)["type"]); t == "thinking" || t == "redacted_thinking" {
				return fmt.Errorf("messages.%d.content.%d: When thinking is disabled, an `assistant` message in the final position cannot contain `%s`. To use thinking blocks, enable `thinking` in your request.", last, j, t)
			}
		}
	}
	return nil
}

func onlyToolResults(m map[string]any) bool {
	blocks := asList(m["content"])
	for _, b := range blocks {
		if str(asMap(b)["type"]) != "tool_result" {
			return false
		}
	}
	return len(blocks) > 0
}
