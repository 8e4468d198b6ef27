package agent

// Deferred tools: when the MCP tools' definitions would take more than the
// budget of a request, or their number would pass the provider's cap, they
// are not offered. The model gets tool_search instead; the tools it finds
// are loaded (offered from the next model call on) and kept for the
// session, the least recently used unloaded when the loaded ones would pass
// the budget or the cap.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/tool"
)

// ToolSearchName is the name of the built-in tool the model searches the
// deferred tools with.
const ToolSearchName = "tool_search"

// DefaultToolBudget is how many tokens the MCP tools' definitions may take
// in a request before they are deferred, whatever the window: 8,000 tokens
// are about 32 KB of definitions, some 30 tools — two or three small
// servers stay offered as they are (no tool_search round trip for them),
// while a dozen servers (190 KB on the tool corpus) would cost every
// request of a conversation more than the conversation itself. Claude
// Code defers every MCP tool; otter keeps the small sets. A model with a
// small window gets a tenth of it instead.
const DefaultToolBudget = 8000

// Search limits of tool_search: how many tools it returns unless the
// model asks for another number, and at most.
const (
	DefaultSearchLimit = 5
	maxSearchLimit     = 20
)

// ToolSearch configures deferred tools ([agent] tool_search,
// tool_search_budget and each server's always_load).
type ToolSearch struct {
	// Mode is ToolSearchAuto ("" too), ToolSearchAlways or
	// ToolSearchNever.
	Mode string
	// Budget is how many tokens the MCP tools' definitions may take in a
	// request; 0 means DefaultToolBudget, or a tenth of a smaller window.
	Budget int
	// AlwaysLoad names the servers whose tools are always offered.
	AlwaysLoad map[string]bool
}

// The modes of ToolSearch: defer the MCP tools when their definitions
// pass the budget (or the provider's cap on tools), always, or never.
const (
	ToolSearchAuto   = "auto"
	ToolSearchAlways = "always"
	ToolSearchNever  = "never"
)

// budget returns the token budget of the MCP tools' definitions in a
// request to a model with this context window.
func (t ToolSearch) budget(window int) int {
	if t.Budget > 0 {
		return t.Budget
	}
	return min(DefaultToolBudget, window/10)
}

// defers is the rule of deferring: whether MCP tools whose definitions take
// mcpTokens tokens, mcpTools of the allTools a request would offer, are
// deferred for a model of this context window whose provider takes at most
// limit tools (0: no cap).
func (t ToolSearch) defers(mcpTokens, mcpTools, allTools, window, limit int) bool {
	switch t.Mode {
	case ToolSearchNever:
		return false
	case ToolSearchAlways:
		return mcpTools > 0
	}
	return mcpTokens > t.budget(window) || (limit > 0 && allTools > limit)
}

// Defers reports whether the MCP tools mcp (qualified names, as a tool
// Set lists them) would be deferred behind tool_search in a request that
// also offers builtins built-in tools, to model of provider (facts and
// windows as in Options: the configured and learned context windows). It
// is the rule an agent applies before each request, for tools that are
// not in a Set yet: the known tools of servers that need not start until
// they are needed.
func (t ToolSearch) Defers(mcp []tool.Entry, builtins int, provider llm.Provider, model string,
	facts func(provider, model string) llm.ModelFacts, windows *llm.WindowCache) bool {
	tokensIn := 0
	for _, e := range mcp {
		tokensIn += tokens(ToolSpec(e))
	}
	limit := 0
	if l, ok := provider.(ToolLimiter); ok {
		limit = l.MaxTools()
	}
	window := modelFacts(facts, windows, provider, model).ContextWindow
	return t.defers(tokensIn, len(mcp), len(mcp)+builtins, window, limit)
}

// ToolLimiter is a provider whose API refuses requests with more than
// MaxTools tools (llm.OpenAI: 128).
type ToolLimiter interface{ MaxTools() int }

// deferState is which deferred tools are loaded, and when each was last
// used.
type deferState struct {
	mu      sync.Mutex
	active  bool              // the last request deferred tools
	servers []serverLine      // for the system prompt, while active
	loaded  map[string]uint64 // qualified name → last use
	clock   uint64
}

// serverLine is a connected server as the system prompt names it.
type serverLine struct {
	name  string
	tools int
	about string
}

// touch marks names as used now, loading those that are deferred; it
// reports whether tools are deferred.
func (d *deferState) touch(names ...string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.loaded == nil {
		d.loaded = map[string]uint64{}
	}
	for _, n := range names {
		d.clock++
		d.loaded[n] = d.clock
	}
	return d.active
}

// LoadedToolsState is the key under which a StateRecorder saves the
// loaded tools (LoadedTools), for LoadTools when the session resumes.
const LoadedToolsState = "loaded_tools"

// A StateRecorder is a Recorder that also saves small state of the
// conversation under a key (internal/session's Recorder). While tools are
// deferred the agent saves LoadedTools under LoadedToolsState each time
// they change.
type StateRecorder interface {
	RecordState(key string, value any)
}

// useTools marks names as used now (loading deferred ones) and saves the
// loaded tools with the session while tools are deferred.
func (a *Agent) useTools(names ...string) {
	if a.deferred.touch(names...) {
		a.saveLoaded()
	}
}

func (a *Agent) saveLoaded() {
	if r, ok := a.currentRecorder().(StateRecorder); ok {
		r.RecordState(LoadedToolsState, a.LoadedTools())
	}
}

// tokens estimates the tokens a tool definition takes in a request: about
// four bytes of JSON per token.
func tokens(s llm.ToolSpec) int {
	return (len(s.Name)+len(s.Description)+len(s.InputSchema)+40)/4 + 1
}

// toolPlan is which tools the next model call offers.
type toolPlan struct {
	entries   []tool.Entry
	specs     []llm.ToolSpec
	deferring bool
	offer     []bool         // by entry, while deferring
	unload    []string       // loaded tools that no longer fit, while deferring
	counts    map[string]int // MCP tools by server
}

// planTools chooses the tools the next model call offers: every tool, or,
// when the MCP tools must be deferred, the built-ins, tool_search, the
// tools of always_load servers and the loaded tools that fit, the most
// recently used first. It changes nothing.
func (a *Agent) planTools(provider llm.Provider, model string, ts ToolSearch) toolPlan {
	var p toolPlan
	if a.opts.Tools == nil {
		return p
	}
	// Tools otter cannot call, or that are held back until the person
	// approves them, are listed for people, never offered (see tool.Info).
	p.entries = slices.DeleteFunc(a.opts.Tools.Entries(), func(e tool.Entry) bool { return !e.Info.Offered() })
	p.specs = make([]llm.ToolSpec, len(p.entries))
	p.counts = map[string]int{}
	var builtins, mcpTokens int
	for i, e := range p.entries {
		p.specs[i] = ToolSpec(e)
		if e.Info.Server == "" {
			builtins++
		} else {
			mcpTokens += tokens(p.specs[i])
			p.counts[e.Info.Server]++
		}
	}
	limit := 0
	if l, ok := provider.(ToolLimiter); ok {
		limit = l.MaxTools()
	}
	window := a.facts(provider, model).ContextWindow
	budget := ts.budget(window)
	p.deferring = ts.defers(mcpTokens, len(p.entries)-builtins, len(p.entries), window, limit)
	if !p.deferring {
		return p
	}

	// Room left once the built-ins and tool_search are offered.
	room := -1 // no cap
	if limit > 0 {
		room = max(0, limit-builtins-1)
	}
	p.offer = make([]bool, len(p.entries))
	index := make(map[string]int, len(p.entries))
	for i, e := range p.entries {
		index[e.Name] = i
		switch {
		case e.Info.Server == "":
			p.offer[i] = true
		case ts.AlwaysLoad[e.Info.Server] && room != 0:
			p.offer[i] = true
			budget -= tokens(p.specs[i])
			room--
		}
	}
	// The loaded tools, most recently used first; those that do not fit
	// are unloaded.
	d := &a.deferred
	d.mu.Lock()
	loaded := make([]string, 0, len(d.loaded))
	for n := range d.loaded {
		loaded = append(loaded, n)
	}
	slices.SortFunc(loaded, func(x, y string) int { return cmp.Compare(d.loaded[y], d.loaded[x]) })
	d.mu.Unlock()
	for _, n := range loaded {
		i, ok := index[n]
		if !ok || p.offer[i] {
			continue // its server is gone for now: keep it loaded for when it is back
		}
		t := tokens(p.specs[i])
		if room == 0 || t > budget {
			p.unload = append(p.unload, n)
			continue
		}
		p.offer[i] = true
		budget -= t
		if room > 0 {
			room--
		}
	}
	return p
}

// offered is the tools a call of the plan offers: every one, or, while
// deferring, the built-ins, tool_search and the MCP tools it offers.
func (p toolPlan) offered() []llm.ToolSpec {
	if !p.deferring {
		return p.specs
	}
	out := make([]llm.ToolSpec, 0, len(p.entries))
	search := ToolSpec(tool.Entry{Name: ToolSearchName, Info: searchToolInfo})
	for i := range p.entries {
		if p.entries[i].Info.Server != "" && search.Name != "" { // after the built-ins
			out = append(out, search)
			search.Name = ""
		}
		if p.offer[i] {
			out = append(out, p.specs[i])
		}
	}
	return out
}

// offeredTools returns the tools the next model call offers (planTools),
// unloading the loaded tools that no longer fit.
func (a *Agent) offeredTools(provider llm.Provider, model string, ts ToolSearch) []llm.ToolSpec {
	p := a.planTools(provider, model, ts)
	d := &a.deferred
	if !p.deferring {
		d.mu.Lock()
		d.active, d.servers = false, nil
		d.mu.Unlock()
		return p.specs
	}
	out := p.offered()
	instr := a.instructions()
	var servers []serverLine
	for _, name := range slices.Sorted(maps.Keys(p.counts)) {
		servers = append(servers, serverLine{name: name, tools: p.counts[name], about: firstLine(instr[name])})
	}
	d.mu.Lock()
	for _, n := range p.unload {
		delete(d.loaded, n)
	}
	d.active, d.servers = true, servers
	d.mu.Unlock()
	if len(p.unload) > 0 {
		a.saveLoaded()
	}
	return out
}

// ToolOffer says how the MCP tools are offered to the model.
type ToolOffer struct {
	// Deferring is set when MCP tools are deferred behind tool_search.
	Deferring bool
	// Deferred holds the qualified names of the tools not offered.
	Deferred map[string]bool
}

// ToolOffer says which tools the next model call would offer, with the
// agent's current provider, model and settings.
func (a *Agent) ToolOffer() ToolOffer {
	a.mu.Lock()
	provider, model, ts := a.provider, a.model, a.settings.ToolSearch
	a.mu.Unlock()
	if provider == nil {
		return ToolOffer{}
	}
	p := a.planTools(provider, model, ts)
	out := ToolOffer{Deferring: p.deferring, Deferred: map[string]bool{}}
	for i, e := range p.entries {
		if p.deferring && !p.offer[i] {
			out.Deferred[e.Name] = true
		}
	}
	return out
}

// firstLine is s's first non-empty line, cut to 160 characters.
func firstLine(s string) string {
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			return truncate(l, 160)
		}
	}
	return ""
}

func (a *Agent) instructions() map[string]string {
	if a.opts.Instructions == nil {
		return nil
	}
	return a.opts.Instructions()
}

// toolSearchPrompt is the system prompt's part on deferred tools: empty
// unless the request defers tools.
func (a *Agent) toolSearchPrompt() string {
	d := &a.deferred
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.active {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n# Tools you load with tool_search\n\n")
	b.WriteString("The connected MCP servers have more tools than are offered to you. Call tool_search with a short description of what you need (\"add two numbers\", \"read a file\"): the best matches are loaded and offered to you from your next step on. A tool you know by its exact name can also be called directly.\n\n")
	for _, s := range d.servers {
		fmt.Fprintf(&b, "- %s: %d tools", s.name, s.tools)
		if s.about != "" {
			fmt.Fprintf(&b, " — %s", s.about)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// lookupTool finds the tool a call names: a tool of the set (a deferred
// one is loaded by the call) or tool_search while tools are deferred.
func (a *Agent) lookupTool(name string) (tool.Entry, bool) {
	if e, ok := a.opts.Tools.Lookup(name); ok {
		if e.Info.Server != "" {
			a.useTools(name)
		}
		return e, true
	}
	a.deferred.mu.Lock()
	active := a.deferred.active
	a.deferred.mu.Unlock()
	if name == ToolSearchName && active {
		return tool.Entry{Name: ToolSearchName, Info: searchToolInfo, Tool: searchTool{a}}, true
	}
	return tool.Entry{}, false
}

// callTool runs a call lookupTool found.
func (a *Agent) callTool(ctx context.Context, e tool.Entry, args json.RawMessage) (*tool.Result, error) {
	if st, ok := e.Tool.(searchTool); ok {
		return st.Call(ctx, args)
	}
	return a.opts.Tools.Call(ctx, e.Name, args)
}

// LoadedTools returns the deferred tools loaded in this conversation,
// least recently used first, so that a saved session can load them again.
func (a *Agent) LoadedTools() []string {
	d := &a.deferred
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.loaded))
	for n := range d.loaded {
		out = append(out, n)
	}
	slices.SortFunc(out, func(x, y string) int { return cmp.Compare(d.loaded[x], d.loaded[y]) })
	return out
}

// LoadTools loads tools by qualified name (a resumed session's
// LoadedTools), in order, the last the most recently used.
func (a *Agent) LoadTools(names []string) { a.deferred.touch(names...) }

// searchToolInfo describes tool_search to the model.
var searchToolInfo = tool.Info{
	Name: ToolSearchName,
	Description: "Search the tools of the connected MCP servers that are not offered yet. " +
		"Describe what you need in a few words (\"add two numbers\", \"list open pull requests\"); " +
		"the best matches are returned (name, server, what it does) and loaded: call them from your next step on.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","description":"What the tool should do, in a few words"},` +
		`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"How many tools to return (default 5)"}},` +
		`"required":["query"]}`),
	Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Search tools"},
}

// searchTool is tool_search.
type searchTool struct{ a *Agent }

func (s searchTool) Info() tool.Info { return searchToolInfo }

// SearchMatch is one tool tool_search found, as its structured result
// lists it.
type SearchMatch struct {
	Name        string  `json:"name"`
	Server      string  `json:"server"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
}

// SearchResult is tool_search's structured result: the query and the
// matches, best first. Front ends show it as a block.
type SearchResult struct {
	Query   string        `json:"query"`
	Matches []SearchMatch `json:"matches"`
}

func (s searchTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(args, &in); err != nil || strings.TrimSpace(in.Query) == "" {
		return &tool.Result{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: `tool_search needs a query: {"query": "what the tool should do"}`}}}, nil
	}
	limit := in.Limit
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	limit = min(limit, maxSearchLimit)
	matches := s.a.opts.Tools.Search(in.Query, limit, s.a.instructions())
	res := SearchResult{Query: in.Query, Matches: []SearchMatch{}}
	var b strings.Builder
	names := make([]string, 0, len(matches))
	for i := len(matches) - 1; i >= 0; i-- { // the best match is used last, so it is unloaded last
		names = append(names, matches[i].Name)
	}
	s.a.useTools(names...)
	s.a.opts.Tools.Prepare(names...) // an idle server of a match starts now, before the call
	for _, m := range matches {
		desc := firstLine(cmp.Or(m.Info.Description, m.Info.Title))
		res.Matches = append(res.Matches, SearchMatch{Name: m.Name, Server: m.Info.Server, Description: desc, Score: m.Score})
		fmt.Fprintf(&b, "%s (server %s): %s\n", m.Name, m.Info.Server, desc)
	}
	if len(matches) == 0 {
		fmt.Fprintf(&b, "No tool matches %q. Try other words, or the name of a server.", in.Query)
	} else {
		b.WriteString("\nThese tools are loaded: call them by name from your next step on.")
	}
	return &tool.Result{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}, StructuredContent: res}, nil
}
