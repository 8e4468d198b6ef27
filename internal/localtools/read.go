package localtools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/projectfile"
	"github.com/otter-sh/otter/internal/tool"
)

// Caps of read_file.
const (
	// DefaultReadLines is how many lines one call reads when it gives no
	// limit; a longer file is read in pages.
	DefaultReadLines = 2000
	// MaxLineChars cuts a longer line (minified code, a data file).
	MaxLineChars = 2000
	// MaxImageBytes is the largest image read_file returns.
	MaxImageBytes = 5 << 20
	// maxReadChars bounds one page's text whatever its lines.
	maxReadChars = 90_000
)

// gateReading is the question of the reading tools: none inside the
// project (or a Readable tree); outside it, the person is asked, unless
// the path names nothing (the call fails at once).
func gateReading(o Options, path string) tool.Gate {
	pl, err := o.resolve(path, true)
	if err != nil || !pl.exists || pl.inside {
		return tool.Gate{}
	}
	return tool.Gate{Ask: true, Reason: "it reads outside the project: " + pl.where()}
}

func readFileDef() def {
	return def{
		name:  NameReadFile,
		title: "Read a file",
		description: "Read a text file of the project, with line numbers (cat -n style): a long file in pages (offset is the first line to read, " +
			"1-based; limit how many, 2000 by default), long lines cut at 2000 characters. An image (PNG, JPEG, GIF, WebP) is returned as an image. " +
			"A binary file is refused. The path is relative to the working directory, or absolute; outside the project the user is asked first. " +
			"Read a file before you change it with edit_file or write_file.",
		schema: `{"type":"object","properties":{` +
			`"path":{"type":"string","description":"the file, relative to the working directory or absolute"},` +
			`"offset":{"type":"integer","minimum":1,"description":"the first line to read (1-based); default 1"},` +
			`"limit":{"type":"integer","minimum":1,"description":"how many lines to read; default 2000"}},` +
			`"required":["path"],"additionalProperties":false}`,
		readOnly: true,
		group:    "basic",
		gate: func(t *Tools, _ context.Context, _ *State, args json.RawMessage) tool.Gate {
			in, _ := decode[struct{ Path string }](args)
			return gateReading(t.options(), in.Path)
		},
		run: func(t *Tools, ctx context.Context, st *State, args json.RawMessage) (*tool.Result, error) {
			in, err := decode[struct {
				Path          string
				Offset, Limit int
			}](args)
			if err != nil {
				return errorResult("read_file: %v", err), nil
			}
			return readFile(ctx, t.options(), st, in.Path, in.Offset, in.Limit), nil
		},
	}
}

func readFile(ctx context.Context, o Options, st *State, path string, offset, limit int) *tool.Result {
	pl, err := o.resolve(path, true)
	if err != nil {
		return errorResult("could not read %s: %v", path, err)
	}
	shown := o.shown(pl.abs)
	if why := pl.movedOut(ctx, shown); why != "" {
		return errorResult("%s", why)
	}
	if !pl.exists {
		return errorResult("%s does not exist (looked for %s): find_files finds a file by its name", shown, pl.abs)
	}
	if !pl.info.Mode().IsRegular() {
		return errorResult("%s", notRegular(shown, pl.info.Mode()))
	}
	f, fi, err := pl.open()
	var nr *projectfile.NotRegularError
	if errors.As(err, &nr) {
		return errorResult("%s", notRegular(shown, nr.Mode))
	}
	if err != nil {
		return errorResult("could not read %s: %v", shown, err)
	}
	defer f.Close()
	head := make([]byte, 8192)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return errorResult("could not read %s: %v", shown, err)
	}
	head = head[:n]
	rest := io.MultiReader(bytes.NewReader(head), f)
	mime := http.DetectContentType(head)
	switch {
	case isImage(mime):
		if fi.Size() > MaxImageBytes {
			return errorResult("%s is an image of %s; read_file returns images up to %s", shown, projectfile.Bytes(fi.Size()), projectfile.Bytes(MaxImageBytes))
		}
		data, more, err := projectfile.Read(rest, MaxImageBytes)
		if err != nil || more {
			return errorResult("could not read the image %s: it grew past %s, or %v", shown, projectfile.Bytes(MaxImageBytes), err)
		}
		st.sawRead(pl.real, fi)
		return &tool.Result{Content: []mcp.Content{
			&mcp.TextContent{Text: fmt.Sprintf("%s: %s image, %s", shown, mime, projectfile.Bytes(int64(len(data))))},
			&mcp.ImageContent{MIMEType: mime, Data: data},
		}}
	case projectfile.LooksBinary(head, fi.Size()):
		return errorResult("%s is a binary file (%s, %s), not text: read_file reads text files and images (PNG, JPEG, GIF, WebP); a command can inspect it (file, xxd, a tool of its format)",
			shown, mime, projectfile.Bytes(fi.Size()))
	}
	page, err := readLines(rest, offset, limit)
	if err != nil {
		return errorResult("could not read %s: %v", shown, err)
	}
	st.sawRead(pl.real, fi)
	return tool.TextResult(page.text(shown))
}

// page is the lines of a file read_file returns.
type page struct {
	lines      []string // numbered, each ending in a newline
	first      int      // the number of the first
	total      int      // lines in the file
	cut        int      // lines cut at MaxLineChars
	charsFull  bool     // the page stopped at maxReadChars
	offsetPast bool
}

// readLines reads the lines offset… (1-based) of r, at most limit, and
// counts the rest.
func readLines(r io.Reader, offset, limit int) (page, error) {
	offset = max(offset, 1)
	if limit <= 0 {
		limit = DefaultReadLines
	}
	p := page{first: offset}
	br := bufio.NewReaderSize(r, 64<<10)
	chars := 0
	var line []byte
	for n := 1; ; n++ {
		line = line[:0]
		long := false
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if len(line) < MaxLineChars*4 {
				line = append(line, chunk...)
			} else {
				long = true
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if len(line) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return page{}, err
		}
		p.total = n
		if n < offset || len(p.lines) >= limit || p.charsFull {
			if err != nil {
				break
			}
			continue
		}
		text := strings.TrimRight(string(line), "\r\n")
		if utf8.RuneCountInString(text) > MaxLineChars || long {
			text = string([]rune(text)[:min(MaxLineChars, utf8.RuneCountInString(text))]) + " […line cut]"
			p.cut++
		}
		l := fmt.Sprintf("%6d\t%s\n", n, text)
		if chars+len(l) > maxReadChars && len(p.lines) > 0 {
			p.charsFull = true
			continue
		}
		chars += len(l)
		p.lines = append(p.lines, l)
		if err != nil {
			break
		}
	}
	p.offsetPast = offset > 1 && offset > p.total
	return p, nil
}

func (p page) text(shown string) string {
	if p.total == 0 {
		return fmt.Sprintf("%s is empty.", shown)
	}
	if p.offsetPast {
		return fmt.Sprintf("%s has %d lines; offset %d is past its end.", shown, p.total, p.first)
	}
	var b strings.Builder
	for _, l := range p.lines {
		b.WriteString(l)
	}
	last := p.first + len(p.lines) - 1
	if last < p.total || p.first > 1 {
		fmt.Fprintf(&b, "\n[lines %d–%d of %d", p.first, last, p.total)
		if last < p.total {
			fmt.Fprintf(&b, "; read on with offset %d", last+1)
		}
		b.WriteString("]")
	}
	if p.cut > 0 {
		fmt.Fprintf(&b, "\n[%d long lines cut at %d characters]", p.cut, MaxLineChars)
	}
	return b.String()
}

func isImage(mime string) bool {
	switch mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// readWhole reads the regular file pl names whole (for an edit), at most
// maxEditBytes; it says what is wrong in a sentence.
func readWhole(pl place, shown string) ([]byte, fs.FileInfo, string) {
	f, fi, err := pl.open()
	var nr *projectfile.NotRegularError
	if errors.As(err, &nr) {
		return nil, nil, notRegular(shown, nr.Mode)
	}
	if err != nil {
		return nil, nil, fmt.Sprintf("could not read %s: %v", shown, err)
	}
	defer f.Close()
	data, more, err := projectfile.Read(f, maxEditBytes)
	if err != nil {
		return nil, nil, fmt.Sprintf("could not read %s: %v", shown, err)
	}
	if more {
		return nil, nil, fmt.Sprintf("%s is larger than %s, the most edit_file and write_file change; a command can change it (sed, a script)", shown, projectfile.Bytes(maxEditBytes))
	}
	return data, fi, ""
}
