package localtools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/otter-sh/otter/internal/gitignore"
	"github.com/otter-sh/otter/internal/tool"
)

// Caps of search_files.
const (
	// MaxMatches caps the matching lines search_files lists.
	MaxMatches = 250
	// maxMatchLine cuts a longer matching line.
	maxMatchLine = 300
	// maxSearchBytes: a larger file is not searched.
	maxSearchBytes = 16 << 20
)

func searchFilesDef() def {
	return def{
		name:  NameSearchFiles,
		title: "Search files",
		description: "Search the contents of files for a regular expression (RE2 syntax, as Go and ripgrep write it) and list the matching lines as path:line: text, " +
			"at most 250. path is a directory or a file (default: the working directory); glob keeps the files whose path matches it (\"*.go\", \"src/**/*.ts\"); " +
			"ignore_case matches without regard to case. .gitignore is honoured, .git and binary files are left out.",
		schema: `{"type":"object","properties":{` +
			`"pattern":{"type":"string","description":"a regular expression (RE2)"},` +
			`"path":{"type":"string","description":"a directory or a file; default the working directory"},` +
			`"glob":{"type":"string","description":"search only files whose path matches this glob"},` +
			`"ignore_case":{"type":"boolean"}},` +
			`"required":["pattern"],"additionalProperties":false}`,
		readOnly: true,
		group:    "basic",
		gate:     gateWalk,
		run: func(t *Tools, ctx context.Context, _ *State, args json.RawMessage) (*tool.Result, error) {
			in, err := decode[struct {
				Pattern, Path, Glob string
				IgnoreCase          bool `json:"ignore_case"`
			}](args)
			if err != nil {
				return errorResult("search_files: %v", err), nil
			}
			return searchFiles(ctx, t.options(), in.Pattern, in.Path, in.Glob, in.IgnoreCase)
		},
	}
}

// hit is one matching line.
type hit struct {
	line int
	text string
}

func searchFiles(ctx context.Context, o Options, pattern, dir, glob string, ignoreCase bool) (*tool.Result, error) {
	expr := "(?m)" + pattern // ^ and $ at each line, as in grep and rg
	if ignoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return errorResult("the pattern %q is not a regular expression otter reads (RE2): %v", pattern, err), nil
	}
	pl, shown, refused := o.searched(ctx, dir)
	if refused != nil {
		return refused, nil
	}
	globs := expandBraces(glob)

	// The walk hands files to workers, each reading and matching a file
	// whole; their hits are put back in the walk's order.
	type job struct {
		e   entry
		out *[]hit
	}
	jobs := make(chan job, 256)
	var results [][]hit
	var files []entry
	var wg sync.WaitGroup
	for range max(4, runtime.GOMAXPROCS(0)) { // more than the cores: a read may wait on the disk
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for j := range jobs {
				*j.out, buf = searchFile(re, j.e, buf)
			}
		}()
	}
	var order []*[]hit
	capped, werr := walk(ctx, pl.real, func(e entry) bool {
		if glob != "" && !slices.ContainsFunc(globs, func(g string) bool { return gitignore.Match(g, e.rel) }) {
			return true
		}
		if !e.typ.IsRegular() { // links, pipes and devices are left out, as rg does
			return true
		}
		out := new([]hit)
		order = append(order, out)
		files = append(files, e)
		jobs <- job{e: e, out: out}
		return true
	})
	close(jobs)
	wg.Wait()
	if werr != nil {
		return nil, fmt.Errorf("search_files: %w", werr)
	}
	for _, o := range order {
		results = append(results, *o)
	}
	var b strings.Builder
	total, listed, inFiles := 0, 0, 0
	for i, hits := range results {
		if len(hits) == 0 {
			continue
		}
		inFiles++
		name := o.shown(filepath.Join(pl.abs, filepath.FromSlash(files[i].rel)))
		if pl.info != nil && !pl.info.IsDir() {
			name = shown
		}
		for _, h := range hits {
			total++
			if listed == MaxMatches {
				continue
			}
			listed++
			fmt.Fprintf(&b, "%s:%d: %s\n", name, h.line, h.text)
		}
	}
	if total == 0 {
		return tool.TextResult(fmt.Sprintf("No line matches %q in %s.", pattern, shown)), nil
	}
	if total > listed {
		fmt.Fprintf(&b, "[%d matching lines in %d files; the first %d are listed: a narrower pattern, path or glob lists the rest]\n", total, inFiles, listed)
	}
	if capped {
		fmt.Fprintf(&b, "[the search stopped after %d entries: search a smaller directory]\n", maxWalked)
	}
	return tool.TextResult(strings.TrimSuffix(b.String(), "\n")), nil
}

// searchFile returns the lines of e that re matches; a binary file (a NUL
// in its first 8 KiB), an empty one and one over maxSearchBytes have none.
// It reads the file whole into buf (grown as needed, and returned for the
// next file), never waiting on a pipe: the open does not block, and what
// was opened must be a regular file.
func searchFile(re *regexp.Regexp, e entry, buf []byte) ([]hit, []byte) {
	f, err := os.OpenFile(e.abs, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, buf
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 || fi.Size() > maxSearchBytes {
		return nil, buf
	}
	if need := int(fi.Size()) + 1; cap(buf) < need {
		buf = make([]byte, need)
	}
	n, err := io.ReadFull(f, buf[:fi.Size()+1])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, buf
	}
	data := buf[:n]
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return nil, buf
	}
	var hits []hit
	line, pos := 1, 0
	for pos < len(data) && len(hits) <= MaxMatches {
		loc := re.FindIndex(data[pos:])
		if loc == nil {
			break
		}
		at := pos + loc[0]
		line += bytes.Count(data[pos:at], []byte{'\n'})
		start := bytes.LastIndexByte(data[:at], '\n') + 1
		end := len(data)
		if i := bytes.IndexByte(data[at:], '\n'); i >= 0 {
			end = at + i
		}
		text := strings.TrimRight(string(data[start:end]), "\r")
		if utf8.RuneCountInString(text) > maxMatchLine {
			text = string([]rune(text)[:maxMatchLine]) + " […]"
		}
		hits = append(hits, hit{line: line, text: text})
		// On from the next line: one hit per line.
		pos, line = end+1, line+1
	}
	return hits, buf
}
