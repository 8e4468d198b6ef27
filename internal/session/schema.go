package session

import (
	"context"
	"fmt"

	"github.com/otter-sh/otter/internal/record"
)

// migrations[i] takes the schema from version i to version i+1. A
// migration is never edited once released: a change of the schema is a new
// migration at the end.
var migrations = []string{
	// Version 1: sessions, their messages, and the full-text index.
	`
CREATE TABLE sessions (
	id            TEXT PRIMARY KEY,
	cwd           TEXT NOT NULL,
	title         TEXT NOT NULL DEFAULT '',
	first_prompt  TEXT NOT NULL DEFAULT '',
	created       INTEGER NOT NULL,          -- Unix milliseconds
	updated       INTEGER NOT NULL,
	provider      TEXT NOT NULL DEFAULT '',
	model         TEXT NOT NULL DEFAULT '',
	parent_id     TEXT,                      -- the session this one was forked from
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0,
	messages      INTEGER NOT NULL DEFAULT 0 -- rows in messages
);
CREATE INDEX sessions_updated ON sessions(updated);
CREATE INDEX sessions_cwd ON sessions(cwd, updated);

CREATE TABLE messages (
	id            INTEGER PRIMARY KEY,
	session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	seq           INTEGER NOT NULL,          -- 1, 2, ... within the session
	role          TEXT NOT NULL,             -- user | assistant | tool | notice
	text          TEXT NOT NULL DEFAULT '',  -- the message's text (a tool row: its result)
	parts         TEXT,                      -- JSON: tool calls, one tool result's call, image files
	interrupted   INTEGER NOT NULL DEFAULT 0,
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0,
	created       INTEGER NOT NULL,
	UNIQUE (session_id, seq)
);

CREATE VIRTUAL TABLE messages_fts USING fts5(text, content='messages', content_rowid='id');
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
	INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
	INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
`,
	// Version 2: what the agent carries besides the messages — tools allowed
	// for the session, compactions of the history, and small key/value state
	// (e.g. the deferred tools a session loaded).
	`
CREATE TABLE session_permissions (
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	tool       TEXT NOT NULL,
	created    INTEGER NOT NULL,
	PRIMARY KEY (session_id, tool)
);

CREATE TABLE compactions (
	id            INTEGER PRIMARY KEY,
	session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	upto_seq      INTEGER NOT NULL,          -- messages with seq <= upto_seq are replaced by summary
	summary       TEXT NOT NULL,
	tokens_before INTEGER NOT NULL DEFAULT 0,
	tokens_after  INTEGER NOT NULL DEFAULT 0,
	created       INTEGER NOT NULL
);
CREATE INDEX compactions_session ON compactions(session_id, id);

CREATE TABLE session_state (
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	key        TEXT NOT NULL,
	value      TEXT NOT NULL,                -- JSON
	updated    INTEGER NOT NULL,
	PRIMARY KEY (session_id, key)
);
`,
	// Version 3: the session's counters follow its messages in the same
	// statement, so that saving a message is one INSERT. The title shown
	// while a session has none is made from its first prompt when read.
	`
CREATE TRIGGER messages_count AFTER INSERT ON messages BEGIN
	UPDATE sessions SET
		messages = messages + 1,
		updated = max(updated, new.created),
		input_tokens = input_tokens + new.input_tokens,
		output_tokens = output_tokens + new.output_tokens,
		first_prompt = CASE WHEN first_prompt = '' AND new.role = 'user' THEN new.text ELSE first_prompt END
	WHERE id = new.session_id;
END;
`,
	// Version 4: files as they were before a turn changed them (edit_file,
	// write_file), so that undo and rewind can put them back. One row per
	// file and turn: the first version, and a hash of what the turn last
	// wrote, to tell whether the file changed on disk since.
	`
CREATE TABLE file_checkpoints (
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,             -- the person's message that began the turn
	path       TEXT NOT NULL,                -- absolute, links resolved
	existed    INTEGER NOT NULL,             -- 0: the turn created the file
	before     BLOB,                         -- the content before the turn (NULL: it did not exist)
	after_hash TEXT NOT NULL,                -- SHA-256 (hex) of what the turn last wrote
	created    INTEGER NOT NULL,
	PRIMARY KEY (session_id, seq, path)
);
`,
}

// schemaVersion is the version this otter writes.
var schemaVersion = len(migrations)

// migrate brings the schema to schemaVersion in one transaction. Another
// otter may migrate at the same moment: the version is read again inside
// the write transaction.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("migrate the schema", err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return s.fail("migrate the schema", err)
	}
	if v > schemaVersion {
		return s.newer(v)
	}
	for ; v < schemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return s.fail(fmt.Sprintf("migrate the schema to version %d", v+1), err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return s.fail("migrate the schema", err)
	}
	return s.fail("migrate the schema", tx.Commit())
}

// newer is the error for a database of schema version v > schemaVersion.
func (s *Store) newer(v int) error {
	return &record.Error{Path: s.path, Op: "open", Kind: record.ErrNewer,
		Err:  fmt.Errorf("its schema is version %d, this otter knows up to version %d", v, schemaVersion),
		Hint: "update otter to use it (otter leaves it unchanged), or set [sessions] enabled = false"}
}
