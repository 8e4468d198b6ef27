package serve

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addResources serves opts.Resources read-only.
func (s *Server) addResources() {
	for _, r := range s.opts.Resources {
		text, uri, mime := r.Text, r.URI, r.MIMEType
		s.mcp.AddResource(&mcp.Resource{
			URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description,
			MIMEType: r.MIMEType, Size: int64(len(r.Text)),
		}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: text}}}, nil
		})
	}
}

// addPrompts offers prompts that start the common tasks with otter's
// tools; each is offered only when the tool it drives is served.
func (s *Server) addPrompts() {
	has := func(name string) bool {
		_, ok := s.opts.Tools.Lookup(name)
		return ok
	}
	if has("scrape_page") {
		var presets []string
		for _, r := range s.opts.Resources {
			presets = append(presets, r.Name)
		}
		presetHelp := "the name of an extraction preset"
		if len(presets) > 0 {
			presetHelp += ": " + strings.Join(presets, ", ")
		}
		s.mcp.AddPrompt(&mcp.Prompt{
			Name:        "scrape_with_preset",
			Title:       "Scrape a page with a preset",
			Description: "Fetch a page with scrape_page using a named extraction preset and summarise what was extracted.",
			Arguments: []*mcp.PromptArgument{
				{Name: "url", Description: "the page to scrape (http or https)", Required: true},
				{Name: "preset", Description: presetHelp, Required: true},
			},
		}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			url, preset := req.Params.Arguments["url"], req.Params.Arguments["preset"]
			if url == "" || preset == "" {
				return nil, fmt.Errorf("scrape_with_preset needs the arguments url and preset")
			}
			return userPrompt("Scrape "+url, fmt.Sprintf(
				"Use the scrape_page tool to fetch %s with the %q extraction preset. "+
					"Then summarise the extracted fields. If the tool reports CAPTCHA_REQUIRED, BLOCKED, RATE_LIMITED or UPSTREAM_RATE_LIMITED, "+
					"say so and stop; do not try to get around it.", url, preset)), nil
		})
	}
	if has("analyze_site") {
		s.mcp.AddPrompt(&mcp.Prompt{
			Name:        "assess_site",
			Title:       "Assess a site before scraping",
			Description: "Analyse a site with analyze_site (tech stack, render mode, robots.txt, anti-crawl level) and recommend how to scrape it politely.",
			Arguments: []*mcp.PromptArgument{
				{Name: "url", Description: "the site's address (http or https)", Required: true},
			},
		}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			url := req.Params.Arguments["url"]
			if url == "" {
				return nil, fmt.Errorf("assess_site needs the argument url")
			}
			return userPrompt("Assess "+url, fmt.Sprintf(
				"Use the analyze_site tool on %s with depth \"standard\". Report the tech stack, whether pages are "+
					"server-rendered or a client app, what robots.txt allows, the anti-crawl level, and the recommended "+
					"strategy and request rate.", url)), nil
		})
	}
}

func userPrompt(description, text string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{
		Description: description,
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
	}
}
