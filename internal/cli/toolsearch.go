package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/termtext"
	"github.com/otter-sh/otter/internal/tool"
)

// DefaultSearchLimit is how many tools --search lists unless --limit
// says: as many as the model's tool_search returns.
const DefaultSearchLimit = agent.DefaultSearchLimit

// checkSearch refuses --limit without --search, a negative --limit and a
// blank --search.
func (o MCPToolsOptions) checkSearch() error {
	switch {
	case o.Limit < 0:
		return fmt.Errorf("--limit %d: give a positive number of tools (default %d)", o.Limit, DefaultSearchLimit)
	case o.Limit > 0 && o.Search == "":
		return errors.New("--limit applies to --search: give --search \"what the tool should do\"")
	case o.Search != "" && strings.TrimSpace(o.Search) == "":
		return errors.New("--search needs words: what the tool should do, such as --search \"add two numbers\"")
	}
	return nil
}

// searchTools ranks the MCP tools for o.Search as the model's tool_search
// does (the same index, with the servers' instructions); only, when set,
// keeps that server's tools.
func searchTools(a *app.App, o MCPToolsOptions, only string) []tool.Match {
	limit := o.Limit
	if limit == 0 {
		limit = DefaultSearchLimit
	}
	if only == "" {
		return a.SearchTools(o.Search, limit)
	}
	var out []tool.Match
	for _, m := range a.SearchTools(o.Search, len(a.ToolEntries())) {
		if m.Info.Server == only && len(out) < limit {
			out = append(out, m)
		}
	}
	return out
}

// declineSampling is the sampling approver of every `otter mcp …`
// session (startMCPSession): the servers see a client that offers
// sampling, as in an agent session, and any request they send is declined.
type declineSampling struct{}

func (declineSampling) ApproveTool(context.Context, ask.Permission) (ask.PermissionDecision, error) {
	return ask.Deny, nil
}

func (declineSampling) ApproveSampling(context.Context, ask.Sampling) (bool, error) {
	return false, errors.New("otter mcp commands ask no model; a server's sampling request is answered in the TUI or by otter -p")
}

// SearchJSON is one element of `otter mcp tools --search --json`: the
// usual tool object with its score (higher is better).
type SearchJSON struct {
	ToolJSON
	Score float64 `json:"score"`
}

func printSearch(w io.Writer, matches []tool.Match, asJSON bool) error {
	if asJSON {
		out := make([]SearchJSON, 0, len(matches))
		for _, m := range matches {
			out = append(out, SearchJSON{ToolJSON: toolJSON(m.Entry), Score: m.Score})
		}
		return writeJSON(w, out)
	}
	if len(matches) == 0 {
		_, err := fmt.Fprintln(w, "no tool matches: try other words, or the name of a server")
		return err
	}
	for i, m := range matches {
		fmt.Fprintf(w, "%d. %s  (server %s, tool %s)  score %.2f\n", i+1, m.Name, termtext.Line(m.Info.Server), termtext.Line(m.Info.Name), m.Score)
		if d := strings.TrimSpace(termtext.Visible(m.Info.Description)); d != "" {
			fmt.Fprintf(w, "    %s\n", strings.SplitN(d, "\n", 2)[0])
		}
	}
	return nil
}
