package app

import (
	"fmt"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/mcphost"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/webdata"
)

// builtins returns otter's built-in web-data tools, set up from cfg's
// [tools] table. get_status reports the MCP servers and recent calls.
func (a *App) builtins(cfg *config.Config) ([]tool.Tool, error) {
	ts, err := webdata.Tools(webdata.Options{
		Config: cfg.Tools,
		Paths:  a.Paths,
		Servers: func() []mcphost.Status {
			if a.MCP == nil {
				return nil
			}
			return a.MCP.Statuses()
		},
		Recent: a.Tools.RecentBy,
	})
	if err != nil {
		return nil, fmt.Errorf("set up the built-in tools from [tools]: %w", err)
	}
	return ts, nil
}
