package session

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/record"
)

// A turn keeps the first version of each file it changes; a second change
// in the same turn records only what it wrote last. Read without content,
// nothing of the files comes back; a created file and an empty one differ.
func TestCheckpointsKeepTheFirstVersionOfATurn(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := context.Background()
	a := newSession(t, s, "/p")
	appendAll(t, s, a.ID, llm.Message{Role: llm.RoleUser, Text: "edit it"})
	save := func(c record.Checkpoint) {
		t.Helper()
		if err := s.SaveCheckpoint(ctx, a.ID, c); err != nil {
			t.Fatal(err)
		}
	}
	save(record.Checkpoint{Seq: 1, Path: "/p/a.go", Existed: true, Before: []byte("v0"), After: "h1"})
	save(record.Checkpoint{Seq: 1, Path: "/p/a.go", Existed: true, Before: []byte("v1"), After: "h2"})
	save(record.Checkpoint{Seq: 1, Path: "/p/new.go", After: "h3"})
	save(record.Checkpoint{Seq: 1, Path: "/p/empty", Existed: true, Before: []byte{}, After: "h4"})
	if err := s.SaveCheckpoint(ctx, a.ID, record.Checkpoint{Path: "/p/x"}); err == nil {
		t.Error("a checkpoint without its turn's message was saved")
	}

	cs, err := s.Checkpoints(ctx, a.ID, 1, true)
	if err != nil || len(cs) != 3 {
		t.Fatalf("Checkpoints = %+v, %v", cs, err)
	}
	byPath := map[string]record.Checkpoint{}
	for _, c := range cs {
		byPath[c.Path] = c
	}
	if c := byPath["/p/a.go"]; !c.Existed || string(c.Before) != "v0" || c.After != "h2" || c.Time.IsZero() {
		t.Errorf("a.go = %+v; want the first version, v0, and the last hash, h2", c)
	}
	if c := byPath["/p/new.go"]; c.Existed || c.Before != nil {
		t.Errorf("new.go = %+v; want a file the turn created", c)
	}
	if c := byPath["/p/empty"]; !c.Existed || c.Before == nil || len(c.Before) != 0 {
		t.Errorf("empty = %+v; want an empty file that existed", c)
	}
	bare, _ := s.Checkpoints(ctx, a.ID, 1, false)
	for _, c := range bare {
		if c.Before != nil {
			t.Errorf("read without content, %s came with %q", c.Path, c.Before)
		}
	}
	if later, _ := s.Checkpoints(ctx, a.ID, 2, true); len(later) != 0 {
		t.Errorf("checkpoints of turns from 2 on: %+v", later)
	}
}

// Truncate takes the conversation back to before a message: the rows from
// it on, their search index, the compactions that summarised any of them
// and their turns' checkpoints go; the counts follow, and the next message
// takes the freed Seq. Taken back to its first message, the session has no
// first prompt and is no longer listed.
func TestTruncateTakesTheConversationBack(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := context.Background()
	a := newSession(t, s, "/p")
	for i := range 4 {
		if _, err := s.Append(ctx, a.ID, llm.Message{Role: llm.RoleUser, Text: fmt.Sprint("question", i)}, llm.Usage{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, a.ID, llm.Message{Role: llm.RoleAssistant, Text: fmt.Sprint("answer", i)}, llm.Usage{InputTokens: 100, OutputTokens: 10}); err != nil {
			t.Fatal(err)
		}
		s.SaveCheckpoint(ctx, a.ID, record.Checkpoint{Seq: int64(2*i + 1), Path: "/p/f", Existed: true, Before: []byte(fmt.Sprint(i)), After: "h"})
	}
	s.AddCompaction(ctx, a.ID, record.Compaction{UpTo: 4, Summary: "the first two"})
	s.AddCompaction(ctx, a.ID, record.Compaction{UpTo: 6, Summary: "the first three"})

	if err := s.Truncate(ctx, a.ID, 5); err != nil { // question2 and what followed
		t.Fatal(err)
	}
	e, _ := s.Entries(ctx, a.ID, 0)
	if len(e) != 4 || e[3].Message.Text != "answer1" {
		t.Fatalf("after Truncate(5): %+v", e)
	}
	info, _ := s.Get(ctx, a.ID)
	if info.Messages != 4 || info.Usage.InputTokens != 200 || info.Usage.OutputTokens != 20 || info.FirstPrompt != "question0" {
		t.Errorf("info after Truncate(5) = %+v", info)
	}
	if hits, _ := s.Search(ctx, "question2", record.SearchOptions{}); len(hits) != 0 {
		t.Errorf("the search still finds a message taken out: %+v", hits)
	}
	if cs, _ := s.Compactions(ctx, a.ID); len(cs) != 1 || cs[0].UpTo != 4 {
		t.Errorf("compactions after Truncate(5) = %+v; want only the one up to 4", cs)
	}
	if cs, _ := s.Checkpoints(ctx, a.ID, 0, false); len(cs) != 2 || cs[1].Seq != 3 {
		t.Errorf("checkpoints after Truncate(5) = %+v; want those of 1 and 3", cs)
	}
	seq, err := s.Append(ctx, a.ID, llm.Message{Role: llm.RoleUser, Text: "again"}, llm.Usage{})
	if err != nil || seq != 5 {
		t.Errorf("the next message took Seq %d (%v), want 5", seq, err)
	}

	if err := s.Truncate(ctx, a.ID, 1); err != nil {
		t.Fatal(err)
	}
	info, _ = s.Get(ctx, a.ID)
	if info.Messages != 0 || info.FirstPrompt != "" || info.Usage.InputTokens != 0 {
		t.Errorf("info after Truncate(1) = %+v", info)
	}
	if l, _ := s.List(ctx, record.ListOptions{Cwd: "/p"}); len(l) != 0 {
		t.Errorf("an emptied session is listed: %+v", l)
	}
	if seq, _ := s.Append(ctx, a.ID, llm.Message{Role: llm.RoleUser, Text: "anew"}, llm.Usage{}); seq != 1 {
		t.Errorf("after Truncate(1) the next message took Seq %d", seq)
	}
	if info, _ := s.Get(ctx, a.ID); info.FirstPrompt != "anew" {
		t.Errorf("first prompt after starting over = %q", info.FirstPrompt)
	}
	if err := s.Truncate(ctx, "no-such-session", 1); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("Truncate of an unknown session: %v", err)
	}
}

// DropCheckpoints forgets the turns' files (they were put back) and keeps
// the conversation; a fork takes its original's checkpoints, and deleting
// a session deletes them.
func TestCheckpointsAreDroppedForkedAndDeleted(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := context.Background()
	a := newSession(t, s, "/p")
	appendAll(t, s, a.ID, llm.Message{Role: llm.RoleUser, Text: "one"}, llm.Message{Role: llm.RoleAssistant, Text: "ok"},
		llm.Message{Role: llm.RoleUser, Text: "two"}, llm.Message{Role: llm.RoleAssistant, Text: "ok"})
	s.SaveCheckpoint(ctx, a.ID, record.Checkpoint{Seq: 1, Path: "/p/a", Existed: true, Before: []byte("a0"), After: "h"})
	s.SaveCheckpoint(ctx, a.ID, record.Checkpoint{Seq: 3, Path: "/p/b", After: "h"})

	f, err := s.Fork(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cs, _ := s.Checkpoints(ctx, f.ID, 0, true); len(cs) != 2 || string(cs[0].Before) != "a0" {
		t.Errorf("the fork's checkpoints = %+v", cs)
	}
	if err := s.DropCheckpoints(ctx, a.ID, 3); err != nil {
		t.Fatal(err)
	}
	if cs, _ := s.Checkpoints(ctx, a.ID, 0, false); len(cs) != 1 || cs[0].Seq != 1 {
		t.Errorf("after DropCheckpoints(3): %+v", cs)
	}
	if e, _ := s.Entries(ctx, a.ID, 0); len(e) != 4 {
		t.Errorf("DropCheckpoints changed the conversation: %d rows", len(e))
	}
	if err := s.Delete(ctx, f.ID); err != nil {
		t.Fatal(err)
	}
	var n int
	s.db.QueryRow("SELECT count(*) FROM file_checkpoints WHERE session_id = ?", f.ID).Scan(&n)
	if n != 0 {
		t.Errorf("the deleted fork left %d checkpoints", n)
	}
}

// PromptSeq is the person's latest message: a message otter sent for them
// (a Stop hook's feedback) belongs to the turn it continues.
func TestRecorderPromptSeqIsThePersonsLatestMessage(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	rec := NewRecorder(s, record.Info{Cwd: "/p"}, func(err error) { t.Error(err) })
	if rec.PromptSeq() != 0 {
		t.Fatal("PromptSeq before any message")
	}
	rec.RecordPrompt(llm.Message{Role: llm.RoleUser, Text: "first"}, record.Shown{})
	rec.RecordMessage(llm.Message{Role: llm.RoleAssistant, Text: "ok"}, llm.Usage{})
	if got := rec.PromptSeq(); got != 1 {
		t.Errorf("PromptSeq = %d, want 1", got)
	}
	rec.RecordPrompt(llm.Message{Role: llm.RoleUser, Text: "second"}, record.Shown{Typed: "second"})
	rec.RecordPrompt(llm.Message{Role: llm.RoleUser, Text: "Stop hook feedback: go on"}, record.Shown{Hidden: true})
	if got := rec.PromptSeq(); got != 3 {
		t.Errorf("PromptSeq after a hidden message = %d, want 3", got)
	}
}
