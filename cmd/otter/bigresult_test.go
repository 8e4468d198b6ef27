package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// envHugeServer makes the test binary a stdio MCP server (go-sdk) whose
// tool big answers that many MiB of text, and which lists
// OTTER_HUGETEST_TOOLS more tools of 1 MiB descriptions.
const envHugeServer = "OTTER_HUGETEST_MB"

func runHugeTestServer() int {
	mb, _ := strconv.Atoi(os.Getenv(envHugeServer))
	tools, _ := strconv.Atoi(os.Getenv("OTTER_HUGETEST_TOOLS"))
	s := sdk.NewServer(&sdk.Implementation{Name: "huge", Version: "1"}, nil)
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true}
	sdk.AddTool(s, &sdk.Tool{Name: "big", Description: "a big answer", Annotations: ro}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		text := "HEAD " + strings.Repeat("x", mb<<20) + " TAIL"
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
	})
	desc := strings.Repeat("d", 1<<20)
	for i := range tools {
		sdk.AddTool(s, &sdk.Tool{Name: fmt.Sprintf("t%d", i), Description: desc, Annotations: ro}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
	}
	_ = s.Run(context.Background(), &sdk.StdioTransport{})
	return 0
}
