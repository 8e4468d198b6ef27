package mcphost

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/servers"
)

// newClient returns the SDK client for one connection attempt, with the
// handlers that route a server's requests and notifications to the manager.
func (s *server) newClient(c *conn) *sdk.Client {
	m := s.m
	dirs, _ := s.rootDirs()
	roots := make([]*sdk.Root, len(dirs))
	for i, d := range dirs {
		roots[i] = fileRoot(d)
	}
	caps := &sdk.ClientCapabilities{}
	if len(roots) > 0 {
		caps.RootsV2 = &sdk.RootCapabilities{}
	}
	opts := &sdk.ClientOptions{
		Logger:       m.logger.With("server", s.name),
		Capabilities: caps,
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			c.listChanged(kindTools)
		},
		PromptListChangedHandler: func(context.Context, *sdk.PromptListChangedRequest) {
			c.listChanged(kindPrompts)
		},
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) {
			c.listChanged(kindResources)
		},
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			if req.Params != nil {
				m.emit(servers.ResourceUpdated{Server: s.name, URI: req.Params.URI})
			}
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			m.routeProgress(req.Params)
		},
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			data, err := json.Marshal(req.Params.Data)
			if err != nil {
				data = nil
			}
			m.emit(servers.ServerLog{Server: s.name, Level: string(req.Params.Level), Logger: req.Params.Logger, Data: []byte(s.mask(string(data)))})
		},
	}
	if m.opts.Eliciter != nil {
		caps.Elicitation = &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}}
		opts.ElicitationHandler = func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return s.elicit(ctx, c.obs, req.Params)
		}
	}
	if m.opts.Sampler != nil {
		opts.CreateMessageHandler = func(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return m.opts.Sampler(ctx, s.name, req.Params)
		}
	}
	version := m.opts.Version
	if version == "" {
		version = "dev"
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "otter", Version: version}, opts)
	client.AddRoots(roots...)
	c.obs.watch(client)
	return client
}

// elicit passes an elicitation request to the front end, its schema as the
// server wrote it (obs restores it; see schemaOrder). In form mode, the
// schema's defaults fill the fields an accepted reply leaves out.
func (s *server) elicit(ctx context.Context, obs *sdkObserver, p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	req := ask.Elicitation{Server: s.name, Message: p.Message, Mode: p.Mode, URL: p.URL, ID: p.ElicitationID}
	if req.Mode == "" {
		req.Mode = "form"
	}
	var schema *jsonschema.Schema
	if p.RequestedSchema != nil {
		raw, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("elicitation schema: %w", err)
		}
		req.Schema = obs.restore(raw)
		if err := json.Unmarshal(raw, &schema); err != nil {
			return nil, fmt.Errorf("elicitation schema: %w", err)
		}
	}
	reply, err := s.m.opts.Eliciter.Elicit(ctx, req)
	if err != nil {
		return nil, err
	}
	res := &sdk.ElicitResult{Action: string(reply.Action)}
	if reply.Action != ask.Accept || req.Mode != "form" {
		return res, nil
	}
	res.Content = reply.Content
	if res.Content == nil {
		res.Content = map[string]any{}
	}
	if schema != nil {
		applyDefaults(schema, res.Content)
	}
	return res, nil
}

// applyDefaults sets each top-level property of an elicitation schema that
// content lacks to the property's default. Elicitation schemas are flat.
func applyDefaults(schema *jsonschema.Schema, content map[string]any) {
	for name, prop := range schema.Properties {
		if prop == nil || prop.Default == nil {
			continue
		}
		if _, ok := content[name]; ok {
			continue
		}
		var v any
		if err := json.Unmarshal(prop.Default, &v); err == nil {
			content[name] = v
		}
	}
}

// fileRoot returns a root for a directory.
func fileRoot(dir string) *sdk.Root {
	dir = absDir(dir)
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}
	return &sdk.Root{URI: u.String(), Name: filepath.Base(dir)}
}

func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// rootDirs are the directories the server is offered as MCP roots: its
// config's roots, else the manager's (the working directory: byDefault).
// None (roots = []) means the roots capability is not offered at all, so
// that a server such as server-filesystem keeps the directories of its
// command line rather than being confined to what otter offers.
func (s *server) rootDirs() (dirs []string, byDefault bool) {
	if s.cfg.Roots == nil {
		return slices.Clone(s.m.roots), true
	}
	for _, d := range s.cfg.Roots {
		dirs = append(dirs, absDir(d))
	}
	return dirs, false
}
