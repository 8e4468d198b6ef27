package config

// Editing servers in place. `otter mcp add/remove/enable/disable` change
// one [[mcp.servers]] entry of a TOML file and keep everything else as the
// person wrote it: comments, blank lines, key order, quoting. BurntSushi/
// toml cannot write a document back with those, so the edits are made on
// the lines, at positions the posScanner finds (the same scanner that gives
// config errors their line numbers), and each edited text is decoded again
// before it is written: an edit that would break the file is refused.

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// ErrServerExists is wrapped by AddServer's error when the file already
// defines a server of that name.
var ErrServerExists = errors.New("a server of that name is already defined")

// ErrNoServer is wrapped when the file defines no server of that name.
var ErrNoServer = errors.New("no server of that name is defined")

// ErrInlineServers is wrapped when the servers of a file are written as an
// inline array (servers = [ {…}, {…} ]): otter edits only [[mcp.servers]]
// entries, since a line of an inline array holds other servers too.
var ErrInlineServers = errors.New("the servers are written as an inline array (servers = [ {…} ])")

// serverEntry is where one [[mcp.servers]] entry is in a file.
type serverEntry struct {
	first, last int // 1-based lines: the [[mcp.servers]] header, the entry's last key line
	idx         int // the entry's index in mcp.servers
	inline      bool
}

// readTOMLFile reads a config file that may not exist yet; it must parse.
func readTOMLFile(file string) (string, error) {
	data, err := readBounded(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	if _, err := toml.Decode(string(data), new(map[string]any)); err != nil {
		return "", fmt.Errorf("config: not changing %s, it does not parse: %w", file, syntaxError(file, err))
	}
	return string(data), nil
}

// findServer returns the entry of server name in text, or ok false.
func findServer(text, name string) (serverEntry, bool) {
	var doc struct {
		MCP struct {
			Servers []struct {
				Name string `toml:"name"`
			} `toml:"servers"`
		} `toml:"mcp"`
	}
	if _, err := toml.Decode(text, &doc); err != nil {
		return serverEntry{}, false
	}
	ix := scanPositions(text)
	lines := strings.SplitAfter(text, "\n")
	for i, s := range doc.MCP.Servers {
		if s.Name != name {
			continue
		}
		first := ix.lineOf(serversArr, serversArr, i)
		if first == 0 {
			return serverEntry{}, false
		}
		if !ix.isHeader(first) {
			// The { … } of an inline array: its line is not the entry's alone.
			return serverEntry{first: first, last: first, idx: i, inline: true}, true
		}
		end := len(lines) + 1 // the line after the entry's last
		for _, h := range ix.headers {
			if h.line > first && (h.arr != serversArr || h.idx != i) {
				end = h.line
				break
			}
		}
		// Blank lines and comments at the end belong to what follows.
		last := end - 1
		for last > first && isBlankOrComment(lines[last-1]) {
			last--
		}
		return serverEntry{first: first, last: last, idx: i}, true
	}
	return serverEntry{}, false
}

// isHeader reports whether a [table] or [[array]] header is on line.
func (ix *posIndex) isHeader(line int) bool {
	return slices.ContainsFunc(ix.headers, func(h keyEvent) bool { return h.line == line })
}

// inlineServers returns the line where text writes mcp.servers as an inline
// array (servers = [ … ], or mcp = { servers = … }), or 0.
func inlineServers(text string) int {
	ix := scanPositions(text)
	for _, ev := range ix.byPath[serversArr] {
		if !ix.isHeader(ev.line) {
			return ev.line
		}
	}
	return 0
}

// inlineError refuses an edit of a file whose servers are an inline array,
// saying what to write by hand where.
func inlineError(file string, line int, what, byHand string) error {
	return fmt.Errorf("%s:%d: %w, and otter edits only [[mcp.servers]] entries: nothing changed. To %s, %s by hand at that line (or rewrite the array as [[mcp.servers]] tables)",
		file, line, ErrInlineServers, what, byHand)
}

func isBlankOrComment(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "#")
}

// serverIn reads file and finds server name's entry in it. An entry of an
// inline array is refused: the error says what to write by hand (byHand)
// instead of what otter would have done (what).
func serverIn(file, name, what, byHand string) (string, serverEntry, error) {
	text, err := readTOMLFile(file)
	if err != nil {
		return "", serverEntry{}, err
	}
	e, ok := findServer(text, name)
	if !ok {
		return "", serverEntry{}, fmt.Errorf("%s: %w: %q", file, ErrNoServer, name)
	}
	if e.inline {
		return "", serverEntry{}, inlineError(file, e.first, what, byHand)
	}
	return text, e, nil
}

// ServerLine returns the line of server name's entry in file, or 0.
func ServerLine(file, name string) int {
	text, err := readTOMLFile(file)
	if err != nil {
		return 0
	}
	e, ok := findServer(text, name)
	if !ok {
		return 0
	}
	return e.first
}

// AddServer appends s as a [[mcp.servers]] entry to file (created, with its
// directory, if missing), leaving the rest of the file as it is. A file
// that already defines s.Name is not changed: the error wraps
// ErrServerExists and names the file and line.
func AddServer(file string, s Server) error {
	return AddServers(file, []Server{s}, "")
}

// AddServers appends servers as [[mcp.servers]] entries to file, after a
// comment line when comment is not "". Nothing is written when one of them
// is already defined there (ErrServerExists), or when the file writes its
// servers as an inline array (ErrInlineServers).
func AddServers(file string, servers []Server, comment string) error {
	return editConfigFile(file, true, func(file string) error { return addServers(file, servers, comment) })
}

func addServers(file string, servers []Server, comment string) error {
	text, err := readTOMLFile(file)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if comment != "" {
		fmt.Fprintf(w, "# %s\n", comment)
	}
	var names []string
	for i, s := range servers {
		if e, ok := findServer(text, s.Name); ok {
			return fmt.Errorf("%s:%d: %w: %q (edit it there, or remove it first)", file, e.first, ErrServerExists, s.Name)
		}
		if i > 0 {
			w.WriteString("\n")
		}
		s.Scope, s.File, s.Line, s.DisabledReason, s.Problem = "", "", 0, "", nil
		if err := writeServer(w, s); err != nil {
			return err
		}
		names = append(names, s.Name)
	}
	w.Flush()
	what := "add server " + strings.Join(names, ", ")
	if l := inlineServers(text); l > 0 {
		return inlineError(file, l, what, "add "+inlineEntries(b.String())+" to the array")
	}
	out := text
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	if out != "" {
		out += "\n"
	}
	out += b.String()
	return writeEdited(file, text, out, what, func(old []map[string]any) ([]map[string]any, error) {
		added, err := decodeServers(b.String())
		return append(old, added...), err
	})
}

// inlineEntries renders [[mcp.servers]] entries (as writeServer writes
// them: one key a line, sub-tables last) as the inline tables to write into
// a servers = [ … ] array instead.
func inlineEntries(entries string) string {
	var tables, keys, sub []string
	subName := ""
	endSub := func() {
		if subName != "" {
			keys = append(keys, subName+" = { "+strings.Join(sub, ", ")+" }")
		}
		subName, sub = "", nil
	}
	endEntry := func() {
		endSub()
		if keys != nil {
			tables = append(tables, "{ "+strings.Join(keys, ", ")+" }")
		}
		keys = nil
	}
	for l := range strings.Lines(entries) {
		l = strings.TrimSpace(l)
		switch {
		case l == "[[mcp.servers]]":
			endEntry()
			keys = []string{}
		case strings.HasPrefix(l, "[mcp.servers."):
			endSub()
			subName = strings.TrimSuffix(strings.TrimPrefix(l, "[mcp.servers."), "]")
		case l == "" || strings.HasPrefix(l, "#"):
		case subName != "":
			sub = append(sub, l)
		default:
			keys = append(keys, l)
		}
	}
	endEntry()
	return strings.Join(tables, ", ")
}

// RemoveServer deletes server name's entry from file, with the comment
// lines right above its header, and leaves the rest as it is.
func RemoveServer(file, name string) error {
	return editConfigFile(file, false, func(file string) error { return removeServer(file, name) })
}

func removeServer(file, name string) error {
	text, e, err := serverIn(file, name, "remove "+name, "delete its { … } from the array")
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(text, "\n")
	first := e.first
	for first > 1 && strings.HasPrefix(strings.TrimSpace(lines[first-2]), "#") {
		first-- // the entry's own comment
	}
	last := e.last
	// One blank line that separated the entry from what follows goes too,
	// unless the entry was preceded by none.
	if last < len(lines) && strings.TrimSpace(lines[last]) == "" && (first == 1 || strings.TrimSpace(lines[first-2]) == "") {
		last++
	}
	// At the end of the file, the blank line before the entry goes instead.
	if strings.TrimSpace(strings.Join(lines[last:], "")) == "" && first > 1 && strings.TrimSpace(lines[first-2]) == "" {
		first--
	}
	out := strings.Join(lines[:first-1], "") + strings.Join(lines[last:], "")
	return writeEdited(file, text, out, "remove server "+name, func(old []map[string]any) ([]map[string]any, error) {
		return slices.Delete(old, e.idx, e.idx+1), nil
	})
}

// SetServerEnabled sets enabled = on in server name's entry of file: the
// existing enabled line is rewritten in place (its comment kept), or a new
// one goes right after the entry's header.
func SetServerEnabled(file, name string, on bool) error {
	return editConfigFile(file, false, func(file string) error { return setServerEnabled(file, name, on) })
}

func setServerEnabled(file, name string, on bool) error {
	val := fmt.Sprint(on)
	text, e, err := serverIn(file, name, "set enabled = "+val+" for "+name, "write enabled = "+val+" inside its { … }")
	if err != nil {
		return err
	}
	what := "set enabled of server " + name
	want := func(old []map[string]any) ([]map[string]any, error) {
		s := maps.Clone(old[e.idx])
		s["enabled"] = on
		old[e.idx] = s
		return old, nil
	}
	lines := strings.SplitAfter(text, "\n")
	if l := scanPositions(text).lineOf(serversArr+".enabled", serversArr, e.idx); l > 0 {
		line := lines[l-1]
		key, rest, _ := strings.Cut(line, "=")
		// enabled = true   # comment: keep the indentation and the comment.
		v := strings.TrimLeft(rest, " \t")
		end := strings.IndexAny(v, " \t#\r\n")
		if end < 0 {
			end = len(v)
		}
		lines[l-1] = key + "=" + rest[:len(rest)-len(v)] + val + v[end:]
		return writeEdited(file, text, strings.Join(lines, ""), what, want)
	}
	nl := "\n"
	if !strings.HasSuffix(lines[e.first-1], "\n") {
		lines[e.first-1] += nl
	}
	lines = slices.Insert(lines, e.first, "enabled = "+val+nl)
	return writeEdited(file, text, strings.Join(lines, ""), what, want)
}

// writeEdited writes text, the edited before, to file once it is sure the
// edit made the change asked for and no other: the servers of the edited
// text must be want(the servers of before) and everything else the same.
func writeEdited(file, before, text, what string, want func([]map[string]any) ([]map[string]any, error)) error {
	refuse := func(why error) error {
		return fmt.Errorf("config: %s in %s would %w; not changed (edit the file by hand)", what, file, why)
	}
	var old, got map[string]any
	if _, err := toml.Decode(before, &old); err != nil {
		return refuse(fmt.Errorf("start from a file that does not parse: %w", err))
	}
	if _, err := toml.Decode(text, &got); err != nil {
		return refuse(fmt.Errorf("break the file: %w", err))
	}
	wantServers, err := want(takeServers(old))
	if err != nil {
		return refuse(err)
	}
	if len(wantServers) == 0 {
		wantServers = nil
	}
	if gotServers := takeServers(got); !reflect.DeepEqual(gotServers, wantServers) || !reflect.DeepEqual(got, old) {
		return refuse(errors.New("change more than that"))
	}
	return writeConfigFile(file, text)
}

// takeServers removes mcp.servers from a decoded document and returns its
// entries (nil for none); an [mcp] table left empty goes too, so that a
// document whose last entry was removed compares equal.
func takeServers(doc map[string]any) []map[string]any {
	mcp, _ := doc["mcp"].(map[string]any)
	if mcp == nil {
		return nil
	}
	var out []map[string]any
	switch v := mcp["servers"].(type) {
	case []map[string]any:
		out = v
	case []any:
		for _, e := range v {
			m, _ := e.(map[string]any)
			out = append(out, m)
		}
	}
	delete(mcp, "servers")
	if len(mcp) == 0 {
		delete(doc, "mcp")
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// decodeServers decodes the [[mcp.servers]] entries of text.
func decodeServers(text string) ([]map[string]any, error) {
	var doc map[string]any
	if _, err := toml.Decode(text, &doc); err != nil {
		return nil, err
	}
	return takeServers(doc), nil
}

// ScopeFile returns the TOML file of a scope, for workDir: the user's
// config.toml, the project's .otter/config.toml or its .otter/
// config.local.toml (in workDir when it is in no project yet).
func ScopeFile(paths Paths, workDir string, scope Scope) (string, error) {
	if scope == ScopeUser {
		return paths.UserConfigFile(), nil
	}
	name := map[Scope]string{ScopeProject: ProjectConfigName, ScopeLocal: LocalConfigName}[scope]
	if name == "" {
		return "", fmt.Errorf("config scope %q: use user, project or local", scope)
	}
	dir := ProjectDir(workDir)
	if dir == "" {
		var err error
		if dir, err = absDir(workDir); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, ProjectDirName, name), nil
}

// DefinedError is a server that cannot be added because a server of its
// name is defined already, in File at Line (of Scope).
type DefinedError struct {
	Name  string
	File  string
	Line  int
	Scope Scope
}

func (e *DefinedError) Error() string {
	return fmt.Sprintf("%s:%d: a server named %q is already defined (%s scope)", e.File, e.Line, e.Name, e.Scope)
}

func (e *DefinedError) Unwrap() error { return ErrServerExists }

// AddServerTo appends srv to the config file of scope, as lo finds it (the
// user's file by default), after a comment line when comment is not "";
// it returns the file. A server of srv's name defined in any scope is a
// *DefinedError: the new entry would merge into it field by field.
func AddServerTo(lo LoadOptions, scope Scope, srv Server, comment string) (string, error) {
	if scope == "" {
		scope = ScopeUser
	}
	file, err := ScopeFile(lo.Paths, cmp.Or(lo.WorkDir, "."), scope)
	if err != nil {
		return "", err
	}
	if cfg, err := Load(lo); err == nil {
		for _, s := range cfg.MCP.Servers {
			if s.Name == srv.Name && s.File != "" {
				return "", &DefinedError{Name: s.Name, File: s.File, Line: s.Line, Scope: s.Scope}
			}
		}
	}
	return file, AddServers(file, []Server{srv}, comment)
}

// Masked returns s with its secrets masked, as `otter config show` prints
// them.
func (s Server) Masked() Server {
	c := &Config{MCP: MCP{Servers: []Server{s}}}
	return c.masked().MCP.Servers[0]
}
