package session

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/otter-sh/otter/internal/record"
)

// What undo and rewind need of a session: the files a turn changed, kept
// as they were before it (see record.Checkpoint), and a conversation taken
// back to before one of its messages.

// SaveCheckpoint keeps a file as it was before the turn of c.Seq changed
// it. The first version of a path in a turn is the one kept: a later call
// for the same path and turn only records what the turn wrote last.
func (s *Store) SaveCheckpoint(ctx context.Context, id string, c record.Checkpoint) error {
	if c.Seq < 1 {
		return fmt.Errorf("keeping %s for undo: the turn's message is not saved", c.Path)
	}
	if c.Time.IsZero() {
		c.Time = time.Now()
	}
	var before any
	if c.Existed {
		before = c.Before
		if c.Before == nil {
			before = []byte{} // an empty file, not one that did not exist
		}
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO file_checkpoints (session_id, seq, path, existed, before, after_hash, created)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id, seq, path) DO UPDATE SET after_hash = excluded.after_hash`,
		id, c.Seq, c.Path, c.Existed, before, c.After, millis(c.Time))
	return s.fail("keep a file for undo", err)
}

// Checkpoints returns a session's checkpoints of the turns from the
// message at Seq from on, by Seq then Path. Without content, Before is
// nil: listing what turns changed reads no file's content.
func (s *Store) Checkpoints(ctx context.Context, id string, from int64, content bool) ([]record.Checkpoint, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, path, existed, CASE WHEN ? THEN before END, after_hash, created
		FROM file_checkpoints WHERE session_id = ? AND seq >= ? ORDER BY seq, path`, content, id, from)
	if err != nil {
		return nil, s.fail("read the files kept for undo", err)
	}
	defer rows.Close()
	var out []record.Checkpoint
	for rows.Next() {
		var c record.Checkpoint
		var created int64
		if err := rows.Scan(&c.Seq, &c.Path, &c.Existed, &c.Before, &c.After, &created); err != nil {
			return nil, s.fail("read the files kept for undo", err)
		}
		if content && c.Existed && c.Before == nil {
			c.Before = []byte{}
		}
		c.Time = fromMillis(created)
		out = append(out, c)
	}
	return out, s.fail("read the files kept for undo", rows.Err())
}

// Truncate takes a session back to before its message at Seq from: that
// message and every row after it go (the search index with them), with
// the compactions that summarised any of them and the checkpoints of
// their turns; the session's counts and first prompt follow, and the next
// message saved takes Seq from.
func (s *Store) Truncate(ctx context.Context, id string, from int64) error {
	if from < 1 {
		return fmt.Errorf("taking the conversation back: there is no message %d", from)
	}
	return s.tx(ctx, "take the conversation back", func(tx *sql.Tx) error {
		var n, in, out int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*), COALESCE(sum(input_tokens), 0), COALESCE(sum(output_tokens), 0)
			FROM messages WHERE session_id = ? AND seq >= ?`, id, from).Scan(&n, &in, &out); err != nil {
			return err
		}
		for _, q := range []string{
			"DELETE FROM messages WHERE session_id = ? AND seq >= ?",
			"DELETE FROM compactions WHERE session_id = ? AND upto_seq >= ?",
			"DELETE FROM file_checkpoints WHERE session_id = ? AND seq >= ?",
		} {
			if _, err := tx.ExecContext(ctx, q, id, from); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET messages = messages - ?, input_tokens = input_tokens - ?, output_tokens = output_tokens - ?,
			updated = max(updated, ?),
			first_prompt = COALESCE((SELECT text FROM messages WHERE session_id = sessions.id AND role = 'user' ORDER BY seq LIMIT 1), '')
			WHERE id = ?`, n, in, out, millis(time.Now()), id)
		if err != nil {
			return err
		}
		if k, _ := res.RowsAffected(); k == 0 {
			return fmt.Errorf("%w %q", record.ErrNotFound, id)
		}
		return nil
	})
}

// DropCheckpoints deletes the checkpoints of the turns from the message at
// Seq from on: their files were put back, so there is nothing of them
// left to undo.
func (s *Store) DropCheckpoints(ctx context.Context, id string, from int64) error {
	_, err := s.db.ExecContext(ctx, "DELETE FROM file_checkpoints WHERE session_id = ? AND seq >= ?", id, from)
	return s.fail("forget the files kept for undo", err)
}
