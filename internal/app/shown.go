package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/record"
)

// What the person saw of a conversation is saved with it, so that resuming
// it shows the same: their message as they typed it (the model is sent
// more), the notices of a turn (a hook that blocked, a turn that failed,
// what was attached) where they stood, and the model in use.

// pendingPrompt is the person's message on its way to the model: how it is
// shown, and the notices that came before the agent saved it, which are
// saved after it, as the transcript showed them under it.
type pendingPrompt struct {
	shown   record.Shown
	notices []savedNotice
	saved   bool // the agent saved its first user message
}

type savedNotice struct {
	kind record.NoticeKind
	text string
}

// beginPrompt starts collecting what goes with the next message the agent
// saves.
func (c *Conversation) beginPrompt() {
	c.mu.Lock()
	c.prompt = &pendingPrompt{}
	c.mu.Unlock()
}

// setShown says how the message on its way is shown.
func (c *Conversation) setShown(shown record.Shown) {
	c.mu.Lock()
	if c.prompt != nil {
		c.prompt.shown = shown
	}
	c.mu.Unlock()
}

// endPrompt forgets what was collected for a message that was not saved.
func (c *Conversation) endPrompt() {
	c.mu.Lock()
	c.prompt = nil
	c.mu.Unlock()
}

// userMessage says what a user message the agent saves is: the first of
// the message on its way (with how it is shown and the notices collected
// before it), another of it (a server's prompt has several), or, with no
// message on its way, one otter sent for the person.
func (c *Conversation) userMessage() (p *pendingPrompt, first bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p = c.prompt
	if p == nil || p.saved {
		return p, false
	}
	p.saved = true
	out := *p
	p.notices = nil
	return &out, true
}

// shownRecorder is the agent's recorder: it saves the person's message
// with how it was shown, and the notices collected before it right after
// it. A user message that comes once the model has answered, with no Send
// or SendPrompt bringing it, is one otter sent for the person (a Stop
// hook's feedback): it is saved Hidden.
type shownRecorder struct {
	record.Recorder
	c *Conversation
}

func (r shownRecorder) RecordMessage(m llm.Message, u llm.Usage) {
	if m.Role != llm.RoleUser {
		r.c.endPrompt() // the model answers: what follows is the agent's
		r.Recorder.RecordMessage(m, u)
		return
	}
	p, first := r.c.userMessage()
	switch {
	case p == nil:
		r.Recorder.RecordPrompt(m, record.Shown{Hidden: true})
	case first:
		r.Recorder.RecordPrompt(m, p.shown)
		for _, n := range p.notices {
			r.Recorder.Notice(n.kind, n.text)
		}
	default:
		r.Recorder.RecordMessage(m, u)
	}
}

// savingNotices returns emit that first saves the notices the front ends
// show for ev (see noticesOf).
func (c *Conversation) savingNotices(emit func(agent.Event)) func(agent.Event) {
	return func(ev agent.Event) {
		for _, n := range noticesOf(ev) {
			c.saveNotice(n.kind, n.text)
		}
		emit(ev)
	}
}

// noticesOf are the lines a front end shows in the transcript for ev, in
// the words of the event: a hook's message, a note on the message, the
// chips of what was attached, a compaction (or one not made), a failed
// turn, an answer cut short. (Not the
// note that a model's context window is unknown: the agent says it again
// once the resumed conversation goes on.)
func noticesOf(ev agent.Event) []savedNotice {
	switch ev := ev.(type) {
	case agent.HookMessage:
		if ev.Failed {
			return []savedNotice{{record.NoticeError, ev.Text}}
		}
		return []savedNotice{{record.NoticeInfo, ev.Text}}
	case Note:
		return []savedNotice{{record.NoticeInfo, ev.Text}}
	case Attached:
		if len(ev.Items) > 0 {
			return []savedNotice{{record.NoticeAttached, strings.Join(ev.Items, "\n")}}
		}
	case agent.Compacted:
		// An automatic compaction happens within a turn, unseen but for
		// its notice: a resumed conversation that dropped it would hide
		// why the model forgot the details. Saved here, it is saved by
		// every front end (otter -p as the TUI).
		return []savedNotice{{record.NoticeInfo, CompactedText(ev)}}
	case agent.NothingToGain:
		return []savedNotice{{record.NoticeInfo, NothingToGainText(ev)}}
	case agent.TurnFinished:
		var out []savedNotice
		if ev.Err != nil && !ev.Canceled {
			out = append(out, savedNotice{record.NoticeError, ev.Err.Error()})
		}
		if ev.Truncated {
			out = append(out, savedNotice{record.NoticeInfo, agent.TruncatedNote})
		}
		return out
	}
	return nil
}

// saveNotice saves a notice where it stands: after the message on its way
// when it came before the agent saved that.
func (c *Conversation) saveNotice(kind record.NoticeKind, text string) {
	c.mu.Lock()
	if p := c.prompt; p != nil && !p.saved {
		p.notices = append(p.notices, savedNotice{kind, text})
		c.mu.Unlock()
		return
	}
	s := c.session
	c.mu.Unlock()
	if s != nil && s.Recorder != nil {
		s.Recorder.Notice(kind, text)
	}
}

// providerName is the name of the provider in use: its [providers.NAME]
// key, or the API otter picked from the environment.
func (a *App) providerName() string {
	if p, _, _ := a.Provider(); p != nil {
		return p.Name()
	}
	return a.Config().Agent.Provider
}

// resumeModel gives a resumed session the model it used last, unless the
// command line chose one (--model, --provider), and saves the model it
// continues with. It returns a note when that model cannot be used now.
func (a *App) resumeModel(ctx context.Context, ag *agent.Agent, store record.Store, src record.Info) string {
	var note string
	if a.opts.Model == "" && a.opts.Provider == "" && src.Model != "" {
		p, model, _ := a.Provider()
		provider := src.Provider
		if provider == "" && p != nil {
			provider = p.Name() // saved before otter named the provider of the environment
		}
		if provider != "" && (p == nil || p.Name() != provider || model != src.Model) {
			if err := a.SetModel(provider, src.Model); err != nil {
				now := "no model"
				if p != nil {
					now = p.Name() + "/" + model
				}
				note = fmt.Sprintf("This conversation used %s/%s, which cannot be used now (%v), so it continues with %s.", provider, src.Model, err, now)
			}
		}
	}
	if m, name := ag.Model(), a.providerName(); m != "" && (m != src.Model || name != src.Provider) {
		if err := store.SetModel(ctx, src.ID, name, m); err != nil {
			a.Logger.Warn("saving the model of a resumed session", "err", err)
		}
	}
	return note
}
