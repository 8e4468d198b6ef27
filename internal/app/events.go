package app

import (
	"fmt"
	"strings"
	"time"

	"github.com/otter-sh/otter/internal/agent"
)

// Event is what a conversation reports while it works on a message, in
// order, on one stream: the agent's events as they are (agent.TextDelta,
// agent.ToolCallStarted, agent.Compacted …) and the conversation's own
// below, which embed agent.Outside to travel with them. Both front ends
// read this stream and nothing else.
type Event = agent.Event

// WaitingForServers reports that a conversation's first message waits for
// MCP servers still starting, so that the model is offered their tools;
// the front end says so and may offer to send at once
// (Conversation.SendNow). ServersReady follows when the wait is over.
type WaitingForServers struct {
	agent.Outside
	Servers []PendingServer
}

// PendingServer is a server being waited for and the longest the wait may
// take for it (its startup timeout, within the conversation's bound).
type PendingServer struct {
	Name   string
	Within time.Duration
}

// ServersReady reports that a conversation stopped waiting for servers
// (all settled, the bound reached, or the person chose to send now). It is
// sent once, before the first message goes out, when servers are
// configured.
type ServersReady struct{ agent.Outside }

// Attached reports what was attached to the user's message before it went
// to the model (resources named with @SERVER:URI, files named with @path),
// one short description per attachment, for a compact chip in the
// transcript.
type Attached struct {
	agent.Outside
	Items []string
}

// Note is something the person should know about the message on its way
// out, such as a custom command's shell line that was not run.
type Note struct {
	agent.Outside
	Text string
}

// CompactedText is what the person is told of a compaction — shown by
// the front ends and saved with the session where it happened, so that a
// resumed conversation says why the model forgot the details.
func CompactedText(ev agent.Compacted) string {
	why := map[string]string{"auto": "it neared the model's context window", "manual": "you asked", "overflow": "the provider refused it as too long"}[ev.Reason]
	var did []string
	if ev.Elided == 1 {
		did = append(did, "1 old tool result replaced by a one-line stub")
	} else if ev.Elided > 1 {
		did = append(did, fmt.Sprintf("%d old tool results replaced by one-line stubs", ev.Elided))
	}
	if ev.Summarized == 1 {
		did = append(did, "1 earlier message summarised")
	} else if ev.Summarized > 1 {
		did = append(did, fmt.Sprintf("%d earlier messages summarised", ev.Summarized))
	}
	before, after := TokenCount(int64(ev.TokensBefore)), TokenCount(int64(ev.TokensAfter))
	if before == after { // 3.6k → 3.6k says nothing: the figures
		before, after = fmt.Sprint(ev.TokensBefore), fmt.Sprint(ev.TokensAfter)
	}
	return fmt.Sprintf("compacted the conversation because %s: %s → %s tokens (%s); the full history stays in the session",
		why, before, after, strings.Join(did, ", "))
}

// NothingToGainText says that a compaction was not made, and why.
func NothingToGainText(ev agent.NothingToGain) string {
	what := map[string]string{"auto": "it nears the model's context window", "manual": "you asked", "overflow": "the provider refused it as too long"}[ev.Reason]
	s := fmt.Sprintf("the conversation was not compacted although %s: nothing to gain — %s; it stays at %s tokens", what, ev.Why, TokenCount(int64(ev.Tokens)))
	if ev.Reason == "manual" {
		return strings.Replace(s, "although you asked", "as you asked", 1)
	}
	return s
}

// TokenCount writes a token count short, as a window is usually named:
// 950, 8.2k, 62k, 200k, 1M, 1.2M — a decimal only below 100 of its unit,
// and never ".0", so that a 1M window does not read "1000.0k" nor a 200k
// one "200.0k".
func TokenCount(n int64) string {
	short := func(v float64, unit string) string {
		if v >= 99.95 {
			return fmt.Sprintf("%.0f%s", v, unit)
		}
		return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0") + unit
	}
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 999_500: // 999.5k rounds to 1000k: that is 1M
		return short(float64(n)/1000, "k")
	}
	return short(float64(n)/1_000_000, "M")
}
