package app

import (
	"fmt"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/skill"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/webdata"
)

// builtins returns otter's built-in web-data tools, set up from cfg's
// [tools] table (get_status reports the MCP servers and recent calls), the
// tools for the project unless [tools] local = false, and the skill tool
// when the user has skills.
func (a *App) builtins(cfg *config.Config) ([]tool.Tool, error) {
	ts, err := webdata.Tools(webdata.Options{
		Config:  cfg.Tools,
		Paths:   a.Paths,
		Servers: a.serverStatuses,
		Recent:  a.tools.RecentBy,
	})
	if err != nil {
		return nil, fmt.Errorf("set up the built-in tools from [tools]: %w", err)
	}
	if cfg.Tools.LocalEnabled() {
		ts = append(ts, a.local.List()...)
	}
	if len(a.Extensions().Skills) > 0 {
		ts = append(ts, skill.Tool(a.skills))
	}
	return ts, nil
}

// serverStatuses reports the MCP servers as get_status shows them.
func (a *App) serverStatuses() []webdata.ServerStatus {
	if a.mcp == nil {
		return nil
	}
	var out []webdata.ServerStatus
	for _, s := range a.mcp.Statuses() {
		out = append(out, webdata.ServerStatus{
			Name: s.Name, Transport: s.Transport, State: string(s.State), Error: s.Error,
			Tools: s.Tools, Calls: s.Calls, Errors: s.Errors,
		})
	}
	return out
}
