package session

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/record"
)

// writeTimeout bounds one write-through; the busy timeout within it lets
// another otter finish its write first.
const writeTimeout = 30 * time.Second

// Recorder saves one conversation as it happens: it is what the agent
// calls when a message joins the conversation (agent.Recorder). A new
// session's row is created with its first message, so that starting otter
// and quitting leaves nothing behind.
//
// Writes do not take the agent's context: an answer cancelled by the
// person is still saved, marked interrupted. When a write fails the
// Recorder reports it once through OnError and saves nothing more of this
// conversation, so that what is stored never has holes.
type Recorder struct {
	store   *Store
	onError func(error)

	mu     sync.Mutex
	info   record.Info
	failed bool
	draft  int64 // the seq of the answer saved as it streams; 0: none
	prompt int64 // the seq of the person's latest message saved; 0: none
}

// NewRecorder returns a Recorder that appends to the session info.ID, or,
// when info.ID is empty, to a new session described by info (Cwd, Provider,
// Model, ParentID) that is created with the first message. onError (may be
// nil) is told of the first failed write.
func NewRecorder(s *Store, info record.Info, onError func(error)) *Recorder {
	return &Recorder{store: s, info: info, onError: onError}
}

// ID is the session's ID; "" while a new session has no message yet.
func (r *Recorder) ID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.info.ID
}

// Store is the store the Recorder writes to.
func (r *Recorder) Store() *Store { return r.store }

// do runs one write with the session created first if needed.
func (r *Recorder) do(what string, fn func(ctx context.Context, id string) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	if r.info.ID == "" {
		info, err := r.store.Create(ctx, r.info)
		if err != nil {
			r.fail(what, err)
			return
		}
		r.info = info
	}
	if err := fn(ctx, r.info.ID); err != nil {
		r.fail(what, err)
	}
}

func (r *Recorder) fail(what string, err error) {
	r.failed = true
	if r.onError != nil {
		r.onError(fmt.Errorf("could not save %s, so otter goes on without saving this conversation: %w", what, err))
	}
}

// RecordMessage saves a user or assistant message with the usage of the
// model call that produced it.
func (r *Recorder) RecordMessage(m llm.Message, u llm.Usage) {
	r.do("a message", func(ctx context.Context, id string) error {
		seq := r.draft
		r.draft = 0 // a draft never outlives the answer it belongs to
		if seq != 0 && m.Role == llm.RoleAssistant {
			return r.store.Rewrite(ctx, id, seq, m, u)
		}
		_, err := r.store.Append(ctx, id, m, u)
		return err
	})
}

// RecordPrompt saves the person's message with how it was shown. A
// message of the person's (not one otter sent for them, Hidden) begins a
// turn: PromptSeq is its Seq from now on.
func (r *Recorder) RecordPrompt(m llm.Message, shown record.Shown) {
	r.do("a message", func(ctx context.Context, id string) error {
		r.draft = 0
		if !shown.Hidden {
			r.prompt = 0 // not the last turn's, should this one not be saved
		}
		seq, err := r.store.appendRow(ctx, id, m, llm.Usage{}, rowMeta{shown: shown})
		if err == nil && !shown.Hidden {
			r.prompt = seq
		}
		return err
	})
}

// PromptSeq is the Seq of the person's latest message this Recorder saved,
// the turn a file changed now belongs to; 0 when none was saved.
func (r *Recorder) PromptSeq() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed {
		return 0
	}
	return r.prompt
}

// RecordDraft saves the text of the answer streaming now, so that what
// was on screen survives otter being killed: the first call adds it,
// marked Abandoned (what it is if nothing follows), later ones rewrite it,
// and the answer's RecordMessage replaces it.
func (r *Recorder) RecordDraft(text string) {
	r.do("an answer as it streams", func(ctx context.Context, id string) error {
		m := llm.Message{Role: llm.RoleAssistant, Text: text, Interrupted: true, Abandoned: true}
		if r.draft != 0 {
			return r.store.Rewrite(ctx, id, r.draft, m, llm.Usage{})
		}
		seq, err := r.store.Append(ctx, id, m, llm.Usage{})
		r.draft = seq
		return err
	})
}

// RecordToolResult saves one tool call's result as it arrives.
func (r *Recorder) RecordToolResult(res llm.ToolResult) {
	r.do("a tool result", func(ctx context.Context, id string) error {
		_, err := r.store.Append(ctx, id, llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{res}}, llm.Usage{})
		return err
	})
}

// RecordAllowed saves that a tool was allowed for the rest of the session.
func (r *Recorder) RecordAllowed(tool string) {
	r.do("a permission", func(ctx context.Context, id string) error {
		return r.store.AllowTool(ctx, id, tool)
	})
}

// Notice saves a line the front end showed in the transcript, of kind; it
// is never sent to a model. A notice alone does not create a session.
func (r *Recorder) Notice(kind record.NoticeKind, text string) {
	if r.ID() == "" {
		return
	}
	r.do("a notice", func(ctx context.Context, id string) error {
		_, err := r.store.appendRow(ctx, id, llm.Message{Role: record.RoleNotice, Text: text}, llm.Usage{}, rowMeta{notice: kind})
		return err
	})
}

// SetModel records a change of provider or model.
func (r *Recorder) SetModel(provider, model string) {
	r.mu.Lock()
	r.info.Provider, r.info.Model = provider, model
	started := r.info.ID != ""
	r.mu.Unlock()
	if started {
		r.do("the model", func(ctx context.Context, id string) error {
			return r.store.SetModel(ctx, id, provider, model)
		})
	}
}
