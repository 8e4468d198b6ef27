package app

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/record"
)

// SessionOptions say which saved conversation an agent continues.
type SessionOptions struct {
	// Off saves nothing, whatever [sessions] says.
	Off bool
	// Continue resumes the latest session of the working directory.
	Continue bool
	// Resume resumes the session with this ID or unique ID prefix.
	Resume string
	// Fork continues a copy of the resumed session, leaving it as it was.
	Fork bool
}

// Resuming reports whether o asks for a saved session.
func (o SessionOptions) Resuming() bool { return o.Continue || o.Resume != "" }

// sessionStore is the App's session database, opened once.
type sessionStore struct {
	once  sync.Once
	store record.Store
	err   error
	// readOnly is the database SessionsToRead opened read-only.
	readOnly record.Store
}

// ErrSessionsOff is returned by Sessions when [sessions] enabled = false.
var ErrSessionsOff = errors.New("saving conversations is turned off ([sessions] enabled = false)")

// Sessions opens the session database ($XDG_DATA_HOME/otter/otter.db) the
// first time it is called, and deletes the sessions older than [sessions]
// keep_days. It returns ErrSessionsOff when [sessions] enabled = false, and
// a *record.Error (naming the file and what to do) when the database
// cannot be used.
func (a *App) Sessions(ctx context.Context) (record.Store, error) {
	if !a.Config().Sessions.IsEnabled() {
		return nil, ErrSessionsOff
	}
	s := &a.sessions
	s.once.Do(func() {
		s.store, s.err = a.opts.Parts.openSessions(ctx, record.DefaultPath(a.Paths.DataDir), false)
		if s.err != nil {
			return
		}
		if n, err := s.store.Prune(ctx, a.Config().Sessions.Retention()); err != nil {
			a.Logger.Warn("could not delete old sessions", "err", err)
		} else if n > 0 {
			a.Logger.Info("deleted old sessions", "count", n, "keep_days", a.Config().Sessions.Retention())
		}
	})
	return s.store, s.err
}

// SessionsToRead opens the session database for reading what it holds
// (listing, searching, exporting). Where it cannot be written — a
// read-only data directory, or a damaged file whose readable sessions can
// still be exported — it is opened read-only, and degraded is why (nil
// when the database opened for writing too).
func (a *App) SessionsToRead(ctx context.Context) (store record.Store, degraded error, err error) {
	store, err = a.Sessions(ctx)
	if err == nil || !(errors.Is(err, record.ErrReadOnly) || errors.Is(err, record.ErrCorrupt)) {
		return store, nil, err
	}
	if a.sessions.readOnly != nil { // opened by an earlier call: one handle
		return a.sessions.readOnly, err, nil
	}
	ro, roErr := a.opts.Parts.openSessions(ctx, record.DefaultPath(a.Paths.DataDir), true)
	if roErr != nil {
		return nil, nil, err
	}
	a.sessions.readOnly = ro
	return ro, err, nil
}

// closeSessions closes the session database if it was opened.
func (a *App) closeSessions() error {
	var errs []error
	if a.sessions.store != nil {
		errs = append(errs, a.sessions.store.Close())
	}
	if a.sessions.readOnly != nil {
		errs = append(errs, a.sessions.readOnly.Close())
	}
	return errors.Join(errs...)
}

// Session is the conversation an agent saves to.
type Session struct {
	// Recorder saves the conversation; nil when nothing is saved.
	Recorder record.Recorder
	// Resumed describes the session that was resumed (its copy when
	// forked); zero for a new conversation.
	Resumed record.Info
	// Entries are the resumed session's stored rows, for a front end to
	// show the conversation as it was.
	Entries []record.Entry
	// Warning, when set, says why the conversation is not saved (the
	// database cannot be used); the front end shows it.
	Warning error
	// Fresh is set when the latest conversation of the working directory
	// was asked for and there is none: this is a new one, and the front end
	// says so.
	Fresh bool
	// Cleared is the latest session of the directory when continuing it
	// found it cleared (Conversation.Clear): a new conversation begins
	// instead.
	Cleared record.Info
	// ModelNote says that the resumed session's model cannot be used now,
	// and which one it continues with.
	ModelNote string
}

// clearedState marks a session whose conversation was cleared, so that
// continuing the latest conversation does not bring it back.
const clearedState = "cleared"

// ID is the session's ID, "" while a new conversation has no message yet
// or when nothing is saved.
func (s *Session) ID() string {
	if s == nil || s.Recorder == nil {
		return ""
	}
	return s.Recorder.ID()
}

// CheckResume reports an error when o resumes a session that cannot be
// found (an unknown ID, no conversation to continue), so that a front end
// can refuse it before it starts the MCP servers. Continuing a directory
// whose latest conversation was cleared is no error: a new one begins.
func (a *App) CheckResume(ctx context.Context, o SessionOptions) error {
	if !o.Resuming() || o.Off {
		return nil // startSession reports resuming with saving off
	}
	store, err := a.Sessions(ctx)
	if err != nil {
		return err
	}
	_, _, err = a.resumed(ctx, store, o)
	return err
}

// resumed is the saved session o resumes: the one its ID (or unique
// prefix) names, or when continuing the latest of the working directory.
// When that latest one was cleared, cleared is true: there is nothing to
// continue, and a new conversation begins.
func (a *App) resumed(ctx context.Context, store record.Store, o SessionOptions) (info record.Info, cleared bool, err error) {
	if o.Continue && o.Resume == "" {
		info, err = store.Latest(ctx, a.WorkDir)
		if errors.Is(err, record.ErrNotFound) {
			// Nothing to continue: a new conversation (Session.Fresh says so).
			return record.Info{}, false, nil
		}
		if err != nil {
			return info, false, err
		}
		found, err := store.State(ctx, info.ID, clearedState, &cleared)
		if err != nil {
			return info, false, err
		}
		return info, found && cleared, nil
	}
	info, err = store.Get(ctx, o.Resume)
	return info, false, err
}

// startSession gives ag the session o asks for: a new one (created with
// its first message), the latest of the working directory (Continue), or
// the one named by Resume, whose history and tools allowed for the session
// are loaded into ag (into a copy of it with Fork). onError hears of a
// write that fails later (otter then goes on without saving).
//
// A database that cannot be used is no error for a new conversation: the
// Session's Warning says so and nothing is saved. Resuming fails with the
// database's error, or one wrapping record.ErrNotFound or
// record.ErrAmbiguous for an ID that names no single session.
func (a *App) startSession(ctx context.Context, ag *agent.Agent, o SessionOptions, onError func(error)) (*Session, error) {
	if o.Off {
		if o.Resuming() {
			return nil, errors.New("resuming a session needs the session database, and saving is turned off")
		}
		ag.SetRecorder(nil)
		return &Session{}, nil
	}
	store, err := a.Sessions(ctx)
	if err != nil {
		if o.Resuming() {
			return nil, err
		}
		ag.SetRecorder(nil)
		if errors.Is(err, ErrSessionsOff) {
			return &Session{}, nil
		}
		return &Session{Warning: fmt.Errorf("%w; this conversation is not saved", err)}, nil
	}
	info := record.Info{Cwd: a.WorkDir, Provider: a.providerName(), Model: ag.Model()}
	out := &Session{}
	if o.Resuming() {
		src, cleared, err := a.resumed(ctx, store, o)
		if err != nil {
			return nil, err
		}
		if src.ID == "" || cleared {
			if err := ag.Load(nil, nil); err != nil {
				return nil, err
			}
			out.Fresh = src.ID == ""
			if cleared {
				out.Cleared = src
			}
			out.Recorder = store.Record(info, onError)
			ag.SetRecorder(out.Recorder)
			return out, nil
		}
		if o.Resume != "" && !o.Fork {
			// Resumed by its ID, a cleared conversation is taken up again:
			// continuing the latest finds it from now on.
			if err := store.SetState(ctx, src.ID, clearedState, false); err != nil {
				return nil, err
			}
		}
		if o.Fork {
			if src, err = store.Fork(ctx, src.ID); err != nil {
				return nil, err
			}
		}
		// The model is sent the compacted form: the latest compaction's
		// summary and what followed it (out.Entries keeps every message);
		// both come from one read of the rows.
		var history []llm.Message
		if out.Entries, history, err = store.Resume(ctx, src.ID); err != nil {
			return nil, err
		}
		allowed, err := store.AllowedTools(ctx, src.ID)
		if err != nil {
			return nil, err
		}
		if err := ag.Load(history, allowed); err != nil {
			return nil, err
		}
		var loaded []string
		if found, err := store.State(ctx, src.ID, agent.LoadedToolsState, &loaded); err == nil && found {
			ag.LoadTools(loaded)
		}
		out.Resumed = src
		info = src
	}
	out.Recorder = store.Record(info, onError)
	ag.SetRecorder(out.Recorder)
	if out.Resumed.ID != "" {
		// After the recorder: switching the model is saved to this session.
		out.ModelNote = a.resumeModel(ctx, ag, store, out.Resumed)
	}
	return out, nil
}
