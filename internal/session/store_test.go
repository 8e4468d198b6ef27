package session

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/record"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "data", "otter", record.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newSession(t *testing.T, s *Store, cwd string) record.Info {
	t.Helper()
	info, err := s.Create(context.Background(), record.Info{Cwd: cwd, Provider: "anthropic", Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func appendAll(t *testing.T, s *Store, id string, msgs ...llm.Message) {
	t.Helper()
	for _, m := range msgs {
		if _, err := s.Append(context.Background(), id, m, llm.Usage{}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenCreatesPrivateFilesInWALMode(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	info := newSession(t, s, "/proj")
	appendAll(t, s, info.ID, llm.Message{Role: llm.RoleUser, Text: "secret token abc"})

	for path, want := range map[string]os.FileMode{
		filepath.Dir(s.Path()): 0o700,
		s.Path():               0o600,
		s.Path() + "-wal":      0o600,
		s.Path() + "-shm":      0o600,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
	}
	var mode string
	if err := s.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	var fts int
	if err := s.db.QueryRow("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'secret'").Scan(&fts); err != nil || fts != 1 {
		t.Errorf("the FTS5 index finds %d rows (%v), want 1", fts, err)
	}
}

func TestConversationRoundTrip(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := context.Background()
	info := newSession(t, s, "/proj")
	png := []byte("\x89PNG fake image bytes")
	appendAll(t, s, info.ID,
		llm.Message{Role: llm.RoleUser, Text: "look at this\nand the second line", Images: []llm.Image{{MIMEType: "image/png", Data: png}}},
		llm.Message{Role: llm.RoleAssistant, Text: "calling tools", ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "mcp__fs__read", Args: json.RawMessage(`{"path":"a"}`)},
			{ID: "c2", Name: "mcp__fs__read", Args: json.RawMessage(`{"path":"b"}`)},
			{ID: "c3", Name: "mcp__fs__write", Args: json.RawMessage(`{"path":"c"}`)},
		}},
		// Parallel calls finish out of order; c3 never finished.
		llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "c2", Name: "mcp__fs__read", Text: "B", Images: []llm.Image{{MIMEType: "image/png", Data: png}}}}},
		llm.Message{Role: record.RoleNotice, Text: "model changed"},
		llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "c1", Name: "mcp__fs__read", Text: "A", IsError: true, Elapsed: 4100 * time.Millisecond}}},
		llm.Message{Role: llm.RoleUser, Text: "go on"},
		llm.Message{Role: llm.RoleAssistant, Text: "half an ans", Interrupted: true},
	)
	if _, err := s.Append(ctx, info.ID, llm.Message{Role: llm.RoleAssistant, Text: "done"}, llm.Usage{InputTokens: 100, OutputTokens: 7}); err != nil {
		t.Fatal(err)
	}

	got, err := s.History(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Message{
		{Role: llm.RoleUser, Text: "look at this\nand the second line", Images: []llm.Image{{MIMEType: "image/png", Data: png}}},
		{Role: llm.RoleAssistant, Text: "calling tools", ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "mcp__fs__read", Args: json.RawMessage(`{"path":"a"}`)},
			{ID: "c2", Name: "mcp__fs__read", Args: json.RawMessage(`{"path":"b"}`)},
			{ID: "c3", Name: "mcp__fs__write", Args: json.RawMessage(`{"path":"c"}`)},
		}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
			{CallID: "c1", Name: "mcp__fs__read", Text: "A", IsError: true, Elapsed: 4100 * time.Millisecond}, // how long it ran
			{CallID: "c2", Name: "mcp__fs__read", Text: "B", Images: []llm.Image{{MIMEType: "image/png", Data: png}}},
			{CallID: "c3", Name: "mcp__fs__write", Text: record.InterruptedResult, IsError: true},
		}},
		{Role: llm.RoleUser, Text: "go on"},
		{Role: llm.RoleAssistant, Text: "half an ans", Interrupted: true},
		{Role: llm.RoleAssistant, Text: "done"},
	}
	if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
		t.Errorf("history:\n got %s\nwant %s", g, w)
	}

	info, err = s.Get(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if info.Messages != 8 || info.Title != "look at this" || info.FirstPrompt != "look at this\nand the second line" || info.Usage.InputTokens != 100 || info.Usage.OutputTokens != 7 {
		t.Errorf("session info = %+v", info)
	}
	// The image is a file next to the database, stored once.
	files, _ := os.ReadDir(filepath.Join(filepath.Dir(s.Path()), "images"))
	if len(files) != 1 || !strings.HasSuffix(files[0].Name(), ".png") {
		t.Errorf("image files = %v, want one .png", files)
	}
	entries, err := s.Entries(ctx, info.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 8 || entries[3].Message.Role != record.RoleNotice || entries[3].Message.Text != "model changed" {
		t.Errorf("entries keep the notice in place: %+v", entries)
	}
}

func TestHistoryOfAToolCallAnsweredByNothingBeforeTheNextPrompt(t *testing.T) {
	t.Parallel()
	got := History([]record.Entry{
		{Message: llm.Message{Role: llm.RoleUser, Text: "q"}},
		{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "x", Name: "t"}}}},
		{Message: llm.Message{Role: llm.RoleUser, Text: "q2"}},
	})
	if len(got) != 5 || got[2].Role != llm.RoleTool || got[2].ToolResults[0].CallID != "x" || got[2].ToolResults[0].Text != record.InterruptedResult || got[3].Text != "q2" ||
		got[4].Role != llm.RoleAssistant || !got[4].Interrupted {
		t.Errorf("history = %+v", got)
	}
	// A prompt whose answer was lost (otter was killed while it streamed).
	got = History([]record.Entry{
		{Message: llm.Message{Role: llm.RoleUser, Text: "q"}},
		{Message: llm.Message{Role: record.RoleNotice, Text: "killed"}},
		{Message: llm.Message{Role: llm.RoleUser, Text: "q2"}},
		{Message: llm.Message{Role: llm.RoleAssistant, Text: "a2"}},
	})
	if len(got) != 4 || got[1].Role != llm.RoleAssistant || !got[1].Interrupted || got[2].Text != "q2" {
		t.Errorf("history = %+v", got)
	}
}

// v1Schema is the schema of version 1 as it was released (a fixture: it
// must not follow later changes to migrations).
const v1Schema = `
CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT NOT NULL, title TEXT NOT NULL DEFAULT '', first_prompt TEXT NOT NULL DEFAULT '',
	created INTEGER NOT NULL, updated INTEGER NOT NULL, provider TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '',
	parent_id TEXT, input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0, messages INTEGER NOT NULL DEFAULT 0);
CREATE INDEX sessions_updated ON sessions(updated);
CREATE INDEX sessions_cwd ON sessions(cwd, updated);
CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	seq INTEGER NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL DEFAULT '', parts TEXT, interrupted INTEGER NOT NULL DEFAULT 0,
	input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0, created INTEGER NOT NULL, UNIQUE (session_id, seq));
CREATE VIRTUAL TABLE messages_fts USING fts5(text, content='messages', content_rowid='id');
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text); END;
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text); END;
INSERT INTO sessions (id, cwd, title, first_prompt, created, updated, messages) VALUES ('11111111-aaaa-4000-8000-000000000000', '/old', 'old one', 'hello from v1', 1700000000000, 1700000000000, 2);
INSERT INTO messages (session_id, seq, role, text, created) VALUES ('11111111-aaaa-4000-8000-000000000000', 1, 'user', 'hello from v1', 1700000000000);
INSERT INTO messages (session_id, seq, role, text, created) VALUES ('11111111-aaaa-4000-8000-000000000000', 2, 'assistant', 'hi back', 1700000000000);
PRAGMA user_version = 1;
`

func TestOpenMigratesADatabaseOfVersion1(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), record.FileName)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(v1Schema); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var v int
	s.db.QueryRow("PRAGMA user_version").Scan(&v)
	if v != schemaVersion {
		t.Errorf("user_version = %d after Open, want %d", v, schemaVersion)
	}
	id, err := s.Resolve(ctx, "11111111")
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.History(ctx, id)
	if err != nil || len(h) != 2 || h[0].Text != "hello from v1" || h[1].Text != "hi back" {
		t.Fatalf("old messages after the migration: %+v, %v", h, err)
	}
	// The old session takes what version 2 added, and old text is still found.
	if err := s.AllowTool(ctx, id, "mcp__x__y"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddCompaction(ctx, id, record.Compaction{UpTo: 1, Summary: "greeted"}); err != nil {
		t.Fatal(err)
	}
	appendAll(t, s, id, llm.Message{Role: llm.RoleUser, Text: "third"})
	hits, err := s.Search(ctx, "hello", record.SearchOptions{})
	if err != nil || len(hits) != 1 || hits[0].Session.ID != id || hits[0].Seq != 1 {
		t.Errorf("search after migration: %+v, %v", hits, err)
	}
	if info, _ := s.Get(ctx, id); info.Messages != 3 {
		t.Errorf("messages = %d, want 3", info.Messages)
	}
}

func TestOpenLeavesABadDatabaseAlone(t *testing.T) {
	t.Parallel()
	newer := filepath.Join(t.TempDir(), record.FileName)
	db, _ := sql.Open("sqlite", newer)
	if _, err := db.Exec("CREATE TABLE future (x); PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	garbage := filepath.Join(t.TempDir(), record.FileName)
	os.WriteFile(garbage, bytes.Repeat([]byte("not a database, just some text. "), 200), 0o600)
	truncated := filepath.Join(t.TempDir(), record.FileName)
	{
		s, err := Open(context.Background(), truncated)
		if err != nil {
			t.Fatal(err)
		}
		info := newSession(t, s, "/p")
		appendAll(t, s, info.ID, llm.Message{Role: llm.RoleUser, Text: strings.Repeat("x", 100000)})
		s.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
		s.Close()
		b, _ := os.ReadFile(truncated)
		copy(b[100:], bytes.Repeat([]byte{0xAB}, 3000)) // wreck the schema's page
		os.WriteFile(truncated, b, 0o600)
	}

	for _, tc := range []struct {
		path string
		kind error
		hint string
	}{
		{newer, record.ErrNewer, "update otter"},
		{garbage, record.ErrCorrupt, "move it aside"},
		{truncated, record.ErrCorrupt, "move it aside"},
	} {
		before, _ := os.ReadFile(tc.path)
		s, err := Open(context.Background(), tc.path)
		if err == nil {
			s.Close()
			t.Errorf("%s: Open succeeded", tc.path)
			continue
		}
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.hint) {
			t.Errorf("Open(%s) = %v; want %v naming the file and saying %q", tc.path, err, tc.kind, tc.hint)
		}
		if after, _ := os.ReadFile(tc.path); !bytes.Equal(before, after) {
			t.Errorf("%s was changed by a failed Open", tc.path)
		}
		if _, err := os.Stat(tc.path + "-wal"); err == nil && tc.kind != record.ErrCorrupt {
			t.Errorf("%s: a WAL file was created", tc.path)
		}
	}
}

func TestOpenInAnUnwritablePlace(t *testing.T) {
	t.Parallel()
	// A file where the data directory should be: MkdirAll fails as it
	// does in a read-only home (tests may run as root, who may write
	// anywhere).
	blocker := filepath.Join(t.TempDir(), "share")
	os.WriteFile(blocker, nil, 0o600)
	path := filepath.Join(blocker, "otter", record.FileName)
	_, err := Open(context.Background(), path)
	if !errors.Is(err, record.ErrReadOnly) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "[sessions] enabled = false") {
		t.Errorf("Open = %v", err)
	}
}

func TestAFullDiskIsReportedOnceAndNothingMoreIsSaved(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	var reports []error
	var mu sync.Mutex
	rec := NewRecorder(s, record.Info{Cwd: "/p"}, func(err error) { mu.Lock(); reports = append(reports, err); mu.Unlock() })
	rec.RecordMessage(llm.Message{Role: llm.RoleUser, Text: "small"}, llm.Usage{})
	var pages int
	s.db.QueryRow("PRAGMA page_count").Scan(&pages)
	// SQLite's page limit makes the database as full as a full disk would.
	if _, err := s.db.Exec(fmt.Sprintf("PRAGMA max_page_count = %d", pages+2)); err != nil {
		t.Fatal(err)
	}
	rec.RecordMessage(llm.Message{Role: llm.RoleAssistant, Text: strings.Repeat("big answer ", 5000)}, llm.Usage{})
	rec.RecordMessage(llm.Message{Role: llm.RoleUser, Text: "next"}, llm.Usage{})
	if len(reports) != 1 || !errors.Is(reports[0], record.ErrFull) || !strings.Contains(reports[0].Error(), s.Path()) || !strings.Contains(reports[0].Error(), "without saving") {
		t.Fatalf("reports = %v", reports)
	}
	h, err := s.Entries(context.Background(), rec.ID(), 0)
	if err != nil || len(h) != 1 || h[0].Message.Text != "small" {
		t.Errorf("history = %+v, %v; want only what was saved before the disk filled", h, err)
	}
}

func TestResolveListForkDeletePrune(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := context.Background()
	old, _ := s.Create(ctx, record.Info{ID: "aaaa1111-0000-4000-8000-000000000000", Cwd: "/p", Created: time.Now().AddDate(0, 0, -40)})
	appendAll(t, s, old.ID, llm.Message{Role: llm.RoleUser, Text: "ancient"})
	s.db.Exec("UPDATE sessions SET updated = ? WHERE id = ?", millis(time.Now().AddDate(0, 0, -40)), old.ID)
	a, _ := s.Create(ctx, record.Info{ID: "aaaa2222-0000-4000-8000-000000000000", Cwd: "/p"})
	appendAll(t, s, a.ID, llm.Message{Role: llm.RoleUser, Text: "first"}, llm.Message{Role: llm.RoleAssistant, Text: "answer"})
	s.AllowTool(ctx, a.ID, "mcp__gh__create_issue")
	s.SetState(ctx, a.ID, "loaded_tools", []string{"mcp__gh__search"})
	b, _ := s.Create(ctx, record.Info{ID: "bbbb0000-0000-4000-8000-000000000000", Cwd: "/other"})
	appendAll(t, s, b.ID, llm.Message{Role: llm.RoleUser, Text: "elsewhere"})
	s.Create(ctx, record.Info{Cwd: "/p"}) // no message: not listed

	if id, err := s.Resolve(ctx, "AAAA2"); err != nil || id != a.ID {
		t.Errorf("Resolve(AAAA2) = %q, %v", id, err)
	}
	if _, err := s.Resolve(ctx, "aaaa"); !errors.Is(err, record.ErrAmbiguous) || !strings.Contains(err.Error(), a.ID) {
		t.Errorf("Resolve(aaaa) = %v", err)
	}
	if _, err := s.Resolve(ctx, "cccc"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("Resolve(cccc) = %v", err)
	}
	if l, _ := s.List(ctx, record.ListOptions{Cwd: "/p"}); len(l) != 2 || l[0].ID != a.ID || l[1].ID != old.ID {
		t.Errorf("List(/p) = %+v", l)
	}
	if l, _ := s.Latest(ctx, "/p"); l.ID != a.ID {
		t.Errorf("Latest = %+v", l)
	}

	f, err := s.Fork(ctx, "aaaa2")
	if err != nil {
		t.Fatal(err)
	}
	appendAll(t, s, f.ID, llm.Message{Role: llm.RoleUser, Text: "only in the fork"})
	if h, _ := s.History(ctx, a.ID); len(h) != 2 {
		t.Errorf("the original changed with its fork: %+v", h)
	}
	fh, _ := s.History(ctx, f.ID)
	tools, _ := s.AllowedTools(ctx, f.ID)
	var loaded []string
	found, _ := s.State(ctx, f.ID, "loaded_tools", &loaded)
	if len(fh) != 4 || fh[1].Text != "answer" || f.ParentID != a.ID || len(tools) != 1 || !found || len(loaded) != 1 {
		t.Errorf("fork: %+v history %+v tools %v state %v", f, fh, tools, loaded)
	}

	n, err := s.Prune(ctx, 30)
	if err != nil || n != 1 {
		t.Errorf("Prune(30) = %d, %v; want the 40-day-old session", n, err)
	}
	if _, err := s.Get(ctx, old.ID); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("the pruned session is still there: %v", err)
	}
	if hits, _ := s.Search(ctx, "ancient", record.SearchOptions{}); len(hits) != 0 {
		t.Errorf("the pruned session's text is still found: %+v", hits)
	}
	if n, _ := s.Prune(ctx, 0); n != 0 {
		t.Errorf("keep_days 0 pruned %d", n)
	}
	if err := s.Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.History(ctx, f.ID); len(h) != 4 {
		t.Errorf("deleting the original took the fork's messages: %+v", h)
	}
	if err := s.Delete(ctx, a.ID); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := context.Background()
	a := newSession(t, s, "/p")
	appendAll(t, s, a.ID,
		llm.Message{Role: llm.RoleUser, Text: "How do I deploy the otter service to production?"},
		llm.Message{Role: llm.RoleAssistant, Text: "Run the deployment script."},
	)
	b := newSession(t, s, "/q")
	appendAll(t, s, b.ID, llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "1", Name: "x", Text: `error: "deploy" failed (exit 1)`}}})

	hits, err := s.Search(ctx, "deploy", record.SearchOptions{})
	if err != nil || len(hits) != 3 {
		t.Fatalf("deploy: %+v, %v", hits, err)
	}
	if hits, _ := s.Search(ctx, "deploy production", record.SearchOptions{}); len(hits) != 1 || !strings.Contains(hits[0].Snippet, "«deploy»") || hits[0].Session.ID != a.ID {
		t.Errorf("deploy production: %+v", hits)
	}
	if hits, _ := s.Search(ctx, "deploy", record.SearchOptions{Cwd: "/q"}); len(hits) != 1 || hits[0].Role != llm.RoleTool {
		t.Errorf("in /q: %+v", hits)
	}
	// Operators and quotes are words, not syntax errors.
	for _, q := range []string{`"deploy" AND (`, `exit 1)`, `NEAR(`, `*`} {
		if _, err := s.Search(ctx, q, record.SearchOptions{}); err != nil {
			t.Errorf("Search(%q) = %v", q, err)
		}
	}
}

func TestCompactedViewKeepsTheOriginals(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := context.Background()
	a := newSession(t, s, "/p")
	for i := range 6 {
		appendAll(t, s, a.ID, llm.Message{Role: llm.RoleUser, Text: fmt.Sprint("q", i)}, llm.Message{Role: llm.RoleAssistant, Text: fmt.Sprint("a", i)})
	}
	if c, e, err := s.Compacted(ctx, a.ID); c != nil || len(e) != 12 || err != nil {
		t.Errorf("before any compaction: %v %d %v", c, len(e), err)
	}
	s.AddCompaction(ctx, a.ID, record.Compaction{UpTo: 4, Summary: "first summary", TokensBefore: 900, TokensAfter: 100})
	s.AddCompaction(ctx, a.ID, record.Compaction{UpTo: 8, Summary: "second summary", TokensBefore: 800, TokensAfter: 90})
	c, e, err := s.Compacted(ctx, a.ID)
	if err != nil || c == nil || c.Summary != "second summary" || c.TokensBefore != 800 || c.TokensAfter != 90 || len(e) != 4 || e[0].Seq != 9 || History(e)[0].Text != "q4" {
		t.Errorf("compacted view: %+v %+v %v", c, e, err)
	}
	if all, _ := s.History(ctx, a.ID); len(all) != 12 {
		t.Errorf("full history has %d messages, want 12", len(all))
	}
	if cs, _ := s.Compactions(ctx, a.ID); len(cs) != 2 || cs[0].Time.IsZero() {
		t.Errorf("compactions = %+v", cs)
	}
}

// TestTwoProcessesWriteAtOnce runs this test binary twice as writers of
// their own sessions in the same project and database at the same time:
// nothing is lost.
func TestTwoProcessesWriteAtOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), record.FileName)
	const n = 150
	var wg sync.WaitGroup
	errs := make([]error, 2)
	out := make([][]byte, 2)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), "OTTER_SESSION_WRITER="+path, fmt.Sprintf("OTTER_SESSION_WRITER_N=%d", n), fmt.Sprintf("OTTER_SESSION_WRITER_NAME=w%d", w))
			out[w], errs[w] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for w := range 2 {
		if errs[w] != nil {
			t.Fatalf("writer %d: %v\n%s", w, errs[w], out[w])
		}
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := s.List(context.Background(), record.ListOptions{Cwd: "/shared/project"})
	if err != nil || len(l) != 2 {
		t.Fatalf("sessions: %+v, %v", l, err)
	}
	for _, info := range l {
		h, err := s.History(context.Background(), info.ID)
		if err != nil || len(h) != n || info.Messages != n {
			t.Fatalf("%s: %d messages (count %d), %v; want %d", info.ID, len(h), info.Messages, err, n)
		}
		for i, m := range h {
			if want := fmt.Sprintf("%s message %d", info.FirstPrompt[:2], i); m.Text != want {
				t.Fatalf("message %d = %q, want %q", i, m.Text, want)
			}
		}
	}
}

// TestMain runs the writer of TestTwoProcessesWriteAtOnce when the test
// binary is started as one.
func TestMain(m *testing.M) {
	if path := os.Getenv("OTTER_SESSION_WRITER"); path != "" {
		if err := writer(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func writer(path string) error {
	var n int
	fmt.Sscan(os.Getenv("OTTER_SESSION_WRITER_N"), &n)
	name := os.Getenv("OTTER_SESSION_WRITER_NAME")
	s, err := Open(context.Background(), path)
	if err != nil {
		return err
	}
	defer s.Close()
	var failed error
	rec := NewRecorder(s, record.Info{Cwd: "/shared/project"}, func(err error) { failed = err })
	for i := range n {
		role := llm.RoleUser
		if i%2 == 1 {
			role = llm.RoleAssistant
		}
		rec.RecordMessage(llm.Message{Role: role, Text: fmt.Sprintf("%s message %d", name, i)}, llm.Usage{})
	}
	return failed
}

// TestADamagedDatabaseIsNotWrittenInto: a database whose schema still
// reads but some of whose pages are damaged — four 4 KiB pages in the
// middle, or the last two — is refused by Open with ErrCorrupt and left
// byte for byte as it was; OpenReadOnly still reads what reads. (Before,
// Open only read the schema: a new row was committed into the first file
// and resuming went on writing into the second, which then failed
// PRAGMA integrity_check.)
func TestADamagedDatabaseIsNotWrittenInto(t *testing.T) {
	t.Parallel()
	build := func() string {
		path := filepath.Join(t.TempDir(), record.FileName)
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 6 {
			info := newSession(t, s, fmt.Sprintf("/p%d", i))
			for j := range 20 {
				appendAll(t, s, info.ID, llm.Message{Role: llm.RoleUser, Text: fmt.Sprintf("message %d of session %d: %s", j, i, strings.Repeat("words ", 300))})
			}
		}
		s.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
		s.Close()
		return path
	}
	const page = 4096
	for _, tc := range []struct {
		name  string
		pages func(n int) []int
	}{
		{"four pages in the middle", func(n int) []int { return []int{n / 3, n/3 + 7, n / 2, 2*n/3 + 1} }},
		{"the last two pages", func(n int) []int { return []int{n - 2, n - 1} }},
	} {
		path := build()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n := len(b) / page
		for k, p := range tc.pages(n) {
			for i := range page {
				b[p*page+i] = byte(i*31 + k*7 + 1)
			}
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(context.Background(), path)
		if err == nil {
			s.Close()
			t.Errorf("%s: Open of a %d-page file succeeded; it would be written into", tc.name, n)
			continue
		}
		if !errors.Is(err, record.ErrCorrupt) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: Open = %v; want ErrCorrupt naming the file", tc.name, err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(b, after) {
			t.Errorf("%s: the file was changed by the refused Open", tc.name)
		}
		ro, err := OpenReadOnly(context.Background(), path)
		if err != nil {
			t.Errorf("%s: OpenReadOnly = %v; want what reads readable", tc.name, err)
			continue
		}
		if _, err := ro.db.Exec("INSERT INTO sessions(id) VALUES ('x')"); err == nil {
			t.Errorf("%s: a read-only store wrote", tc.name)
		}
		ro.Close()
		if after, _ := os.ReadFile(path); !bytes.Equal(b, after) {
			t.Errorf("%s: the file was changed by OpenReadOnly", tc.name)
		}
	}
}

// TestResumeReadsOnceWhatEntriesAndModelHistoryRead checks that resuming
// (the transcript's rows and the model's conversation from one read) gives
// exactly what the two separate reads give, with and without compactions.
func TestResumeReadsOnceWhatEntriesAndModelHistoryRead(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := context.Background()
	a := newSession(t, s, "/p")
	for i := range 4 {
		appendAll(t, s, a.ID,
			llm.Message{Role: llm.RoleUser, Text: fmt.Sprint("q", i)},
			llm.Message{Role: llm.RoleAssistant, Text: "looking", ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("c", i), Name: "find", Args: json.RawMessage(`{"q":1}`)}}},
			llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: fmt.Sprint("c", i), Name: "find", Text: fmt.Sprint("found ", i)}}},
			llm.Message{Role: record.RoleNotice, Text: "a notice"},
			llm.Message{Role: llm.RoleAssistant, Text: fmt.Sprint("a", i)},
		)
	}
	appendAll(t, s, a.ID, llm.Message{Role: llm.RoleUser, Text: "unanswered"})
	check := func(when string) []llm.Message {
		t.Helper()
		entries, model, err := s.Resume(ctx, a.ID)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		wantEntries, _ := s.Entries(ctx, a.ID, 0)
		wantModel, _ := s.ModelHistory(ctx, a.ID)
		if !reflect.DeepEqual(entries, wantEntries) {
			t.Errorf("%s: Resume's rows differ from Entries':\n%+v\n%+v", when, entries, wantEntries)
		}
		if !reflect.DeepEqual(model, wantModel) {
			t.Errorf("%s: Resume's model history differs from ModelHistory:\n%+v\n%+v", when, model, wantModel)
		}
		return model
	}
	if m := check("without a compaction"); len(m) != 18 || m[0].Text != "q0" || !m[17].Interrupted {
		t.Errorf("uncompacted model history: %+v", m)
	}
	// The boundary after the second exchange: the summary, then its third
	// prompt — with no made-up answer between the two.
	s.AddCompaction(ctx, a.ID, record.Compaction{UpTo: 10, Summary: "the first two"})
	if m := check("after a compaction"); len(m) != 11 || !strings.Contains(m[0].Text, "the first two") || m[1].Text != "q2" || m[2].ToolCalls[0].ID != "c2" {
		t.Errorf("compacted model history: %+v", m)
	}
	// A boundary just before the last row, and one past every row.
	s.AddCompaction(ctx, a.ID, record.Compaction{UpTo: 20, Summary: "all but the last"})
	if m := check("a boundary before the last row"); len(m) != 3 || m[1].Text != "unanswered" || !m[2].Interrupted {
		t.Errorf("model history after the last boundary: %+v", m)
	}
	s.AddCompaction(ctx, a.ID, record.Compaction{UpTo: 99, Summary: "everything"})
	if m := check("a boundary past every row"); len(m) != 1 {
		t.Errorf("model history after a boundary past every row: %+v", m)
	}
}

// TestTheWriteAheadLogStaysBoundedWhileMessagesAreSaved saves a long
// conversation message by message: SQLite's automatic checkpoint must keep
// the -wal file near its 1000-page threshold (4 MB), instead of growing by
// every message until a later read copies it all back (the cost then fell
// on resuming: about a second for 10,000 messages, and 500 MB of disk).
func TestTheWriteAheadLogStaysBoundedWhileMessagesAreSaved(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	a := newSession(t, s, "/p")
	text := strings.Repeat("the otter swims in a river and finds fish under stones ", 10)
	const n = 400
	for i := range n {
		appendAll(t, s, a.ID, llm.Message{Role: llm.RoleUser, Text: fmt.Sprint(i, " ", text)})
	}
	fi, err := os.Stat(s.Path() + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	const limit = 6 << 20
	if fi.Size() > limit {
		t.Errorf("after %d messages the write-ahead log is %d bytes, want at most %d: the automatic checkpoint did not run", n, fi.Size(), limit)
	}
	if e, err := s.Entries(context.Background(), a.ID, 0); err != nil || len(e) != n {
		t.Errorf("stored: %d messages, %v", len(e), err)
	}
}

// TestALargeWriteAheadLogLeftByAnEarlierOtterIsCutBack: otter used to save
// messages without SQLite's automatic checkpoint (an INSERT … RETURNING
// reset after its row), leaving -wal files of hundreds of MB. Once the log
// has been checkpointed and starts over, its file is cut back.
func TestALargeWriteAheadLogLeftByAnEarlierOtterIsCutBack(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := context.Background()
	a := newSession(t, s, "/p")
	text := strings.Repeat("the otter swims in a river and finds fish under stones ", 10)
	for i := range 400 { // saved as the earlier otter did
		var seq int64
		if err := s.db.QueryRowContext(ctx, insertMessageSQL, a.ID, "user", fmt.Sprint(i, text), nil, 0, 0, 0, time.Now().UnixMilli()).Scan(&seq); err != nil {
			t.Fatal(err)
		}
	}
	walSize := func() int64 {
		t.Helper()
		fi, err := os.Stat(s.Path() + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if n := walSize(); n <= walSizeLimit {
		t.Fatalf("the earlier otter's log is %d bytes: the test does not build the large log it is about", n)
	}
	// The first save checkpoints the log, the second starts it over.
	appendAll(t, s, a.ID, llm.Message{Role: llm.RoleUser, Text: "one"}, llm.Message{Role: llm.RoleUser, Text: "two"})
	if n := walSize(); n > walSizeLimit {
		t.Errorf("the write-ahead log is still %d bytes after it started over, want at most %d", n, walSizeLimit)
	}
	if e, err := s.Entries(ctx, a.ID, 0); err != nil || len(e) != 402 {
		t.Errorf("stored: %d messages, %v", len(e), err)
	}
}
