// Package attach turns what MCP servers offer besides tools into what a
// model reads: a resource's contents (text as text, images as images, other
// blobs described by type and size, within the tool set's output cap), the
// @SERVER:URI mentions of a person's message, a prompt's messages whole
// (text, images and embedded resources, in order, with their roles), and the
// two read-only built-ins list_mcp_resources and read_mcp_resource.
//
// Both front ends (the TUI and `otter -p`) expand mentions and prompts
// through this package, so that a model sees the same thing from either.
//
// It imports internal/servers, internal/tool, internal/render,
// internal/llm and internal/projectfile (which reads a @path's file
// confined to the project); nothing above them (not the MCP client itself).
package attach

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/projectfile"
	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/tool"
)

// Reader reads resources; a [servers.Host] is one.
type Reader interface {
	ReadResource(ctx context.Context, server, uri string) (*sdk.ReadResourceResult, error)
}

// Kind is what a piece of a resource is to a model.
type Kind string

const (
	KindText  Kind = "text"
	KindImage Kind = "image"
	KindBlob  Kind = "blob" // binary the model gets a description of
)

// Attachment describes one resource's piece attached to a message, for the
// transcript's chip and the CLI's notes.
type Attachment struct {
	Server   string
	URI      string
	Path     string // a @path's file, as written ("" for a resource)
	MIMEType string
	Kind     Kind
	Size     int // bytes of text or blob
}

// String is the chip's text: "@server:uri (text/markdown, 4.1 KiB)".
func (a Attachment) String() string {
	what := a.MIMEType
	if what == "" {
		what = string(a.Kind)
	}
	switch {
	case a.Kind == KindDir:
		return fmt.Sprintf("%s (directory, %d entries)", QuotePath(a.Path), a.Size)
	case a.Path != "":
		return fmt.Sprintf("%s (%s, %s)", QuotePath(a.Path), what, Size(a.Size))
	}
	return fmt.Sprintf("@%s:%s (%s, %s)", a.Server, a.URI, what, Size(a.Size))
}

// Size words a byte count for a person in binary units, as the caps are
// written: "812 B", "4.1 KiB", "256 KiB", "2.3 MiB".
func Size(n int) string { return projectfile.Bytes(int64(n)) }

// IsImage reports whether a MIME type is an image a model can look at.
func IsImage(mime string) bool {
	switch strings.ToLower(strings.TrimSpace(strings.SplitN(mime, ";", 2)[0])) {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// isText reports whether a MIME type is text a model can read.
func isText(mime string) bool {
	mime = strings.ToLower(strings.TrimSpace(strings.SplitN(mime, ";", 2)[0]))
	switch {
	case strings.HasPrefix(mime, "text/"), mime == "application/json", mime == "application/xml",
		strings.HasSuffix(mime, "+json"), strings.HasSuffix(mime, "+xml"), mime == "application/yaml":
		return true
	}
	return false
}

// Contents turns a resources/read result into MCP content blocks for a
// model: each text content an embedded text resource, each image blob an
// image, text sent as a blob as text, any other blob a description of its
// type and size. server names where it came from in the attachments.
func Contents(server string, res *sdk.ReadResourceResult) ([]sdk.Content, []Attachment) {
	if res == nil {
		return nil, nil
	}
	var out []sdk.Content
	var atts []Attachment
	for _, rc := range res.Contents {
		if rc == nil {
			continue
		}
		a := Attachment{Server: server, URI: rc.URI, MIMEType: rc.MIMEType}
		switch {
		case rc.Blob != nil && IsImage(rc.MIMEType):
			a.Kind, a.Size = KindImage, len(rc.Blob)
			out = append(out,
				&sdk.TextContent{Text: fmt.Sprintf("[resource %s: image, %s, %s]", rc.URI, rc.MIMEType, Size(len(rc.Blob)))},
				&sdk.ImageContent{MIMEType: rc.MIMEType, Data: rc.Blob})
		case rc.Blob != nil && isText(rc.MIMEType) && utf8.Valid(rc.Blob):
			// Text sent as a blob (base64) reads as text.
			a.Kind, a.Size = KindText, len(rc.Blob)
			out = append(out, &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: rc.URI, MIMEType: rc.MIMEType, Text: string(rc.Blob)}})
		case rc.Blob != nil:
			a.Kind, a.Size = KindBlob, len(rc.Blob)
			mime := rc.MIMEType
			if mime == "" {
				mime = "application/octet-stream"
			}
			out = append(out, &sdk.TextContent{Text: fmt.Sprintf("[resource %s: binary, %s, %s — not shown]", rc.URI, mime, Size(len(rc.Blob)))})
		default:
			a.Kind, a.Size = KindText, len(rc.Text)
			out = append(out, &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: rc.URI, MIMEType: rc.MIMEType, Text: rc.Text}})
		}
		atts = append(atts, a)
	}
	return out, atts
}

// ForModel renders content blocks as a model reads them: their text capped
// by set (nil: uncapped), and their images.
func ForModel(set *tool.Set, content []sdk.Content) (string, []llm.Image) {
	res := &tool.Result{Content: content}
	var text string
	if set != nil {
		text = set.TextForModel(res)
	} else {
		text = render.Model(res)
	}
	var imgs []llm.Image
	for _, c := range content {
		if img, ok := c.(*sdk.ImageContent); ok {
			imgs = append(imgs, llm.Image{MIMEType: img.MIMEType, Data: img.Data})
		}
	}
	return text, imgs
}
