// Package frontmatter reads the YAML header of a Markdown file — the block
// between a first line "---" and the next "---" — as custom commands and
// Agent Skills (SKILL.md) carry it, and reports a bad header by file and
// line.
package frontmatter

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Error is a header that cannot be read, at a line of its file.
type Error struct {
	File string
	Line int // 1-based line in the file; 0 when unknown
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Split separates data into its header (without the "---" lines) and its
// body. ok is false when data has no header; then body is data. bodyLine is
// the 1-based line the body starts at.
func Split(data []byte) (header, body []byte, bodyLine int, ok bool) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) < 2 || !isFence(lines[0]) {
		return nil, data, 1, false
	}
	off := len(lines[0])
	for i, l := range lines[1:] {
		if isFence(l) {
			return data[len(lines[0]):off], data[off+len(l):], i + 3, true
		}
		off += len(l)
	}
	return nil, data, 1, false
}

func isFence(line []byte) bool { return string(bytes.TrimRight(line, " \t\r\n")) == "---" }

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): `) })

// Decode reads file's header into v (a struct with yaml tags). A file
// without a header leaves v as it is and returns the whole file as body. A
// header that is not YAML, or whose values do not fit v, is an *Error with
// the line in file.
func Decode(file string, data []byte, v any) (body []byte, bodyLine int, err error) {
	header, body, bodyLine, ok := Split(data)
	if !ok {
		return body, bodyLine, nil
	}
	if err := yaml.Unmarshal(header, v); err != nil {
		var te *yaml.TypeError
		msg, line := err.Error(), 0
		if errors.As(err, &te) && len(te.Errors) > 0 {
			msg = te.Errors[0]
		}
		if m := yamlLine().FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			line = n + 1 // the header starts on the file's second line
			msg = msg[len(m[0]):]
		}
		return nil, 0, &Error{File: file, Line: line, Msg: "the header is not valid YAML: " + msg}
	}
	return body, bodyLine, nil
}
