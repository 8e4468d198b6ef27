package tui

// The test binary doubles as an MCP server the tmux tests configure: with
// OTTER_TUI_TEST_SERVER=<mode> in its environment, TestMain serves that
// mode on stdin/stdout instead of running the tests. A server of otter's
// own shapes what the reference servers do not offer (a resource template
// of several variables, values for some of them only).

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const testServerEnv = "OTTER_TUI_TEST_SERVER"

// testServerConfig configures the test binary as the MCP server name,
// serving mode ("notes": resource templates and a tool that waits).
func testServerConfig(name, mode string) string {
	return fmt.Sprintf("\n[[mcp.servers]]\nname = %q\ncommand = %q\nenv = { %s = %q }\n", name, os.Args[0], testServerEnv, mode)
}

// issueTemplate has three variables: the server completes {owner} (two
// values) and {repo} (from the owner chosen), and offers no value for
// {number}, which the person types.
const issueTemplate = "issue://{owner}/{repo}/{number}"

// fileTemplate's first variable has no values; its second has one.
const fileTemplate = "file://{folder}/{name}"

// waitArgs are the arguments of the server's "wait" tool.
type waitArgs struct {
	File string `json:"file" jsonschema:"the file whose existence ends the wait"`
}

func runTestServer(mode string) int {
	if mode != "notes" {
		fmt.Fprintf(os.Stderr, "unknown test server mode %q\n", mode)
		return 2
	}
	values := func(req *sdk.CompleteRequest) []string {
		p := req.Params
		switch p.Argument.Name {
		case "owner":
			return []string{"otter-sh", "ottertail"}
		case "name":
			return []string{"notes.txt"}
		case "repo":
			if p.Context != nil && p.Context.Arguments["owner"] == "otter-sh" {
				return []string{"otter"}
			}
		}
		return nil
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "templates", Version: "1"}, &sdk.ServerOptions{
		CompletionHandler: func(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
			var out []string
			for _, v := range values(req) {
				if strings.HasPrefix(v, req.Params.Argument.Value) {
					out = append(out, v)
				}
			}
			return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: out, Total: len(out)}}, nil
		},
	})
	read := func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		uri := req.Params.URI
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "the text of " + uri}}}, nil
	}
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: issueTemplate, Name: "issue", MIMEType: "text/plain"}, read)
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: fileTemplate, Name: "file", MIMEType: "text/plain"}, read)
	// wait runs until its file exists: a tool that runs as long as a test
	// needs. Read-only, it runs without asking.
	sdk.AddTool(s, &sdk.Tool{Name: "wait", Description: "Waits until a file exists.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *sdk.CallToolRequest, in waitArgs) (*sdk.CallToolResult, any, error) {
			for {
				if _, err := os.Stat(in.File); err == nil {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "waited"}}}, nil, nil
				}
				select {
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				case <-time.After(50 * time.Millisecond):
				}
			}
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
