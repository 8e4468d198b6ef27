// Package render turns a tool result (an MCP CallToolResult) into text:
// for a model's context (Model) and for a person at a terminal (Terminal).
// The agent, the TUI and the headless CLI all render results here, so that
// a resource link, an embedded resource or an image reads the same in the
// TUI as in `otter mcp call`, and the same to every model.
//
// Each form keeps every content block, in order. The model's form is terse
// (binary content as a one-line description, resources by URI first); the
// terminal's names what a person recognises first (a link's title), shows
// structuredContent unless a text block already carries it, and lets the
// front end stand in for images and audio (the TUI saves them and shows
// images inline).
//
// It imports only the standard library, the go-sdk's mcp package and
// internal/termtext (which cleans what a server wrote for a terminal); the
// cap on a result's length for a model, with its spill file, is the tool
// Set's (internal/tool).
package render

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/termtext"
)

// Model renders every content block of res as text for a model, in order:
// text as it is, binary content (images, audio, blobs) as a one-line
// description, resource links by URI. When there is no content but
// structuredContent, that is rendered as JSON. The text is not capped; see
// tool.Set.TextForModel.
func Model(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for i, c := range res.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(modelContent(c))
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		if data, err := json.Marshal(res.StructuredContent); err == nil {
			b.Write(data)
		}
	}
	return b.String()
}

func modelContent(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent, *mcp.AudioContent:
		return binaryText(c)
	case *mcp.ResourceLink:
		s := "[resource link: " + c.URI
		if c.Name != "" {
			s += " (" + c.Name + ")"
		}
		if c.MIMEType != "" {
			s += ", " + c.MIMEType
		}
		return s + "]"
	case *mcp.EmbeddedResource:
		r := c.Resource
		switch {
		case r == nil:
			return "[embedded resource]"
		case r.Blob != nil:
			return fmt.Sprintf("[embedded resource: %s, %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob))
		}
		return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text)
	}
	return otherContent(c)
}

// MediaFunc stands in for an image or audio block (c is an
// *mcp.ImageContent or an *mcp.AudioContent) in a terminal's text: it
// returns the text shown in its place, or "" for the default description.
// The TUI's saves the content and keeps an image to show inline.
type MediaFunc func(c mcp.Content) string

// Terminal renders res for a person at a terminal: text content as text
// (without its trailing newlines), images and audio as media says or as a
// one-line description, resource links by title (or name), URI, MIME type
// and description, embedded resources by URI and MIME type with their
// text below, and structuredContent as indented JSON unless a text block
// already carries the same JSON (as the spec recommends servers do; see
// ShowsStructured). Blocks are separated by a newline; the text does not
// end in one. media may be nil. What the server wrote is cleaned for the
// terminal (termtext.Text: no escape sequence, control or bidi override);
// what media returns is the front end's, kept as it is.
func Terminal(res *mcp.CallToolResult, media MediaFunc) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		if media != nil {
			switch c.(type) {
			case *mcp.ImageContent, *mcp.AudioContent:
				if s := media(c); s != "" {
					parts = append(parts, s)
					continue
				}
			}
		}
		// Cleaned before the trim: "\r\n" at the end is a newline.
		parts = append(parts, strings.TrimRight(termtext.Text(terminalContent(c)), "\n"))
	}
	if ShowsStructured(res) {
		if b, err := json.MarshalIndent(res.StructuredContent, "", "  "); err == nil {
			parts = append(parts, termtext.Text(string(b)))
		}
	}
	return strings.Join(parts, "\n")
}

// terminalContent is a block as Terminal shows it, before it is cleaned.
func terminalContent(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return strings.TrimRight(c.Text, "\n")
	case *mcp.ImageContent, *mcp.AudioContent:
		return binaryText(c)
	case *mcp.ResourceLink:
		return "[resource link: " + strings.Join(nonEmpty(cmp.Or(c.Title, c.Name), c.URI, c.MIMEType, c.Description), ", ") + "]"
	case *mcp.EmbeddedResource:
		r := c.Resource
		switch {
		case r == nil:
			return "[embedded resource]"
		case r.Blob != nil:
			return fmt.Sprintf("[resource: %s, %d bytes]", strings.Join(nonEmpty(r.URI, r.MIMEType), ", "), len(r.Blob))
		}
		return fmt.Sprintf("[resource: %s]\n%s", strings.Join(nonEmpty(r.URI, r.MIMEType), ", "), strings.TrimRight(r.Text, "\n"))
	}
	return otherContent(c)
}

// ShowsStructured reports whether Terminal shows res's structuredContent:
// it has some, and no text block carries the same JSON.
func ShowsStructured(res *mcp.CallToolResult) bool {
	if res == nil || res.StructuredContent == nil {
		return false
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok && sameJSON(t.Text, res.StructuredContent) {
			return false
		}
	}
	return true
}

// binaryText describes an image or audio block in one line.
func binaryText(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes]", c.MIMEType, len(c.Data))
	}
	return otherContent(c)
}

// otherContent is a content block of a type otter does not know, as its
// JSON.
func otherContent(c mcp.Content) string {
	data, err := json.Marshal(c)
	if err != nil {
		return fmt.Sprintf("[%T content]", c)
	}
	return string(data)
}

func sameJSON(text string, v any) bool {
	var a, b any
	if json.Unmarshal([]byte(text), &a) != nil {
		return false
	}
	raw, err := json.Marshal(v)
	if err != nil || json.Unmarshal(raw, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

func nonEmpty(ss ...string) []string {
	return slices.DeleteFunc(ss, func(s string) bool { return s == "" })
}
