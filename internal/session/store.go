// Package session is otter's conversation store: every conversation is saved
// as it happens (user messages, answers, each tool result, the tools allowed
// for the session, compactions and small per-session state) in one embedded
// SQLite database, $XDG_DATA_HOME/otter/otter.db, so that it can be resumed,
// searched, forked, shown and exported later.
//
// The database is opened through modernc.org/sqlite, a pure-Go driver (no
// cgo), in WAL mode with a busy timeout, so that several otter processes
// write to it at once. Its schema is versioned (PRAGMA user_version) and
// migrated by Open; a database that otter cannot read, or one written by a
// newer otter, is never changed.
//
// The package is part of otter's core: it may import internal/llm (the
// message model it stores), internal/compact (the form of a compaction's
// summary) and the standard library, never a front end
// (internal/tui, internal/cli) nor the agent, which it serves through the
// Recorder's methods.
package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/otter-sh/otter/internal/record"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// BusyTimeout is how long a write waits for another otter process that
// holds the database's write lock.
const busyTimeoutMS = 10000

// walSizeLimit is the size, in bytes, the -wal file is cut back to when
// it starts over (see Open).
const walSizeLimit = 8 << 20

// Store is an open session database. Its methods are safe for concurrent
// use.
type Store struct {
	db   *sql.DB
	path string

	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt
}

// Open opens the database at path, creating it (file 0600, directory 0700)
// and migrating its schema as needed. A file that is not a readable
// database, or one from a newer otter, is left as it is and reported with
// ErrCorrupt or ErrNewer.
func Open(ctx context.Context, path string) (*Store, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, &record.Error{Path: path, Op: "open", Err: err}
	}
	if err := prepareFile(path); err != nil {
		return nil, err
	}
	// journal_size_limit: when the write-ahead log starts over after a
	// checkpoint, a file larger than twice a checkpoint's worth (1000
	// pages, 4 MB) is cut back, so the 500 MB logs otter left before its
	// saves ran SQLite's automatic checkpoint give their space back.
	q := "?_pragma=busy_timeout(" + fmt.Sprint(busyTimeoutMS) + ")&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)" +
		"&_pragma=journal_size_limit(" + fmt.Sprint(walSizeLimit) + ")&_txlock=immediate"
	db, err := sql.Open("sqlite", path+q)
	if err != nil {
		return nil, &record.Error{Path: path, Op: "open", Err: err}
	}
	// One connection: otter's writes are small and serialized anyway, and
	// a single connection keeps every statement of a process in order.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path, stmts: map[string]*sql.Stmt{}}
	if err := s.init(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// OpenReadOnly opens the existing database at path for reading only: for
// listing, showing and exporting sessions from a data directory otter may
// not write to, or from a damaged file (it is not checked, so that what
// still reads can be read). It creates, migrates and writes nothing.
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, &record.Error{Path: path, Op: "open", Err: err}
	}
	if _, err := os.Stat(path); err != nil {
		return nil, &record.Error{Path: path, Op: "open", Err: err}
	}
	s, v, err := openReadOnly(ctx, path, "")
	if err != nil {
		// In WAL mode even a reader needs the -shm file beside the
		// database: in a directory otter may not write, where it is gone
		// (a clean close removes it), SQLite refuses with "attempt to write
		// a readonly database". Opened immutable, it reads the file as it
		// is, without that file or locks — nothing can write there either;
		// what a crash left in a -wal file is not seen.
		var immErr error
		if s, v, immErr = openReadOnly(ctx, path, "&immutable=1"); immErr != nil {
			return nil, err
		}
	}
	if v != schemaVersion {
		s.db.Close()
		if v > schemaVersion {
			return nil, s.newer(v)
		}
		return nil, &record.Error{Path: path, Op: "open", Kind: record.ErrReadOnly,
			Err: fmt.Errorf("its schema is version %d, which otter upgrades to %d only where it may write", v, schemaVersion)}
	}
	return s, nil
}

// openReadOnly opens path with query_only and the URI parameters extra,
// and reads its schema version.
func openReadOnly(ctx context.Context, path, extra string) (*Store, int, error) {
	dsn := (&url.URL{Scheme: "file", Path: path}).String() + "?mode=ro" + extra + "&_pragma=busy_timeout(" + fmt.Sprint(busyTimeoutMS) + ")&_pragma=query_only(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, 0, &record.Error{Path: path, Op: "open", Err: err}
	}
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path, stmts: map[string]*sql.Stmt{}}
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		db.Close()
		return nil, 0, s.fail("open", err)
	}
	return s, v, nil
}

// prepareFile creates the directory (0700) and an empty file (0600) when
// they do not exist, and checks that an existing path is a regular file.
func prepareFile(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return &record.Error{Path: path, Op: "create its directory", Kind: record.ErrReadOnly, Err: err,
			Hint: "make " + dir + " writable, point XDG_DATA_HOME to a writable directory, or set [sessions] enabled = false"}
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return nil // another otter created it just now
		}
		if err != nil {
			return &record.Error{Path: path, Op: "create", Kind: record.ErrReadOnly, Err: err,
				Hint: "make " + dir + " writable, point XDG_DATA_HOME to a writable directory, or set [sessions] enabled = false"}
		}
		return f.Close()
	case err != nil:
		return &record.Error{Path: path, Op: "open", Err: err}
	case !fi.Mode().IsRegular():
		return &record.Error{Path: path, Op: "open", Kind: record.ErrCorrupt, Err: fmt.Errorf("it is not a regular file (%s)", fi.Mode().Type()),
			Hint: "move it out of the way; otter creates a new database there"}
	}
	return nil
}

// init checks the schema version and migrates.
func (s *Store) init(ctx context.Context) error {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return s.fail("open", err)
	}
	if v > schemaVersion {
		return s.newer(v)
	}
	// A damaged file fails here, before anything is written to it: a
	// look at the schema, then SQLite's quick_check of every page.
	if v > 0 {
		var n int
		if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
			return s.fail("open", err)
		}
		if err := s.quickCheck(ctx); err != nil {
			return err
		}
	}
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		return s.fail("open", err)
	}
	if v < schemaVersion {
		if err := s.migrate(ctx); err != nil {
			return err
		}
	}
	return nil
}

// QuickCheckTimeout bounds the check of an existing database on Open: a
// file of ordinary size (tens of MB) is checked in well under it, and a
// larger one is opened unchecked rather than keep the user waiting.
const QuickCheckTimeout = 2 * time.Second

// quickCheck runs SQLite's quick_check, which reads every page of the
// file, within QuickCheckTimeout. A damaged page reported there is an
// ErrCorrupt *record.Error: a file whose schema still reads but whose pages do
// not must not be written to (new rows went into such files, making them
// worse). A check cut short by the time bound lets the file be used.
func (s *Store) quickCheck(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, QuickCheckTimeout)
	defer cancel()
	var res string
	err := s.db.QueryRowContext(cctx, "PRAGMA quick_check(1)").Scan(&res)
	switch {
	case err != nil && cctx.Err() != nil && ctx.Err() == nil:
		return nil // too large to check in time
	case err != nil:
		return s.fail("check", err)
	case res != "ok":
		return s.corrupt("check", fmt.Errorf("SQLite's quick_check found: %s", res))
	}
	return nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error {
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = map[string]*sql.Stmt{}
	s.stmtMu.Unlock()
	return s.db.Close()
}

// stmt returns the prepared statement for query, preparing it once.
func (s *Store) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if st, ok := s.stmts[query]; ok {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s.stmts[query] = st
	return st, nil
}

// corrupt is the ErrCorrupt *record.Error of op. The front ends add how to read
// what still reads (OpenReadOnly does not check the file).
func (s *Store) corrupt(op string, err error) error {
	return &record.Error{Path: s.path, Op: op, Kind: record.ErrCorrupt, Err: err,
		Hint: "otter leaves it unchanged and saves nothing to it; move it aside (mv " + s.path + " " + s.path + ".broken) and otter starts a new one, or try sqlite3's .recover on it"}
}

// fail wraps err, classifying SQLite's result codes.
func (s *Store) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *record.Error
	if errors.As(err, &e) || errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrAmbiguous) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	out := &record.Error{Path: s.path, Op: op, Err: err}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return s.corrupt(op, err)
		case sqlite3.SQLITE_FULL:
			out.Kind = record.ErrFull
			out.Hint = "free some disk space; otter goes on without saving this conversation"
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_IOERR:
			out.Kind = record.ErrReadOnly
			out.Hint = "make " + filepath.Dir(s.path) + " and the file writable, point XDG_DATA_HOME elsewhere, or set [sessions] enabled = false"
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			out.Hint = "another program holds the database locked for too long; try again"
		}
	}
	return out
}
