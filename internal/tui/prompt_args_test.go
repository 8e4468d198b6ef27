//go:build seamwip

package tui

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/servers"
)

// promptFake is server-everything's prompts: args-prompt (city, and an
// optional state) and completable-prompt, whose names depend on the
// department chosen (completion/complete's context). Prompts go whole.
type promptFake struct{ *fakeHost }

var everythingPrompts = []servers.Prompt{
	{Server: "everything", Name: "args-prompt", Description: "A prompt with arguments", Arguments: []*sdk.PromptArgument{
		{Name: "city", Description: "Name of the city", Required: true}, {Name: "state", Description: "Name of the state"}}},
	{Server: "everything", Name: "completable-prompt", Description: "A prompt with completable arguments", Arguments: []*sdk.PromptArgument{
		{Name: "department", Required: true}, {Name: "name", Required: true}}},
}

func (f promptFake) GetPrompt(_ context.Context, server, name string, args map[string]string) (*sdk.GetPromptResult, error) {
	f.record(fmt.Sprintf("prompt %s %s %v", server, name, args))
	text := fmt.Sprintf("What's weather in %s, %s?", args["city"], args["state"])
	if name == "completable-prompt" {
		text = fmt.Sprintf("Please promote %s to the head of the %s team.", args["name"], args["department"])
	}
	return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: text}}}}, nil
}

func (f promptFake) SendPrompt(_ context.Context, server string, res *sdk.GetPromptResult, emit func(agent.Event)) error {
	emit(agent.TurnFinished{Text: "sent"})
	return nil
}

func (f promptFake) Complete(_ context.Context, server, ref, name, arg, value string, resolved map[string]string) ([]string, error) {
	keys := slices.Sorted(maps.Keys(resolved))
	var ctx []string
	for _, k := range keys {
		ctx = append(ctx, k+"="+resolved[k])
	}
	f.record("complete " + arg + "=" + value + " context " + strings.Join(ctx, ","))
	vals := map[string][]string{"department": {"Engineering", "Marketing"}}[arg]
	if arg == "name" {
		vals = map[string][]string{"Engineering": {"Alice", "Bob"}, "Marketing": {"Frank", "Grace"}}[resolved["department"]]
	}
	var out []string
	for _, v := range vals {
		if strings.HasPrefix(v, value) {
			out = append(out, v)
		}
	}
	return out, nil
}

// Arguments are typed like a shell's words: quotes keep a value with
// spaces whole; an unknown name or an unclosed quote is refused, saying
// what is wrong, and the command comes back to the input.
func TestPromptArgumentsAreQuoted(t *testing.T) {
	t.Parallel()
	b := promptFake{&fakeHost{prompts: everythingPrompts}}
	h := startWith(t, b, b.fakeHost)
	h.enterLine(`/mcp__everything__args-prompt city="New York" state=NY`)
	h.waitFor("What's weather in New York, NY?")
	if !b.did("prompt everything args-prompt map[city:New York state:NY]") {
		t.Fatalf("the quoted value did not reach the prompt whole: %v", b.actions)
	}
	// The transcript's summary quotes the value with a space, so it can
	// be typed back.
	h.waitFor(`› /mcp__everything__args-prompt city="New York" state=NY`)

	h.enterLine(`/mcp__everything__args-prompt city='San Francisco' state=CA`)
	h.waitFor(`› /mcp__everything__args-prompt city="San Francisco" state=CA`, "What's weather in San Francisco, CA?")

	h.enterLine(`/mcp__everything__args-prompt city="New York state=NY`)
	h.waitFor(`a " quote is not closed`)
	// The command is back in the input: this closes the quote and adds
	// an argument the prompt does not have.
	h.enterLine(`" town=Boston`)
	h.waitFor(`the prompt has no argument "town"; its arguments are city, state`)
	if len(b.actions) != 2 {
		t.Errorf("a refused command reached the server: %v", b.actions)
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
	b := promptFake{&fakeHost{prompts: everythingPrompts,
		servers: []servers.Status{{Name: "everything", Transport: "stdio", State: servers.StateConnected, Prompts: 2}}}}
	h := startWith(t, b, b.fakeHost)
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
	b := promptFake{&fakeHost{prompts: everythingPrompts}}
	h := startWith(t, b, b.fakeHost)
	h.enterLine("/mcp__everything__completable-prompt")
	h.waitFor("department *", "name *")
	h.typeText("Mar")
	h.waitFor("Marketing")
	h.press("ctrl+e", "enter")
	h.typeText("G")
	if !b.waitDid("complete name=G context department=Marketing") {
		t.Fatalf("the name was completed without the department: %v", b.actions)
	}
	h.waitFor("Grace")
	h.press("ctrl+e", "enter")
	h.waitFor("Please promote Grace to the head of the Marketing team.")
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
