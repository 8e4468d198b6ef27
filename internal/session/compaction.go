package session

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/otter-sh/otter/internal/record"
)

// AddCompaction records a compaction of a session.
func (s *Store) AddCompaction(ctx context.Context, id string, c record.Compaction) error {
	if c.Time.IsZero() {
		c.Time = time.Now()
	}
	return s.tx(ctx, "save a compaction", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO compactions (session_id, upto_seq, summary, tokens_before, tokens_after, created)
			VALUES (?, ?, ?, ?, ?, ?)`, id, c.UpTo, c.Summary, c.TokensBefore, c.TokensAfter, millis(c.Time)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "UPDATE sessions SET updated = ? WHERE id = ?", millis(time.Now()), id)
		return err
	})
}

// Compactions returns a session's compactions, oldest first.
func (s *Store) Compactions(ctx context.Context, id string) ([]record.Compaction, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT upto_seq, summary, tokens_before, tokens_after, created
		FROM compactions WHERE session_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, s.fail("read compactions", err)
	}
	defer rows.Close()
	var out []record.Compaction
	for rows.Next() {
		var c record.Compaction
		var created int64
		if err := rows.Scan(&c.UpTo, &c.Summary, &c.TokensBefore, &c.TokensAfter, &created); err != nil {
			return nil, s.fail("read compactions", err)
		}
		c.Time = fromMillis(created)
		out = append(out, c)
	}
	return out, s.fail("read compactions", rows.Err())
}

// Compacted returns the view of a session a model is sent: the latest
// compaction (nil when there is none) and the stored rows after its
// boundary. Use History on the rows, after the summary.
func (s *Store) Compacted(ctx context.Context, id string) (*record.Compaction, []record.Entry, error) {
	cs, err := s.Compactions(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	var last *record.Compaction
	after := int64(0)
	if len(cs) > 0 {
		last = &cs[len(cs)-1]
		after = last.UpTo
	}
	e, err := s.Entries(ctx, id, after)
	if err != nil {
		return nil, nil, err
	}
	return last, e, nil
}

// SetState stores value (marshalled as JSON) under key for a session,
// replacing what was there: small state the agent keeps across a resume,
// such as the deferred tools it loaded.
func (s *Store) SetState(ctx context.Context, id, key string, value any) error {
	b, err := json.Marshal(value)
	if err != nil {
		return s.fail("save session state "+key, err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO session_state (session_id, key, value, updated) VALUES (?, ?, ?, ?)
		ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value, updated = excluded.updated`,
		id, key, string(b), millis(time.Now()))
	return s.fail("save session state "+key, err)
}

// State reads the value stored under key for a session into value; found
// is false when there is none.
func (s *Store) State(ctx context.Context, id, key string, value any) (found bool, err error) {
	var raw string
	err = s.db.QueryRowContext(ctx, "SELECT value FROM session_state WHERE session_id = ? AND key = ?", id, key).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, s.fail("read session state "+key, err)
	}
	if err := json.Unmarshal([]byte(raw), value); err != nil {
		return false, s.fail("read session state "+key, err)
	}
	return true, nil
}
