package tool

import (
	"github.com/otter-sh/otter/internal/toolname"

	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/schema"
)

// DefaultMaxOutputChars is the default cap on the text one tool result
// contributes to a model's context.
const DefaultMaxOutputChars = 100_000

// recentCalls is how many CallRecords a Set keeps.
const recentCalls = 200

// CallRecord is one finished call through a Set, for get_status and /mcp.
type CallRecord struct {
	Tool     string // qualified name
	Server   string // "" for built-ins
	Start    time.Time
	Duration time.Duration
	IsError  bool   // the tool reported an error (isError)
	Err      string // the call failed (transport, timeout, cancellation)
	Caller   string // who made the call (WithCaller); "" for otter's own user
}

// Set is the merged tool set: otter's built-in tools first, then the tools
// of every connected MCP server, each group sorted by name. It is safe for
// concurrent use; the MCP manager replaces a server's tools while the agent
// calls others.
type Set struct {
	opts   Options
	logger *slog.Logger

	mu         sync.RWMutex
	builtins   []Tool
	servers    map[string][]Tool
	entries    []Entry
	byName     map[string]*entry
	collisions []Collision
	warned     map[string]bool // collisions already logged, so each is logged once
	onChange   []func()
	gen        uint64 // counts rebuilds, so that the search index knows when it is stale

	search searchIndex

	recentMu sync.Mutex
	recent   []CallRecord // ring buffer, recentCalls long
	next     int
}

// entry is an Entry with its lazily resolved input schema.
type entry struct {
	Entry
	schemaOnce sync.Once
	check      *schema.Object // nil: arguments are not checked
}

// NewSet returns an empty Set.
func NewSet(opts Options) *Set {
	if opts.MaxOutputChars <= 0 {
		opts.MaxOutputChars = DefaultMaxOutputChars
	}
	return &Set{
		opts:    opts,
		logger:  slog.Default().With("component", "tools"),
		servers: make(map[string][]Tool),
		byName:  make(map[string]*entry),
	}
}

// SetBuiltins replaces the built-in tools.
func (s *Set) SetBuiltins(tools []Tool) {
	s.mu.Lock()
	s.builtins = slices.Clone(tools)
	fns := s.rebuildLocked()
	s.mu.Unlock()
	notify(fns)
}

// SetServerTools replaces the tools of one MCP server; nil or empty removes
// them (the server disconnected or was disabled).
func (s *Set) SetServerTools(server string, tools []Tool) {
	s.SetServersTools(map[string][]Tool{server: tools})
}

// SetServersTools replaces the tools of several MCP servers at once, by
// server (nil or empty removes a server's tools), with one rebuild of the
// entries: what a dozen servers going idle or stopping together cost
// SetServerTools a dozen times.
func (s *Set) SetServersTools(byServer map[string][]Tool) {
	s.mu.Lock()
	for server, tools := range byServer {
		if len(tools) == 0 {
			delete(s.servers, server)
		} else {
			s.servers[server] = slices.Clone(tools)
		}
	}
	fns := s.rebuildLocked()
	s.mu.Unlock()
	notify(fns)
}

// OnChange registers fn to be called, outside the Set's lock, after the
// entries change.
func (s *Set) OnChange(fn func()) {
	s.mu.Lock()
	s.onChange = append(s.onChange, fn)
	s.mu.Unlock()
}

func notify(fns []func()) {
	for _, fn := range fns {
		fn()
	}
}

// rebuildLocked recomputes the entries; it returns the change callbacks to
// run once the lock is released.
func (s *Set) rebuildLocked() []func() {
	type candidate struct {
		name   string
		info   Info
		tool   Tool
		normal bool // info.Name needs no normalising (worked out once: sorting asks often)
	}
	builtins := make([]candidate, 0, len(s.builtins))
	for _, t := range s.builtins {
		info := t.Info()
		builtins = append(builtins, candidate{info.Name, info, t, toolname.IsNormal(info.Name)})
	}
	var remote []candidate
	for server, tools := range s.servers {
		for _, t := range tools {
			info := t.Info()
			if info.Server == "" {
				info.Server = server
			}
			remote = append(remote, candidate{toolname.Qualified(info.Server, info.Name), info, t, toolname.IsNormal(info.Name)})
		}
	}
	// Between tools of one name, a tool whose own name needs no
	// normalising comes first: it keeps the name whatever else the server
	// lists.
	exactFirst := func(a, b candidate) int {
		switch ea, eb := a.normal, b.normal; {
		case ea && !eb:
			return -1
		case eb && !ea:
			return 1
		}
		return 0
	}
	byName := func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.info.Server, b.info.Server), exactFirst(a, b), cmp.Compare(a.info.Name, b.info.Name))
	}
	slices.SortFunc(builtins, byName)
	slices.SortFunc(remote, byName)

	s.gen++
	old := s.byName
	s.entries = make([]Entry, 0, len(builtins)+len(remote))
	s.byName = make(map[string]*entry, len(builtins)+len(remote))
	s.collisions = nil
	for _, c := range slices.Concat(builtins, remote) {
		if kept, dup := s.byName[c.name]; dup && kept.Info.Server != "" && kept.Info.Server == c.info.Server {
			// Two tools of one server whose names normalise alike (a.b,
			// a/b): both are offered, the later under a name ending in a
			// stable hash of its own.
			if alt := toolname.WithHash(c.name, c.info.Server, c.info.Name); s.byName[alt] == nil {
				c.name = alt
			}
		}
		if kept, dup := s.byName[c.name]; dup {
			col := Collision{Name: c.name, Kept: kept.Info, Dropped: c.info}
			s.collisions = append(s.collisions, col)
			key := c.name + "\x00" + origin(col.Kept) + "\x00" + origin(col.Dropped)
			if s.warned[key] {
				continue
			}
			if s.warned == nil {
				s.warned = make(map[string]bool)
			}
			s.warned[key] = true
			s.logger.Warn("two tools have the same name; the second is not offered",
				"name", c.name, "kept", origin(col.Kept), "dropped", origin(col.Dropped))
			continue
		}
		e := &entry{Entry: Entry{Name: c.name, Info: c.info, Tool: c.tool}}
		// Keep an already resolved schema when the tool did not change.
		if prev, ok := old[c.name]; ok && prev.Tool == c.tool {
			e = prev
		}
		s.byName[c.name] = e
		s.entries = append(s.entries, e.Entry)
	}
	return slices.Clone(s.onChange)
}

// Entries returns every tool offered, built-ins first, then MCP tools, each
// group sorted by name.
func (s *Set) Entries() []Entry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.entries)
}

// Lookup finds a tool by its qualified name.
func (s *Set) Lookup(name string) (Entry, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.byName[name]
	if !ok {
		return Entry{}, false
	}
	return e.Entry, true
}

// Prepare readies the named tools for a call that is likely to come (see
// Preparer): tool search found them. Names the Set does not hold, and
// tools that need no preparing, are skipped.
func (s *Set) Prepare(names ...string) {
	var ps []Preparer
	s.mu.RLock()
	for _, n := range names {
		if e, ok := s.byName[n]; ok {
			if p, ok := e.Tool.(Preparer); ok {
				ps = append(ps, p)
			}
		}
	}
	s.mu.RUnlock()
	for _, p := range ps {
		p.Prepare()
	}
}

// Collisions returns the name collisions of the current entries: each
// tool that is not offered because another holds its qualified name (its
// String says which and what to do).
func (s *Set) Collisions() []Collision {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.collisions)
}

// ServerToolCounts returns how many tools each MCP server has in the set,
// by server name: tools lost to a collision are not counted.
func (s *Set) ServerToolCounts() map[string]int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]int, len(s.servers))
	for _, e := range s.entries {
		if e.Info.Server != "" {
			out[e.Info.Server]++
		}
	}
	return out
}

// ErrUnknownTool is returned by Call for a name the Set does not hold.
var ErrUnknownTool = errors.New("unknown tool")

// CheckArguments checks args against the input schema of the tool called
// name, as Call does before it calls the tool: it returns nil when they
// match (or the schema cannot be used for validation), an *ArgumentsError
// naming every problem when they do not, an error wrapping
// ErrUnknownTool for a name the Set does not hold, and a *HeldBackError
// for a tool that is held back. A front end that calls
// tools for a person uses it to tell arguments the tool never saw from an
// error the tool reported.
func (s *Set) CheckArguments(name string, args json.RawMessage) error {
	s.mu.RLock()
	e, ok := s.byName[name]
	s.mu.RUnlock()
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	if err := heldBackError(e.Entry); err != nil {
		return err
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if ae := e.validate(args); ae != nil {
		return ae
	}
	return nil
}

// Call validates args against the tool's input schema and calls it.
// Arguments that do not match the schema give a Result with IsError set and
// a message a model can act on; the tool is not called. An error is
// returned only when the call could not be made or completed, or the
// tool is held back (a *HeldBackError).
func (s *Set) Call(ctx context.Context, name string, args json.RawMessage) (*Result, error) {
	s.mu.RLock()
	e, ok := s.byName[name]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	if err := heldBackError(e.Entry); err != nil {
		return nil, err
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	start := time.Now()
	if ae := e.validate(args); ae != nil {
		msg := ae.modelMessage()
		res := &Result{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
		if a, ok := e.Tool.(InvalidArgumentsAnswerer); ok {
			res = a.InvalidArguments(msg)
		}
		s.record(CallRecord{Tool: name, Server: e.Info.Server, Start: start, IsError: true, Caller: CallerFrom(ctx)})
		return res, nil
	}
	res, err := e.Tool.Call(ctx, args)
	rec := CallRecord{Tool: name, Server: e.Info.Server, Start: start, Duration: time.Since(start), Caller: CallerFrom(ctx)}
	switch {
	case err != nil:
		rec.Err = err.Error()
	case res == nil:
		err = fmt.Errorf("tool %s returned no result", name)
		rec.Err = err.Error()
	default:
		rec.IsError = res.IsError
	}
	s.record(rec)
	return res, err
}

// validate checks args against the entry's input schema and returns what
// is wrong, or nil when the arguments are valid (or the schema cannot be
// used for validation).
func (e *entry) validate(args json.RawMessage) *ArgumentsError {
	e.schemaOnce.Do(func() { e.check = inputSchema(e.Name, e.Info.InputSchema) })
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return &ArgumentsError{Tool: e.Name, Problems: []string{fmt.Sprintf("not valid JSON (%v); send a JSON object", err)}, Schema: e.Info.InputSchema}
	}
	obj, isObject := v.(map[string]any)
	if !isObject {
		return &ArgumentsError{Tool: e.Name, Problems: []string{"want a JSON object, got " + jsonKind(v)}, Schema: e.Info.InputSchema}
	}
	if p := problems(e.check, obj); len(p) > 0 {
		return &ArgumentsError{Tool: e.Name, Problems: p, Schema: e.Info.InputSchema}
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "an object"
}

func (s *Set) record(r CallRecord) {
	s.recentMu.Lock()
	defer s.recentMu.Unlock()
	if len(s.recent) < recentCalls {
		s.recent = append(s.recent, r)
		return
	}
	s.recent[s.next] = r
	s.next = (s.next + 1) % recentCalls
}

// RecentBy returns up to n of the most recent calls made by caller (as
// WithCaller named it), newest first.
func (s *Set) RecentBy(caller string, n int) []CallRecord {
	var out []CallRecord
	for _, r := range s.Recent(recentCalls) {
		if r.Caller == caller && len(out) < n {
			out = append(out, r)
		}
	}
	return out
}

// Recent returns up to n of the most recent calls, newest first.
func (s *Set) Recent(n int) []CallRecord {
	s.recentMu.Lock()
	defer s.recentMu.Unlock()
	out := make([]CallRecord, 0, min(n, len(s.recent)))
	for i := 0; i < len(s.recent) && len(out) < n; i++ {
		// The newest record is just before s.next (or at the end before the ring wraps).
		idx := (s.next - 1 - i + 2*len(s.recent)) % len(s.recent)
		if len(s.recent) < recentCalls {
			idx = len(s.recent) - 1 - i
		}
		out = append(out, s.recent[idx])
	}
	return out
}
