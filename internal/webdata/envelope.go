package webdata

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/tool"
)

// Envelope statuses.
const (
	StatusSuccess = "success"
	StatusPartial = "partial"
	StatusFailed  = "failed"
)

// Envelope is the response of every tool (seed 000 §3.1). It is a tool
// Result's StructuredContent (as *Envelope) and, as indented JSON, its text.
type Envelope struct {
	ID         string    `json:"id"`
	Tool       string    `json:"tool"`
	Timestamp  time.Time `json:"timestamp"`
	DurationMS int64     `json:"duration_ms"`
	// Status is success, partial (a result with errors, e.g. some
	// selectors found nothing) or failed (no result).
	Status   string      `json:"status"`
	Result   any         `json:"result"`
	Metadata Metadata    `json:"metadata"`
	Errors   []ErrorInfo `json:"errors"`
}

// Metadata is the envelope's metadata.
type Metadata struct {
	RequestID      string         `json:"request_id"`
	QuotaRemaining *int           `json:"quota_remaining,omitempty"`
	RateLimit      *RateLimitInfo `json:"rate_limit,omitempty"`
}

// RateLimitInfo describes the caller's token bucket for the tool after the
// call; it is absent when the tool is not limited.
type RateLimitInfo struct {
	Limit      float64   `json:"limit"` // requests per minute
	Burst      int       `json:"burst"`
	Remaining  int       `json:"remaining"`
	ResetAt    time.Time `json:"reset_at"`              // when the bucket is full again
	RetryAfter int       `json:"retry_after,omitempty"` // seconds; set when the call was refused
}

// ErrorInfo is one entry of the envelope's errors (seed 000 §3.2).
type ErrorInfo struct {
	Code        string         `json:"code"`
	Message     string         `json:"message"`
	Field       string         `json:"field,omitempty"` // the argument or extracted field concerned
	Details     map[string]any `json:"details,omitempty"`
	Suggestion  string         `json:"suggestion,omitempty"`
	Recoverable bool           `json:"recoverable"`
}

// recoverable says which codes may succeed on a retry (seed 000 §3.3).
var recoverable = map[string]bool{
	CodeRateLimited: true, CodeNetworkTimeout: true, CodeNetworkError: true, CodeParseError: true,
	CodeCaptchaRequired: true, CodeBlocked: true, CodeInternalError: true, CodeUpstreamRateLimited: true,
}

func newError(code, msg, suggestion string) ErrorInfo {
	return ErrorInfo{Code: code, Message: msg, Suggestion: suggestion, Recoverable: recoverable[code]}
}

func invalidParams(field, format string, args ...any) ErrorInfo {
	e := newError(CodeInvalidParams, fmt.Sprintf(format, args...), "fix the arguments and call again")
	e.Field = field
	return e
}

// toResult renders the envelope as a tool result.
func (e *Envelope) toResult() (*tool.Result, error) {
	text, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("%s: encoding the response: %w", e.Tool, err)
	}
	return &tool.Result{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(text)}},
		StructuredContent: e,
		IsError:           e.Status == StatusFailed,
	}, nil
}

// Refusal is the answer to a call of toolName refused before the tool ran
// (by a server's daily quota, say): a failed envelope like any other, so a
// client that checks answers against the tool's output schema accepts it.
func Refusal(toolName string, now time.Time, e ErrorInfo) *tool.Result {
	env := &Envelope{
		ID:        newRequestID(),
		Tool:      toolName,
		Timestamp: now.UTC(),
		Status:    StatusFailed,
		Errors:    []ErrorInfo{e},
	}
	env.Metadata.RequestID = env.ID
	res, err := env.toResult()
	if err != nil { // an Envelope of strings and maps always encodes
		panic(err)
	}
	return res
}

// envelopeSchema is every tool's output schema.
const envelopeSchema = `{
  "type": "object",
  "required": ["id", "tool", "timestamp", "duration_ms", "status", "result", "metadata", "errors"],
  "properties": {
    "id": {"type": "string"},
    "tool": {"type": "string"},
    "timestamp": {"type": "string", "format": "date-time"},
    "duration_ms": {"type": "integer"},
    "status": {"type": "string", "enum": ["success", "partial", "failed"]},
    "result": {"type": ["object", "null"], "description": "the tool's result; null when status is failed"},
    "metadata": {
      "type": "object",
      "properties": {
        "request_id": {"type": "string"},
        "quota_remaining": {"type": "integer"},
        "rate_limit": {
          "type": "object",
          "properties": {
            "limit": {"type": "number", "description": "requests per minute"},
            "burst": {"type": "integer"},
            "remaining": {"type": "integer"},
            "reset_at": {"type": "string", "format": "date-time"},
            "retry_after": {"type": "integer", "description": "seconds to wait; set when the call was refused"}
          }
        }
      }
    },
    "errors": {
      "type": "array",
      "items": {
        "type": "object",
        "required": ["code", "message", "recoverable"],
        "properties": {
          "code": {"type": "string", "enum": ["INVALID_PARAMS", "UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "RATE_LIMITED", "NETWORK_TIMEOUT", "NETWORK_ERROR", "PARSE_ERROR", "CAPTCHA_REQUIRED", "BLOCKED", "INTERNAL_ERROR", "QUOTA_EXCEEDED", "UPSTREAM_RATE_LIMITED"]},
          "message": {"type": "string"},
          "field": {"type": "string"},
          "details": {"type": "object"},
          "suggestion": {"type": "string"},
          "recoverable": {"type": "boolean"}
        }
      }
    }
  }
}`
