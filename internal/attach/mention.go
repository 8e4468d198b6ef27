package attach

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

// Source is what Expand needs: a Reader that knows its servers.
// a [servers.Host] is one.
type Source interface {
	Reader
	Status(name string) (servers.Status, bool)
}

// Mention is one @SERVER:URI in a message.
type Mention struct {
	Server, URI string
	// Start and End are the byte offsets of the mention in the text.
	Start, End int
}

// mentionRE matches @SERVER:URI at the start of the text or after a space
// or an opening bracket; URI runs to the next white space.
var mentionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[\s(\[{])@([A-Za-z0-9][A-Za-z0-9_.-]*):(\S+)`) })

// Mentions returns the @SERVER:URI mentions of text whose SERVER isPrompt
// accepts (nil: any), in order. Punctuation that ends a sentence is not
// part of the URI ("read @docs:file:///a.md." names file:///a.md).
func Mentions(text string, isServer func(string) bool) []Mention {
	var out []Mention
	for _, m := range mentionRE().FindAllStringSubmatchIndex(text, -1) {
		server := text[m[4]:m[5]]
		if isServer != nil && !isServer(server) {
			continue
		}
		uri := trimTrailing(text[m[6]:m[7]])
		if uri == "" {
			continue
		}
		start := m[4] - 1 // the @
		out = append(out, Mention{Server: server, URI: uri, Start: start, End: m[6] + len(uri)})
	}
	return out
}

// trimTrailing drops sentence punctuation and unbalanced closing brackets
// from the end of a URI.
func trimTrailing(uri string) string {
	for uri != "" {
		last := uri[len(uri)-1]
		switch last {
		case '.', ',', ';', ':', '!', '?', '\'', '"', '`':
			uri = uri[:len(uri)-1]
			continue
		case ')', ']', '}':
			open := map[byte]byte{')': '(', ']': '[', '}': '{'}[last]
			if strings.Count(uri, string(open)) < strings.Count(uri, string(last)) {
				uri = uri[:len(uri)-1]
				continue
			}
		}
		return uri
	}
	return uri
}

// Expanded is a person's message with its mentioned resources attached.
type Expanded struct {
	Text        string // the message, then each resource's contents
	Images      []llm.Image
	Attachments []Attachment
}

// Message is the expanded message as a user message for the agent.
func (e Expanded) Message() llm.Message {
	return llm.Message{Role: llm.RoleUser, Text: e.Text, Images: e.Images}
}

// Expand reads each @SERVER:URI mention of text whose SERVER is a
// configured server of src and appends its contents to the message: text
// as text, images as images, other blobs described by type and size, each
// resource's text within set's output cap (set may be nil: uncapped). A
// mention naming a server otter does not know is left as it is (it may be
// an e-mail address or a handle); a resource that cannot be read fails the
// whole message with an error that names it, so that nothing is sent
// without what the person attached. It attaches no files: see Expander.
func Expand(ctx context.Context, src Source, set *tool.Set, text string) (Expanded, error) {
	return Expander{Source: src, Set: set}.Expand(ctx, text)
}

// Expander attaches what a person's message mentions: @SERVER:URI
// resources of Source's servers and, when Files is set, @path files.
type Expander struct {
	Source Source    // nil: no resources
	Set    *tool.Set // caps a resource's text; nil: uncapped
	Files  *FileOptions
}

// Expand appends to text the files its @paths name (see ReadFile) and the
// resources its @SERVER:URI mentions name (see Expand), in that order, each
// once. Anything that cannot be attached fails the whole message with an
// error that names it — a sentence of its own ("could not read @docs:x: …",
// "@big.txt is too large to attach: …") — so that nothing is sent without
// what the person attached.
func (x Expander) Expand(ctx context.Context, text string) (Expanded, error) {
	out := Expanded{Text: text}
	isServer := func(s string) bool {
		if x.Source == nil {
			return false
		}
		_, ok := x.Source.Status(s)
		return ok
	}
	var fileParts, resParts []string
	if x.Files != nil {
		seen := map[string]bool{}
		for _, m := range FileMentions(text, isServer) {
			if seen[m.Path] {
				continue
			}
			seen[m.Path] = true
			f, ok, err := ReadFile(ctx, *x.Files, m)
			if err != nil {
				return Expanded{Text: text}, err
			}
			if !ok {
				continue
			}
			switch f.Kind {
			case KindImage:
				fileParts = append(fileParts, fmt.Sprintf("<file path=%q>[image, %s, %s: attached below]</file>", f.Path, f.MIMEType, Size(f.Size)))
				out.Images = append(out.Images, *f.Image)
			case KindDir:
				fileParts = append(fileParts, fmt.Sprintf("<directory path=%q entries=\"%d\">\n%s</directory>", f.Path, f.Size, f.Text))
			default:
				fileParts = append(fileParts, fmt.Sprintf("<file path=%q>\n%s\n</file>", f.Path, strings.TrimRight(f.Text, "\n")))
			}
			out.Attachments = append(out.Attachments, f.Attachment)
		}
	}
	if x.Source != nil {
		seen := map[string]bool{}
		for _, m := range Mentions(text, isServer) {
			key := m.Server + "\x00" + m.URI
			if seen[key] {
				continue
			}
			seen[key] = true
			res, err := x.Source.ReadResource(ctx, m.Server, m.URI)
			if err != nil {
				return Expanded{Text: text}, fmt.Errorf("could not read @%s:%s: %w", m.Server, m.URI, err)
			}
			content, atts := Contents(m.Server, res)
			if len(content) == 0 {
				return Expanded{Text: text}, fmt.Errorf("@%s:%s: the server returned no contents", m.Server, m.URI)
			}
			body, imgs := ForModel(x.Set, content)
			resParts = append(resParts, fmt.Sprintf("<resource server=%q uri=%q>\n%s\n</resource>", m.Server, m.URI, body))
			out.Images = append(out.Images, imgs...)
			out.Attachments = append(out.Attachments, atts...)
		}
	}
	if len(fileParts) > 0 {
		out.Text += "\n\nFiles the user attached with @-mentions:\n\n" + strings.Join(fileParts, "\n\n")
	}
	if len(resParts) > 0 {
		out.Text += "\n\nResources the user attached with @-mentions:\n\n" + strings.Join(resParts, "\n\n")
	}
	return out, nil
}
