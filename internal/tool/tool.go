// Package tool defines what a tool is to otter and the Set that merges
// otter's built-in tools with the tools of every connected MCP server into
// the one list the agent, the TUI and the CLI see.
//
// It may import the leaf packages schema (argument validation), render
// (results as text for a model), toolname (qualified names) and
// toolsearch, never config, the MCP client manager or a front end.
package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Info describes a tool. Content, results and annotations use the MCP
// types: MCP is the lingua franca of otter's tools, built-in ones included.
type Info struct {
	// Name is the tool's own name: a built-in's name ("scrape_page"), or the
	// name an MCP server gave it ("get-sum"). The Set derives the qualified
	// name offered to models (see Entry.Name).
	Name        string
	Server      string // the MCP server's configured name; "" for built-ins
	Title       string
	Description string
	InputSchema json.RawMessage // a JSON Schema object; never nil
	// OutputSchema is the tool's declared output schema, if any.
	OutputSchema json.RawMessage
	Annotations  *mcp.ToolAnnotations // may be nil
	// PermissionGroup is a built-in tool's permission group: "basic",
	// "network" (it fetches what the model names), "file" (it writes
	// files) or "command" (it runs a command); "" for MCP tools.
	PermissionGroup string
	// Unsupported says why otter cannot call the tool ("needs MCP tasks
	// (not supported yet)"); "" for a tool it can call. Such a tool is
	// listed, marked with the reason, but never offered to a model.
	Unsupported string
	// HeldBack says why a server's tool is held back (HeldBackChanged,
	// HeldBackNew): its definition is not the one pinned when otter first
	// saw the server's tools, and the person has not approved it yet.
	// Such a tool is listed, marked, but not offered to a model nor found
	// by Search, and calling it returns a *HeldBackError. "" for a tool
	// that is offered.
	HeldBack string
}

// Offered reports whether a model may be offered the tool: otter can
// call it and it is not held back.
func (i Info) Offered() bool { return i.Unsupported == "" && i.HeldBack == "" }

// Why a server's tool is held back (Info.HeldBack).
const (
	HeldBackChanged = "its definition changed since it was pinned"
	HeldBackNew     = "the server added it since its tools were pinned"
)

// HeldBackError is the error of a call of a held-back tool (see
// Info.HeldBack). Its text is for a model and a person alike; a front end
// adds how to review and approve the change.
type HeldBackError struct {
	Tool   string // the qualified name
	Server string
	Name   string // the server's own name for it
	Reason string // HeldBackChanged or HeldBackNew
}

func (e *HeldBackError) Error() string {
	return fmt.Sprintf("%s is held back: %s, and the user has not approved it; it cannot be called until the user reviews the change and approves it",
		e.Tool, e.Reason)
}

// heldBackError is the error of a call of e's tool when it is held back,
// else nil.
func heldBackError(e Entry) error {
	if e.Info.HeldBack == "" {
		return nil
	}
	return &HeldBackError{Tool: e.Name, Server: e.Info.Server, Name: e.Info.Name, Reason: e.Info.HeldBack}
}

// ReadOnly reports the readOnlyHint annotation.
func (i Info) ReadOnly() bool { return i.Annotations != nil && i.Annotations.ReadOnlyHint }

// NeedsConsent reports whether the agent asks before it runs the tool
// (unless a rule or the session allows it), and why: tools that are not
// read-only, and built-ins of the "network" and "file" permission groups,
// read-only or not, since what a model fetches can carry data out, and
// those that run a command. A Gated tool decides per call instead.
func (i Info) NeedsConsent() (bool, string) {
	switch {
	case i.PermissionGroup == "network":
		return true, "it reaches the network"
	case i.PermissionGroup == "file":
		return true, "it writes files"
	case i.PermissionGroup == "command":
		return true, "it runs a command"
	case !i.ReadOnly():
		return true, "it is not read-only"
	}
	return false, ""
}

// Destructive reports the destructiveHint annotation. Per the MCP spec a
// missing hint means true for tools that are not read-only.
func (i Info) Destructive() bool {
	if i.Annotations == nil {
		return true
	}
	if i.Annotations.ReadOnlyHint {
		return false
	}
	return i.Annotations.DestructiveHint == nil || *i.Annotations.DestructiveHint
}

// Result is what a tool call returns: every MCP content type is kept
// (text, image, audio, resource_link, embedded resource) along with
// structuredContent and the isError flag.
type Result = mcp.CallToolResult

// TextResult is a Result of one text content.
func TextResult(text string) *Result {
	return &Result{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// A Tool can be called with JSON arguments. Call returns an error only when
// the call could not be made or completed (transport failure, timeout,
// cancellation); a tool that ran and failed returns a Result with IsError.
type Tool interface {
	Info() Info
	Call(ctx context.Context, args json.RawMessage) (*Result, error)
}

// Preparer is a Tool that gets ready for a call when it is likely to come:
// a tool of an MCP server that is idle until needed starts the server
// (in the background; Prepare does not block).
type Preparer interface {
	Prepare()
}

// InvalidArgumentsAnswerer is a Tool that words its own answer to
// arguments the Set found invalid, so that the answer keeps the shape of
// the tool's other answers (its output schema). msg says what is wrong.
type InvalidArgumentsAnswerer interface {
	InvalidArguments(msg string) *Result
}

type callerKey struct{}

// WithCaller returns a context whose tool calls are attributed to caller:
// a client of `otter mcp serve` (its API key's name, its address, "stdio").
// The tools use it to keep rate limits per caller and to show each caller
// only its own calls.
func WithCaller(ctx context.Context, caller string) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

// CallerFrom returns the caller WithCaller set, or "" for otter's own user.
func CallerFrom(ctx context.Context) string {
	c, _ := ctx.Value(callerKey{}).(string)
	return c
}

// Progress is a progress report from a running tool call.
type Progress struct {
	Progress float64
	Total    float64 // 0 when unknown
	Message  string
}

type progressKey struct{}

// WithProgress returns a context that carries fn; tools that can report
// progress (MCP tools with a progress token, long built-ins) call it.
func WithProgress(ctx context.Context, fn func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// WantsProgress reports whether ctx carries a progress function, so that
// a tool can skip asking its server for progress nobody would see.
func WantsProgress(ctx context.Context) bool {
	fn, ok := ctx.Value(progressKey{}).(func(Progress))
	return ok && fn != nil
}

// ReportProgress calls the progress function carried by ctx, if any.
func ReportProgress(ctx context.Context, p Progress) {
	if fn, ok := ctx.Value(progressKey{}).(func(Progress)); ok && fn != nil {
		fn(p)
	}
}
