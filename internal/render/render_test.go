package render

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestModelKeepsEveryContentType(t *testing.T) {
	t.Parallel()
	res := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "hello"},
		&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 10)},
		&mcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 3)},
		&mcp.ResourceLink{URI: "file:///x.txt", Name: "x"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://a", Text: "inner"}},
	}}
	got := Model(res)
	for _, want := range []string{"hello", "[image: image/png, 10 bytes]", "[audio: audio/wav, 3 bytes]", "[resource link: file:///x.txt (x)]", "[resource mem://a]\ninner"} {
		if !strings.Contains(got, want) {
			t.Errorf("Model() = %q, lacks %q", got, want)
		}
	}
	structured := &mcp.CallToolResult{StructuredContent: map[string]any{"sum": 5}}
	if got := Model(structured); got != `{"sum":5}` {
		t.Errorf("structured-only result rendered as %q", got)
	}
}

// every holds one block of each content type, and structuredContent that
// no text block carries.
var every = &mcp.CallToolResult{
	Content: []mcp.Content{
		&mcp.TextContent{Text: "hello\n"},
		&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 10)},
		&mcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 3)},
		&mcp.ResourceLink{URI: "file:///r.txt", Name: "r", Title: "The R file", MIMEType: "text/plain", Description: "notes"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://t", MIMEType: "text/plain", Text: "inside\n"}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://b", Blob: []byte{1, 2}}},
		&mcp.EmbeddedResource{},
	},
	StructuredContent: map[string]any{"n": 1},
}

func TestTerminalShowsEveryBlock(t *testing.T) {
	t.Parallel()
	want := `hello
[image: image/png, 10 bytes]
[audio: audio/wav, 3 bytes]
[resource link: The R file, file:///r.txt, text/plain, notes]
[resource: mem://t, text/plain]
inside
[resource: mem://b, 2 bytes]
[embedded resource]
{
  "n": 1
}`
	if got := Terminal(every, nil); got != want {
		t.Errorf("Terminal:\n%s\nwant:\n%s", got, want)
	}
	if Terminal(nil, nil) != "" || Model(nil) != "" {
		t.Error("a nil result renders as text")
	}
}

func TestTerminalMediaHook(t *testing.T) {
	t.Parallel()
	var seen []string
	got := Terminal(every, func(c mcp.Content) string {
		switch c := c.(type) {
		case *mcp.ImageContent:
			seen = append(seen, c.MIMEType)
			return "[picture]"
		case *mcp.AudioContent:
			seen = append(seen, c.MIMEType)
		}
		return "" // the default
	})
	if !strings.Contains(got, "hello\n[picture]\n[audio: audio/wav, 3 bytes]\n") {
		t.Errorf("the hook's text is not in place of the image, or the default not in place of the audio:\n%s", got)
	}
	if strings.Join(seen, " ") != "image/png audio/wav" {
		t.Errorf("the hook saw %v, want the image and the audio in order", seen)
	}
}

// structuredContent already given as text is not shown twice.
func TestTerminalStructuredOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		res  *mcp.CallToolResult
		want string
		show bool
	}{
		{&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"n": 1}`}}, StructuredContent: map[string]any{"n": 1}}, `{"n": 1}`, false},
		{&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "one"}}, StructuredContent: map[string]any{"n": 1}}, "one\n{\n  \"n\": 1\n}", true},
		{&mcp.CallToolResult{StructuredContent: map[string]any{"n": 1}}, "{\n  \"n\": 1\n}", true},
		{&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "one"}}}, "one", false},
	} {
		if got := Terminal(tc.res, nil); got != tc.want {
			t.Errorf("Terminal = %q, want %q", got, tc.want)
		}
		if got := ShowsStructured(tc.res); got != tc.show {
			t.Errorf("ShowsStructured(%q) = %v, want %v", tc.want, got, tc.show)
		}
	}
}
