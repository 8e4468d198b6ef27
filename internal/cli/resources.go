package cli

// `otter mcp resources|read|prompts|prompt`: what servers offer besides
// tools, headless. Results on stdout, everything else on stderr; exit 2 on
// usage, config or connection errors.

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/attach"
	"github.com/otter-sh/otter/internal/termtext"
)

// MCPResourcesOptions are the options of `otter mcp resources`.
type MCPResourcesOptions struct {
	Server string // "": every server
	JSON   bool
}

// resourceJSON is one element of `otter mcp resources --json`: a resource
// (uri) or a resource template (uri_template).
type resourceJSON struct {
	Server      string `json:"server"`
	URI         string `json:"uri,omitempty"`
	URITemplate string `json:"uri_template,omitempty"`
	Name        string `json:"name"`
	MIMEType    string `json:"mime_type,omitempty"`
	Description string `json:"description,omitempty"`
}

// startServers starts one named server ("" every configured one).
func startServers(ctx context.Context, f *Factory, server string) (*mcpSession, error) {
	opts := mcpSessionOptions{conn: &ConnOptions{}}
	if server != "" {
		opts.only = server
	}
	return startMCPSession(ctx, f, opts)
}

// RunMCPResources lists the resources and resource templates of one server
// or of every server.
func RunMCPResources(ctx context.Context, f *Factory, o MCPResourcesOptions) error {
	s, err := startServers(ctx, f, o.Server)
	if err != nil {
		return err
	}
	defer s.close()
	list := []resourceJSON{}
	for _, r := range s.app.Resources() {
		list = append(list, resourceJSON{Server: r.Server, URI: r.URI, Name: r.Name, MIMEType: r.MIMEType, Description: r.Description})
	}
	for _, r := range s.app.ResourceTemplates() {
		list = append(list, resourceJSON{Server: r.Server, URITemplate: r.URITemplate, Name: r.Name, MIMEType: r.MIMEType, Description: r.Description})
	}
	if o.JSON {
		return writeJSON(f.IO.Out, list)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(f.IO.ErrOut, "no resources")
		return err
	}
	tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tURI\tMIME TYPE\tNAME")
	for _, r := range list {
		// One row each: no cell may hold a newline or a tab.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termtext.Line(r.Server), termtext.Line(r.URI+r.URITemplate), termtext.Line(r.MIMEType), termtext.Line(r.Name))
	}
	return tw.Flush()
}

// MCPReadOptions are the options of `otter mcp read`.
type MCPReadOptions struct {
	Server, URI string
	JSON        bool
	Output      string // -o: write the contents to this file
}

// RunMCPRead reads one resource: text to stdout, a blob (or anything with
// -o) to a file.
func RunMCPRead(ctx context.Context, f *Factory, o MCPReadOptions) error {
	s, err := startServers(ctx, f, o.Server)
	if err != nil {
		return err
	}
	defer s.close()
	res, err := s.app.ReadResource(ctx, o.Server, o.URI)
	if err != nil {
		return ExitCode(2, err)
	}
	if o.JSON {
		return writeJSON(f.IO.Out, res)
	}
	if len(res.Contents) == 0 {
		return ExitCode(2, fmt.Errorf("MCP server %q returned no contents for %s", o.Server, o.URI))
	}
	if o.Output != "" {
		return writeContents(f.IO.ErrOut, o.Output, res)
	}
	for _, c := range res.Contents {
		if c.Blob != nil {
			return ExitCode(2, fmt.Errorf("%s is binary (%s, %s): give -o FILE to save it, or --json for base64",
				c.URI, cmpOr(c.MIMEType, "no MIME type"), attach.Size(len(c.Blob))))
		}
	}
	for _, c := range res.Contents {
		text := c.Text
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if _, err := io.WriteString(f.IO.Out, text); err != nil {
			return err
		}
	}
	return nil
}

// writeContents writes every content of res, text or blob, to file.
func writeContents(stderr io.Writer, file string, res *sdk.ReadResourceResult) error {
	var data []byte
	for _, c := range res.Contents {
		if c.Blob != nil {
			data = append(data, c.Blob...)
		} else {
			data = append(data, c.Text...)
		}
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return ExitCode(2, fmt.Errorf("saving the resource: %w", err))
	}
	_, err := fmt.Fprintf(stderr, "otter: wrote %s (%s)\n", file, attach.Size(len(data)))
	return err
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// MCPPromptsOptions are the options of `otter mcp prompts`.
type MCPPromptsOptions struct {
	Server string
	JSON   bool
}

type promptJSON struct {
	Server      string                `json:"server"`
	Name        string                `json:"name"`
	Description string                `json:"description,omitempty"`
	Arguments   []*sdk.PromptArgument `json:"arguments"`
}

// RunMCPPrompts lists the prompts of one server or of every server.
func RunMCPPrompts(ctx context.Context, f *Factory, o MCPPromptsOptions) error {
	s, err := startServers(ctx, f, o.Server)
	if err != nil {
		return err
	}
	defer s.close()
	list := []promptJSON{}
	for _, p := range s.app.Prompts() {
		args := p.Arguments
		if args == nil {
			args = []*sdk.PromptArgument{}
		}
		list = append(list, promptJSON{Server: p.Server, Name: p.Name, Description: p.Description, Arguments: args})
	}
	if o.JSON {
		return writeJSON(f.IO.Out, list)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(f.IO.ErrOut, "no prompts")
		return err
	}
	for i, p := range list {
		if i > 0 {
			fmt.Fprintln(f.IO.Out)
		}
		fmt.Fprintf(f.IO.Out, "%s  (server %s)\n", termtext.Line(p.Name), termtext.Line(p.Server))
		if d := strings.TrimSpace(termtext.Visible(p.Description)); d != "" {
			fmt.Fprintf(f.IO.Out, "    %s\n", strings.ReplaceAll(d, "\n", "\n    "))
		}
		var args []string
		for _, a := range p.Arguments {
			s := termtext.Line(a.Name)
			if a.Required {
				s += " (required)"
			}
			args = append(args, s)
		}
		if len(args) > 0 {
			fmt.Fprintf(f.IO.Out, "    arguments: %s\n", strings.Join(args, ", "))
		}
	}
	return nil
}

// MCPPromptOptions are the options of `otter mcp prompt`.
type MCPPromptOptions struct {
	Server, Name string
	Args         []string // k=v
	JSON         bool
}

// RunMCPPrompt gets one prompt with its arguments and prints its messages
// whole: each under its role, embedded resources with their contents.
func RunMCPPrompt(ctx context.Context, f *Factory, o MCPPromptOptions) error {
	args := map[string]string{}
	for _, kv := range o.Args {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return ExitCode(2, fmt.Errorf("prompt argument %q: write it as NAME=VALUE", kv))
		}
		args[k] = v
	}
	s, err := startServers(ctx, f, o.Server)
	if err != nil {
		return err
	}
	defer s.close()
	if err := checkPromptArgs(s.app.Prompts(), o.Server, o.Name, args); err != nil {
		return ExitCode(2, err)
	}
	res, err := s.app.GetPrompt(ctx, o.Server, o.Name, args)
	if err != nil {
		return ExitCode(2, err)
	}
	if o.JSON {
		return writeJSON(f.IO.Out, res)
	}
	_, err = io.WriteString(f.IO.Out, attach.PromptText(res))
	return err
}

// checkPromptArgs names a prompt that does not exist and required
// arguments left out, before the server is asked.
func checkPromptArgs(prompts []app.Prompt, server, name string, args map[string]string) error {
	var names []string
	for _, p := range prompts {
		if p.Server != server {
			continue
		}
		names = append(names, p.Name)
		if p.Name != name {
			continue
		}
		var missing []string
		for _, a := range p.Arguments {
			if a.Required && args[a.Name] == "" {
				missing = append(missing, a.Name)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("prompt %s of MCP server %q needs %s: give them as NAME=VALUE", name, server, strings.Join(missing, ", "))
		}
		return nil
	}
	return fmt.Errorf("MCP server %q has no prompt named %q (its prompts: %s)", server, name, strings.Join(names, ", "))
}
