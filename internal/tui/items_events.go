package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/tool"
)

// This file hands the agent's events to the transcript items they change:
// a text delta to the answer streaming, a tool's progress and result to
// its block. The items keep their own state; the model keeps which of
// them are still arriving.

func (m *model) chatEvent(ev agent.Event) tea.Cmd {
	if m.contextEvent(ev) || m.hookEvent(ev) {
		return nil
	}
	switch ev := ev.(type) {
	case agent.ThinkingDelta:
		return m.thinkingDelta(ev)
	case agent.TextDelta:
		m.retry = nil
		m.endThinking()
		if m.streaming == nil {
			m.streaming = &assistantItem{streaming: true}
			m.tr.add(m.streaming)
		}
		m.streaming.add(ev.Text)
		m.turnText = true
		return m.frameTick()
	case agent.ToolCallStarted:
		m.endStreaming()
		it := &toolItem{id: ev.ID, name: ev.Name, args: compactJSON(ev.Args), start: time.Now()}
		m.tr.add(it)
		m.toolItems[ev.ID] = it
		return m.startSpinner()
	case agent.ToolCallRunning:
		if it := m.toolItems[ev.ID]; it != nil {
			it.running() // its time runs from when it was allowed
		}
	case agent.ToolProgress:
		if it := m.toolItems[ev.ID]; it != nil {
			it.progressed(ev.Progress)
		}
	case agent.ToolCallFinished:
		if it := m.toolItems[ev.ID]; it != nil {
			return m.finishTool(it, ev.Result, ev.Err, ev.Elapsed)
		}
	case agent.Retrying:
		m.showRetry(ev)
	case app.Attached:
		m.attachedChips(ev.Items)
	case app.WaitingForServers:
		m.waiting = true
		m.hint = waitingHint(len(ev.Servers))
	case app.ServersReady:
		if m.waiting {
			m.waiting, m.hint = false, ""
		}
	case agent.TurnFinished:
		m.endStreaming()
		if ev.Text != "" && !m.turnText {
			m.tr.add(newAnswer(ev.Text))
			m.turnText = true
		}
		if ev.Err != nil && !ev.Canceled {
			m.notice(itemError, ev.Err.Error())
		}
		if ev.Truncated {
			m.notice(itemInfo, agent.TruncatedNote)
		}
	}
	return nil
}

// frameTick asks for the next frame, when none is due: what streamed in
// meanwhile shows then.
func (m *model) frameTick() tea.Cmd {
	if m.frameDue {
		return nil
	}
	m.frameDue = true
	return tea.Tick(frameInterval, func(time.Time) tea.Msg { return frameMsg{} })
}

// showRetry says that the model call is being retried, on one line that
// each further retry of the turn updates.
func (m *model) showRetry(ev agent.Retrying) {
	why := strings.TrimSpace(strings.SplitN(fmt.Sprint(ev.Err), "\n", 2)[0])
	text := fmt.Sprintf("the model call failed (%s); retrying in %s (attempt %d)",
		ansi.Truncate(why, 120, "…"), fmtDuration(ev.Delay), ev.Attempt)
	last := len(m.tr.items) - 1
	if m.retry == nil || last < 0 || m.tr.items[last] != item(m.retry) {
		m.retry = m.notice(itemInfo, text)
		return
	}
	m.retry.set(text)
}

// endStreaming finishes the thinking and the answer still arriving.
func (m *model) endStreaming() {
	m.endThinking()
	if it := m.streaming; it != nil {
		it.end()
		m.streaming = nil
	}
}

// finishTool gives a running call its outcome, then keeps its resource
// links for /open and numbers its images.
func (m *model) finishTool(it *toolItem, res *tool.Result, err error, elapsed time.Duration) tea.Cmd {
	if it.finished() {
		return nil
	}
	canceled := errors.Is(err, context.Canceled) || m.ctx.Err() != nil
	images := it.finish(res, err, elapsed, canceled, m.ui.opts.ImageDir)
	m.noteLinks(it, res)
	delete(m.toolItems, it.id)
	return m.addImages(it, images)
}

// stopTools marks the turn's calls still running as canceled: the turn
// ended without their results. /call calls and shell lines go on.
func (m *model) stopTools() {
	for id, it := range m.toolItems {
		if !it.finished() && !it.rawCall {
			it.stopped()
			delete(m.toolItems, id)
		}
	}
}

// lastIsCanceledTool reports whether the transcript ends with a tool
// block that says "canceled", which a notice would only repeat.
func (m *model) lastIsCanceledTool() bool {
	n := len(m.tr.items)
	if n == 0 {
		return false
	}
	t, ok := m.tr.items[n-1].(*toolItem)
	return ok && t.state == toolCanceled
}
