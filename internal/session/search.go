package session

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/otter-sh/otter/internal/llm"
)

// Hit is a message that matched a search.
type Hit struct {
	Session Info
	Seq     int64
	Role    llm.Role
	Time    time.Time
	// Snippet is the matching part of the text, the matched words between
	// « and ».
	Snippet string
}

// SearchOptions narrow a search.
type SearchOptions struct {
	Cwd   string // only sessions of this directory; "" = all
	Limit int    // 0 = 50
}

// ftsQuery turns what a person typed into an FTS5 query: every word must
// occur, as a word or a word's beginning; quotes and operators are taken
// literally.
func ftsQuery(q string) string {
	var terms []string
	for _, w := range strings.Fields(q) {
		terms = append(terms, `"`+strings.ReplaceAll(w, `"`, `""`)+`"*`)
	}
	return strings.Join(terms, " ")
}

// Search finds the messages whose text holds every word of query (word
// beginnings match too: "deploy" finds "deployment"), best matches first.
func (s *Store) Search(ctx context.Context, query string, opts SearchOptions) ([]Hit, error) {
	fq := ftsQuery(query)
	if fq == "" {
		return nil, nil
	}
	if opts.Limit <= 0 {
		opts.Limit = 50
	}
	q := `SELECT m.seq, m.role, m.created, snippet(messages_fts, 0, '«', '»', '…', 12), ` + infoColumns + `
		FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid JOIN sessions s ON s.id = m.session_id
		WHERE messages_fts MATCH ?`
	args := []any{fq}
	if opts.Cwd != "" {
		q += " AND s.cwd = ?"
		args = append(args, opts.Cwd)
	}
	q += fmt.Sprintf(" ORDER BY rank LIMIT %d", opts.Limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.fail("search sessions", err)
	}
	defer rows.Close()
	var out []Hit
	for rows.Next() {
		var h Hit
		var role string
		var created int64
		i, err := scanInfo(rows, &h.Seq, &role, &created, &h.Snippet)
		if err != nil {
			return nil, s.fail("search sessions", err)
		}
		h.Session, h.Role, h.Time = i, llm.Role(role), fromMillis(created)
		out = append(out, h)
	}
	return out, s.fail("search sessions", rows.Err())
}
