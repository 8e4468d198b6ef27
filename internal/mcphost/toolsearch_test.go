package mcphost

import (
	"slices"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/testpeer"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/toolname"
)

// readFile is what "read a file" wants: read_text_file, or read_file, its
// deprecated twin.
var readFile = []string{"filesystem/read_text_file", "filesystem/read_file"}

// typedQueries are needs as a person types them into `otter mcp tools
// --search` — a few words, often the tool's own — each with the tools
// (server/tool, any of them) that meet it and the rank it must be found
// within, for the official reference servers' real tools.
var typedQueries = []struct {
	query string
	want  []string
	top   int
}{
	{"read file contents", readFile, 3},
	{"read a file", readFile, 3},
	{"read file", readFile, 3},
	{"show file contents", readFile, 3},
	{"cat file", readFile, 3},
	{"write a file", []string{"filesystem/write_file"}, 3},
	{"write to file", []string{"filesystem/write_file"}, 3},
	{"edit a file", []string{"filesystem/edit_file"}, 3},
	{"list directory", []string{"filesystem/list_directory"}, 3},
	{"list files in a directory", []string{"filesystem/list_directory"}, 5},
	{"search files by name", []string{"filesystem/search_files"}, 3},
	{"find file", []string{"filesystem/search_files"}, 5},
	{"move a file", []string{"filesystem/move_file"}, 3},
	{"create folder", []string{"filesystem/create_directory"}, 3},
	{"file size", []string{"filesystem/get_file_info", "filesystem/list_directory_with_sizes"}, 5},
	{"file info", []string{"filesystem/get_file_info"}, 3},
	{"directory tree", []string{"filesystem/directory_tree"}, 3},
	{"allowed directories", []string{"filesystem/list_allowed_directories"}, 3},
	{"read an image", []string{"filesystem/read_media_file"}, 5},
	{"read multiple files", []string{"filesystem/read_multiple_files"}, 3},
	{"create a github issue", []string{"github/create_issue"}, 3},
	{"get pull request", []string{"github/get_pull_request"}, 3},
	{"list pull requests", []string{"github/list_pull_requests"}, 3},
	{"list prs", []string{"github/list_pull_requests"}, 5},
	{"create pr", []string{"github/create_pull_request"}, 5},
	{"merge pr", []string{"github/merge_pull_request"}, 5},
	{"review comments on a pr", []string{"github/get_pull_request_comments"}, 5},
	{"search issues", []string{"github/search_issues"}, 3},
	{"search github code", []string{"github/search_code"}, 3},
	{"list commits", []string{"github/list_commits"}, 3},
	{"create branch", []string{"github/create_branch"}, 3},
	{"fork repo", []string{"github/fork_repository"}, 3},
	{"new repo", []string{"github/create_repository"}, 5},
	{"get file from github", []string{"github/get_file_contents"}, 5},
	{"update issue", []string{"github/update_issue"}, 3},
	{"comment on issue", []string{"github/add_issue_comment"}, 3},
	{"add observations to memory", []string{"memory/add_observations"}, 3},
	{"create entities", []string{"memory/create_entities"}, 3},
	{"delete entity", []string{"memory/delete_entities"}, 3},
	{"read knowledge graph", []string{"memory/read_graph"}, 3},
	{"search memory", []string{"memory/search_nodes"}, 5},
	{"think step by step", []string{"sequential-thinking/sequentialthinking"}, 5},
	{"echo a message", []string{"everything/echo"}, 3},
	{"add two numbers", []string{"everything/get-sum"}, 3},
	{"sum", []string{"everything/get-sum"}, 3},
	{"environment variables", []string{"everything/get-env"}, 3},
	{"gzip a file", []string{"everything/gzip-file-as-resource"}, 3},
	{"tiny image", []string{"everything/get-tiny-image"}, 3},
	{"long running operation", []string{"everything/trigger-long-running-operation"}, 3},
	{"toggle logging", []string{"everything/toggle-simulated-logging"}, 3},
}

// searchRank is the rank (1 is best) at which set.Search finds one of
// want (server/tool) for query, or 0 when it is not among the first 50.
func searchRank(set *tool.Set, instructions map[string]string, query string, want ...string) int {
	for i, m := range set.Search(query, 50, instructions) {
		if slices.Contains(want, m.Info.Server+"/"+m.Info.Name) {
			return i + 1
		}
	}
	return 0
}

// searchScore is the recall@k and the mean reciprocal rank of ranks.
func searchScore(ranks []int, k int) (recall, mrr float64) {
	for _, r := range ranks {
		if r > 0 && r <= k {
			recall++
		}
		if r > 0 {
			mrr += 1 / float64(r)
		}
	}
	n := float64(max(len(ranks), 1))
	return recall / n, mrr / n
}

// referenceSet connects the named reference servers (all of them when none
// is named) and the extra servers, and returns their tools and
// instructions.
func referenceSet(tb testing.TB, extra []config.Server, names ...string) (*tool.Set, map[string]string) {
	node, refs := testpeer.ReferenceServers(tb, tb.TempDir())
	cfg := config.MCP{Servers: extra}
	for _, r := range refs {
		if len(names) > 0 && !slices.Contains(names, r.Name) {
			continue
		}
		cfg.Servers = append(cfg.Servers, config.Server{Name: r.Name, Transport: config.TransportStdio, Command: node, Args: r.Args,
			Env: map[string]string{"MEMORY_FILE_PATH": tb.TempDir() + "/memory.jsonl"}, StartupTimeout: dur(liveness)})
	}
	set := tool.NewSet(tool.Options{})
	m := startConnected(tb, cfg, set)
	return set, m.Instructions()
}

// TestToolSearchFindsWhatPeopleType is issue 35's first item: over the
// real reference servers, each need a person types finds its tool within
// its rank — "read file contents" finds read_text_file or read_file among
// the first three, as a tool's own name outweighs its server's
// instructions and its parameters — and the needs a model phrases keep a
// recall@5 of at least 0.9.
func TestToolSearchFindsWhatPeopleType(t *testing.T) {
	set, instr := referenceSet(t, nil)
	for _, q := range typedQueries {
		for _, w := range q.want {
			server, name, _ := strings.Cut(w, "/")
			if _, ok := set.Lookup(toolname.Qualified(server, name)); !ok {
				t.Fatalf("query %q wants %s, which the servers do not list", q.query, w)
			}
		}
	}
	var typed, phrased []int
	for _, q := range typedQueries {
		r := searchRank(set, instr, q.query, q.want...)
		typed = append(typed, r)
		if r == 0 || r > q.top {
			var got []string
			for _, m := range set.Search(q.query, q.top, instr) {
				got = append(got, m.Info.Server+"/"+m.Info.Name)
			}
			t.Errorf("Search(%q) finds %v at rank %d, want within %d; the first %d: %v", q.query, q.want, r, q.top, q.top, got)
		}
	}
	for _, q := range recallQueries {
		phrased = append(phrased, searchRank(set, instr, q.query, q.want))
	}
	tr, tm := searchScore(typed, 5)
	pr, pm := searchScore(phrased, 5)
	t.Logf("typed: recall@5 %.3f, MRR %.3f (%d queries); phrased: recall@5 %.3f, MRR %.3f (%d queries)", tr, tm, len(typed), pr, pm, len(phrased))
	if pr < 0.9 {
		t.Errorf("recall@5 of the phrased needs = %.3f, want ≥ 0.9", pr)
	}

	// The setup: the everything and filesystem servers alone.
	set, instr = referenceSet(t, nil, "everything", "filesystem")
	for _, want := range readFile {
		if r := searchRank(set, instr, "read file contents", want); r == 0 || r > 3 {
			t.Errorf("over everything and filesystem, Search(%q) ranks %s %d, want within 3", "read file contents", want, r)
		}
	}
}
