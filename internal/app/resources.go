package app

import (
	"slices"

	"github.com/otter-sh/otter/internal/attach"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

// setBuiltins hands the tool set the built-ins: the web-data tools and,
// while a connected server offers resources, attach's list_mcp_resources
// and read_mcp_resource.
func (a *App) setBuiltins(web []tool.Tool) {
	a.builtinsMu.Lock()
	defer a.builtinsMu.Unlock()
	a.web = web
	a.applyBuiltinsLocked(a.mcp != nil && a.mcp.HasResources())
}

// refreshResourceTools offers or withdraws the resource tools when whether
// a server has resources changed.
func (a *App) refreshResourceTools() {
	a.builtinsMu.Lock()
	defer a.builtinsMu.Unlock()
	if offer := a.mcp.HasResources(); offer != a.resourceTools {
		a.applyBuiltinsLocked(offer)
	}
}

func (a *App) applyBuiltinsLocked(offer bool) {
	a.resourceTools = offer
	ts := a.web
	if offer {
		ts = append(slices.Clone(a.web), attach.Tools(a.mcp)...)
	}
	a.tools.SetBuiltins(ts)
}

// onMCPEvent adds or removes the resource tools as servers come and go,
// before the front end hears of the change.
func (a *App) onMCPEvent(e servers.Event) {
	if _, ok := e.(servers.StateChanged); ok {
		a.refreshResourceTools()
	}
	if a.opts.OnEvent != nil {
		a.opts.OnEvent(e)
	}
}
