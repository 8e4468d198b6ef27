package localtools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/aymanbagabas/go-udiff"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/projectfile"
	"github.com/otter-sh/otter/internal/tool"
)

// maxEditBytes is the largest file edit_file and write_file change.
const maxEditBytes = 8 << 20

// editRules are what an answer "for this session" to an edit allows:
// both tools that change files.
var editRules = []string{NameEditFile, NameWriteFile}

// change is a change a call would make, worked out without making it.
type change struct {
	pl      place
	shown   string
	existed bool
	before  []byte
	after   []byte
	mode    fs.FileMode
	info    fs.FileInfo // of the file as read, when it existed
	summary string      // what the call did, for the model
}

// diff is the change as a unified diff, three lines of context.
func (c change) diff() string {
	from, to := "a/"+c.shown, "b/"+c.shown
	if !c.existed {
		from = "/dev/null"
	}
	return udiff.Unified(from, to, string(c.before), string(c.after))
}

// gateChange is the question of a call that changes a file: always asked
// (unless a rule or the session allows it), with the diff; a call that
// cannot succeed is not asked about and fails at once.
func gateChange(c change, why string, verb string) tool.Gate {
	if why != "" {
		return tool.Gate{}
	}
	reason := "it " + verb + " " + c.shown
	if !c.pl.inside {
		reason = "it " + verb + " a file outside the project: " + c.pl.where()
	}
	return tool.Gate{Ask: true, Reason: reason, Rules: editRules, Diff: c.diff()}
}

func editFileDef() def {
	type input struct {
		Path       string
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	}
	plan := func(t *Tools, st *State, args json.RawMessage) (change, string) {
		in, err := decode[input](args)
		if err != nil {
			return change{}, err.Error()
		}
		return planEdit(t.options(), st, in.Path, in.OldString, in.NewString, in.ReplaceAll)
	}
	return def{
		name:  NameEditFile,
		title: "Edit a file",
		description: "Replace old_string with new_string in a file, exactly (whitespace and indentation included). old_string must occur exactly once " +
			"(give more surrounding lines to make it unique), or set replace_all to replace every occurrence. The file must have been read with " +
			"read_file in this conversation and not changed on disk since. The user is asked, with the change shown as a diff.",
		schema: `{"type":"object","properties":{` +
			`"path":{"type":"string","description":"the file, relative to the working directory or absolute"},` +
			`"old_string":{"type":"string","description":"the exact text to replace"},` +
			`"new_string":{"type":"string","description":"the text to put in its place"},` +
			`"replace_all":{"type":"boolean","description":"replace every occurrence; default false"}},` +
			`"required":["path","old_string","new_string"],"additionalProperties":false}`,
		group: "file",
		gate: func(t *Tools, _ context.Context, st *State, args json.RawMessage) tool.Gate {
			c, why := plan(t, st, args)
			return gateChange(c, why, "edits")
		},
		run: func(t *Tools, ctx context.Context, st *State, args json.RawMessage) (*tool.Result, error) {
			c, why := plan(t, st, args)
			if why != "" {
				return errorResult("%s", why), nil
			}
			return apply(ctx, st, c, NameEditFile), nil
		},
	}
}

func planEdit(o Options, st *State, path, old, new string, all bool) (change, string) {
	pl, err := o.resolve(path, false)
	if err != nil {
		return change{}, fmt.Sprintf("could not edit %s: %v", path, err)
	}
	c := change{pl: pl, shown: o.shown(pl.abs), existed: true}
	switch {
	case !pl.exists:
		return change{}, fmt.Sprintf("%s does not exist (looked for %s): write_file creates a file", c.shown, pl.abs)
	case old == "":
		return change{}, "old_string is empty: give the exact text to replace (write_file writes a whole file)"
	case old == new:
		return change{}, "old_string and new_string are the same: there is nothing to change"
	}
	data, fi, why := readWhole(pl, c.shown)
	if why != "" {
		return change{}, why
	}
	if why := st.staleness(pl.real, c.shown, fi); why != "" {
		return change{}, why
	}
	n := bytes.Count(data, []byte(old))
	switch {
	case n == 0:
		hint := ""
		if strings.TrimSpace(old) != old || strings.Contains(old, "\t") || strings.Contains(old, "  ") {
			hint = " (check its whitespace and indentation against the file)"
		}
		return change{}, fmt.Sprintf("old_string is not in %s%s: read the file again and copy the text exactly", c.shown, hint)
	case n > 1 && !all:
		return change{}, fmt.Sprintf("old_string occurs %d times in %s (lines %s): give more of the surrounding text so that it occurs once, or set replace_all to replace all %d",
			n, c.shown, lineNumbers(data, []byte(old), 10), n)
	}
	c.before, c.info, c.mode = data, fi, fi.Mode()
	if all {
		c.after = bytes.ReplaceAll(data, []byte(old), []byte(new))
	} else {
		c.after = bytes.Replace(data, []byte(old), []byte(new), 1)
	}
	c.summary = fmt.Sprintf("Edited %s: %d replacement(s).", c.shown, max(1, map[bool]int{true: n, false: 1}[all]))
	return c, ""
}

// lineNumbers lists the lines where sub starts in data, at most max.
func lineNumbers(data, sub []byte, max int) string {
	var nums []string
	line, from := 1, 0
	for len(nums) < max {
		i := bytes.Index(data[from:], sub)
		if i < 0 {
			break
		}
		line += bytes.Count(data[from:from+i], []byte{'\n'})
		nums = append(nums, fmt.Sprint(line))
		line += bytes.Count(sub, []byte{'\n'})
		from += i + len(sub)
	}
	return strings.Join(nums, ", ")
}

func writeFileDef() def {
	plan := func(t *Tools, st *State, args json.RawMessage) (change, string) {
		in, err := decode[struct{ Path, Content string }](args)
		if err != nil {
			return change{}, err.Error()
		}
		return planWrite(t.options(), st, in.Path, in.Content)
	}
	return def{
		name:  NameWriteFile,
		title: "Write a file",
		description: "Write content to a file: create it (and its directories), or replace it whole. An existing file must have been read with " +
			"read_file in this conversation and not changed on disk since; prefer edit_file to change part of one. The user is asked, with the change shown as a diff.",
		schema: `{"type":"object","properties":{` +
			`"path":{"type":"string","description":"the file, relative to the working directory or absolute"},` +
			`"content":{"type":"string","description":"the whole content of the file"}},` +
			`"required":["path","content"],"additionalProperties":false}`,
		group: "file",
		gate: func(t *Tools, _ context.Context, st *State, args json.RawMessage) tool.Gate {
			c, why := plan(t, st, args)
			verb := "writes"
			if why == "" && !c.existed {
				verb = "creates"
			}
			return gateChange(c, why, verb)
		},
		run: func(t *Tools, ctx context.Context, st *State, args json.RawMessage) (*tool.Result, error) {
			c, why := plan(t, st, args)
			if why != "" {
				return errorResult("%s", why), nil
			}
			return apply(ctx, st, c, NameWriteFile), nil
		},
	}
}

func planWrite(o Options, st *State, path, content string) (change, string) {
	pl, err := o.resolve(path, false)
	if err != nil {
		return change{}, fmt.Sprintf("could not write %s: %v", path, err)
	}
	c := change{pl: pl, shown: o.shown(pl.abs), existed: pl.exists, after: []byte(content), mode: 0o644}
	if len(c.after) > maxEditBytes {
		return change{}, fmt.Sprintf("the content is %s, more than the %s write_file writes; a command can write a file that large", projectfile.Bytes(int64(len(c.after))), projectfile.Bytes(maxEditBytes))
	}
	if pl.exists {
		if !pl.info.Mode().IsRegular() {
			return change{}, notRegular(c.shown, pl.info.Mode())
		}
		data, fi, why := readWhole(pl, c.shown)
		if why != "" {
			return change{}, why
		}
		if why := st.staleness(pl.real, c.shown, fi); why != "" {
			return change{}, why
		}
		c.before, c.info, c.mode = data, fi, fi.Mode()
		if bytes.Equal(data, c.after) {
			return change{}, fmt.Sprintf("%s already holds this content: there is nothing to change", c.shown)
		}
		c.summary = fmt.Sprintf("Wrote %s (%d lines, %s).", c.shown, lineCount(c.after), projectfile.Bytes(int64(len(c.after))))
		return c, ""
	}
	c.summary = fmt.Sprintf("Created %s (%d lines, %s).", c.shown, lineCount(c.after), projectfile.Bytes(int64(len(c.after))))
	return c, ""
}

func lineCount(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	n := bytes.Count(b, []byte{'\n'})
	if b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// apply makes the change c: the Checkpointer keeps the file first, then
// the file is written — through an os.Root of the project when it lies
// inside it, so that a link swapped in since the plan cannot lead out.
// The result says what changed, with the diff, and carries it in its
// _meta (ChangeOf).
func apply(ctx context.Context, st *State, c change, toolName string) *tool.Result {
	st.mu.Lock()
	cp := st.checkpointer
	st.mu.Unlock()
	if cp != nil {
		if err := cp.BeforeChange(ctx, FileChange{Path: c.pl.real, Existed: c.existed, Before: c.before, After: c.after, Tool: toolName}); err != nil {
			return errorResult("%s was left as it was: otter could not keep its previous content for undo: %v", c.shown, err)
		}
	}
	if err := write(c); err != nil {
		if cp != nil {
			_ = cp.BeforeChange(ctx, FileChange{Path: c.pl.real, Existed: c.existed, Before: c.before, After: c.before, Tool: toolName})
		}
		return errorResult("could not write %s: %v", c.shown, err)
	}
	fi, _ := os.Stat(c.pl.real)
	st.changedFile(c.pl.real, fi)
	d := c.diff()
	res := tool.TextResult(c.summary + "\n\n" + d)
	res.Meta = mcp.Meta{MetaChange: Change{Path: c.pl.real, Created: !c.existed, Diff: d}}
	return res
}

// write writes c.after to the file, keeping an existing file's mode.
func write(c change) error {
	flags := os.O_WRONLY | os.O_TRUNC | syscall.O_NONBLOCK
	if !c.existed {
		flags = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	}
	var f *os.File
	if projectfile.Inside(c.pl.root, c.pl.real) {
		r, err := os.OpenRoot(c.pl.root)
		if err != nil {
			return err
		}
		defer r.Close()
		rel, err := c.pl.rel()
		if err != nil {
			return err
		}
		if !c.existed {
			if err := r.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
				return err
			}
		}
		if f, err = r.OpenFile(rel, flags, c.mode.Perm()); err != nil {
			return err
		}
	} else {
		if !c.existed {
			if err := os.MkdirAll(filepath.Dir(c.pl.real), 0o755); err != nil {
				return err
			}
		}
		var err error
		if f, err = os.OpenFile(c.pl.real, flags, c.mode.Perm()); err != nil {
			return err
		}
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = errors.New(notRegular(c.shown, fi.Mode()))
		}
		return err
	}
	_, err := f.Write(c.after)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
