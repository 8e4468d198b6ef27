package tool

import (
	"maps"
	"sync"

	"github.com/otter-sh/otter/internal/toolsearch"
)

// Match is a tool Search found, with its score (higher is better).
type Match struct {
	Entry
	Score float64
}

// searchIndex is the Set's search index over its MCP tools, built on the
// first search after the tools change.
type searchIndex struct {
	mu      sync.Mutex
	gen     uint64 // the Set's generation the index was built from
	built   bool
	instr   map[string]string
	entries []Entry
	ix      *toolsearch.Index
}

// Search ranks the Set's MCP tools a model may be offered (neither
// unsupported nor held back) for query, a need described in words,
// and returns up to limit of them, best first (see package toolsearch).
// instructions are the connected servers' instructions by server name; they
// are indexed with each server's tools. The index is rebuilt when a
// server's tool list or instructions change. The model's tool_search tool
// and `otter mcp tools --search` both rank through it.
func (s *Set) Search(query string, limit int, instructions map[string]string) []Match {
	s.mu.RLock()
	gen := s.gen
	s.mu.RUnlock()
	si := &s.search
	si.mu.Lock()
	defer si.mu.Unlock()
	if !si.built || si.gen != gen || !maps.Equal(si.instr, instructions) {
		entries, g := s.mcpEntries()
		docs := make([]toolsearch.Doc, len(entries))
		for i, e := range entries {
			docs[i] = toolsearch.Doc{
				Tool:               e.Info.Name,
				Title:              e.Info.Title,
				Description:        e.Info.Description,
				Params:             toolsearch.ParamsOf(e.Info.InputSchema),
				Server:             e.Info.Server,
				ServerInstructions: instructions[e.Info.Server],
			}
		}
		si.ix, si.entries, si.gen, si.built = toolsearch.Build(docs), entries, g, true
		si.instr = maps.Clone(instructions)
	}
	hits := si.ix.Search(query, limit)
	out := make([]Match, len(hits))
	for i, h := range hits {
		out[i] = Match{Entry: si.entries[h.Doc], Score: h.Score}
	}
	return out
}

// mcpEntries returns the entries of MCP tools a model may be offered
// (Info.Offered) and the Set's generation.
func (s *Set) mcpEntries() ([]Entry, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []Entry
	for _, e := range s.entries {
		if e.Info.Server != "" && e.Info.Offered() {
			out = append(out, e)
		}
	}
	return out, s.gen
}
