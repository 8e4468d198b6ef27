package tui

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/servers"
)

// everythingPrompts are server-everything's prompts: args-prompt (city,
// and an optional state) and completable-prompt, whose names depend on the
// department chosen (completion/complete's context). Prompts go whole.
var everythingPrompts = []servers.Prompt{
	{Server: "everything", Name: "args-prompt", Description: "A prompt with arguments", Arguments: []*sdk.PromptArgument{
		{Name: "city", Description: "Name of the city", Required: true}, {Name: "state", Description: "Name of the state"}}},
	{Server: "everything", Name: "completable-prompt", Description: "A prompt with completable arguments", Arguments: []*sdk.PromptArgument{
		{Name: "department", Required: true}, {Name: "name", Required: true}}},
}

// promptArgsEverything gives b server-everything's prompts and its
// completion of completable-prompt's arguments, each completion asked
// recorded with the values of the other arguments it was given.
func promptArgsEverything(b *fakeHost) *fakeHost {
	b.prompts = everythingPrompts
	b.complete = func(_ context.Context, server, ref, name, arg, value string, resolved map[string]string) ([]string, error) {
		keys := slices.Sorted(maps.Keys(resolved))
		var ctx []string
		for _, k := range keys {
			ctx = append(ctx, k+"="+resolved[k])
		}
		b.record("complete " + arg + "=" + value + " context " + strings.Join(ctx, ","))
		vals := map[string][]string{"department": {"Engineering", "Marketing"}}[arg]
		if arg == "name" {
			vals = map[string][]string{"Engineering": {"Alice", "Bob"}, "Marketing": {"Frank", "Grace"}}[resolved["department"]]
		}
		return withPrefix(vals, value), nil
	}
	return b
}

// promptArgsShown waits until the transcript shows a prompt sent whole:
// its command line, the prompt's text on the line below it (the fake's
// GetPrompt answers "prompt text for …"), and the model's answer.
func promptArgsShown(h *harness, command, answer string) {
	h.t.Helper()
	s := h.waitFor(command, answer)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.Contains(l, command) && i+1 < len(lines) && strings.Contains(lines[i+1], "prompt text for") {
			return
		}
	}
	h.t.Errorf("the prompt's text is not under %q:\n%s", command, s)
}

// promptArgsActions are the fake's recorded actions.
func promptArgsActions(b *fakeHost) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.actions)
}

// Arguments are typed like a shell's words: quotes keep a value with
// spaces whole; an unknown name or an unclosed quote is refused, saying
// what is wrong, and the command comes back to the input.
func TestPromptArgumentsAreQuoted(t *testing.T) {
	t.Parallel()
	b := promptArgsEverything(&fakeHost{replies: []llmtest.Reply{{Text: []string{"answer one"}}, {Text: []string{"answer two"}}}})
	h := start(t, b)
	h.enterLine(`/mcp__everything__args-prompt city="New York" state=NY`)
	// The transcript's summary quotes the value with a space, so it can
	// be typed back; the prompt's text follows it.
	promptArgsShown(h, `› /mcp__everything__args-prompt city="New York" state=NY`, "answer one")
	if !b.did("prompt everything args-prompt map[city:New York state:NY]") {
		t.Fatalf("the quoted value did not reach the prompt whole: %v", promptArgsActions(b))
	}
	if !b.did("send prompt text for ") {
		t.Errorf("the model was not sent the prompt's text; it got %q", b.sent())
	}

	h.enterLine(`/mcp__everything__args-prompt city='San Francisco' state=CA`)
	promptArgsShown(h, `› /mcp__everything__args-prompt city="San Francisco" state=CA`, "answer two")
	if !b.did("prompt everything args-prompt map[city:San Francisco state:CA]") {
		t.Fatalf("the single-quoted value did not reach the prompt whole: %v", promptArgsActions(b))
	}

	h.enterLine(`/mcp__everything__args-prompt city="New York state=NY`)
	h.waitFor(`a " quote is not closed`)
	// The command is back in the input: this closes the quote and adds
	// an argument the prompt does not have.
	h.enterLine(`" town=Boston`)
	h.waitFor(`the prompt has no argument "town"; its arguments are city, state`)
	if a := promptArgsActions(b); len(a) != 2 {
		t.Errorf("a refused command reached the server: %v", a)
	}
	if n := len(b.model.Requests()); n != 2 {
		t.Errorf("the model was sent %d requests, want the 2 prompts", n)
	}
	h.press("ctrl+u") // clears the line
	h.enterLine(`/mcp__everything__args-prompt city=New York`)
	h.waitFor(`"York" is not NAME=VALUE`)
}

// /mcp prompts is a browser, as /mcp tools and /mcp resources are (issue
// 35 point 10): it shows the optional arguments too, in brackets; a filter
// narrows it, and Enter uses the prompt, asking for its arguments.
func TestMcpPromptsListsOptionalArguments(t *testing.T) {
	t.Parallel()
	b := promptArgsEverything(&fakeHost{
		servers: []servers.Status{{Name: "everything", Transport: "stdio", State: servers.StateConnected, Prompts: 2}}})
	h := start(t, b)
	h.enterLine("/mcp prompts")
	h.waitFor("Prompts", "2 shown", "/mcp__everything__args-prompt", "city=… [state=…]", "/mcp__everything__completable-prompt", "department=… name=…")
	h.typeText("compl")
	h.waitFor("1 shown")
	h.press("enter")
	h.waitFor("department *", "name *")
}

// In a prompt's form, completing a later argument tells the server the
// values chosen for the others: the names offered are the department's.
func TestPromptFormCompletionHasTheOtherArgumentsAsContext(t *testing.T) {
	t.Parallel()
	b := promptArgsEverything(&fakeHost{replies: []llmtest.Reply{{Text: []string{"promoted"}}}})
	h := start(t, b)
	h.enterLine("/mcp__everything__completable-prompt")
	h.waitFor("department *", "name *")
	h.typeText("Mar")
	h.waitFor("Marketing")
	h.press("ctrl+e", "enter")
	h.typeText("G")
	if !b.waitDid("complete name=G context department=Marketing") {
		t.Fatalf("the name was completed without the department: %v", promptArgsActions(b))
	}
	h.waitFor("Grace")
	h.press("ctrl+e", "enter")
	promptArgsShown(h, "› /mcp__everything__completable-prompt department=Marketing name=Grace", "promoted")
	if !b.did("prompt everything completable-prompt map[department:Marketing name:Grace]") {
		t.Errorf("the completed values did not reach the prompt: %v", promptArgsActions(b))
	}
}

func TestSplitWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{`city="New York" state=NY`, []string{"city=New York", "state=NY"}, ""},
		{`city='New "York"'`, []string{`city=New "York"`}, ""},
		{`q="say \"hi\" \\ now"`, []string{`q=say "hi" \ now`}, ""},
		{`a=New\ York  b=`, []string{"a=New York", "b="}, ""},
		{`city="New York`, nil, `a " quote is not closed`},
		{`city='x`, nil, `a ' quote is not closed`},
	} {
		got, err := splitWords(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("splitWords(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		// What quoteWord writes, splitWords reads back.
		for _, w := range got {
			if back, err := splitWords(quoteWord(w)); err != nil || len(back) != 1 || back[0] != w {
				t.Errorf("quoteWord(%q) = %q reads back as %q, %v", w, quoteWord(w), back, err)
			}
		}
	}
}
