package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/tool"
)

// resumedNotes are the notes to show at the start of conv: whether it is
// saved, and where to find the other saved conversations when one was
// continued.
func resumedNotes(conv *app.Conversation) []string {
	info, _ := conv.Resumed()
	notes := conv.Notes()
	if info.ID != "" && len(notes) > 0 {
		notes[len(notes)-1] += " otter sessions list shows the others."
	}
	if errors.Is(conv.Warning(), app.ErrSessionsDamaged) {
		notes = append(notes, "The file is kept: `otter sessions list` and `otter sessions export ID` read what it still holds.")
	}
	return notes
}

// replay adds stored rows to the transcript as the conversation showed
// them: prompts as typed (long pastes as placeholders), answers
// (interrupted ones marked), tool blocks with their arguments, results and
// durations (denied calls as denied), images by placeholder, notices of
// their kind and attachment chips. A message otter sent for the person (a
// Stop hook's feedback) was never shown as theirs, and is not now.
func (m *model) replay(entries []app.SessionEntry) {
	calls := map[string]*toolItem{}
	callTime := map[string]app.SessionEntry{}
	for _, e := range entries {
		msg := e.Message
		switch msg.Role {
		case llm.RoleUser:
			if e.Shown.Hidden {
				continue
			}
			text, short := e.ShownText(), e.Shown.Short
			for _, img := range msg.Images {
				text += fmt.Sprintf("\n[%s image, %d bytes]", img.MIMEType, len(img.Data))
			}
			m.tr.add(&userItem{text: text, short: short})
		case llm.RoleAssistant:
			m.replayThinking(msg.Reasoning)
			if msg.Text != "" {
				m.tr.add(newAnswer(msg.Text))
			}
			if msg.Interrupted {
				m.notice(itemInfo, "(the answer was interrupted here)")
			}
			for _, c := range msg.ToolCalls {
				it := &toolItem{id: c.ID, name: c.Name, args: compactJSON(c.Args), start: e.Time}
				m.tr.add(it)
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
				elapsed := r.Elapsed // how long it ran; older sessions: since the call
				if elapsed <= 0 {
					elapsed = max(e.Time.Sub(callTime[r.CallID].Time), 1)
				}
				if err := agent.Denial(r); err != nil {
					m.finishTool(it, nil, err, elapsed) // "✗ denied", as it was shown
					continue
				}
				m.finishTool(it, res, nil, elapsed)
			}
		case app.RoleNotice:
			switch e.Notice {
			case app.NoticeAttached:
				m.attachedChips(strings.Split(msg.Text, "\n"))
			case app.NoticeError:
				m.notice(itemError, msg.Text)
			default:
				m.notice(itemInfo, msg.Text)
			}
		}
	}
	for _, it := range calls {
		m.finishTool(it, nil, errors.New(app.InterruptedResult), 1)
	}
}

// resume shows the saved conversation the TUI continues.
func (m *model) resume() {
	_, entries := m.conv.Resumed()
	m.replay(entries)
	for _, n := range resumedNotes(m.conv) {
		m.notice(itemInfo, n)
	}
	if len(entries) > 0 {
		m.ctxLine = m.contextStatus() // what the conversation takes already
	}
}

// sessionCommand runs /new, /fork, /rename, /resume and /export; ok is
// false for any other command.
func (m *model) sessionCommand(cmd, rest string) (tea.Cmd, bool) {
	switch cmd {
	case "/new", "/fork", "/rename", "/resume", "/export":
	default:
		return nil, false
	}
	if m.busy || m.calls > 0 {
		m.notice(itemError, cmd+" waits until otter has finished: press esc to stop it first")
		return nil, true
	}
	ctx := m.ctx
	switch cmd {
	case "/new":
		if err := m.conv.New(ctx); err != nil {
			m.notice(itemError, err.Error())
			return nil, true
		}
		m.tr.items = nil
		m.follow()
		m.ctxLine = m.contextStatus()
		m.notice(itemInfo, "a new conversation (the last one is saved: /resume lists it)")
		return m.forgetImages(), true
	case "/fork":
		info, err := m.conv.Fork(ctx)
		if err != nil {
			m.notice(itemError, err.Error())
			return nil, true
		}
		m.ctxLine = m.contextStatus()
		m.sessionNotes(fmt.Sprintf("forked: you now continue %s, a copy of %s, which stays as it was", info.ID[:8], info.ParentID[:8]))
	case "/rename":
		if rest == "" {
			m.notice(itemError, "give the new title: /rename TITLE")
			return nil, true
		}
		if err := m.conv.Rename(ctx, rest); err != nil {
			m.notice(itemError, err.Error())
			return nil, true
		}
		m.notice(itemInfo, "renamed: "+rest)
	case "/resume":
		return m.resumeCommand(ctx, rest), true
	case "/export":
		path, err := m.conv.Export(ctx, rest)
		if err != nil {
			m.notice(itemError, err.Error())
			return nil, true
		}
		m.notice(itemInfo, "exported the conversation as Markdown to "+path)
	}
	return nil, true
}

// resumeCommand continues the session rest names (an ID or unique ID
// prefix), or lists the sessions whose messages hold the words of rest;
// without rest it opens the picker.
func (m *model) resumeCommand(ctx context.Context, rest string) tea.Cmd {
	if rest == "" {
		m.openSessionPicker() // picker.go
		return nil
	}
	if !strings.Contains(rest, " ") {
		info, entries, err := m.conv.Resume(ctx, rest)
		if err == nil {
			return m.showResumed(info, entries)
		}
		if !errors.Is(err, app.ErrSessionNotFound) {
			m.notice(itemError, err.Error())
			return nil
		}
	}
	list, err := m.conv.FindSessions(ctx, rest)
	if err != nil {
		m.notice(itemError, err.Error())
		return nil
	}
	if len(list) == 0 {
		m.notice(itemInfo, "no saved conversation matches")
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Conversations that mention %q — /resume ID continues one, /resume alone picks:\n", rest)
	now := time.Now()
	for _, i := range list {
		prompt := ""
		if i.FirstPrompt != "" && i.FirstPrompt != i.Title {
			prompt = " — " + truncateText(i.FirstPrompt, 50)
		}
		fmt.Fprintf(&b, "  %s  %-9s %4d msgs  %s%s  (%s)\n", i.ID[:8], app.SessionAge(i.Updated, now), i.Messages, truncateText(i.Title, 50), prompt, i.Cwd)
	}
	m.notice(itemInfo, strings.TrimRight(b.String(), "\n"))
	return nil
}

// resumeSession continues the session with this ID and shows it (the
// picker's enter).
func (m *model) resumeSession(id string) tea.Cmd {
	info, entries, err := m.conv.Resume(m.ctx, id)
	if err != nil {
		m.notice(itemError, err.Error())
		return nil
	}
	return m.showResumed(info, entries)
}

// showResumed replaces the transcript with a resumed session's.
func (m *model) showResumed(info app.SessionInfo, entries []app.SessionEntry) tea.Cmd {
	m.tr.items = nil
	m.follow()
	m.provider = providerOf(m.app) // the session's model, which resuming restored
	m.ctxLine = m.contextStatus()
	m.replay(entries)
	m.sessionNotes(fmt.Sprintf("Continuing session %s (%s, %d messages).", info.ID[:8], info.Title, info.Messages))
	return m.forgetImages()
}

// sessionNotes shows the notes of the session the conversation now
// continues, or fallback when there are none.
func (m *model) sessionNotes(fallback string) {
	if notes := resumedNotes(m.conv); len(notes) > 0 {
		for _, n := range notes {
			m.notice(itemInfo, n)
		}
		return
	}
	m.notice(itemInfo, fallback)
}

// truncateText shortens s to one line of at most n runes.
func truncateText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
