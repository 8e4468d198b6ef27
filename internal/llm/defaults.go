package llm

import (
	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3/shared"
)

// Provider types of [providers.NAME].type.
const (
	TypeOpenAI    = "openai"
	TypeAnthropic = "anthropic"
	// TypeOpenAIResponses is the OpenAI Responses API (see Responses).
	TypeOpenAIResponses = "openai-responses"
)

// Default models used when neither [agent].model nor the provider's model
// names one.
const (
	DefaultAnthropicModel = string(anthropic.ModelClaudeSonnet4_6)
	DefaultOpenAIModel    = string(shared.ChatModelGPT5_4Mini)
)
