package tui

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/tool"
)

// askingPermission reports whether a permission prompt for the tool is
// open: its call has not started, it waits for the person.
func (m *model) askingPermission(tool string) bool {
	for _, q := range m.questions {
		if p, ok := q.md.(*permissionModal); ok && p.tool == tool && !p.finished() {
			return true
		}
	}
	return false
}

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return d.Truncate(time.Second).String()
	}
}

// compactJSON renders tool arguments on one line.
func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	s := string(b)
	if s == "{}" || s == "null" {
		return ""
	}
	return s
}

// envelopeData is what a preview shows of a built-in tool's result
// envelope ({"id", "tool", "timestamp", …, "result", "errors"}): the data,
// then the errors, without the boilerplate before them. "" when text is no
// envelope.
func envelopeData(text string) string {
	var env map[string]json.RawMessage
	if !strings.HasPrefix(strings.TrimSpace(text), "{") || json.Unmarshal([]byte(text), &env) != nil {
		return ""
	}
	for _, k := range []string{"id", "tool", "timestamp", "status", "result"} {
		if _, ok := env[k]; !ok {
			return ""
		}
	}
	var out []string
	if r := prettyJSON(env["result"], math.MaxInt); r != "" {
		out = append(out, r)
	}
	var errs []struct{ Code, Message string }
	_ = json.Unmarshal(env["errors"], &errs)
	for _, e := range errs {
		out = append(out, fmt.Sprintf("error %s: %s", e.Code, e.Message))
	}
	if len(out) == 0 {
		var status string
		_ = json.Unmarshal(env["status"], &status)
		out = append(out, status+", no data")
	}
	return strings.Join(out, "\n")
}

// describeResult turns a tool result into text for a person, as
// render.Terminal words it, with images and audio saved under imageDir and
// named by a placeholder. It also returns the images, for the terminals
// that can show them.
func describeResult(res *tool.Result, imageDir string) (string, []*toolImage) {
	var images []*toolImage
	text := render.Terminal(res, func(c sdk.Content) string {
		switch c := c.(type) {
		case *sdk.ImageContent:
			img := newToolImage(c.MIMEType, c.Data, imageDir)
			images = append(images, img)
			return img.label
		case *sdk.AudioContent:
			s, _ := placeholder("audio", c.MIMEType, "", c.Data, imageDir)
			return s
		}
		return ""
	})
	return text, images
}

// resultFields is what /call shows of a result besides its content (which
// describeResult decodes): structured content, isError, _meta, as JSON
// under a label; "" when there is nothing else.
func resultFields(res *tool.Result) string {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(mustJSON(res), &fields); err != nil {
		return err.Error()
	}
	if len(res.Content) > 0 {
		delete(fields, "content")
	} else if res.StructuredContent != nil {
		delete(fields, "content")
		delete(fields, "structuredContent") // describeResult shows it
	}
	if len(fields) == 0 {
		return ""
	}
	return "── result fields\n" + prettyJSON(mustJSON(fields), 500)
}

// placeholder describes binary content (detail, e.g. an image's pixel
// size, is optional) and saves it under dir; path is where ("" when not).
func placeholder(kind, mimeType, detail string, data []byte, dir string) (text, path string) {
	s := fmt.Sprintf("[%s %s, ", kind, mimeType)
	if detail != "" {
		s += detail + ", "
	}
	s += humanBytes(len(data))
	if dir != "" && len(data) > 0 {
		sum := sha256.Sum256(data)
		ext := ".bin"
		if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
			ext = exts[len(exts)-1]
		}
		p := filepath.Join(dir, hex.EncodeToString(sum[:8])+ext)
		if err := os.MkdirAll(dir, 0o700); err == nil {
			if err = os.WriteFile(p, data, 0o600); err == nil {
				s += ", saved to " + p
				path = p
			} else {
				slog.Warn("saving tool result content", "path", p, "err", err)
			}
		}
	}
	return s + "]", path
}

func humanBytes(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
}
