package agent_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/record"
	"github.com/otter-sh/otter/internal/session"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/toolname"
)

func openStore(t *testing.T) *session.Store {
	t.Helper()
	s, err := session.Open(context.Background(), filepath.Join(t.TempDir(), record.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConversationIsSavedAsItHappens drives an agent through a tool round
// with a session recorder: each tool result is in the database while the
// round still runs, the "allow for this session" answer is saved, and a new
// agent that loads the session continues it with both providers.
func TestConversationIsSavedAsItHappens(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		store := openStore(t)
		var saveErr error
		rec := session.NewRecorder(store, record.Info{Cwd: "/work/project", Model: "test-model"}, func(err error) { saveErr = err })
		add := toolname.Qualified("calc", "add")
		wait := toolname.Qualified("calc", "wait")
		var notes int
		h := newHarness(t, kind, setup{
			builtins: []tool.Tool{lookupWord(), writeNote(&notes)},
			opts:     func(o *agent.Options) { o.Recorder = rec },
		},
			llmtest.Reply{Text: []string{"Adding."}, Calls: []llmtest.Call{
				{ID: "call_add", Name: add, Args: `{"a":2,"b":3}`},
				{ID: "call_wait", Name: wait, Args: `{}`},
			}, InputTokens: 50, OutputTokens: 9},
		)
		h.approver.decisions = []ask.PermissionDecision{ask.AllowSession}

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		go func() {
			// While wait runs, add's result must already be saved; then
			// cancel (Esc) to end the round.
			for ctx.Err() == nil {
				if id := rec.ID(); id != "" {
					if e, _ := store.Entries(context.Background(), id, 0); len(e) == 3 && e[2].Message.Role == llm.RoleTool {
						cancel()
						return
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		if err := h.agent.Send(ctx, "add 2 and 3"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Send = %v, want the cancellation after add's result was saved", err)
		}
		entries, err := store.Entries(context.Background(), rec.ID(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 4 || entries[0].Message.Text != "add 2 and 3" || entries[1].Usage.InputTokens != 50 ||
			entries[2].Message.ToolResults[0].CallID != "call_add" || entries[2].Message.ToolResults[0].Text != "5" ||
			entries[3].Message.ToolResults[0].CallID != "call_wait" || !entries[3].Message.ToolResults[0].IsError {
			t.Fatalf("saved entries = %+v", entries)
		}

		// A permission "for this session" is saved with the session.
		h.srv.Push(
			llmtest.Reply{Calls: []llmtest.Call{{ID: "call_note", Name: "write_note", Args: `{"word":"x"}`}}},
			llmtest.Reply{Text: []string{"Noted."}},
		)
		if err := h.send(t, "write a note"); err != nil {
			t.Fatal(err)
		}
		if allowed, _ := store.AllowedTools(context.Background(), rec.ID()); len(allowed) != 1 || allowed[0] != "write_note" {
			t.Errorf("allowed tools saved = %v", allowed)
		}
		if saveErr != nil {
			t.Fatal(saveErr)
		}

		// Resume in a new agent: the model receives the same conversation,
		// and the tool allowed for the session runs without asking.
		history, err := store.History(context.Background(), rec.ID())
		if err != nil {
			t.Fatal(err)
		}
		allowed, _ := store.AllowedTools(context.Background(), rec.ID())
		h2 := newHarness(t, kind, setup{builtins: []tool.Tool{lookupWord(), writeNote(&notes)}},
			llmtest.Reply{Calls: []llmtest.Call{{ID: "call_note2", Name: "write_note", Args: `{"word":"y"}`}}},
			llmtest.Reply{Text: []string{"Again."}},
		)
		if err := h2.agent.Load(history, allowed); err != nil {
			t.Fatal(err)
		}
		if err := h2.send(t, "and again"); err != nil {
			t.Fatal(err)
		}
		if len(h2.approver.prompts()) != 0 || notes != 2 {
			t.Errorf("after resuming, write_note asked %d times and ran %d times", len(h2.approver.prompts()), notes)
		}
		first := h2.srv.Requests()[0]
		var texts []string
		for _, m := range first.Messages {
			texts = append(texts, m.Role+":"+m.Text)
		}
		want := "user:add 2 and 3|assistant:Adding.|tool:|user:write a note|assistant:|tool:|assistant:Noted.|user:and again"
		if got := strings.Join(texts, "|"); got != want {
			t.Errorf("resumed request:\n got %s\nwant %s", got, want)
		}
		if r := first.Messages[2].ToolResults; len(r) != 2 || r[0].Text != "5" || !r[1].IsError {
			t.Errorf("resumed tool results = %+v", r)
		}
	})
}

// TestCancelledAnswerIsSavedInterrupted: Esc while the answer streams
// saves the text so far, marked interrupted, though the message's context
// is cancelled.
func TestCancelledAnswerIsSavedInterrupted(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		store := openStore(t)
		rec := session.NewRecorder(store, record.Info{Cwd: "/p"}, nil)
		hold := make(chan struct{})
		defer close(hold)
		h := newHarness(t, kind, setup{opts: func(o *agent.Options) { o.Recorder = rec }},
			llmtest.Reply{Text: []string{"Partial ", "rest"}, Hold: hold})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		h.onText = func(string) { cancel() }
		if err := h.agent.Send(ctx, "hi"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Send = %v", err)
		}
		hist, err := store.History(context.Background(), rec.ID())
		if err != nil || len(hist) != 2 || hist[1].Text != "Partial " || !hist[1].Interrupted {
			t.Errorf("saved = %+v, %v", hist, err)
		}
	})
}

func TestLoadWhileBusy(t *testing.T) {
	hold := make(chan struct{})
	h := newHarness(t, llmtest.OpenAI, setup{}, llmtest.Reply{Text: []string{"a", "b"}, Hold: hold})
	started := make(chan struct{})
	var once sync.Once
	h.onText = func(string) { once.Do(func() { close(started) }) }
	done := make(chan error)
	go func() { done <- h.send(t, "hi") }()
	<-started
	if err := h.agent.Load(nil, nil); !errors.Is(err, agent.ErrBusy) {
		t.Errorf("Load during Send = %v, want ErrBusy", err)
	}
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A tool call's elapsed time is the time it ran, from the moment it was
// allowed: ToolCallRunning comes after the permission answer, and the
// session records the same Elapsed as ToolCallFinished reports, so a
// resumed conversation shows what the live one showed.
func TestToolElapsedCountsFromWhenItWasAllowed(t *testing.T) {
	store := openStore(t)
	rec := session.NewRecorder(store, record.Info{Cwd: "/work/project", Model: "test-model"}, func(err error) { t.Error(err) })
	var notes int
	h := newHarness(t, llmtest.OpenAI, setup{
		builtins: []tool.Tool{writeNote(&notes)},
		opts:     func(o *agent.Options) { o.Recorder = rec },
	},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "call_note", Name: "write_note", Args: `{}`}}},
		llmtest.Reply{Text: []string{"Written."}},
	)
	h.approver.decisions = []ask.PermissionDecision{ask.AllowOnce}
	askedAt := -1
	h.approver.onAsk = func() { askedAt = len(h.allEvents()) }
	if err := h.send(t, "write a note"); err != nil {
		t.Fatal(err)
	}
	evs := h.allEvents()
	running := -1
	for i, ev := range evs {
		if r, ok := ev.(agent.ToolCallRunning); ok && r.ID == "call_note" {
			running = i
		}
	}
	if askedAt < 0 || running < askedAt {
		t.Fatalf("ToolCallRunning at event %d, the permission asked at %d: it must come after the answer; events %#v", running, askedAt, evs)
	}
	fin := h.toolFinished()
	if len(fin) != 1 || fin[0].Elapsed <= 0 {
		t.Fatalf("ToolCallFinished = %+v", fin)
	}
	entries, err := store.Entries(context.Background(), rec.ID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var recorded time.Duration
	for _, e := range entries {
		for _, r := range e.Message.ToolResults {
			recorded = r.Elapsed
		}
	}
	if recorded != fin[0].Elapsed.Truncate(time.Microsecond) {
		t.Errorf("the session records the call took %v, the live view was told %v", recorded, fin[0].Elapsed)
	}
}
