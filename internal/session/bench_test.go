package session

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/record"
)

// These benchmarks print
//
//	session-append: otter=… baseline=… ratio=…      (target ≤ 1.5)
//	session-resume-10k: otter=… baseline=… ratio=…  (target ≤ 2.0)
//	session-search-100k: otter=…                     (absolute time)

func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), record.FileName))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// rawDB is the store's own database handle, for the baselines: the same
// connection, cache and file.
func rawDB(b *testing.B, s *Store) *sql.DB { return s.db }

var words = strings.Fields(`the otter swims in a river and finds fish under stones while the server answers
requests with json tools deploy build test release kubernetes cluster database migration schema index query
token secret config file path directory error warning retry timeout network proxy certificate image render
terminal window model answer question summary compaction session resume fork search prompt permission`)

// sentence is n pseudo-random words.
func sentence(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

// BenchmarkSessionAppend saves an answer (about 600 bytes) through the
// Store — one transaction that adds the row and updates the session's
// counters — against a bare prepared INSERT of the same bytes into the same
// table of the same database.
func BenchmarkSessionAppend(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	msg := llm.Message{Role: llm.RoleAssistant, Text: sentence(r, 100)}
	info, _ := s.Create(ctx, record.Info{Cwd: "/bench"})
	base, _ := s.Create(ctx, record.Info{Cwd: "/bench-baseline"})
	db := rawDB(b, s)
	ins, err := db.Prepare(`INSERT INTO messages (session_id, seq, role, text, parts, interrupted, input_tokens, output_tokens, created)
		VALUES (?, ?, ?, ?, NULL, 0, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	seq := 0
	// Each iteration times one of each, in a random order, so that both
	// see the same load on a shared machine and neither always pays for
	// the index merges and checkpoints the other's write sets off.
	var otter, baseline time.Duration
	for b.Loop() {
		otterFirst := r.IntN(2) == 0
		for k := range 2 {
			t0 := time.Now()
			if (k == 0) == otterFirst {
				if _, err := s.Append(ctx, info.ID, msg, llm.Usage{InputTokens: 10, OutputTokens: 20}); err != nil {
					b.Fatal(err)
				}
				otter += time.Since(t0)
				continue
			}
			seq++
			if _, err := ins.Exec(base.ID, seq, "assistant", msg.Text, 10, 20, time.Now().UnixMilli()); err != nil {
				b.Fatal(err)
			}
			baseline += time.Since(t0)
		}
	}
	otter /= time.Duration(b.N)
	baseline /= time.Duration(b.N)
	if otter > 0 && baseline > 0 {
		fmt.Printf("session-append: otter=%s baseline=%s ratio=%.2f (target ≤ 1.5)\n", otter, baseline, float64(otter)/float64(baseline))
	}
}

// fillSession stores n messages in a session: user prompts, answers that
// call tools, and their results, in turn.
func fillSession(b *testing.B, s *Store, cwd string, n int, r *rand.Rand) record.Info {
	b.Helper()
	ctx := context.Background()
	info, err := s.Create(ctx, record.Info{Cwd: cwd})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		var m llm.Message
		switch i % 4 {
		case 0:
			m = llm.Message{Role: llm.RoleUser, Text: sentence(r, 15)}
		case 1:
			args, _ := json.Marshal(map[string]string{"query": sentence(r, 3)})
			m = llm.Message{Role: llm.RoleAssistant, Text: sentence(r, 20), ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("call_", i), Name: "mcp__search__find", Args: args}}}
		case 2:
			m = llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: fmt.Sprint("call_", i-1), Name: "mcp__search__find", Text: sentence(r, 60)}}}
		case 3:
			m = llm.Message{Role: llm.RoleAssistant, Text: sentence(r, 80)}
		}
		if _, err := s.Append(ctx, info.ID, m, llm.Usage{}); err != nil {
			b.Fatal(err)
		}
	}
	return info
}

// BenchmarkSessionResume10k resumes a 10,000-message session against a
// bare read of the same rows, on the same connection of the same database.
//
// Otter's side is what resuming does (App.startSession): Store.Resume reads
// the session's compactions and its rows in Seq order, decodes every row
// (tool calls and results from the JSON parts column) into the Entries a
// front end shows, rebuilds the conversation the model is sent (History),
// and the agent loads it. The baseline is the most direct read of the same
// data: one SELECT of the same columns of the same rows in the same order,
// scanned into reused variables, with nothing decoded or kept.
func BenchmarkSessionResume10k(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	info := fillSession(b, s, "/bench", 10_000, rand.New(rand.NewPCG(3, 4)))
	db := rawDB(b, s)
	ag := agent.New(agent.Options{})
	var otter, baseline time.Duration
	for b.Loop() {
		t0 := time.Now()
		entries, model, err := s.Resume(ctx, info.ID)
		if err != nil {
			b.Fatal(err)
		}
		if err := ag.Load(model, nil); err != nil || len(entries) != 10_000 {
			b.Fatal(len(entries), err)
		}
		t1 := time.Now()
		rows, err := db.Query(`SELECT seq, role, text, parts, interrupted, input_tokens, output_tokens, created
			FROM messages WHERE session_id = ? ORDER BY seq`, info.ID)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		var seq, in, out, created int64
		var role, text string
		var parts sql.NullString
		var interrupted bool
		for rows.Next() {
			if err := rows.Scan(&seq, &role, &text, &parts, &interrupted, &in, &out, &created); err != nil {
				b.Fatal(err)
			}
			n++
		}
		rows.Close()
		if n != 10_000 {
			b.Fatal(n)
		}
		otter += t1.Sub(t0)
		baseline += time.Since(t1)
	}
	otter /= time.Duration(b.N)
	baseline /= time.Duration(b.N)
	if otter > 0 && baseline > 0 {
		fmt.Printf("session-resume-10k: otter=%s baseline=%s ratio=%.2f (target ≤ 2.0; absolute: %s to resume 10,000 messages)\n",
			otter, baseline, float64(otter)/float64(baseline), otter)
	}
}

// BenchmarkSessionSearch100k searches the full text of 100,000 messages
// in 100 sessions for two words.
func BenchmarkSessionSearch100k(b *testing.B) {
	s := benchStore(b)
	r := rand.New(rand.NewPCG(5, 6))
	db := rawDB(b, s)
	// The fixture is written in bulk (through the same table and index)
	// to keep the set-up short.
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UnixMilli()
	for i := range 100 {
		id := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
		if _, err := tx.Exec(`INSERT INTO sessions (id, cwd, created, updated, messages) VALUES (?, '/bench', ?, ?, 1000)`, id, now, now); err != nil {
			b.Fatal(err)
		}
		for j := 1; j <= 1000; j++ {
			role := [2]string{"user", "assistant"}[j%2]
			if _, err := tx.Exec(`INSERT INTO messages (session_id, seq, role, text, created) VALUES (?, ?, ?, ?, ?)`, id, j, role, sentence(r, 40), now); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var otter time.Duration
	var hits int
	b.Run("otter", func(b *testing.B) {
		for b.Loop() {
			h, err := s.Search(ctx, "kubernetes migration", record.SearchOptions{Limit: 50})
			if err != nil {
				b.Fatal(err)
			}
			hits = len(h)
		}
		otter = b.Elapsed() / time.Duration(b.N)
	})
	if otter > 0 {
		fmt.Printf("session-search-100k: otter=%s (best %d of the matches of two words in 100,000 messages)\n", otter, hits)
	}
}
