// Package pins keeps each MCP server's tool definitions and instructions
// as otter first saw them — its defence against a server that changes a
// tool after the person started trusting it (a "rug pull"). The first
// listing of a server that has no pins yet is pinned at once; from then
// on a tool whose definition differs from its pin, or a tool that was not
// there, is held back (not offered to a model, not found by tool search,
// not called) until the person approves it, and so are changed
// instructions. Compare says what differs, Change.Diff shows it, and
// Store.Approve takes the new definitions.
//
// Pins live in otter's state directory, one file per server
// (pins/NAME-HASH.json), keyed by the server's name and where it is
// defined (see Store.Key). A file holds what the server sent and nothing
// of the configuration: no command, URL, header or environment.
//
// It imports only config and filelock of otter's packages, and the
// go-udiff line diff.
package pins

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// Tool is one tool's definition as otter pins it: everything a model is
// shown of it.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

// canonical returns t with its JSON in one form (keys sorted, no space),
// so that definitions that mean the same compare equal whatever order the
// server wrote their keys in. JSON that does not parse is kept as it is.
func (t Tool) canonical() Tool {
	t.InputSchema = canonicalJSON(t.InputSchema)
	t.OutputSchema = canonicalJSON(t.OutputSchema)
	t.Annotations = canonicalJSON(t.Annotations)
	return t
}

func canonicalJSON(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// same reports whether two canonical definitions are the same.
func (t Tool) same(u Tool) bool {
	return t.Name == u.Name && t.Title == u.Title && t.Description == u.Description &&
		bytes.Equal(t.InputSchema, u.InputSchema) && bytes.Equal(t.OutputSchema, u.OutputSchema) &&
		bytes.Equal(t.Annotations, u.Annotations)
}

// Text is the definition as a person reads it, one part after another,
// JSON indented with its keys sorted: what a diff compares.
func (t Tool) Text() string {
	t = t.canonical()
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", t.Name)
	if t.Title != "" {
		fmt.Fprintf(&b, "title: %s\n", t.Title)
	}
	if t.Description != "" {
		b.WriteString("description:\n")
		b.WriteString(indentText(t.Description))
	}
	for _, part := range []struct {
		name string
		raw  json.RawMessage
	}{{"input_schema", t.InputSchema}, {"output_schema", t.OutputSchema}, {"annotations", t.Annotations}} {
		if len(part.raw) == 0 {
			continue
		}
		var ind bytes.Buffer
		if json.Indent(&ind, part.raw, "", "  ") != nil {
			ind.Reset()
			ind.Write(part.raw)
		}
		fmt.Fprintf(&b, "%s:\n", part.name)
		b.WriteString(indentText(ind.String()))
	}
	return b.String()
}

// indentText indents each line of s by two spaces and ends it with a
// newline.
func indentText(s string) string {
	var b strings.Builder
	for line := range strings.Lines(strings.TrimRight(s, "\n")) {
		b.WriteString("  ")
		b.WriteString(strings.TrimRight(line, "\n"))
		b.WriteString("\n")
	}
	return b.String()
}

// Kind says what a Change is.
type Kind string

const (
	// Changed: a pinned tool's definition differs from its pin.
	Changed Kind = "changed"
	// Added: the server lists a tool that was not pinned.
	Added Kind = "new"
	// Instructions: the server's instructions differ from the pinned ones.
	Instructions Kind = "instructions"
)

// Change is one difference between a server's pins and what it sends now.
type Change struct {
	Kind Kind
	// Tool is the tool's name; "" for Instructions.
	Tool string
	// Pinned and Now are the definitions (the instructions) as a person
	// reads them (Tool.Text); Pinned is "" for an Added tool.
	Pinned, Now string
}

// Diff is the change as a unified diff, from the pinned definition to the
// current one.
func (c Change) Diff() string {
	what := c.Tool
	if c.Kind == Instructions {
		what = "instructions"
	}
	from := "pinned/" + what
	if c.Kind == Added {
		from = "/dev/null"
	}
	return udiff.Unified(from, "now/"+what, withNewline(c.Pinned), withNewline(c.Now))
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// Pins are one server's pinned definitions, as its file holds them.
type Pins struct {
	Version int `json:"version"`
	// Server and Where say whose pins these are, for a person reading
	// the file (see Key).
	Server string `json:"server"`
	Where  string `json:"where"`
	// Instructions are the server's pinned instructions ("" for none).
	Instructions string `json:"instructions"`
	// Tools are the pinned definitions by tool name, in canonical form.
	Tools map[string]Tool `json:"tools"`
}

// newPins pins tools and instructions.
func newPins(k Key, tools []Tool, instructions string) *Pins {
	p := &Pins{Version: fileVersion, Server: k.Server, Where: k.Where, Instructions: instructions, Tools: make(map[string]Tool, len(tools))}
	for _, t := range tools {
		p.Tools[t.Name] = t.canonical()
	}
	return p
}

// Compare returns what differs between the pins p and a server's tools
// and instructions now: its instructions first, when they changed, then
// each tool whose definition differs from its pin (Changed) or that has
// none (Added), by name. A pinned tool the server no longer lists is no
// change: nothing of it is offered, and its pin stays should it come back.
func Compare(p *Pins, tools []Tool, instructions string) []Change {
	var out []Change
	if instructions != p.Instructions {
		out = append(out, Change{Kind: Instructions, Pinned: p.Instructions, Now: instructions})
	}
	for _, t := range sortedTools(tools) {
		t = t.canonical()
		old, ok := p.Tools[t.Name]
		switch {
		case !ok:
			out = append(out, Change{Kind: Added, Tool: t.Name, Now: t.Text()})
		case !old.same(t):
			out = append(out, Change{Kind: Changed, Tool: t.Name, Pinned: old.Text(), Now: t.Text()})
		}
	}
	return out
}

func sortedTools(tools []Tool) []Tool {
	return slices.SortedStableFunc(slices.Values(tools), func(a, b Tool) int { return cmp.Compare(a.Name, b.Name) })
}

// approve takes into p the current definitions of the named tools (and,
// with none named, of every tool and the instructions) and returns the
// changes taken. A named tool that the server does not list, or that has
// not changed, is an error, and nothing is taken.
func (p *Pins) approve(tools []Tool, instructions string, names []string) ([]Change, error) {
	changes := Compare(p, tools, instructions)
	byName := make(map[string]Change, len(changes))
	for _, c := range changes {
		byName[c.Tool] = c
	}
	current := make(map[string]Tool, len(tools))
	for _, t := range tools {
		current[t.Name] = t.canonical()
	}
	var taken []Change
	if len(names) == 0 {
		taken = changes
	} else {
		for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
			c, ok := byName[n]
			switch {
			case n == "":
				return nil, fmt.Errorf("an empty tool name")
			case !ok && current[n].Name == "":
				listed := slices.Sorted(maps.Keys(current))
				return nil, fmt.Errorf("server %q lists no tool %q (it lists %s)", p.Server, n, strings.Join(listed, ", "))
			case !ok:
				return nil, fmt.Errorf("tool %q of server %q has not changed since it was pinned", n, p.Server)
			}
			taken = append(taken, c)
		}
	}
	for _, c := range taken {
		if c.Kind == Instructions {
			p.Instructions = instructions
			continue
		}
		p.Tools[c.Tool] = current[c.Tool]
	}
	return taken, nil
}
