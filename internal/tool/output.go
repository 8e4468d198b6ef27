package tool

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Text renders every content block of a result as text, in order: text as
// it is, binary content (images, audio, blobs) as a one-line description,
// resource links by URI. When there is no content but structuredContent,
// that is rendered as JSON. Text is not capped; see Set.TextForModel.
func Text(res *Result) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for i, c := range res.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		writeContent(&b, c)
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		if data, err := json.Marshal(res.StructuredContent); err == nil {
			b.Write(data)
		}
	}
	return b.String()
}

func writeContent(b *strings.Builder, c mcp.Content) {
	switch c := c.(type) {
	case *mcp.TextContent:
		b.WriteString(c.Text)
	case *mcp.ImageContent:
		fmt.Fprintf(b, "[image: %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcp.AudioContent:
		fmt.Fprintf(b, "[audio: %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcp.ResourceLink:
		fmt.Fprintf(b, "[resource link: %s", c.URI)
		if c.Name != "" {
			fmt.Fprintf(b, " (%s)", c.Name)
		}
		if c.MIMEType != "" {
			fmt.Fprintf(b, ", %s", c.MIMEType)
		}
		b.WriteByte(']')
	case *mcp.EmbeddedResource:
		r := c.Resource
		switch {
		case r == nil:
			b.WriteString("[embedded resource]")
		case r.Blob != nil:
			fmt.Fprintf(b, "[embedded resource: %s, %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob))
		default:
			fmt.Fprintf(b, "[resource %s]\n%s", r.URI, r.Text)
		}
	default:
		data, _ := json.Marshal(c)
		b.Write(data)
	}
}

// TextForModel renders a result as text for a model's context, capped at
// the Set's MaxOutputChars. A longer output is cut; the full text is
// written to a file in SpillDir and the cut text ends with a note naming
// that file, so neither the model nor the person loses anything.
func (s *Set) TextForModel(res *Result) string {
	text := Text(res)
	limit := s.opts.MaxOutputChars
	if len(text) <= limit { // bytes ≥ characters
		return text
	}
	total := utf8.RuneCountInString(text)
	if total <= limit {
		return text
	}
	cut := text[:runeOffset(text, limit)]
	where := "it could not be saved"
	if path, err := s.spill(text); err != nil {
		s.logger.Warn("could not save a long tool output", "err", err)
		where = fmt.Sprintf("it could not be saved (%v)", err)
	} else {
		where = "the full output is in " + path
	}
	return fmt.Sprintf("%s\n\n[output truncated: showing %d of %d characters; %s]", cut, limit, total, where)
}

// runeOffset returns the byte offset of the n-th rune of s.
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

func (s *Set) spill(text string) (string, error) {
	dir := s.opts.SpillDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "otter-outputs")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create output directory: %w", err)
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := fmt.Sprintf("output-%s-%s.txt", time.Now().Format("20060102-150405"), hex.EncodeToString(rnd[:]))
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("save tool output: %w", err)
	}
	return path, nil
}
