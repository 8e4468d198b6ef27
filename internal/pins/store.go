package pins

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/filelock"
)

// fileVersion is the version of the pins files this otter writes.
const fileVersion = 1

// Store is the pins directory, pins/ in otter's state directory. Its
// methods are safe for several otter processes at once: each change reads,
// changes and writes a file under the directory's lock, and writes a
// temporary file that is renamed into place.
type Store struct {
	dir     string
	project string
}

// NewStore returns the store under stateDir (config.Paths.StateDir) for
// a run in project (config.Config.Project; "" when there is none).
func NewStore(stateDir, project string) *Store {
	return &Store{dir: filepath.Join(stateDir, "pins"), project: project}
}

// Dir is the directory the pins files are in.
func (s *Store) Dir() string { return s.dir }

// Key names one server's pins: its name and where it is defined, so that
// two servers of one name in different places keep apart.
type Key struct {
	Server string
	// Where is the place, for a person: "user config FILE" for the user's
	// config file, "project DIR" for a project's servers (.otter/config.toml,
	// .mcp.json, .otter/config.local.toml, and a server of the user's that a
	// project's file overrides), "config file FILE" for a file given on
	// the command line.
	Where string
}

// Key returns the key of srv's pins; ok is false for a server that is not
// pinned: one given on the command line without a config file (an ad
// hoc server), or one with pin_tools = false.
func (s *Store) Key(srv config.Server) (k Key, ok bool) {
	if s == nil || (srv.PinTools != nil && !*srv.PinTools) || srv.File == "" {
		return Key{}, false
	}
	switch srv.Scope {
	case config.ScopeUser:
		return Key{Server: srv.Name, Where: "user config " + srv.File}, true
	case config.ScopeProject, config.ScopeLocal:
		dir := s.project
		if dir == "" {
			dir = filepath.Dir(srv.File)
		}
		return Key{Server: srv.Name, Where: "project " + dir}, true
	case config.ScopeFlag:
		return Key{Server: srv.Name, Where: "config file " + srv.File}, true
	}
	return Key{}, false
}

// File is the file that holds k's pins: the server's name (characters
// other than letters, digits, '.', '_' and '-' made '_') and a hash of
// the key.
func (s *Store) File(k Key) string {
	sum := sha256.Sum256([]byte(k.Where + "\x00" + k.Server))
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, k.Server)
	if len(name) > 40 {
		name = name[:40]
	}
	return filepath.Join(s.dir, strings.TrimLeft(name, ".")+"-"+hex.EncodeToString(sum[:6])+".json")
}

// Load returns k's pins, or nil when the server has none yet.
func (s *Store) Load(k Key) (*Pins, error) {
	p, err := s.read(k)
	if p != nil {
		for n, t := range p.Tools {
			p.Tools[n] = t.canonical() // the file holds them indented
		}
	}
	return p, err
}

// Known returns k's pins as Load does, for listing the known tools rather
// than comparing them: each definition's JSON as the file holds it, made
// compact but not parsed again (otter writes it in canonical form; a file
// edited by hand may differ in key order, which Load's comparison sees
// through). It is several times faster than Load, for the servers listed
// at every start.
func (s *Store) Known(k Key) (*Pins, error) {
	p, err := s.read(k)
	if p != nil {
		for n, t := range p.Tools {
			t.InputSchema, t.OutputSchema, t.Annotations = compactJSON(t.InputSchema), compactJSON(t.OutputSchema), compactJSON(t.Annotations)
			p.Tools[n] = t
		}
	}
	return p, err
}

// compactJSON is raw without insignificant space; raw as it is when it
// is not valid JSON.
func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// read reads k's file, or returns nil when there is none.
func (s *Store) read(k Key) (*Pins, error) {
	data, err := os.ReadFile(s.File(k))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var p Pins
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", s.File(k), err)
	}
	if p.Version != fileVersion {
		return nil, fmt.Errorf("%s: version %d, this otter reads version %d", s.File(k), p.Version, fileVersion)
	}
	if p.Tools == nil {
		p.Tools = map[string]Tool{}
	}
	return &p, nil
}

// PinFirst returns the pins in force for k: those of the file, or, when
// it has none yet, tools and instructions, which it pins (first reports
// that). Another otter process that pinned the server first wins: its pins
// are returned.
func (s *Store) PinFirst(k Key, tools []Tool, instructions string) (p *Pins, first bool, err error) {
	err = s.locked(func() error {
		p, err = s.Load(k)
		if err != nil || p != nil {
			return err
		}
		p, first = newPins(k, tools, instructions), true
		return s.write(k, p)
	})
	return p, first, err
}

// Approve takes the server's current tools and instructions as k's pins:
// the named tools, or every change when none is named (see Compare). It
// returns the changes it took.
func (s *Store) Approve(k Key, tools []Tool, instructions string, names []string) ([]Change, error) {
	var taken []Change
	err := s.locked(func() error {
		p, err := s.Load(k)
		if err != nil {
			return err
		}
		if p == nil {
			p = newPins(k, nil, instructions)
		}
		taken, err = p.approve(tools, instructions, names)
		if err != nil || len(taken) == 0 {
			return err
		}
		return s.write(k, p)
	})
	return taken, err
}

// locked runs fn holding the pins directory's lock.
func (s *Store) locked(fn func() error) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	unlock, err := filelock.LockDir(s.dir)
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}

// write writes p as k's file: a temporary file beside it, renamed into
// place, so that a reader never sees half a file.
func (s *Store) write(k Key, p *Pins) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, ".pins-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.File(k))
}
