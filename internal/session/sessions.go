package session

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/otter-sh/otter/internal/record"
)

// newID returns a random session ID (a UUID, version 4).
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func millis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms) }

// Create adds a session described by info (ID, Created and Updated are
// set when empty) and returns it.
func (s *Store) Create(ctx context.Context, info record.Info) (record.Info, error) {
	if info.ID == "" {
		info.ID = newID()
	}
	now := time.Now()
	if info.Created.IsZero() {
		info.Created = now
	}
	if info.Updated.IsZero() {
		info.Updated = info.Created
	}
	var parent any
	if info.ParentID != "" {
		parent = info.ParentID
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO sessions (id, cwd, title, first_prompt, created, updated, provider, model, parent_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		info.ID, info.Cwd, info.Title, info.FirstPrompt, millis(info.Created), millis(info.Updated), info.Provider, info.Model, parent)
	if err != nil {
		return record.Info{}, s.fail("create a session", err)
	}
	return info, nil
}

// infoColumns are the columns scanInfo reads, of sessions s.
const infoColumns = `s.id, s.cwd, s.title, s.first_prompt, s.created, s.updated, s.provider, s.model, COALESCE(s.parent_id, ''), s.input_tokens, s.output_tokens, s.messages`

// scanInfo scans a row of infoColumns, after the columns scanned into
// first.
func scanInfo(sc interface{ Scan(...any) error }, first ...any) (record.Info, error) {
	var i record.Info
	var created, updated int64
	err := sc.Scan(append(first, &i.ID, &i.Cwd, &i.Title, &i.FirstPrompt, &created, &updated, &i.Provider, &i.Model, &i.ParentID,
		&i.Usage.InputTokens, &i.Usage.OutputTokens, &i.Messages)...)
	i.Created, i.Updated = fromMillis(created), fromMillis(updated)
	if i.Title == "" {
		i.Title = titleFrom(i.FirstPrompt)
	}
	return i, err
}

// Get returns the session with the given ID or unique ID prefix.
func (s *Store) Get(ctx context.Context, idOrPrefix string) (record.Info, error) {
	id, err := s.Resolve(ctx, idOrPrefix)
	if err != nil {
		return record.Info{}, err
	}
	i, err := scanInfo(s.db.QueryRowContext(ctx, "SELECT "+infoColumns+" FROM sessions s WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return record.Info{}, fmt.Errorf("%w %q (it was just deleted)", record.ErrNotFound, id)
	}
	return i, s.fail("read a session", err)
}

// Resolve returns the full ID of the session whose ID is idOrPrefix or
// starts with it; ErrNotFound or ErrAmbiguous otherwise.
func (s *Store) Resolve(ctx context.Context, idOrPrefix string) (string, error) {
	p := strings.ToLower(strings.TrimSpace(idOrPrefix))
	if p == "" {
		return "", fmt.Errorf("%w: the session ID is empty", record.ErrNotFound)
	}
	rows, err := s.db.QueryContext(ctx, "SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 6", p, p+"\U0010FFFF")
	if err != nil {
		return "", s.fail("find a session", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return "", s.fail("find a session", err)
		}
		if id == p {
			return id, nil
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return "", s.fail("find a session", err)
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("%w %q", record.ErrNotFound, idOrPrefix)
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%w: %q matches %s…; give more of the ID", record.ErrAmbiguous, idOrPrefix, strings.Join(ids[:min(len(ids), 5)], ", "))
}

// List returns sessions, the most recently updated first. Sessions without
// a message are left out.
func (s *Store) List(ctx context.Context, opts record.ListOptions) ([]record.Info, error) {
	q := "SELECT " + infoColumns + " FROM sessions s WHERE messages > 0"
	var args []any
	if opts.Cwd != "" {
		q += " AND cwd = ?"
		args = append(args, opts.Cwd)
	}
	q += " ORDER BY updated DESC, id"
	if opts.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", opts.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.fail("list sessions", err)
	}
	defer rows.Close()
	var out []record.Info
	for rows.Next() {
		i, err := scanInfo(rows)
		if err != nil {
			return nil, s.fail("list sessions", err)
		}
		out = append(out, i)
	}
	return out, s.fail("list sessions", rows.Err())
}

// Latest returns the most recently updated session of cwd that has a
// message; ErrNotFound when there is none.
func (s *Store) Latest(ctx context.Context, cwd string) (record.Info, error) {
	l, err := s.List(ctx, record.ListOptions{Cwd: cwd, Limit: 1})
	if err != nil {
		return record.Info{}, err
	}
	if len(l) == 0 {
		return record.Info{}, fmt.Errorf("%w: there is no saved conversation in %s yet", record.ErrNotFound, cwd)
	}
	return l[0], nil
}

// Rename sets a session's title.
func (s *Store) Rename(ctx context.Context, id, title string) error {
	return s.update(ctx, "rename a session", id, "UPDATE sessions SET title = ? WHERE id = ?", strings.TrimSpace(title), id)
}

// SetModel records the provider and model the session now uses.
func (s *Store) SetModel(ctx context.Context, id, provider, model string) error {
	return s.update(ctx, "save the session's model", id, "UPDATE sessions SET provider = ?, model = ? WHERE id = ?", provider, model, id)
}

// update runs an UPDATE of one session row; ErrNotFound when it is gone.
func (s *Store) update(ctx context.Context, op, id, query string, args ...any) error {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return s.fail(op, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w %q", record.ErrNotFound, id)
	}
	return nil
}

// Delete removes a session and everything stored with it. Sessions forked
// from it stay.
func (s *Store) Delete(ctx context.Context, id string) error {
	return s.tx(ctx, "delete a session", func(tx *sql.Tx) error {
		return deleteSessions(ctx, tx, "id = ?", id)
	})
}

// deleteSessions deletes the sessions matching where, with their rows.
func deleteSessions(ctx context.Context, tx *sql.Tx, where string, args ...any) error {
	sel := "SELECT id FROM sessions WHERE " + where
	for _, t := range []string{"messages", "session_permissions", "compactions", "session_state", "file_checkpoints"} {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+t+" WHERE session_id IN ("+sel+")", args...); err != nil {
			return err
		}
	}
	res, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE "+where, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 && where == "id = ?" {
		return fmt.Errorf("%w %q", record.ErrNotFound, args[0])
	}
	return nil
}

// Prune deletes the sessions last updated more than keepDays days ago and
// returns how many; keepDays <= 0 keeps everything.
func (s *Store) Prune(ctx context.Context, keepDays int) (int, error) {
	if keepDays <= 0 {
		return 0, nil
	}
	cutoff := millis(time.Now().AddDate(0, 0, -keepDays))
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sessions WHERE updated < ?", cutoff).Scan(&n); err != nil {
		return 0, s.fail("prune old sessions", err)
	}
	if n == 0 {
		return 0, nil
	}
	err := s.tx(ctx, "prune old sessions", func(tx *sql.Tx) error {
		return deleteSessions(ctx, tx, "updated < ?", cutoff)
	})
	return n, err
}

// Fork copies a session (messages, permissions, state, compactions, the
// files kept for undo) into a new one whose ParentID is the original, and
// returns the copy.
func (s *Store) Fork(ctx context.Context, id string) (record.Info, error) {
	src, err := s.Get(ctx, id)
	if err != nil {
		return record.Info{}, err
	}
	dst := src
	dst.ID = newID()
	dst.ParentID = src.ID
	dst.Created = time.Now()
	dst.Updated = dst.Created
	dst.Title = src.Title + " (fork)"
	err = s.tx(ctx, "fork a session", func(tx *sql.Tx) error {
		// The counters start at zero: the messages_count trigger counts
		// the copied messages.
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, cwd, title, created, updated, provider, model, parent_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			dst.ID, dst.Cwd, dst.Title, millis(dst.Created), millis(dst.Updated), dst.Provider, dst.Model, dst.ParentID); err != nil {
			return err
		}
		for _, q := range []string{
			`INSERT INTO messages (session_id, seq, role, text, parts, interrupted, input_tokens, output_tokens, created)
				SELECT ?1, seq, role, text, parts, interrupted, input_tokens, output_tokens, created FROM messages WHERE session_id = ?2 ORDER BY seq`,
			`INSERT INTO session_permissions (session_id, tool, created) SELECT ?1, tool, created FROM session_permissions WHERE session_id = ?2`,
			`INSERT INTO compactions (session_id, upto_seq, summary, tokens_before, tokens_after, created)
				SELECT ?1, upto_seq, summary, tokens_before, tokens_after, created FROM compactions WHERE session_id = ?2 ORDER BY id`,
			`INSERT INTO session_state (session_id, key, value, updated) SELECT ?1, key, value, updated FROM session_state WHERE session_id = ?2`,
			`INSERT INTO file_checkpoints (session_id, seq, path, existed, before, after_hash, created)
				SELECT ?1, seq, path, existed, before, after_hash, created FROM file_checkpoints WHERE session_id = ?2`,
		} {
			if _, err := tx.ExecContext(ctx, q, dst.ID, src.ID); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, "UPDATE sessions SET updated = ? WHERE id = ?", millis(dst.Updated), dst.ID)
		return err
	})
	if err != nil {
		return record.Info{}, err
	}
	return dst, nil
}

// tx runs fn in a write transaction.
func (s *Store) tx(ctx context.Context, op string, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(op, err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return s.fail(op, err)
	}
	return s.fail(op, tx.Commit())
}

// AllowTool records that a tool was allowed for the rest of the session.
func (s *Store) AllowTool(ctx context.Context, id, tool string) error {
	_, err := s.db.ExecContext(ctx, "INSERT OR IGNORE INTO session_permissions (session_id, tool, created) VALUES (?, ?, ?)", id, tool, millis(time.Now()))
	return s.fail("save a permission", err)
}

// AllowedTools returns the tools allowed for the session, in the order
// they were allowed.
func (s *Store) AllowedTools(ctx context.Context, id string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT tool FROM session_permissions WHERE session_id = ? ORDER BY created, tool", id)
	if err != nil {
		return nil, s.fail("read permissions", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, s.fail("read permissions", err)
		}
		out = append(out, t)
	}
	return out, s.fail("read permissions", rows.Err())
}

// titleFrom is a title made of a prompt: its first line, at most 80
// characters.
func titleFrom(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	line = strings.TrimSpace(line)
	if utf8.RuneCountInString(line) > 80 {
		r := []rune(line)
		line = strings.TrimSpace(string(r[:79])) + "…"
	}
	return line
}
