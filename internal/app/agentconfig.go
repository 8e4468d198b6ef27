package app

import (
	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/config"
)

// toolSearch is the agent's ToolSearch under cfg: [agent] tool_search and
// tool_search_budget, and the servers with always_load. The agent takes
// the settings, not the config file.
func toolSearch(cfg *config.Config) agent.ToolSearch {
	ts := agent.ToolSearch{Mode: cfg.Agent.ToolSearch, Budget: cfg.Agent.ToolSearchBudget, AlwaysLoad: map[string]bool{}}
	for _, s := range cfg.MCP.Servers {
		if s.AlwaysLoad {
			ts.AlwaysLoad[s.Name] = true
		}
	}
	return ts
}

// permissionsFile names, for the person asked, the file an "allow always"
// answer given in workDir is saved to (config.SavePermission's).
func permissionsFile(workDir string) string {
	_, short := config.PermissionsFile(workDir)
	return short
}
