package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/record"
)

// sessionApp is an App over fresh XDG directories with config toml.
func sessionApp(t *testing.T, toml string) *App {
	t.Helper()
	a, err := New(context.Background(), Options{Parts: testParts, Paths: testPaths(t, toml), WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func TestStartSessionNewContinueForkResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := sessionApp(t, "")
	srv := llmtest.New(t, llmtest.Anthropic, llmtest.Reply{Text: []string{"Hello!"}}, llmtest.Reply{Text: []string{"Again."}}, llmtest.Reply{Text: []string{"Forked."}})
	newAgent := func() *agent.Agent {
		return agent.New(agent.Options{Provider: srv.Provider(), Model: "m", Tools: a.tools})
	}

	ag := newAgent()
	s, err := a.startSession(ctx, ag, SessionOptions{}, nil)
	if err != nil || s.Warning != nil || s.ID() != "" {
		t.Fatalf("new session: %+v, %v", s, err)
	}
	if err := ag.Send(ctx, "hi there"); err != nil {
		t.Fatal(err)
	}
	first := s.ID()
	fi, err := os.Stat(filepath.Join(a.Paths.DataDir, record.FileName))
	if err != nil || fi.Mode().Perm() != 0o600 || first == "" {
		t.Fatalf("database: %v %v, session %q", fi, err, first)
	}

	// -c: the latest session of this directory, history loaded.
	ag2 := newAgent()
	s2, err := a.startSession(ctx, ag2, SessionOptions{Continue: true}, nil)
	if err != nil || s2.Resumed.ID != first || len(s2.Entries) != 2 || len(ag2.Messages()) != 2 {
		t.Fatalf("continue: %+v, %v", s2, err)
	}
	if err := ag2.Send(ctx, "more"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[1].Messages; len(got) != 3 || got[0].Text != "hi there" || got[1].Text != "Hello!" {
		t.Errorf("the model did not receive the saved conversation: %+v", got)
	}

	// --resume PREFIX --fork-session: a copy, the original unchanged.
	ag3 := newAgent()
	s3, err := a.startSession(ctx, ag3, SessionOptions{Resume: first[:8], Fork: true}, nil)
	if err != nil || s3.ID() == first || s3.Resumed.ParentID != first || len(ag3.Messages()) != 4 {
		t.Fatalf("fork: %+v, %v", s3, err)
	}
	if err := ag3.Send(ctx, "fork only"); err != nil {
		t.Fatal(err)
	}
	store, _ := a.Sessions(ctx)
	if h, _ := store.History(ctx, first); len(h) != 4 {
		t.Errorf("the original has %d messages after the fork's turn, want 4", len(h))
	}
	if h, _ := store.History(ctx, s3.ID()); len(h) != 6 {
		t.Errorf("the fork has %d messages, want 6", len(h))
	}

	if _, err := a.startSession(ctx, newAgent(), SessionOptions{Resume: "ffffffff"}, nil); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("unknown ID: %v", err)
	}
	if _, err := a.startSession(ctx, newAgent(), SessionOptions{Off: true, Continue: true}, nil); err == nil {
		t.Error("--no-session with --continue was accepted")
	}
}

func TestStartSessionWithoutADatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"a"}}, llmtest.Reply{Text: []string{"b"}})

	// [sessions] enabled = false: nothing saved, no file, no warning.
	off := sessionApp(t, "[sessions]\nenabled = false\n")
	ag := agent.New(agent.Options{Provider: srv.Provider(), Model: "m"})
	s, err := off.startSession(ctx, ag, SessionOptions{}, nil)
	if err != nil || s.Warning != nil || s.Recorder != nil {
		t.Fatalf("disabled: %+v, %v", s, err)
	}
	ag.Send(ctx, "x")
	if _, err := os.Stat(filepath.Join(off.Paths.DataDir, record.FileName)); err == nil {
		t.Error("a database was created though sessions are disabled")
	}

	// A damaged database: otter says so, runs, saves nothing, and leaves
	// the file as it was.
	bad := sessionApp(t, "")
	path := filepath.Join(bad.Paths.DataDir, record.FileName)
	os.MkdirAll(filepath.Dir(path), 0o700)
	junk := bytes.Repeat([]byte("garbage "), 1000)
	os.WriteFile(path, junk, 0o600)
	ag = agent.New(agent.Options{Provider: srv.Provider(), Model: "m"})
	s, err = bad.startSession(ctx, ag, SessionOptions{}, nil)
	if err != nil || s.Warning == nil || !strings.Contains(s.Warning.Error(), path) || !strings.Contains(s.Warning.Error(), "not saved") {
		t.Fatalf("damaged: %+v, %v", s, err)
	}
	if err := ag.Send(ctx, "still works"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, junk) {
		t.Error("the damaged database was changed")
	}
	if _, err := bad.startSession(ctx, ag, SessionOptions{Continue: true}, nil); !errors.Is(err, record.ErrCorrupt) {
		t.Errorf("continue with a damaged database: %v", err)
	}
}
