package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/tool"
)

// A multi-select, titled or not, shows every option and says that space
// selects.
func TestElicitMultiSelectShowsAllOptions(t *testing.T) {
	t.Parallel()
	h := start(t, &fakeHost{})
	h.waitFor("/help")
	go func() {
		_, _ = h.ui.Elicit(context.Background(), ask.Elicitation{Server: "s", Message: "Pick some", Mode: "form", Schema: json.RawMessage(`{"type":"object","properties":{
	"a":{"type":"array","title":"Titled choice","description":"Pick numbers","items":{"type":"string","enum":["one","two","three","four","five"]}},
	"b":{"type":"array","items":{"type":"string","enum":["uno","dos","tres","cuatro","cinco"]}}}}`)})
	}()
	s := h.waitFor("Pick some", "Titled choice", "five", "cinco")
	if n := strings.Count(s, "space or x selects"); n != 2 {
		t.Errorf("%d multi-selects say that space selects, want 2:\n%s", n, s)
	}
}

// Without a browser, a URL request offers to copy the URL and answers
// accept only once the person says they finished there.
func TestURLElicitationWithoutBrowserWaitsForThePerson(t *testing.T) {
	t.Parallel()
	h := start(t, &fakeHost{}, Options{})
	done := make(chan ask.ElicitReply, 1)
	go func() {
		r, _ := h.ui.Elicit(context.Background(), ask.Elicitation{Server: "pay", Mode: "url", Message: "Confirm the payment",
			URL: "https://pay.example/confirm?id=7", ID: "e1"})
		done <- r
	}()
	s := h.waitFor("pay asks you to open a URL", "Copy URL")
	if strings.Contains(s, "Open in browser") {
		t.Errorf("without a browser, the prompt offers to open one:\n%s", s)
	}
	h.press("enter")
	h.waitFor("copied to the clipboard", "I have finished there")
	select {
	case r := <-done:
		t.Fatalf("answered %+v before the person said they finished", r)
	default:
	}
	h.press("enter")
	if r := recv(t, done, "reply"); r.Action != ask.Accept {
		t.Errorf("reply = %+v, want accept", r)
	}
	h.waitFor("told pay you finished")
}

// /call of a tool with nested input (server-memory's create_entities)
// opens a JSON editor pre-filled with a skeleton from the schema, and
// what does not match the schema is refused before anything is sent.
func TestCallNestedInputHasASkeletonAndIsValidated(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{"entities":{"type":"array","items":{"type":"object",
		"properties":{"name":{"type":"string"},"entityType":{"type":"string"},"observations":{"type":"array","items":{"type":"string"}}},
		"required":["name","entityType","observations"]}}},"required":["entities"]}`
	b := &fakeHost{tools: []tool.Entry{entry("memory", "create_entities", "Create entities", schema, nil)}}
	h := start(t, b)
	h.enterLine("/call mcp__memory__create_entities")
	s := h.waitFor("entities * (JSON)", `"entityType": ""`, `"observations": [`)
	// In the server's order, as its documentation reads, not alphabetical.
	if n, e := strings.Index(s, `"name": ""`), strings.Index(s, `"entityType": ""`); n < 0 || n > e {
		t.Errorf("the skeleton does not list name before entityType, as the schema does:\n%s", s)
	}
	h.typeText("5, ") // after the closing bracket: not valid JSON
	h.press("enter")
	h.waitFor("not valid JSON")
	if b.did("call mcp__memory__create_entities") {
		t.Error("invalid input was sent")
	}
}

// A string field meant for text of several lines (a file's content) keeps
// the lines typed with alt+enter and the new lines of a paste; a path
// stays one line.
func TestCallFormTakesMultiLineText(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`
	b := &fakeHost{tools: []tool.Entry{entry("fs", "write_file", "Write a file", schema, nil)}}
	h := start(t, b)
	h.enterLine("/call mcp__fs__write_file")
	h.waitFor("path *", "content *", "alt+enter new line")
	h.typeText("/tmp/notes.txt")
	h.press("enter")
	h.typeText("line1")
	h.press("alt+enter")
	h.typeText("line2")
	h.press("alt+enter")
	h.tm.Send(tea.PasteMsg{Content: "pasted A\npasted B"})
	h.waitFor("pasted B")
	h.press("enter")
	if !b.waitDid(`call mcp__fs__write_file {"content":"line1\nline2\npasted A\npasted B","path":"/tmp/notes.txt"}`) {
		t.Errorf("the call's arguments: %v", b.actions)
	}
}
