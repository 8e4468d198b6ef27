package config

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// posIndex records on which line each key and table of a TOML document is
// written, so that problems found after decoding (unknown keys, bad values,
// missing fields) can name a line. BurntSushi/toml keeps key positions to
// itself, and where it reports them it cannot tell entries of an array of
// tables apart, so otter scans the statement structure of the document
// (which the toml parser has already accepted) once more.
type posIndex struct {
	byPath map[string][]keyEvent // every occurrence of a key path, in order
	exact  map[entryKey]int      // the first line of a path in an entry
	// headers are the [table] and [[array]] headers, in order, each with
	// the array-of-tables entry it belongs to (see serveredit.go).
	headers []keyEvent
}

type entryKey struct {
	path, arr string
	idx       int
}

// keyEvent is one key or table header of the document.
type keyEvent struct {
	line int
	arr  string // the array of tables the key belongs to ("" if none)
	idx  int    // the index of its entry in arr
}

// find returns the line of the first occurrence of path in entry idx of
// arr (arr "" matches any), or 0.
func (ix *posIndex) find(path, arr string, idx int) int {
	if arr != "" {
		return ix.exact[entryKey{path, arr, idx}]
	}
	if evs := ix.byPath[path]; len(evs) > 0 {
		return evs[0].line
	}
	return 0
}

// line returns the line of path inside entry idx of the array of tables arr
// (arr "" matches any). When path itself was not written (a default, or a
// key inside a value the scanner does not descend into) it falls back to the
// nearest written parent, e.g. the entry's [[header]]. It returns 0 when
// nothing matches.
func (ix *posIndex) line(path toml.Key, arr string, idx int) int {
	if ix == nil {
		return 0
	}
	for p := path; len(p) > 0; p = p[:len(p)-1] {
		if l := ix.find(p.String(), arr, idx); l > 0 {
			return l
		}
	}
	return 0
}

// lineOf returns the line of a key path already rendered by toml.Key.String,
// exactly in entry idx of arr ("" for keys outside arrays of tables).
func (ix *posIndex) lineOf(key, arr string, idx int) int {
	return ix.exact[entryKey{key, arr, idx}]
}

// nth returns the line of the n-th (0-based) occurrence of path, with the
// entry of the array of tables it belongs to.
func (ix *posIndex) nth(path string, n int) (line int, arr string, idx int) {
	if ix == nil || n >= len(ix.byPath[path]) {
		return 0, "", 0
	}
	ev := ix.byPath[path][n]
	return ev.line, ev.arr, ev.idx
}

// entries returns the number of entries of the array of tables arr.
func (ix *posIndex) entries(arr string) int {
	n := 0
	for _, ev := range ix.byPath[arr] {
		if ev.arr == arr {
			n = max(n, ev.idx+1)
		}
	}
	return n
}

// posScanner walks a TOML document statement by statement. It only needs
// to be right for documents that toml.Decode accepted; on anything else it
// still terminates.
type posScanner struct {
	s      string
	i      int
	line   int
	ix     *posIndex
	counts map[string]int // entries seen per array of tables
	arr    string         // current array of tables
	idx    int            // current entry index in arr
}

// scanPositions indexes the keys of a TOML document by line.
func scanPositions(text string) *posIndex {
	sc := &posScanner{s: text, line: 1, ix: &posIndex{byPath: map[string][]keyEvent{}, exact: map[entryKey]int{}}, counts: map[string]int{}}
	sc.document()
	return sc.ix
}

func (sc *posScanner) eof() bool { return sc.i >= len(sc.s) }

func (sc *posScanner) peek() byte {
	if sc.eof() {
		return 0
	}
	return sc.s[sc.i]
}

func (sc *posScanner) advance() {
	if sc.i < len(sc.s) {
		if sc.s[sc.i] == '\n' {
			sc.line++
		}
		sc.i++
	}
}

func (sc *posScanner) record(path toml.Key) {
	p := path.String()
	sc.ix.byPath[p] = append(sc.ix.byPath[p], keyEvent{line: sc.line, arr: sc.arr, idx: sc.idx})
	if k := (entryKey{p, sc.arr, sc.idx}); sc.ix.exact[k] == 0 {
		sc.ix.exact[k] = sc.line
	}
}

// skipBlank skips spaces and tabs, and newlines and comments too if multiline.
func (sc *posScanner) skipBlank(multiline bool) {
	for !sc.eof() {
		switch c := sc.peek(); {
		case c == ' ' || c == '\t' || c == '\r':
			sc.advance()
		case c == '\n' && multiline:
			sc.advance()
		case c == '#':
			for !sc.eof() && sc.peek() != '\n' {
				sc.advance()
			}
		default:
			return
		}
	}
}

func (sc *posScanner) skipLine() {
	for !sc.eof() && sc.peek() != '\n' {
		sc.advance()
	}
}

func (sc *posScanner) document() {
	var table toml.Key
	for !sc.eof() {
		start := sc.i
		sc.skipBlank(true)
		if sc.eof() {
			return
		}
		if sc.peek() == '[' {
			sc.advance()
			isArray := sc.peek() == '['
			if isArray {
				sc.advance()
			}
			table = sc.key()
			sc.skipLine() // the closing brackets and any comment
			sc.header(table, isArray)
			sc.ix.headers = append(sc.ix.headers, keyEvent{line: sc.line, arr: sc.arr, idx: sc.idx})
			continue
		}
		sc.keyValue(table)
		if sc.i == start {
			sc.advance() // never loop without progress
		}
	}
}

// header sets the array-of-tables context for a [table] or [[array]] header.
func (sc *posScanner) header(path toml.Key, isArray bool) {
	p := path.String()
	if isArray {
		sc.arr, sc.idx = p, sc.counts[p]
		sc.counts[p]++
		sc.record(path)
		return
	}
	// A sub-table belongs to the innermost array of tables that contains it.
	sc.arr, sc.idx = "", 0
	for n := len(path) - 1; n > 0; n-- {
		q := path[:n].String()
		if c, ok := sc.counts[q]; ok {
			sc.arr, sc.idx = q, c-1
			break
		}
	}
	sc.record(path)
}

// keyValue reads "key = value", the key relative to the table prefix.
func (sc *posScanner) keyValue(prefix toml.Key) {
	k := sc.key()
	full := append(append(toml.Key{}, prefix...), k...)
	if len(k) > 0 {
		sc.record(full)
	}
	sc.skipBlank(false)
	if sc.peek() == '=' {
		sc.advance()
		sc.value(full)
	}
}

// key reads a dotted key (bare, "basic" or 'literal' parts).
func (sc *posScanner) key() toml.Key {
	var k toml.Key
	for {
		sc.skipBlank(false)
		switch c := sc.peek(); c {
		case '"':
			raw := sc.basicString()
			if s, err := strconv.Unquote(raw); err == nil {
				k = append(k, s)
			} else {
				k = append(k, strings.Trim(raw, `"`))
			}
		case '\'':
			k = append(k, strings.Trim(sc.literalString(), "'"))
		default:
			st := sc.i
			for !sc.eof() && !strings.ContainsRune(" \t\r\n.=]#\"'", rune(sc.peek())) {
				sc.advance()
			}
			if sc.i == st {
				return k
			}
			k = append(k, sc.s[st:sc.i])
		}
		sc.skipBlank(false)
		if sc.peek() != '.' {
			return k
		}
		sc.advance()
	}
}

// basicString reads a single-line "basic string" and returns it with quotes.
func (sc *posScanner) basicString() string {
	st := sc.i
	sc.advance()
	for !sc.eof() && sc.peek() != '"' && sc.peek() != '\n' {
		if sc.peek() == '\\' {
			sc.advance()
		}
		sc.advance()
	}
	sc.advance()
	return sc.s[st:min(sc.i, len(sc.s))]
}

// literalString reads a single-line 'literal string' with its quotes.
func (sc *posScanner) literalString() string {
	st := sc.i
	sc.advance()
	for !sc.eof() && sc.peek() != '\'' && sc.peek() != '\n' {
		sc.advance()
	}
	sc.advance()
	return sc.s[st:min(sc.i, len(sc.s))]
}

// multiline skips a """ or ”' string whose opening delimiter is at sc.i.
func (sc *posScanner) multiline(q byte) {
	delim := strings.Repeat(string(q), 3)
	for range 3 {
		sc.advance()
	}
	for !sc.eof() {
		if q == '"' && sc.peek() == '\\' {
			sc.advance()
			sc.advance()
			continue
		}
		if strings.HasPrefix(sc.s[sc.i:], delim) {
			for range 3 {
				sc.advance()
			}
			for sc.peek() == q { // up to two quotes may end the content
				sc.advance()
			}
			return
		}
		sc.advance()
	}
}

// value skips one value, recording the keys of inline tables under path and
// treating the inline tables of an array as entries of an array of tables.
func (sc *posScanner) value(path toml.Key) {
	sc.skipBlank(false)
	switch c := sc.peek(); {
	case c == '"' || c == '\'':
		if strings.HasPrefix(sc.s[sc.i:], strings.Repeat(string(c), 3)) {
			sc.multiline(c)
		} else if c == '"' {
			sc.basicString()
		} else {
			sc.literalString()
		}
	case c == '[':
		sc.advance()
		p := path.String()
		saveArr, saveIdx := sc.arr, sc.idx
		for n := 0; ; {
			sc.skipBlank(true)
			if sc.eof() {
				return
			}
			switch sc.peek() {
			case ']':
				sc.advance()
				sc.arr, sc.idx = saveArr, saveIdx
				return
			case ',':
				sc.advance()
				continue
			case '{':
				sc.arr, sc.idx = p, n
				sc.counts[p] = n + 1
				sc.record(path)
			}
			st := sc.i
			sc.value(path)
			if sc.i == st {
				sc.advance()
			}
			n++
		}
	case c == '{':
		sc.advance()
		for {
			sc.skipBlank(true)
			if sc.eof() {
				return
			}
			switch sc.peek() {
			case '}':
				sc.advance()
				return
			case ',':
				sc.advance()
				continue
			}
			st := sc.i
			sc.keyValue(path)
			if sc.i == st {
				sc.advance()
			}
		}
	default: // numbers, booleans, dates
		for !sc.eof() && !strings.ContainsRune(",]}\n#", rune(sc.peek())) {
			sc.advance()
		}
	}
}

// KeyLine returns the file of c with the highest scope that writes key
// (say "agent", "provider") and the line it is written on, for an error
// found in the merged configuration; "" and 0 when no TOML file writes it.
// Untrusted files are skipped: their settings were not merged.
func (c *Config) KeyLine(key ...string) (file string, line int) {
	for _, src := range slices.Backward(c.Files) {
		if !src.Trusted || filepath.Ext(src.Path) != ".toml" {
			continue
		}
		data, err := readBounded(src.Path)
		if err != nil {
			continue
		}
		if l := scanPositions(string(data)).find(toml.Key(key).String(), "", 0); l > 0 {
			return src.Path, l
		}
	}
	return "", 0
}
