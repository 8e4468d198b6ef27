package app

import (
	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/tool"
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

// defersKnown reports whether the known tools of servers that have not
// started would be deferred behind tool_search by an agent of the App's
// provider and model (servers.Options.Lazy): then those servers need not
// start until they are needed.
func (a *App) defersKnown(known []tool.Entry) bool {
	p, model, _ := a.Provider()
	builtins := 0
	for _, e := range a.tools.Entries() {
		if e.Info.Server == "" {
			builtins++
		}
	}
	return toolSearch(a.Config()).Defers(known, builtins, p, model, a.Facts, a.windowCache())
}

// permissionsFile names, for the person asked, the file an "allow always"
// answer given in workDir is saved to (config.Paths.SavePermission's, in
// the App's own paths: never the person's real config when an App was
// given others).
func (a *App) permissionsFile(workDir string) string {
	_, short := a.Paths.PermissionsFile(workDir)
	return short
}
