package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/record"
)

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
func (s *Store) Search(ctx context.Context, query string, opts record.SearchOptions) ([]record.Hit, error) {
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
	var out []record.Hit
	for rows.Next() {
		var h record.Hit
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

// Find finds the sessions a person means by words, as a picker lists
// them: those whose title holds every word (renamed sessions are found by
// their new name), then those with a message that does (Search), each
// session once, best matches first, up to limit (0: 200 messages searched).
func (s *Store) Find(ctx context.Context, words string, limit int) ([]record.Found, error) {
	ws := strings.Fields(strings.ToLower(words))
	if len(ws) == 0 {
		return nil, nil
	}
	if limit <= 0 {
		limit = 200
	}
	q := "SELECT " + infoColumns + " FROM sessions s WHERE messages > 0"
	var args []any
	for _, w := range ws {
		// Titles are short: a substring match in any case, the first
		// prompt standing in for a title never set.
		q += ` AND instr(lower(CASE WHEN s.title = '' THEN s.first_prompt ELSE s.title END), ?) > 0`
		args = append(args, w)
	}
	q += fmt.Sprintf(" ORDER BY updated DESC LIMIT %d", limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.fail("search session titles", err)
	}
	var out []record.Found
	seen := map[string]bool{}
	for rows.Next() {
		i, err := scanInfo(rows)
		if err != nil {
			rows.Close()
			return nil, s.fail("search session titles", err)
		}
		seen[i.ID] = true
		out = append(out, record.Found{Info: i, Match: markWords(i.Title, ws)})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.fail("search session titles", err)
	}
	hits, err := s.Search(ctx, words, record.SearchOptions{Limit: limit})
	if err != nil {
		return nil, err
	}
	for _, h := range hits {
		if !seen[h.Session.ID] {
			seen[h.Session.ID] = true
			out = append(out, record.Found{Info: h.Session, Match: h.Snippet})
		}
	}
	return out, nil
}

// markWords puts « and » around each occurrence of the (lower-case) words
// in text, as Search's snippets do.
func markWords(text string, words []string) string {
	lower := strings.ToLower(text)
	if len(lower) != len(text) { // a case change resized the text: leave it plain
		return text
	}
	in := make([]bool, len(text)) // the bytes inside a match
	for _, w := range words {
		for off := 0; w != ""; {
			i := strings.Index(lower[off:], w)
			if i < 0 {
				break
			}
			for j := off + i; j < off+i+len(w); j++ {
				in[j] = true
			}
			off += i + len(w)
		}
	}
	var b strings.Builder
	for i := range len(text) {
		if in[i] && (i == 0 || !in[i-1]) {
			b.WriteString("«")
		}
		b.WriteByte(text[i])
		if in[i] && (i == len(text)-1 || !in[i+1]) {
			b.WriteString("»")
		}
	}
	return b.String()
}
