package tui

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/session"
	"github.com/otter-sh/otter/internal/tool"
)

// A Resumer is a Backend that continues a saved conversation: the TUI
// shows its stored messages first, as they looked, and notes say whether
// the conversation is saved.
type Resumer interface {
	// Resumed returns the resumed session and its stored rows (none for a
	// new conversation), and notes to show at the start.
	Resumed() (session.Info, []session.Entry, []string)
}

// StartSession attaches the agent to the session o asks for (see
// app.StartSession) before the TUI starts. An ID that names no session is
// an error.
func (b *AppBackend) StartSession(ctx context.Context, o app.SessionOptions) error {
	s, err := b.app.StartSession(ctx, b.agent, o, func(err error) {
		b.logger.Warn("session", "err", err)
		b.ui.send(noticeMsg{itemError, err.Error()})
	})
	if err != nil {
		return err
	}
	b.session = s
	return nil
}

// Resumed implements Resumer.
func (b *AppBackend) Resumed() (session.Info, []session.Entry, []string) {
	if b.session == nil {
		return session.Info{}, nil, nil
	}
	var notes []string
	if b.session.Warning != nil {
		notes = append(notes, b.session.Warning.Error())
	}
	if r := b.session.Resumed; r.ID != "" {
		copyOf := ""
		if r.ParentID != "" {
			copyOf = ", a copy of " + r.ParentID[:8]
		}
		notes = append(notes, fmt.Sprintf("Continuing session %s (%s%s, %d messages, last %s). otter sessions list shows the others.",
			r.ID[:8], r.Title, copyOf, r.Messages, r.Updated.Format("2006-01-02 15:04")))
	}
	return b.session.Resumed, b.session.Entries, notes
}

// replay adds stored rows to the transcript as the conversation showed
// them: prompts, answers (interrupted ones marked), tool blocks with their
// arguments, results and durations, images by placeholder, notices.
func (m *model) replay(entries []session.Entry) {
	calls := map[string]*item{}
	callTime := map[string]session.Entry{}
	for _, e := range entries {
		msg := e.Message
		switch msg.Role {
		case llm.RoleUser:
			it := m.notice(itemUser, msg.Text)
			for _, img := range msg.Images {
				it.text.WriteString(fmt.Sprintf("\n[%s image, %d bytes]", img.MIMEType, len(img.Data)))
			}
		case llm.RoleAssistant:
			if msg.Text != "" {
				it := m.tr.add(&item{kind: itemAssistant})
				it.text.WriteString(msg.Text)
			}
			if msg.Interrupted {
				m.notice(itemInfo, "(the answer was interrupted here)")
			}
			for _, c := range msg.ToolCalls {
				it := m.tr.add(&item{kind: itemTool, id: c.ID, name: c.Name, args: compactJSON(c.Args), start: e.Time})
				calls[c.ID], callTime[c.ID] = it, e
			}
		case llm.RoleTool:
			for _, r := range msg.ToolResults {
				it := calls[r.CallID]
				if it == nil {
					continue
				}
				delete(calls, r.CallID)
				text := r.Text
				for _, img := range r.Images {
					text += fmt.Sprintf("\n[%s image, %d bytes]", img.MIMEType, len(img.Data))
				}
				res := &tool.Result{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: r.IsError}
				m.finishTool(it, res, nil, max(e.Time.Sub(callTime[r.CallID].Time), 1))
			}
		case session.RoleNotice:
			m.notice(itemInfo, msg.Text)
		}
	}
	for _, it := range calls {
		m.finishTool(it, nil, errors.New(session.InterruptedResult), 1)
	}
}

// resume shows what a Resumer backend continues.
func (m *model) resume() {
	r, ok := m.b.(Resumer)
	if !ok {
		return
	}
	_, entries, notes := r.Resumed()
	m.replay(entries)
	for _, n := range notes {
		m.notice(itemInfo, n)
	}
}
