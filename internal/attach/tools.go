package attach

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

// Catalog is what the resource tools need; a [servers.Host] is one.
type Catalog interface {
	Source
	Resources() []servers.Resource
	ResourceTemplates() []servers.ResourceTemplate
}

// Names of the built-in resource tools.
const (
	ListToolName = "list_mcp_resources"
	ReadToolName = "read_mcp_resource"
)

// Tools returns the read-only built-ins list_mcp_resources and
// read_mcp_resource over cat. They are meant to be offered while a
// connected server has resources (servers.Manager.HasResources).
func Tools(cat Catalog) []tool.Tool {
	return []tool.Tool{listTool{cat}, readTool{cat}}
}

var readOnly = &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}

type listTool struct{ cat Catalog }

func (listTool) Info() tool.Info {
	return tool.Info{
		Name:  ListToolName,
		Title: "List MCP resources",
		Description: "Lists the resources (and resource templates) that the user's connected MCP servers offer: " +
			"server, URI, name, MIME type and description. Read one with read_mcp_resource. " +
			"Give server to list only that server's resources.",
		InputSchema:     json.RawMessage(`{"type":"object","properties":{"server":{"type":"string","description":"Only this MCP server's resources (its configured name); omit for every server."}},"additionalProperties":false}`),
		Annotations:     readOnly,
		PermissionGroup: "basic",
	}
}

// waker is a Catalog that starts a server not started until needed (a
// servers.Host's Wake).
type waker interface {
	Wake(ctx context.Context, name string) error
}

func (t listTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	var a struct {
		Server string `json:"server"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return errorResult("arguments: %v", err), nil
	}
	if a.Server != "" {
		if _, ok := t.cat.Status(a.Server); !ok {
			return errorResult("no MCP server named %q; call list_mcp_resources without server to see every server's resources", a.Server), nil
		}
		if w, ok := t.cat.(waker); ok {
			// An idle server's resources are known once it runs.
			if err := w.Wake(ctx, a.Server); err != nil {
				return errorResult("%v", err), nil
			}
		}
	}
	type entry struct {
		Server      string `json:"server"`
		URI         string `json:"uri,omitempty"`
		URITemplate string `json:"uri_template,omitempty"`
		Name        string `json:"name,omitempty"`
		MIMEType    string `json:"mime_type,omitempty"`
		Description string `json:"description,omitempty"`
	}
	var list []entry
	for _, r := range t.cat.Resources() {
		if a.Server == "" || r.Server == a.Server {
			list = append(list, entry{Server: r.Server, URI: r.URI, Name: r.Name, MIMEType: r.MIMEType, Description: r.Description})
		}
	}
	for _, r := range t.cat.ResourceTemplates() {
		if a.Server == "" || r.Server == a.Server {
			list = append(list, entry{Server: r.Server, URITemplate: r.URITemplate, Name: r.Name, MIMEType: r.MIMEType, Description: r.Description})
		}
	}
	if len(list) == 0 {
		where := "no connected MCP server offers resources"
		if a.Server != "" {
			where = fmt.Sprintf("MCP server %q offers no resources (or is not connected)", a.Server)
		}
		return &tool.Result{Content: []sdk.Content{&sdk.TextContent{Text: where}}}, nil
	}
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("list_mcp_resources: %w", err)
	}
	note := "Resources with uri_template are templates: fill in the {variables} to get a URI to read."
	return &tool.Result{Content: []sdk.Content{&sdk.TextContent{Text: string(data) + "\n" + note}}}, nil
}

type readTool struct{ cat Catalog }

func (readTool) Info() tool.Info {
	return tool.Info{
		Name:  ReadToolName,
		Title: "Read an MCP resource",
		Description: "Reads a resource of one of the user's MCP servers by its URI (from list_mcp_resources, " +
			"a filled-in resource template, or a resource link in a tool result). Text comes back as text, " +
			"images as images, other binary content described by type and size.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"server":{"type":"string","description":"The MCP server's configured name."},` +
			`"uri":{"type":"string","description":"The resource's URI."}},` +
			`"required":["server","uri"],"additionalProperties":false}`),
		Annotations:     readOnly,
		PermissionGroup: "basic",
	}
}

func (t readTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	var a struct {
		Server string `json:"server"`
		URI    string `json:"uri"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return errorResult("arguments: %v", err), nil
	}
	if _, ok := t.cat.Status(a.Server); !ok {
		return errorResult("no MCP server named %q; list_mcp_resources names the servers with resources", a.Server), nil
	}
	res, err := t.cat.ReadResource(ctx, a.Server, strings.TrimSpace(a.URI))
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return errorResult("%v", err), nil
	}
	content, _ := Contents(a.Server, res)
	if len(content) == 0 {
		return errorResult("MCP server %q returned no contents for %s", a.Server, a.URI), nil
	}
	return &tool.Result{Content: content}, nil
}

func errorResult(format string, args ...any) *tool.Result {
	return &tool.Result{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(format, args...)}}}
}
