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
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// ErrServerExists is wrapped by AddServer's error when the file already
// defines a server of that name.
var ErrServerExists = errors.New("a server of that name is already defined")

// ErrNoServer is wrapped when the file defines no server of that name.
var ErrNoServer = errors.New("no server of that name is defined")

// serverEntry is where one [[mcp.servers]] entry is in a file.
type serverEntry struct {
	first, last int // 1-based lines: the [[mcp.servers]] header, the entry's last key line
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
			return serverEntry{}, false // not a [[mcp.servers]] header (an inline array)
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
		return serverEntry{first: first, last: last}, true
	}
	return serverEntry{}, false
}

func isBlankOrComment(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "#")
}

// serverIn reads file and finds server name's entry in it.
func serverIn(file, name string) (string, serverEntry, error) {
	text, err := readTOMLFile(file)
	if err != nil {
		return "", serverEntry{}, err
	}
	e, ok := findServer(text, name)
	if !ok {
		return "", serverEntry{}, fmt.Errorf("%s: %w: %q", file, ErrNoServer, name)
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
	text, err := readTOMLFile(file)
	if err != nil {
		return err
	}
	if e, ok := findServer(text, s.Name); ok {
		return fmt.Errorf("%s:%d: %w: %q (remove it first with `otter mcp remove %s`, or edit it there)", file, e.first, ErrServerExists, s.Name, s.Name)
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	s.Scope, s.File, s.Line, s.DisabledReason, s.Problem = "", "", 0, "", nil
	if err := writeServer(w, s); err != nil {
		return err
	}
	w.Flush()
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if text != "" {
		text += "\n"
	}
	return writeEdited(file, text+b.String(), "add server "+s.Name)
}

// RemoveServer deletes server name's entry from file, with the comment
// lines right above its header, and leaves the rest as it is.
func RemoveServer(file, name string) error {
	text, e, err := serverIn(file, name)
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
	return writeEdited(file, out, "remove server "+name)
}

// SetServerEnabled sets enabled = on in server name's entry of file: the
// existing enabled line is rewritten in place (its comment kept), or a new
// one goes right after the entry's header.
func SetServerEnabled(file, name string, on bool) error {
	text, e, err := serverIn(file, name)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(text, "\n")
	val := fmt.Sprint(on)
	for l := e.first + 1; l <= e.last; l++ {
		line := lines[l-1]
		key, rest, found := strings.Cut(line, "=")
		if !found || strings.TrimSpace(key) != "enabled" {
			continue
		}
		// enabled = true   # comment: keep the indentation and the comment.
		v := strings.TrimLeft(rest, " \t")
		end := strings.IndexAny(v, " \t#\r\n")
		if end < 0 {
			end = len(v)
		}
		lines[l-1] = key + "=" + rest[:len(rest)-len(v)] + val + v[end:]
		return writeEdited(file, strings.Join(lines, ""), "set enabled of server "+name)
	}
	nl := "\n"
	if !strings.HasSuffix(lines[e.first-1], "\n") {
		lines[e.first-1] += nl
	}
	lines = append(lines[:e.first], append([]string{"enabled = " + val + nl}, lines[e.first:]...)...)
	return writeEdited(file, strings.Join(lines, ""), "set enabled of server "+name)
}

// writeEdited checks that text still parses and writes it to file.
func writeEdited(file, text, what string) error {
	if _, err := toml.Decode(text, new(map[string]any)); err != nil {
		return fmt.Errorf("config: %s in %s would break the file (%w); not changed", what, file, err)
	}
	perm := fs.FileMode(0o600)
	if fi, err := os.Stat(file); err == nil {
		perm = fi.Mode().Perm()
	}
	return writeFileAtomic(file, []byte(text), perm)
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

// Masked returns s with its secrets masked, as `otter config show` prints
// them.
func (s Server) Masked() Server {
	c := &Config{MCP: MCP{Servers: []Server{s}}}
	return c.masked().MCP.Servers[0]
}
