package session

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/otter-sh/otter/internal/compact"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/record"
)

// RecordCompaction saves a compaction of the conversation (what
// agent.CompactionRecorder asks): the stored messages before kept, the
// latest messages the model goes on seeing verbatim, are replaced for the
// model by summary. Nothing stored is deleted.
func (r *Recorder) RecordCompaction(summary string, kept []llm.Message, before, after int64) {
	rows := 0 // each tool result is a row of its own
	for _, m := range kept {
		if m.Role == llm.RoleTool {
			rows += len(m.ToolResults)
		} else {
			rows++
		}
	}
	r.do("a compaction", func(ctx context.Context, id string) error {
		upTo, err := r.store.boundary(ctx, id, rows)
		if err != nil {
			return err
		}
		return r.store.AddCompaction(ctx, id, record.Compaction{UpTo: upTo, Summary: summary, TokensBefore: before, TokensAfter: after})
	})
}

// boundary is the sequence number of the last message before the latest
// kept ones (notices aside): the UpTo of a compaction that keeps them.
func (s *Store) boundary(ctx context.Context, id string, kept int) (int64, error) {
	var seq int64
	err := s.db.QueryRowContext(ctx, `SELECT seq FROM messages WHERE session_id = ? AND role != ?
		ORDER BY seq DESC LIMIT 1 OFFSET ?`, id, string(record.RoleNotice), kept).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return seq, err
}

// ModelHistory returns the conversation a model is sent when the session
// is resumed: after its latest compaction, the summary followed by the
// messages after the boundary; without one, the whole history.
func (s *Store) ModelHistory(ctx context.Context, id string) ([]llm.Message, error) {
	c, entries, err := s.Compacted(ctx, id)
	if err != nil {
		return nil, err
	}
	return modelHistory(c, entries), nil
}

// Resume reads what resuming a session takes, reading its rows once:
// every stored row, for the transcript a front end shows (Entries(id, 0)),
// and the conversation the model is sent (ModelHistory). Reading the two
// apart would read and decode a long conversation twice.
func (s *Store) Resume(ctx context.Context, id string) (entries []record.Entry, model []llm.Message, err error) {
	cs, err := s.Compactions(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if entries, err = s.Entries(ctx, id, 0); err != nil {
		return nil, nil, err
	}
	if len(cs) == 0 {
		return entries, History(entries), nil
	}
	c := &cs[len(cs)-1]
	// Entries are in Seq order: the first after the boundary by bisection.
	i, _ := slices.BinarySearchFunc(entries, c.UpTo+1, func(e record.Entry, seq int64) int { return cmp.Compare(e.Seq, seq) })
	return entries, modelHistory(c, entries[i:]), nil
}

// modelHistory is the conversation a model is sent: the summary of c
// (when there is a compaction) and then History(after), the rows after
// its boundary.
func modelHistory(c *record.Compaction, after []record.Entry) []llm.Message {
	if c == nil {
		return History(after)
	}
	out := make([]llm.Message, 1, len(after)+1)
	out[0] = compact.SummaryMessage(c.Summary)
	return appendHistory(out, after)
}
