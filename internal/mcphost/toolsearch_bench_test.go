package mcphost

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/toolname"
)

// recallQueries are needs as a model describes them, each with the tool
// (server/tool) that meets it, for the official reference servers' real
// tools.
var recallQueries = []struct{ query, want string }{
	{"add two numbers together", "everything/get-sum"},
	{"repeat my message back to me", "everything/echo"},
	{"show the server's environment variables", "everything/get-env"},
	{"get a small logo picture", "everything/get-tiny-image"},
	{"compress a file with gzip", "everything/gzip-file-as-resource"},
	{"turn the server's logging on or off", "everything/toggle-simulated-logging"},
	{"start a long task that reports its progress", "everything/trigger-long-running-operation"},
	{"run a deep research on a topic", "everything/simulate-research-query"},
	{"structured data with an output schema for a location", "everything/get-structured-content"},
	{"show how content annotations work", "everything/get-annotated-message"},
	{"links to several resources", "everything/get-resource-links"},
	{"turn resource subscription updates on", "everything/toggle-subscriber-updates"},
	{"read the text of a file", "filesystem/read_text_file"},
	{"show the contents of several files at once", "filesystem/read_multiple_files"},
	{"view an image or audio file from disk", "filesystem/read_media_file"},
	{"save text into a new file", "filesystem/write_file"},
	{"replace some lines in a text file", "filesystem/edit_file"},
	{"make a new folder", "filesystem/create_directory"},
	{"what files are in this folder", "filesystem/list_directory"},
	{"list files together with their sizes", "filesystem/list_directory_with_sizes"},
	{"recursive tree of the project's folders", "filesystem/directory_tree"},
	{"rename a file", "filesystem/move_file"},
	{"find files whose names match a glob pattern", "filesystem/search_files"},
	{"when was this file modified and how big is it", "filesystem/get_file_info"},
	{"which directories may I access", "filesystem/list_allowed_directories"},
	{"remember new people and projects in the knowledge graph", "memory/create_entities"},
	{"link two entities with a relation", "memory/create_relations"},
	{"add a new fact about an existing entity", "memory/add_observations"},
	{"forget an entity entirely", "memory/delete_entities"},
	{"remove a specific observation from an entity", "memory/delete_observations"},
	{"remove the relation between two entities", "memory/delete_relations"},
	{"dump everything stored in memory", "memory/read_graph"},
	{"look up nodes in memory matching a query", "memory/search_nodes"},
	{"open entities by their names", "memory/open_nodes"},
	{"think through a hard problem step by step", "sequential-thinking/sequentialthinking"},
	{"create or update a file in a GitHub repository", "github/create_or_update_file"},
	{"find GitHub repositories about machine learning", "github/search_repositories"},
	{"make a new GitHub repository", "github/create_repository"},
	{"get a file's contents from a GitHub repo", "github/get_file_contents"},
	{"push several files to GitHub in one commit", "github/push_files"},
	{"open a bug report issue on GitHub", "github/create_issue"},
	{"open a pull request from my branch", "github/create_pull_request"},
	{"fork someone's repository", "github/fork_repository"},
	{"create a new branch in the repo", "github/create_branch"},
	{"show the recent commits of a branch", "github/list_commits"},
	{"list the open issues of a repository", "github/list_issues"},
	{"close an issue or change its labels", "github/update_issue"},
	{"comment on an issue", "github/add_issue_comment"},
	{"search for code across GitHub", "github/search_code"},
	{"find GitHub users by name", "github/search_users"},
	{"merge a pull request", "github/merge_pull_request"},
	{"which files did a pull request change", "github/get_pull_request_files"},
	{"are the status checks of a pull request passing", "github/get_pull_request_status"},
	{"approve a pull request with a review", "github/create_pull_request_review"},
	{"show the details of issue 42", "github/get_issue"},
}

// naiveRank is the baseline ranking: tools ordered by how many of the
// query's words their name and description contain, as a plain text
// filter would.
func naiveRank(entries []tool.Entry, query string, limit int) []tool.Entry {
	words := strings.Fields(strings.ToLower(query))
	type scored struct {
		e tool.Entry
		n int
	}
	var all []scored
	for _, e := range entries {
		text := strings.ToLower(e.Name + " " + e.Info.Description)
		n := 0
		for _, w := range words {
			if strings.Contains(text, w) {
				n++
			}
		}
		if n > 0 {
			all = append(all, scored{e, n})
		}
	}
	slices.SortStableFunc(all, func(a, b scored) int { return b.n - a.n })
	out := make([]tool.Entry, 0, limit)
	for _, s := range all[:min(limit, len(all))] {
		out = append(out, s.e)
	}
	return out
}

// BenchmarkToolSearchRecall prints the recall@5 of tool search — the
// ranking the model's tool_search and `otter mcp tools --search` use — on
// needs phrased as a model phrases them, against the real tools of the
// official reference servers, with the 2,000-tool test server's tools
// mixed in as distractors (target ≥ 0.9); the baseline is a plain word
// filter over names and descriptions.
//
//	tool-search-recall: otter=… baseline=… ratio=…
func BenchmarkToolSearchRecall(b *testing.B) {
	set, instr := referenceSet(b, []config.Server{benchServer("many", "many")})
	var mcpEntries []tool.Entry
	for _, e := range set.Entries() {
		if e.Info.Server != "" {
			mcpEntries = append(mcpEntries, e)
		}
	}
	for _, q := range recallQueries {
		server, name, _ := strings.Cut(q.want, "/")
		if _, ok := set.Lookup(toolname.Qualified(server, name)); !ok {
			b.Fatalf("query %q wants %s, which the servers do not list", q.query, q.want)
		}
	}
	found := func(ranked []tool.Entry, want string) bool {
		return slices.ContainsFunc(ranked, func(e tool.Entry) bool { return e.Info.Server+"/"+e.Info.Name == want })
	}
	var otter, baseline int
	var ranks, typed []int
	var missed []string
	b.ResetTimer()
	for range b.N {
		otter, baseline, ranks, typed, missed = 0, 0, nil, nil, nil
		for _, q := range recallQueries {
			r := searchRank(set, instr, q.query, q.want)
			ranks = append(ranks, r)
			if r > 0 && r <= 5 {
				otter++
			} else {
				missed = append(missed, fmt.Sprintf("%q → %s (rank %d)", q.query, q.want, r))
			}
			if found(naiveRank(mcpEntries, q.query, 5), q.want) {
				baseline++
			}
		}
		for _, q := range typedQueries {
			typed = append(typed, searchRank(set, instr, q.query, q.want...))
		}
	}
	b.StopTimer()
	n := float64(len(recallQueries))
	ro, rb := float64(otter)/n, float64(baseline)/n
	_, mrr := searchScore(ranks, 5)
	tr, tm := searchScore(typed, 5)
	b.ReportMetric(ro, "recall@5")
	fmt.Printf("tool-search-recall: otter=%.3f baseline=%.3f ratio=%.2f (recall@5, %d queries, %d tools of which %d are distractors; target ≥ 0.9)\n",
		ro, rb, ro/rb, len(recallQueries), len(mcpEntries), set.ServerToolCounts()["many"])
	fmt.Printf("  MRR %.3f; the %d typed queries: recall@5 %.3f, MRR %.3f\n", mrr, len(typed), tr, tm)
	for _, s := range missed {
		fmt.Printf("  missed: %s\n", s)
	}
}
