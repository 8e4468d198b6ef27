// Package compact keeps a conversation inside a model's context window: it
// estimates what a request takes, elides old tool results to one-line
// stubs, chooses where the recent turns begin (never between a tool call
// and its result), asks a model for a summary of the older turns, and cuts
// a tool result that alone does not fit.
//
// It is pure logic over internal/llm's conversation model: it imports only
// llm, and never stores anything (the agent records compactions in the
// session store, which keeps every original message).
package compact

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/otter-sh/otter/internal/llm"
)

// BytesPerToken is the estimate's ratio: about four bytes of English text
// or JSON make a token in the providers' tokenizers.
const BytesPerToken = 4

// messageOverhead is what a message costs beyond its content (role,
// separators, the JSON around it).
const messageOverhead = 12

// Tokens estimates the tokens of a text.
func Tokens(s string) int { return (len(s) + BytesPerToken - 1) / BytesPerToken }

// imageTokens estimates an image: about what the providers charge for a
// screen-sized one, less for a small one.
func imageTokens(img llm.Image) int { return min(len(img.Data)/3, 1600) + 85 }

// MessageTokens estimates one message as a provider receives it.
func MessageTokens(m llm.Message) int {
	n := messageOverhead + Tokens(m.Text)
	for _, img := range m.Images {
		n += imageTokens(img)
	}
	for _, c := range m.ToolCalls {
		n += messageOverhead + Tokens(c.ID) + Tokens(c.Name) + Tokens(string(c.Args))
	}
	for _, r := range m.ToolResults {
		n += messageOverhead + Tokens(r.CallID) + Tokens(r.Text)
		for _, img := range r.Images {
			n += imageTokens(img)
		}
	}
	return n
}

// MessagesTokens estimates a list of messages.
func MessagesTokens(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += MessageTokens(m)
	}
	return n
}

// ToolsTokens estimates the tool definitions of a request.
func ToolsTokens(tools []llm.ToolSpec) int {
	n := 0
	for _, t := range tools {
		n += messageOverhead + Tokens(t.Name) + Tokens(t.Description) + Tokens(string(t.InputSchema))
	}
	return n
}

// RequestTokens estimates the prompt of a request: system prompt, tools
// and messages.
func RequestTokens(req llm.Request) int {
	return messageOverhead + Tokens(req.System) + ToolsTokens(req.Tools) + MessagesTokens(req.Messages)
}

// SummaryPrefix opens the message that stands for the compacted part of a
// conversation; IsSummary recognises it.
const SummaryPrefix = "[Summary of the earlier part of this conversation, written when otter compacted it to fit the model's context window. The full messages are kept in otter's session history.]\n\n"

// SummaryMessage is the user message that replaces the older turns.
func SummaryMessage(summary string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Text: SummaryPrefix + strings.TrimSpace(summary)}
}

// IsSummary reports whether m is a SummaryMessage.
func IsSummary(m llm.Message) bool {
	return m.Role == llm.RoleUser && strings.HasPrefix(m.Text, SummaryPrefix)
}

// elidedPrefix opens a stub that stands for an elided tool result.
const elidedPrefix = "[elided to save context: "

// IsElided reports whether a tool result is already a stub.
func IsElided(r llm.ToolResult) bool { return strings.HasPrefix(r.Text, elidedPrefix) }

// spillNote matches the note internal/tool ends a cut result with.
const spillNote = "the full output is in "

// Stub is the one line that replaces a tool result: what the call was, how
// long the result was and where the whole of it is. spill saves the text
// and returns the file's path; it may be nil.
func Stub(call llm.ToolCall, r llm.ToolResult, spill func(string) (string, error)) string {
	where := "otter's session history"
	if i := strings.LastIndex(r.Text, spillNote); i >= 0 {
		// Already spilled by the tool layer: point at that file.
		where = strings.TrimRight(r.Text[i+len(spillNote):], "]\n ")
	} else if spill != nil {
		if path, err := spill(r.Text); err == nil {
			where = path
		}
	}
	status := "returned"
	if r.IsError {
		status = "failed with"
	}
	first := firstLine(r.Text, 80)
	return fmt.Sprintf("%s%s%s %s %d characters starting %q; the full output is in %s]",
		elidedPrefix, call.Name, shortArgs(call.Args), status, utf8.RuneCountInString(r.Text), first, where)
}

func shortArgs(args json.RawMessage) string {
	s := strings.Join(strings.Fields(string(args)), " ")
	if s == "" || s == "{}" {
		return "()"
	}
	if utf8.RuneCountInString(s) > 120 {
		s = string([]rune(s)[:120]) + "…"
	}
	return "(" + s + ")"
}

func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n]) + "…"
	}
	return s
}

// Elide replaces the tool results of msgs[:protect] with stubs, oldest
// first, until MessagesTokens(msgs) is at most target; it changes msgs in
// place and returns how many results it elided. Results in msgs[protect:]
// (the recent turns) stay whole.
func Elide(msgs []llm.Message, protect, target int, spill func(string) (string, error)) int {
	total := MessagesTokens(msgs)
	calls := map[string]llm.ToolCall{}
	n := 0
	for i := 0; i < protect && i < len(msgs) && total > target; i++ {
		m := msgs[i]
		for _, c := range m.ToolCalls {
			calls[c.ID] = c
		}
		if m.Role != llm.RoleTool {
			continue
		}
		results := append([]llm.ToolResult(nil), m.ToolResults...)
		changed := false
		for j, r := range results {
			if IsElided(r) || total <= target {
				continue
			}
			call, ok := calls[r.CallID]
			if !ok {
				call = llm.ToolCall{ID: r.CallID, Name: r.Name}
			}
			stub := Stub(call, r, spill)
			if len(stub) >= len(r.Text) && len(r.Images) == 0 {
				continue // nothing to gain
			}
			before := MessageTokens(llm.Message{ToolResults: []llm.ToolResult{r}})
			results[j] = llm.ToolResult{CallID: r.CallID, Name: r.Name, Text: stub, IsError: r.IsError}
			total -= before - MessageTokens(llm.Message{ToolResults: []llm.ToolResult{results[j]}})
			changed = true
			n++
		}
		if changed {
			msgs[i].ToolResults = results
		}
	}
	return n
}

// CanCutBefore reports whether the recent part of a conversation may begin
// at msgs[i]: at a user message or an assistant message, never at tool
// results, which must follow the call they answer.
func CanCutBefore(msgs []llm.Message, i int) bool {
	return i > 0 && i < len(msgs) && msgs[i].Role != llm.RoleTool
}

// Split returns where the recent part of msgs begins: the earliest index
// at which a cut may be made (CanCutBefore) such that msgs[cut:] takes at
// most keep tokens, or, when even the latest possible cut leaves more, that
// latest cut. It returns 0 when no cut is possible.
func Split(msgs []llm.Message, keep int) int {
	cut, size := 0, 0
	for i := len(msgs) - 1; i > 0; i-- {
		size += MessageTokens(msgs[i])
		if size > keep {
			if cut == 0 {
				// Nothing fits: the latest possible cut.
				for ; i > 0 && !CanCutBefore(msgs, i); i-- {
				}
				return i
			}
			return cut
		}
		if CanCutBefore(msgs, i) {
			cut = i
		}
	}
	return cut
}

// CutResult shortens the text of a tool result to about maxTokens, keeping
// its beginning and saying what was cut and where the whole is.
func CutResult(r llm.ToolResult, maxTokens int, spill func(string) (string, error)) llm.ToolResult {
	keep := max(maxTokens, 16) * BytesPerToken
	if len(r.Text) <= keep {
		return r
	}
	where := "otter's session history"
	if spill != nil {
		if path, err := spill(r.Text); err == nil {
			where = path
		}
	}
	note := fmt.Sprintf("\n\n[cut to fit the model's context window: showing the first %%d of %d characters; the full output is in %s]", utf8.RuneCountInString(r.Text), where)
	keep = max(keep-len(note)-8, 0)
	for keep > 0 && !utf8.RuneStart(r.Text[keep]) {
		keep--
	}
	text := r.Text[:keep]
	r.Text = text + fmt.Sprintf(note, utf8.RuneCountInString(text))
	r.Images = nil
	return r
}

// summaryInstructions is the system prompt of the summarising call.
const summaryInstructions = `You compact a conversation between a user and an AI assistant (otter, working in the user's terminal with tools) so that it can go on in a smaller context. Write a summary that lets the assistant continue the work as if it had read everything. Keep, concisely:
- the user's goals and requests, in their own words where it matters, and their preferences;
- decisions made and why; facts established; answers already given;
- every name, URL, file path, identifier, number and command that may be needed again;
- tool calls that were made and the results that still matter (the data, not the chatter); errors met and how they were solved;
- open tasks and what the assistant was about to do next.
Write it as notes under short headings, in the language of the conversation. Do not invent anything; do not address the user; no preamble.`

// SummaryRequest builds the request that asks model for a summary of
// older, within a prompt of at most budget tokens and an answer of at
// most maxTokens. keep is what the person asked to keep (/compact TEXT),
// or "". The transcript gives tool results and long texts shortened, then
// drops the oldest parts (never a previous summary) until it fits.
func SummaryRequest(model string, older []llm.Message, keep string, budget, maxTokens int) llm.Request {
	ask := fmt.Sprintf("Summarise the conversation above in at most %d words, following your instructions.", max(maxTokens*3/5, 50))
	if k := strings.TrimSpace(keep); k != "" {
		ask += "\nThe user asks you to keep in particular: " + k
	}
	room := budget - Tokens(summaryInstructions) - Tokens(ask) - 3*messageOverhead
	var transcript string
	for _, limit := range []int{4000, 1000, 300} {
		transcript = Transcript(older, limit)
		if Tokens(transcript) <= room {
			break
		}
	}
	if over := len(transcript) - room*BytesPerToken; over > 0 && room > 0 {
		// Keep a previous summary (at the start) and the latest turns.
		head := ""
		if len(older) > 0 && IsSummary(older[0]) {
			head = Transcript(older[:1], 300)
		}
		rest := transcript[len(head):]
		drop := min(over+len("[… earlier turns left out …]\n\n"), len(rest))
		for drop < len(rest) && !utf8.RuneStart(rest[drop]) {
			drop++
		}
		transcript = head + "[… earlier turns left out …]\n\n" + rest[drop:]
	}
	return llm.Request{
		Model:     model,
		System:    summaryInstructions,
		Messages:  []llm.Message{{Role: llm.RoleUser, Text: "<conversation>\n" + transcript + "</conversation>\n\n" + ask}},
		MaxTokens: maxTokens,
	}
}

// Transcript renders messages as text for a summarising model, each text
// and tool result shortened to at most limit characters.
func Transcript(msgs []llm.Message, limit int) string {
	var b strings.Builder
	short := func(s string) string {
		if utf8.RuneCountInString(s) <= limit {
			return s
		}
		r := []rune(s)
		return string(r[:limit]) + fmt.Sprintf(" […%d more characters]", len(r)-limit)
	}
	for _, m := range msgs {
		switch {
		case IsSummary(m):
			fmt.Fprintf(&b, "## Summary of what came before\n%s\n\n", strings.TrimPrefix(m.Text, SummaryPrefix))
		case m.Role == llm.RoleUser:
			fmt.Fprintf(&b, "## User\n%s\n", short(m.Text))
			if len(m.Images) > 0 {
				fmt.Fprintf(&b, "[%d image(s)]\n", len(m.Images))
			}
			b.WriteByte('\n')
		case m.Role == llm.RoleAssistant:
			b.WriteString("## Assistant\n")
			if m.Text != "" {
				b.WriteString(short(m.Text))
				b.WriteByte('\n')
			}
			if m.Interrupted {
				b.WriteString("[interrupted]\n")
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "→ called %s%s\n", c.Name, shortArgs(c.Args))
			}
			b.WriteByte('\n')
		case m.Role == llm.RoleTool:
			for _, r := range m.ToolResults {
				what := "result"
				if r.IsError {
					what = "error"
				}
				fmt.Fprintf(&b, "## Tool %s (%s)\n%s\n\n", what, r.Name, short(r.Text))
			}
		}
	}
	return b.String()
}
