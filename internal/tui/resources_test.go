package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

// resourcesDocs gives b a "docs" server's resources: a Markdown guide, a
// PNG logo and a template demo://text/{id}, whose {id} the server
// completes (as it does a prompt's argument); completions and reads are
// recorded.
func resourcesDocs(b *fakeHost) *fakeHost {
	b.resources = []servers.Resource{
		{Server: "docs", Resource: &sdk.Resource{URI: "demo://guide/architecture.md", Name: "architecture.md", MIMEType: "text/markdown"}},
		{Server: "docs", Resource: &sdk.Resource{URI: "demo://logo.png", Name: "logo", MIMEType: "image/png"}},
	}
	b.templates = []servers.ResourceTemplate{{Server: "docs", ResourceTemplate: &sdk.ResourceTemplate{URITemplate: "demo://text/{id}", Name: "Dynamic text"}}}
	b.complete = func(_ context.Context, server, ref, name, arg, value string, _ map[string]string) ([]string, error) {
		b.record("complete " + server + " " + ref + " " + name + " " + arg + "=" + value)
		vals := []string{"1", "2", "12"}
		if ref == "ref/prompt" {
			vals = []string{"README.md", "main.go"}
		}
		var out []string
		for _, v := range vals {
			if strings.HasPrefix(v, value) {
				out = append(out, v)
			}
		}
		return out, nil
	}
	b.read = func(_ context.Context, server, uri string) (*sdk.ReadResourceResult, error) {
		if strings.HasSuffix(uri, ".png") {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "image/png", Blob: make([]byte, 2048)}}}, nil
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: "# Architecture\nThe core emits events."}}}, nil
	}
	return b
}

// resourcesSent reports whether the model was sent a user message that
// starts with typed (the message as the person typed it) and holds
// attached (what an attachment added after it).
func resourcesSent(b *fakeHost, typed, attached string) bool {
	for _, text := range b.sent() {
		if strings.HasPrefix(text, typed) && strings.Contains(text[len(typed):], attached) {
			return true
		}
	}
	return false
}

// resourcesActions are the fake's recorded actions, for a failure's message.
func resourcesActions(b *fakeHost) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.actions)
}

func TestMCPResourcesBrowseAndAttach(t *testing.T) {
	t.Parallel()
	b := resourcesDocs(&fakeHost{
		servers: []servers.Status{{Name: "docs", Transport: "stdio", State: servers.StateConnected, Resources: 2, Templates: 1, Prompts: 1}},
		prompts: []servers.Prompt{{Server: "docs", Name: "review", Description: "Review a file", Arguments: []*sdk.PromptArgument{{Name: "file", Required: true}}}},
		replies: []llmtest.Reply{{Text: []string{"It says the core emits events."}}},
	})
	h := start(t, b)
	h.enterLine("/mcp")
	h.waitFor("RESOURCES", "PROMPTS")
	h.press("esc")
	h.enterLine("/mcp resources")
	h.waitFor("Resources", "3 shown", "docs:demo://guide/architecture.md", "text/markdown", "docs:demo://text/{id}", "template")
	h.typeText("logo")
	s := h.waitFor("1 shown", "docs:demo://logo.png")
	if strings.Contains(s, "architecture.md") {
		t.Errorf("the filter kept what does not match:\n%s", s)
	}
	h.press("enter")
	h.waitFor("demo://logo.png · image/png", "[image, 2 KiB]")
	h.press("esc")
	for range 4 {
		h.press("backspace")
	}
	h.waitFor("3 shown")
	h.press("enter")
	h.waitFor("# Architecture", "The core emits events.", "a attach to the next message")
	if !b.did("read docs demo://guide/architecture.md") {
		t.Errorf("the preview did not read the resource; actions %v", resourcesActions(b))
	}
	h.press("a")
	h.waitGone("3 shown")
	h.waitFor("› @docs:demo://guide/architecture.md")
	h.typeText("summarise it")
	h.press("enter")
	h.waitFor("› @docs:demo://guide/architecture.md summarise it", "Ask otter…") // sent: the input is empty again
	h.waitFor("It says the core emits events.")                                  // the model's answer: the turn is over
	// The model got the message as typed, with the resource's text
	// attached after it.
	if !resourcesSent(b, "@docs:demo://guide/architecture.md summarise it", "The core emits events.") {
		t.Errorf("the attached mention did not reach the model; it got %q", b.sent())
	}

	// @ completes mentions from the servers' resources.
	h.typeText("see @docs:demo://g")
	h.press("tab")
	h.waitFor("› see @docs:demo://guide/architecture.md")
	h.press("ctrl+u")
	h.enterLine("/mcp prompts")
	h.waitFor("/mcp__docs__review", "file=…", "Review a file")
	h.press("esc")
	h.waitGone("enter use it")
	h.enterLine("/mcp resources nosuch")
	h.waitFor(`no MCP server is named "nosuch"`)
}

func TestMCPResourcesAndPromptsTabComplete(t *testing.T) {
	t.Parallel()
	b := resourcesDocs(&fakeHost{
		servers: []servers.Status{{Name: "docs", Transport: "stdio", State: servers.StateConnected, Resources: 2, Templates: 1}},
		prompts: []servers.Prompt{{Server: "docs", Name: "review", Description: "Review a file"}},
	})
	h := start(t, b)
	h.typeText("/mcp r")
	h.press("tab")
	h.waitFor("/mcp reload", "/mcp resources") // both start so: Tab offers them
	h.typeText("s")                            // "/mcp re" + "s"
	h.press("tab")
	h.waitFor("› /mcp resources ")
	h.typeText("d")
	h.press("tab")
	h.waitFor("› /mcp resources docs ")
	h.press("enter")
	h.waitFor("Resources", "3 shown")
	h.press("esc")
	h.waitGone("3 shown")
	h.typeText("/mcp p")
	h.press("tab")
	h.waitFor("› /mcp prompts ")
	h.press("enter")
	h.waitFor("/mcp__docs__review", "Review a file")
}

func TestOpenResourceLinkOfToolResult(t *testing.T) {
	t.Parallel()
	// The model calls docs' find, whose result links two resources, then
	// answers.
	b := resourcesDocs(&fakeHost{
		servers: []servers.Status{{Name: "docs", Transport: "stdio", State: servers.StateConnected, Resources: 2}},
		tools:   []tool.Entry{entry("docs", "find", "Finds documents", `{"type":"object"}`, nil)},
		replies: []llmtest.Reply{{Calls: []llmtest.Call{{ID: "c1", Name: "mcp__docs__find", Args: "{}"}}}, {Text: []string{"found them"}}},
		call: func(context.Context, string, json.RawMessage) (*tool.Result, error) {
			return &tool.Result{Content: []sdk.Content{
				&sdk.TextContent{Text: "two documents"},
				&sdk.ResourceLink{URI: "demo://logo.png", Name: "logo", MIMEType: "image/png"},
				&sdk.ResourceLink{URI: "demo://guide/architecture.md", Name: "architecture.md"},
			}}, nil
		},
	})
	h := start(t, b)
	h.enterLine("/open")
	h.waitFor("no tool result has a resource link to open yet")
	h.enterLine("find the docs")
	h.waitFor("Allow mcp__docs__find?") // find is not read-only: the person allows it
	h.press("enter")
	h.waitFor("[resource link: architecture.md, demo://guide/architecture.md]", "/open 1…2 previews a resource link", "found them")
	h.enterLine("/open 3")
	h.waitFor(`1 to 2; "3" is not one`)
	h.enterLine("/open 2")
	h.waitFor("docs:demo://guide/architecture.md", "# Architecture", "The core emits events.", "a attach to the next message")
	if !b.did("read docs demo://guide/architecture.md") {
		t.Errorf("/open did not read the linked resource; actions %v", resourcesActions(b))
	}
	// Esc goes back to the chat, not to the browser /open did not show.
	h.press("esc")
	s := h.waitGone("# Architecture")
	if strings.Contains(s, "type to filter") || strings.Contains(s, "shown") {
		t.Fatalf("esc from /open's preview opened the resource list:\n%s", s)
	}
	h.enterLine("/open 2")
	h.waitFor("# Architecture", "esc close")
	h.press("a") // attaches what the preview shows, not the browser's first row
	h.waitFor("› @docs:demo://guide/architecture.md")
}

func TestMentionCompletesTemplateVariables(t *testing.T) {
	t.Parallel()
	b := resourcesDocs(&fakeHost{
		servers: []servers.Status{{Name: "docs", Transport: "stdio", State: servers.StateConnected, Resources: 2, Templates: 1}},
	})
	h := start(t, b)
	h.typeText("read @docs:demo://t")
	h.press("tab") // the template itself
	h.waitFor("› read @docs:demo://text/{id}")
	h.press("tab") // its {id}, from the server
	h.waitFor("› read @docs:demo://text/", "demo://text/1", "demo://text/12", "demo://text/2")
	if !b.did("complete docs ref/resource demo://text/{id} id=") {
		t.Errorf("Tab did not ask the server for {id}; actions %v", resourcesActions(b))
	}
	h.typeText("1")
	h.press("tab")
	h.waitFor("(tab again cycles, → keeps one)  @docs:demo://text/1  @docs:demo://text/12")
	if !b.did("complete docs ref/resource demo://text/{id} id=1") {
		t.Errorf("Tab did not ask the server for {id} from 1; actions %v", resourcesActions(b))
	}
	h.press("tab", "tab")
	h.waitFor("› read @docs:demo://text/12")
}

func TestPromptFormCompletesArguments(t *testing.T) {
	t.Parallel()
	b := resourcesDocs(&fakeHost{
		servers: []servers.Status{{Name: "docs", Transport: "stdio", State: servers.StateConnected, Prompts: 1}},
		prompts: []servers.Prompt{{Server: "docs", Name: "review", Description: "Review a file", Arguments: []*sdk.PromptArgument{{Name: "file", Required: true}}}},
	})
	h := start(t, b)
	h.enterLine("/mcp__docs__review")
	h.waitFor("Review a file", "file *")
	h.typeText("ma")
	h.waitFor("main.go") // the server's value, suggested as the rest of what is typed
	if !b.waitDid("complete docs ref/prompt review file=ma") {
		t.Errorf("the form did not ask the server; actions %v", resourcesActions(b))
	}
	h.press("ctrl+e")
	h.press("enter")
	h.waitFor("prompt text for")
	if !b.did("prompt docs review map[file:main.go]") {
		t.Errorf("the accepted suggestion did not reach the prompt; actions %v", resourcesActions(b))
	}
}

func TestAttachedResourceChangeIsNoted(t *testing.T) {
	t.Parallel()
	b := resourcesDocs(&fakeHost{
		servers: []servers.Status{{Name: "docs", Transport: "stdio", State: servers.StateConnected, Resources: 2}},
		replies: []llmtest.Reply{{Text: []string{"It says the core emits events."}}},
	})
	h := start(t, b)
	h.enterLine("read @docs:demo://guide/architecture.md")
	h.waitFor("It says the core emits events.") // the model's answer: the turn is over
	h.ui.Notify(servers.ResourceUpdated{Server: "docs", URI: "demo://guide/architecture.md"})
	h.waitFor("⟳ @docs:demo://guide/architecture.md changed on the server since it was attached")
}

func TestTemplateSpot(t *testing.T) {
	t.Parallel()
	const tmpl = "repo://{owner}/{name}/readme"
	for _, tc := range []struct {
		typed, head, name, value, suffix, resolved string
		ok                                         bool
	}{
		{"repo://{owner}/{name}/readme", "repo://", "owner", "", "/{name}/readme", "", true},
		{"repo://ott", "repo://", "owner", "ott", "/{name}/readme", "", true},
		{"repo://otter-sh/{name}/readme", "repo://otter-sh/", "name", "", "/readme", "owner=otter-sh", true},
		{"repo://otter-sh/ot", "repo://otter-sh/", "name", "ot", "/readme", "owner=otter-sh", true},
		{"repo://otter-sh/otter/readme", "repo://otter-sh/", "name", "otter", "/readme", "owner=otter-sh", true},
		{"file://x", "", "", "", "", "", false},
	} {
		head, name, value, suffix, resolved, ok := templateSpot(tmpl, tc.typed)
		var res []string
		for k, v := range resolved {
			res = append(res, k+"="+v)
		}
		got := []string{head, name, value, suffix, strings.Join(res, ","), fmt.Sprint(ok)}
		want := []string{tc.head, tc.name, tc.value, tc.suffix, tc.resolved, fmt.Sprint(tc.ok)}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("templateSpot(%q) = %q, want %q", tc.typed, got, want)
		}
	}
}

// resourcesRepo gives b a server "gh" whose template has two variables;
// the values of the second depend on the first (completion/complete's
// context), and each completion asked is recorded.
func resourcesRepo(b *fakeHost) *fakeHost {
	b.templates = []servers.ResourceTemplate{{Server: "gh", ResourceTemplate: &sdk.ResourceTemplate{URITemplate: "repo://{owner}/{name}/readme", Name: "README"}}}
	b.complete = func(_ context.Context, server, ref, name, arg, value string, resolved map[string]string) ([]string, error) {
		b.record("complete " + arg + "=" + value + " owner=" + resolved["owner"])
		vals := map[string][]string{"owner": {"otter-sh", "golang"}}[arg]
		if arg == "name" {
			vals = map[string][]string{"otter-sh": {"otter", "otter-docs"}, "golang": {"go"}}[resolved["owner"]]
		}
		return withPrefix(vals, value), nil
	}
	return b
}

// withPrefix are the values that begin with what was typed, as a server's
// completion/complete answers.
func withPrefix(vals []string, typed string) []string {
	var out []string
	for _, v := range vals {
		if strings.HasPrefix(v, typed) {
			out = append(out, v)
		}
	}
	return out
}

// Tab completes each {variable} of a template in turn, not only the
// first, and the server hears the values chosen before.
func TestMentionCompletesEveryTemplateVariable(t *testing.T) {
	t.Parallel()
	b := resourcesRepo(&fakeHost{
		servers: []servers.Status{{Name: "gh", Transport: "stdio", State: servers.StateConnected, Templates: 1}},
	})
	h := start(t, b)
	h.typeText("read @gh:")
	h.press("tab")
	h.waitFor("› read @gh:repo://{owner}/{name}/readme")
	h.press("tab") // {owner}
	h.waitFor("repo://otter-sh/{name}/readme", "repo://golang/{name}/readme")
	h.press("tab", "tab") // golang, then otter-sh
	h.waitFor("› read @gh:repo://otter-sh/{name}/readme")
	h.press("right") // keeps it
	h.press("tab")   // {name}, given owner=otter-sh
	h.waitFor("repo://otter-sh/otter/readme", "repo://otter-sh/otter-docs/readme")
	if !b.did("complete name= owner=otter-sh") {
		t.Errorf("Tab did not ask for {name} with owner=otter-sh; actions %v", resourcesActions(b))
	}
	h.press("tab", "tab") // otter-docs, then otter
	h.waitFor("› read @gh:repo://otter-sh/otter/readme")
}
