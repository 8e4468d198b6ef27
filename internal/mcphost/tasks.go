package mcphost

// MCP tasks. A tool that declares execution.taskSupport "required" can only
// be called as a task (tools/call with a task, then tasks/get and
// tasks/result), which the go-sdk has no client support for yet: called
// plainly it fails with -32601 "requires task augmentation". The SDK does
// not decode the execution field either, so the schemaOrder (one of the
// SDK work-arounds of sdkobserver.go), which sees the tools/list results
// as the server sent them, notes those tools. Such a tool stays listed,
// marked with NeedsTasks, but is not offered to models, and calling it
// says why.

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/tool"
)

// NeedsTasks is the tool.Info.Unsupported reason of a tool that can only be
// called as an MCP task.
const NeedsTasks = "needs MCP tasks (not supported yet)"

// toolExecution is a tool's execution field (MCP 2025-11-25).
type toolExecution struct {
	TaskSupport string `json:"taskSupport"`
}

// recordExecution notes whether the tool called name requires tasks.
func (o *schemaOrder) recordExecution(name string, ex *toolExecution) {
	if name == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if ex != nil && ex.TaskSupport == "required" {
		if o.needsTasks == nil {
			o.needsTasks = make(map[string]bool)
		}
		o.needsTasks[name] = true
		return
	}
	delete(o.needsTasks, name)
}

// requiresTasks reports whether the server declared that its tool called
// name can only be called as a task.
func (o *schemaOrder) requiresTasks(name string) bool {
	if o == nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.needsTasks[name]
}

// unsupportedTool is a server tool otter cannot call: calling it returns an
// error result that says why, without a request to the server.
type unsupportedTool struct {
	info tool.Info
}

func (t *unsupportedTool) Info() tool.Info { return t.info }

func (t *unsupportedTool) Call(context.Context, json.RawMessage) (*tool.Result, error) {
	msg := fmt.Sprintf("the tool %s of MCP server %q %s: the server only runs it as an MCP task, which otter cannot start yet",
		t.info.Name, t.info.Server, t.info.Unsupported)
	return &tool.Result{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}, nil
}
