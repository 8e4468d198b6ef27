package app

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/session"
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
	store *session.Store
	err   error
}

// ErrSessionsOff is returned by Sessions when [sessions] enabled = false.
var ErrSessionsOff = errors.New("saving conversations is turned off ([sessions] enabled = false)")

// Sessions opens the session database ($XDG_DATA_HOME/otter/otter.db) the
// first time it is called, and deletes the sessions older than [sessions]
// keep_days. It returns ErrSessionsOff when [sessions] enabled = false, and
// a *session.Error (naming the file and what to do) when the database
// cannot be used.
func (a *App) Sessions(ctx context.Context) (*session.Store, error) {
	if !a.Config.Sessions.IsEnabled() {
		return nil, ErrSessionsOff
	}
	s := &a.sessions
	s.once.Do(func() {
		s.store, s.err = session.Open(ctx, session.DefaultPath(a.Paths.DataDir))
		if s.err != nil {
			return
		}
		if n, err := s.store.Prune(ctx, a.Config.Sessions.Retention()); err != nil {
			a.Logger.Warn("could not delete old sessions", "err", err)
		} else if n > 0 {
			a.Logger.Info("deleted old sessions", "count", n, "keep_days", a.Config.Sessions.Retention())
		}
	})
	return s.store, s.err
}

// closeSessions closes the session database if it was opened.
func (a *App) closeSessions() error {
	if a.sessions.store == nil {
		return nil
	}
	return a.sessions.store.Close()
}

// Session is the conversation an agent saves to.
type Session struct {
	// Recorder saves the conversation; nil when nothing is saved.
	Recorder *session.Recorder
	// Resumed describes the session that was resumed (its copy when
	// forked); zero for a new conversation.
	Resumed session.Info
	// Entries are the resumed session's stored rows, for a front end to
	// show the conversation as it was.
	Entries []session.Entry
	// Warning, when set, says why the conversation is not saved (the
	// database cannot be used); the front end shows it.
	Warning error
	// Fresh is set when the latest conversation of the working directory
	// was asked for and there is none: this is a new one, and the front end
	// says so.
	Fresh bool
}

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
// can refuse it before it starts the MCP servers.
func (a *App) CheckResume(ctx context.Context, o SessionOptions) error {
	if !o.Resuming() || o.Off {
		return nil // StartSession reports resuming with saving off
	}
	store, err := a.Sessions(ctx)
	if err != nil {
		return err
	}
	_, err = a.resumed(ctx, store, o)
	return err
}

// resumed is the saved session o resumes: the one its ID (or unique
// prefix) names, or for --continue the latest of the working directory.
func (a *App) resumed(ctx context.Context, store *session.Store, o SessionOptions) (session.Info, error) {
	if o.Continue && o.Resume == "" {
		info, err := store.Latest(ctx, a.WorkDir)
		if errors.Is(err, session.ErrNotFound) {
			// Nothing to continue: a new conversation (Session.Fresh says so).
			return session.Info{}, nil
		}
		return info, err
	}
	return store.Get(ctx, o.Resume)
}

// StartSession gives ag the session o asks for: a new one (created with
// its first message), the latest of the working directory (Continue), or
// the one named by Resume, whose history and tools allowed for the session
// are loaded into ag (into a copy of it with Fork). onError hears of a
// write that fails later (otter then goes on without saving).
//
// A database that cannot be used is no error for a new conversation: the
// Session's Warning says so and nothing is saved. Resuming fails with the
// database's error, or one wrapping session.ErrNotFound or
// session.ErrAmbiguous for an ID that names no single session.
func (a *App) StartSession(ctx context.Context, ag *agent.Agent, o SessionOptions, onError func(error)) (*Session, error) {
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
	info := session.Info{Cwd: a.WorkDir, Provider: a.Config.Agent.Provider, Model: ag.Model()}
	out := &Session{}
	if o.Resuming() {
		src, err := a.resumed(ctx, store, o)
		if err != nil {
			return nil, err
		}
		if src.ID == "" {
			out.Fresh = true
			out.Recorder = session.NewRecorder(store, info, onError)
			ag.SetRecorder(out.Recorder)
			return out, nil
		}
		if o.Fork {
			if src, err = store.Fork(ctx, src.ID); err != nil {
				return nil, err
			}
		}
		if out.Entries, err = store.Entries(ctx, src.ID, 0); err != nil {
			return nil, err
		}
		allowed, err := store.AllowedTools(ctx, src.ID)
		if err != nil {
			return nil, err
		}
		// The model is sent the compacted form: the latest compaction's
		// summary and what followed it (out.Entries keeps every message).
		history, err := store.ModelHistory(ctx, src.ID)
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
		if m := ag.Model(); m != "" && m != src.Model {
			store.SetModel(ctx, src.ID, a.Config.Agent.Provider, m)
		}
	}
	out.Recorder = session.NewRecorder(store, info, onError)
	ag.SetRecorder(out.Recorder)
	return out, nil
}
