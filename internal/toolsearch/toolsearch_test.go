package toolsearch

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

func TestWordsSplitsEveryNamingStyle(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		"read_text_file":            {"read", "text", "file"},
		"get-sum":                   {"get", "sum"},
		"getHTTPStatus2":            {"get", "http", "status", "2"},
		"dots.and-dashes.17":        {"dots", "and", "dashes", "17"},
		"tööl.3/ünïcode":            {"tööl", "3", "ünïcode"},
		"mcp__everything__get-sum":  {"mcp", "everything", "get", "sum"},
		"  Add two   numbers!  ":    {"add", "two", "numbers"},
		"listPullRequests":          {"list", "pull", "requests"},
		"sequentialthinking":        {"sequentialthinking"},
		"":                          nil,
		"___":                       nil,
		"ThreeWordName with spaces": {"three", "word", "name", "with", "spaces"},
	} {
		if got := Words(in); !slices.Equal(got, want) {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
	}
}

func names(docs []Doc, hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, docs[h.Doc].Server+"/"+docs[h.Doc].Tool)
	}
	return out
}

var sample = []Doc{
	{Tool: "get-sum", Description: "Returns the sum of two numbers", Server: "everything",
		Params: ParamsOf(json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","description":"First number"},"b":{"type":"number","description":"Second number"}}}`))},
	{Tool: "echo", Description: "Echoes back the input string", Server: "everything"},
	{Tool: "read_text_file", Description: "Read the complete contents of a file from the file system as text.", Server: "filesystem"},
	{Tool: "create_directory", Description: "Create a new directory or ensure a directory exists.", Server: "filesystem"},
	{Tool: "move_file", Description: "Move or rename files and directories.", Server: "filesystem"},
	{Tool: "create_issue", Description: "Create a new issue in a GitHub repository", Server: "github"},
	{Tool: "listPullRequests", Description: "List and filter repository pull requests", Server: "github"},
	{Tool: "set", Description: "Set a key-value pair with optional expiration", Server: "cache",
		ServerInstructions: "A Redis cache. Keys expire."},
}

func TestSearchRanksByMeaningfulWords(t *testing.T) {
	t.Parallel()
	ix := Build(sample)
	for query, want := range map[string]string{
		"add two numbers":                    "everything/get-sum",
		"repeat my text back to me":          "everything/echo",
		"show the contents of a text file":   "filesystem/read_text_file",
		"make a new folder":                  "filesystem/create_directory",
		"rename a file":                      "filesystem/move_file",
		"open a bug report issue on GitHub":  "github/create_issue",
		"which pull requests are open":       "github/listPullRequests",
		"store a value in the redis cache":   "cache/set",
		"mcp__filesystem__read_text_file":    "filesystem/read_text_file",
		"list_pull_requests":                 "github/listPullRequests",
		"get sum":                            "everything/get-sum",
		"Sum of numbers, please":             "everything/get-sum",
		"second number of a sum of numbers?": "everything/get-sum",
	} {
		hits := ix.Search(query, 3)
		if len(hits) == 0 || names(sample, hits)[0] != want {
			t.Errorf("Search(%q) = %v, want %s first", query, names(sample, hits), want)
		}
	}
}

func TestSearchLimitsOrdersAndFindsNothingForUnknownWords(t *testing.T) {
	t.Parallel()
	ix := Build(sample)
	if hits := ix.Search("zebra quokka", 5); len(hits) != 0 {
		t.Errorf("unknown words matched %v", names(sample, hits))
	}
	if hits := ix.Search("the of a", 5); len(hits) != 0 {
		t.Errorf("stop words alone matched %v", names(sample, hits))
	}
	hits := ix.Search("file directory", 2)
	if len(hits) != 2 {
		t.Fatalf("limit 2 gave %d hits", len(hits))
	}
	if hits[0].Score < hits[1].Score {
		t.Errorf("hits not best first: %+v", hits)
	}
	if hits := ix.Search("file", 0); hits != nil {
		t.Errorf("limit 0 gave %v", hits)
	}
	var empty *Index
	if empty.Search("file", 3) != nil || empty.Len() != 0 || Build(nil).Search("file", 3) != nil {
		t.Error("an empty index found something")
	}
}

func TestSearchTiesKeepTheDocsOrder(t *testing.T) {
	t.Parallel()
	var docs []Doc
	for i := range 10 {
		docs = append(docs, Doc{Tool: fmt.Sprintf("t%d", i), Description: "awkward", Server: "many"})
	}
	hits := Build(docs).Search("awkward", 10)
	for i, h := range hits {
		if h.Doc != i {
			t.Fatalf("tied hits out of order: %+v", hits)
		}
	}
}

func TestParamsOfReadsNestedProperties(t *testing.T) {
	t.Parallel()
	got := ParamsOf(json.RawMessage(`{"type":"object","properties":{
		"path":{"type":"string","description":"Where"},
		"edits":{"type":"array","items":{"type":"object","properties":{"oldText":{"description":"Text to find"}}}}}}`))
	want := []Param{{"edits", ""}, {"oldText", "Text to find"}, {"path", "Where"}}
	if !slices.Equal(got, want) {
		t.Errorf("ParamsOf = %+v, want %+v", got, want)
	}
	if ParamsOf(json.RawMessage(`not json`)) != nil || ParamsOf(nil) != nil {
		t.Error("a broken schema gave parameters")
	}
}

func TestServerInstructionsFindTheServersTools(t *testing.T) {
	t.Parallel()
	docs := []Doc{
		{Tool: "get", Description: "Get value by key", Server: "kv", ServerInstructions: "Redis: keys and values."},
		{Tool: "get", Description: "Get value by key", Server: "other"},
	}
	if got := names(docs, Build(docs).Search("redis value", 2)); len(got) != 2 || got[0] != "kv/get" {
		t.Errorf("Search = %v, want kv/get first", got)
	}
}

// The best few of many matches are the first few of all of them, ties
// included.
func TestSearchTopFewIsThePrefixOfAll(t *testing.T) {
	t.Parallel()
	docs := manyDocs(3000)
	ix := Build(docs)
	for _, q := range benchQueries {
		all := ix.Search(q, len(docs))
		for _, k := range []int{1, 5, 20} {
			if got := ix.Search(q, k); !slices.Equal(got, all[:min(k, len(all))]) {
				t.Errorf("Search(%q, %d) = %v, want %v", q, k, got, all[:k])
			}
		}
	}
}
