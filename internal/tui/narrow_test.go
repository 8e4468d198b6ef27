package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/llmconfig"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

// The no-provider help is meant to be copied into a shell or a config
// file: at 80 and 60 columns a comment that wraps goes on with "#" on each
// of its lines, so no line of the snippet turns into a command.
func TestNoProviderSnippetWrapsCommentsAsComments(t *testing.T) {
	t.Parallel()
	for _, width := range []int{80, 60} {
		b := &fakeHost{provider: Provider{Help: llmconfig.HowToConfigure()}}
		h := start(t, b)
		h.tm.Send(tea.WindowSizeMsg{Width: width, Height: 40})
		h.enterLine("hello")
		s := h.waitFor("export ANTHROPIC_API_KEY=", "Ollama needs")
		if !strings.Contains(s, "ANTHROPIC_BASE_URL") {
			t.Errorf("at %d columns, a variable's name is cut:\n%s", width, s)
		}
		for _, word := range []string{"(Claude)", "proxy)", "OPENAI_BASE_URL", `"anthropic"`, "Ollama", "needs no key"} {
			for _, line := range strings.Split(s, "\n") {
				if !strings.HasPrefix(line, "    ") { // prose, not the snippet
					continue
				}
				if i := strings.Index(line, word); i >= 0 && !strings.Contains(line[:i], "#") {
					t.Errorf("at %d columns, %q continues a comment without #:\n%s", width, line, s)
				}
			}
		}
	}
}

// At 80 and 60 columns the status bar drops its least important parts
// first (the name, the hint, the cost, the tool count) and keeps whole
// words: while a turn runs it still says that otter is working and that a
// server needs a login.
func TestStatusBarDegradesByWholeParts(t *testing.T) {
	t.Parallel()
	// The model (Anthropic's protocol, a 200k window) answers with a call
	// of a tool that runs until the test ends, and with 62k tokens of
	// usage: while the call runs otter works, and the bar has everything.
	release := make(chan struct{})
	b := &fakeHost{
		provider:       Provider{Name: "anthropic", Model: "claude-sonnet-4-6"},
		providerConfig: "context_window = 200000\n",
		servers: []servers.Status{
			{Name: "a", State: servers.StateConnected}, {Name: "b", State: servers.StateConnected},
			{Name: "c", State: servers.StateConnected}, {Name: "gh", State: servers.StateNeedsAuth},
		},
		replies: []llmtest.Reply{{Calls: []llmtest.Call{{ID: "1", Name: "mcp__a__t0", Args: `{}`}},
			InputTokens: 61_500, OutputTokens: 500}},
		call: func(ctx context.Context, _ string, _ json.RawMessage) (*tool.Result, error) {
			select {
			case <-ctx.Done():
			case <-release:
			}
			return tool.TextResult("done"), nil
		},
	}
	for i := range 12 {
		b.tools = append(b.tools, entry("a", fmt.Sprint("t", i), "", `{}`, &sdk.ToolAnnotations{ReadOnlyHint: true}))
	}
	h := start(t, b)
	t.Cleanup(func() { close(release) }) // before the App and the model close
	h.enterLine("go on")
	h.waitFor("31% of 200k", "working")
	b.waitDid("call mcp__a__t0 {}")
	// The bar's words: its parts, with the count of the tools offered
	// (the built-ins too) and the cost of the call as the core has them.
	var cost float64
	priced := false
	for _, c := range b.conv.Costs() {
		if c.Priced {
			cost, priced = cost+c.Cost, true
		}
	}
	if !priced {
		t.Fatalf("the call of %s/%s has no price: %+v", b.provider.Name, b.provider.Model, b.conv.Costs())
	}
	parts := []string{"otter", "anthropic/claude-sonnet-4-6", "3/4 servers", fmt.Sprintf("%d tools", len(b.app.ToolEntries())),
		"1 need login", "working", "esc cancels", "31% of 200k", fmt.Sprintf("$%.4f", cost)}
	// Wide, the bar has every part.
	h.tm.Send(tea.WindowSizeMsg{Width: 200, Height: 24})
	s := h.waitFor(parts[len(parts)-1])
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	for _, p := range parts {
		if bar := lines[len(lines)-1]; !strings.Contains(bar, p) {
			t.Errorf("at 200 columns the status bar lacks %q: %q", p, bar)
		}
	}
	words := map[string]bool{"·": true}
	for _, w := range strings.Fields(strings.Join(parts, " ")) {
		words[w] = true
	}
	for _, width := range []int{80, 60} {
		h.tm.Send(tea.WindowSizeMsg{Width: width, Height: 24})
		s := h.waitFor("working", "need login")
		lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
		bar := lines[len(lines)-1]
		t.Logf("%d columns: %q", width, bar)
		if ansi.StringWidth(bar) > width {
			t.Errorf("at %d columns the status bar is %d wide: %q", width, ansi.StringWidth(bar), bar)
		}
		for i, w := range strings.Fields(bar) {
			if !words[w] && !(i > 0 && len([]rune(w)) == 1) { // the spinner
				t.Errorf("at %d columns the status bar cuts a word (%q): %q", width, w, bar)
			}
		}
		for _, want := range []string{"1 need login", "working", "servers"} {
			if !strings.Contains(bar, want) {
				t.Errorf("at %d columns the status bar drops %q: %q", width, want, bar)
			}
		}
	}
}

// Tab's candidates wrap onto more lines rather than being cut: at 80 and
// 60 columns each shows whole, and so does the list while Tab cycles.
func TestTabCandidatesShowWhole(t *testing.T) {
	t.Parallel()
	var prompts []servers.Prompt
	var names []string
	for _, n := range []string{"simple_prompt", "complex_prompt", "resource_prompt", "args_prompt", "completable_prompt"} {
		prompts = append(prompts, servers.Prompt{Server: "everything", Name: n})
		names = append(names, "/mcp__everything__"+n)
	}
	for _, width := range []int{80, 60} {
		h := start(t, &fakeHost{prompts: prompts})
		h.tm.Send(tea.WindowSizeMsg{Width: width, Height: 24})
		h.typeText("/mcp_")
		h.press("tab")
		h.waitFor("tab again cycles", "› /mcp__everything__")
		h.waitFor(names...)
		h.press("tab")
		s := h.waitFor("1/5")
		for _, n := range names {
			if !strings.Contains(s, n) {
				t.Errorf("at %d columns, while Tab cycles, %s is not shown whole:\n%s", width, n, s)
			}
		}
		// A candidate with a space in it stays on one line.
		h = start(t, &fakeHost{})
		h.tm.Send(tea.WindowSizeMsg{Width: width, Height: 24})
		h.typeText("/m")
		h.press("tab")
		h.waitFor("tab again cycles", "/mcp resources", "/mcp prompts", "/model")
	}
}

// What the person answered to a server's request during a tool call shows
// inside that call's block, before its result, in the order it happened.
func TestElicitationAnsweredDuringACallShowsBeforeItsResult(t *testing.T) {
	t.Parallel()
	// The server's tool asks the person for input while it runs (through
	// the App's eliciter, as a server's elicitation request does) and
	// answers with what they gave.
	b := &fakeHost{
		tools: []tool.Entry{entry("everything", "trigger-elicitation-request", "", `{}`, &sdk.ToolAnnotations{ReadOnlyHint: true})},
		replies: []llmtest.Reply{
			{Calls: []llmtest.Call{{ID: "t1", Name: "mcp__everything__trigger-elicitation-request", Args: `{}`}}},
			{Text: []string{"Done."}},
		},
	}
	b.call = func(ctx context.Context, _ string, _ json.RawMessage) (*tool.Result, error) {
		r, err := b.opts.Eliciter.Elicit(ctx, ask.Elicitation{Server: "everything", Mode: "form", Message: "What is your name?",
			Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Name"}}}`)})
		if err != nil {
			return nil, err
		}
		return tool.TextResult(fmt.Sprintf("Thanks, %v.", r.Content["name"])), nil
	}
	h := start(t, b)
	h.enterLine("ask me")
	h.waitFor("What is your name?")
	h.typeText("Ada")
	h.press("enter", "enter")
	s := h.waitFor("Thanks, Ada.", "sent the requested input to everything", "Done.")
	call, note, result := strings.Index(s, "trigger-elicitation-request"), strings.Index(s, "sent the requested input"), strings.Index(s, "Thanks, Ada.")
	if !(call < note && note < result) {
		t.Errorf("the answer's notice is not between the call and its result:\n%s", s)
	}
}

// A form's field descriptions wrap to the terminal, also when it narrows
// to 60 columns while the form is open: every word of them shows.
func TestFormDescriptionsWrapAtSixtyColumns(t *testing.T) {
	t.Parallel()
	desc := "The directory the server may read and write, relative to the project root unless absolute"
	b := &fakeHost{}
	h := start(t, b)
	h.waitFor("/help")
	go func() {
		_, _ = b.opts.Eliciter.Elicit(context.Background(), ask.Elicitation{Server: "s", Message: "Where?", Mode: "form",
			Schema: json.RawMessage(`{"type":"object","properties":{"dir":{"type":"string","title":"Directory","description":"` + desc + `"}}}`)})
	}()
	h.waitFor("Where?", "Directory", "unless absolute")
	h.tm.Send(tea.WindowSizeMsg{Width: 60, Height: 24})
	s := h.waitFor("Where?", "Directory", "───╮\n") // the box at the new width
	if w := len([]rune(strings.Split(s, "\n")[0])); w != 60 {
		s = h.waitFor("────────────────────────────────────────────────────────────\n›")
	}
	for _, w := range strings.Fields(desc) {
		if !strings.Contains(s, w) {
			t.Errorf("the description lacks %q:\n%s", w, s)
		}
	}
}

// At 60 columns the trust prompt keeps what it lists readable: a path wider
// than the box breaks after a "/" (never inside a file or directory name,
// not even at a hyphen), and every line an entry wraps onto is indented
// under its first line, so each server still reads as one item.
func TestTrustPromptWrapsPathsWhole(t *testing.T) {
	t.Parallel()
	long := "/home/someone/src/github.com/example-org/mcp-servers/packages/filesystem-server/dist/bin/server.js"
	// An untrusted project whose configuration runs two servers.
	dir := filepath.Join(t.TempDir(), "src", "github.com", "example-org", "a-project-with-a-long-name")
	if err := os.MkdirAll(filepath.Join(dir, config.ProjectDirName), 0o755); err != nil {
		t.Fatal(err)
	}
	project := fmt.Sprintf(`[[mcp.servers]]
name = "fs"
command = "node"
args = [%q, "--root", "/tmp"]
cwd = "sub"
env = { TOKEN = "x" }

[[mcp.servers]]
name = "short"
command = "./run"
args = ["--stdio"]
`, long)
	if err := os.WriteFile(filepath.Join(dir, config.ProjectDirName, config.ProjectConfigName), []byte(project), 0o600); err != nil {
		t.Fatal(err)
	}
	b := &fakeHost{workDir: dir}
	h := start(t, b)
	h.waitFor("Trust this directory?") // after the first size, which would undo the one below
	h.tm.Send(tea.WindowSizeMsg{Width: 60, Height: 40})
	var s string
	deadline := time.Now().Add(20 * time.Second)
	for {
		s = h.waitFor("Trust this directory?", "short: ./run --stdio")
		if top := strings.SplitN(s, "\n", 2)[0]; ansi.StringWidth(top) <= 60 || time.Now().After(deadline) {
			break
		}
		h.nextChange()
	}
	// The box's text, without its border.
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if w := ansi.StringWidth(l); w > 60 {
			t.Errorf("a line is %d wide at 60 columns: %q", w, l)
		}
		if rest, ok := strings.CutPrefix(l, "│ "); ok {
			lines = append(lines, strings.TrimSuffix(strings.TrimRight(rest, " "), "│"))
		}
	}
	text := strings.Join(lines, "\n")
	for _, name := range append(strings.Split(strings.Trim(long, "/"), "/"), "a-project-with-a-long-name", "--root") {
		if !strings.Contains(text, name) {
			t.Errorf("at 60 columns %q is cut:\n%s", name, s)
		}
	}
	fs := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "fs: node") })
	short := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "short: ./run") })
	if fs < 0 || short < fs+2 {
		t.Fatalf("the fs entry does not wrap onto lines of its own (fs at %d, short at %d):\n%s", fs, short, s)
	}
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	for _, l := range lines[fs+1 : short] {
		if indent(l) <= indent(lines[fs]) {
			t.Errorf("a wrapped line of the fs entry is not indented under it: %q\n%s", l, s)
		}
	}
}

// The empty input's hint shortens as the terminal narrows instead of
// being cut mid-word ("shift+enter for a new").
func TestPlaceholderFitsWhole(t *testing.T) {
	t.Parallel()
	h := start(t, &fakeHost{})
	h.waitFor("Ask otter…")
	for _, tc := range []struct {
		width int
		want  string
	}{{100, "shift+enter for a new line)"}, {60, "Ask otter… (/help for commands)"}, {30, "Ask otter…"}} {
		h.tm.Send(tea.WindowSizeMsg{Width: tc.width, Height: 24})
		var line string
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			s := h.screen()
			if top := strings.SplitN(s, "\n", 2)[0]; ansi.StringWidth(strings.TrimRight(top, " ")) <= tc.width {
				for _, l := range strings.Split(s, "\n") {
					if strings.Contains(l, "Ask otter") {
						line = strings.TrimSpace(l)
					}
				}
				break
			}
			h.nextChange()
		}
		if !strings.HasSuffix(line, tc.want) {
			t.Errorf("at %d columns the input's hint reads %q, want it to end %q", tc.width, line, tc.want)
		}
	}
}

// /mcp at 80 and 60 columns drops whole columns, least useful first, and
// never cuts a row's end: name, state, tools and errors stay, and the
// selected server's line gives the values of the columns that went.
func TestMCPPanelDropsWholeColumns(t *testing.T) {
	t.Parallel()
	b := &fakeHost{servers: []servers.Status{
		{Name: "everything", Transport: "stdio", State: servers.StateConnected, Tools: 17, Resources: 7, Templates: 2, Prompts: 4, Calls: 12, Errors: 3, MedianLatency: 41 * time.Millisecond},
		{Name: "memory", Transport: "stdio", State: servers.StateFailed, Error: "exit status 1"},
	}}
	h := start(t, b)
	h.waitFor("/help")
	for _, width := range []int{120, 80, 60} {
		h.tm.Send(tea.WindowSizeMsg{Width: width, Height: 30})
		h.enterLine("/mcp")
		s := h.waitFor("MCP servers", "NAME")
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "NAME") || strings.Contains(l, "everything  ") || strings.Contains(l, "memory  ") {
				if strings.Contains(l, "…") {
					t.Errorf("at %d columns a row of the table is cut: %q\n%s", width, l, s)
				}
			}
		}
		for _, want := range []string{"STATE", "TOOLS", "ERRORS", "connected", "failed"} {
			if !strings.Contains(s, want) {
				t.Errorf("at %d columns /mcp lost %q:\n%s", width, want, s)
			}
		}
		if width < 100 && !strings.Contains(s, "prompts 4") {
			t.Errorf("at %d columns the dropped PROMPTS column's value is nowhere:\n%s", width, s)
		}
		h.press("esc")
		h.waitGone("NAME")
	}
}

// At 60 columns a tool's input schema in /mcp tools reads whole: a long
// description wraps under its key instead of being cut, and lines that fit
// do not end in "…" because a longer one was.
func TestToolSchemaWrapsAtSixtyColumns(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{"observations":{"type":"array","items":{"type":"string"},
		"description":"An array of observation contents associated with the entity, each a sentence"}},"required":["observations"]}`
	b := &fakeHost{tools: []tool.Entry{entry("memory", "add_observations", "Add observations", schema, nil)}}
	h := start(t, b)
	h.waitFor("/help")
	h.tm.Send(tea.WindowSizeMsg{Width: 60, Height: 40})
	h.enterLine("/mcp tools memory") // the built-ins are listed too, first
	h.waitFor("type to filter")
	h.press("enter")
	s := h.waitFor("add_observations", "input schema:", `"required"`)
	flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ").Replace(s)), " ")
	if !strings.Contains(flat, "associated with the entity, each a sentence") {
		t.Errorf("the description is cut:\n%s", s)
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "│") && strings.Contains(l, "…") {
			t.Errorf("a line is cut: %q\n%s", l, s)
		}
	}
}

// At 60 columns the keys under a panel wrap between keys, never inside
// one, and none is cut: the permission panel's and /mcp's.
func TestKeysWrapBetweenKeysAtSixtyColumns(t *testing.T) {
	t.Parallel()
	args := map[string]string{}
	for i := range 12 {
		args[fmt.Sprintf("key%02d", i)] = fmt.Sprintf("value %d", i)
	}
	raw, _ := json.Marshal(args)
	// The model calls fs's write_file, which is not read-only: the agent
	// asks. (Not destructive either: at 60 columns "may modify or delete
	// data" on the title line would cut the line count of the arguments'
	// view, which this test waits for.)
	notDestructive := false
	b := &fakeHost{
		servers: []servers.Status{{Name: "fs", Transport: "stdio", State: servers.StateConnected}},
		tools:   []tool.Entry{entry("fs", "write_file", "Write a file", `{}`, &sdk.ToolAnnotations{DestructiveHint: &notDestructive})},
		replies: []llmtest.Reply{{Calls: []llmtest.Call{{ID: "1", Name: "mcp__fs__write_file", Args: string(raw)}}}},
	}
	h := start(t, b)
	h.waitFor("/help")
	h.tm.Send(tea.WindowSizeMsg{Width: 60, Height: 30})
	checkKeys := func(s string, keys ...string) {
		t.Helper()
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(strings.TrimSpace(strings.Trim(l, "│ ")), "·") {
				t.Errorf("a line of keys starts with a separator: %q\n%s", l, s)
			}
		}
		for _, k := range keys {
			if !strings.Contains(s, k) {
				t.Errorf("the key %q is not shown whole:\n%s", k, s)
			}
		}
	}
	h.enterLine("write it")
	s := h.waitFor("Allow mcp__fs__write_file?", "Deny")
	checkKeys(s, "enter: Allow once (default)", "↑/↓ choose", "esc: Deny", "ctrl+o all arguments")
	h.press("ctrl+o")
	s = h.waitFor("key11", "lines 1–")
	checkKeys(s, "↑/↓ pgup/pgdown scroll", "ctrl+o or esc back to the question")
	h.press("ctrl+o")
	h.waitFor("ctrl+o all arguments")
	h.press("esc")
	h.waitGone("Allow mcp__fs__write_file?")
	h.enterLine("/mcp")
	s = h.waitFor("NAME", "connected")
	checkKeys(s, "↑/↓ select", "r reconnect", "e enable/disable", "l login", "t tools", "esc")
}
