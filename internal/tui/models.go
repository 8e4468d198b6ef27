package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/charmbracelet/x/ansi"
	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
)

// This file is /model: the models the providers offer, with window and
// price where known, and the reasoning level, switched in one place:
//
//	/model                        lists them, and the reasoning level
//	/model PROVIDER/MODEL [LEVEL] switches the model (and the level)
//	/model LEVEL                  sets the reasoning level only
//
// LEVEL is off, low, medium, high or a thinking budget in tokens, as the
// [providers] thinking setting takes it.

// reasoningLevels are the words /model takes as a reasoning level.
var reasoningLevels = []string{"off", "low", "medium", "high"}

// isReasoningLevel reports whether word is a reasoning level: one of
// reasoningLevels or a token budget.
func isReasoningLevel(word string) bool {
	if slices.Contains(reasoningLevels, strings.ToLower(word)) {
		return true
	}
	_, err := strconv.Atoi(word)
	return err == nil
}

// modelCommand runs /model with arguments: a model, a reasoning level, or
// both.
func (m *model) modelCommand(rest string) tea.Cmd {
	words := strings.Fields(rest)
	level := ""
	if n := len(words); n > 0 && n <= 2 && isReasoningLevel(words[n-1]) {
		level, words = words[n-1], words[:n-1]
	}
	if len(words) > 1 {
		m.notice(itemError, "/model takes a model (PROVIDER/MODEL, or MODEL of the provider in use) and a reasoning level (off, low, medium, high or a token budget), e.g. /model "+m.provider.Name+"/"+m.provider.Model+" high")
		return nil
	}
	var learn tea.Cmd
	if len(words) == 1 {
		var ok bool
		if learn, ok = m.switchModel(words[0]); !ok {
			return nil
		}
	}
	if level != "" {
		if err := setThinking(m.app, level); err != nil {
			m.notice(itemError, err.Error())
			return learn
		}
		m.notice(itemInfo, "reasoning for the next message: "+thinkingOf(m.app))
	}
	return learn
}

// modelsText is /model's list: each provider's models, one a line, with
// window and price where known, and the reasoning level in use.
func modelsText(choices []ModelChoice, err error, current Provider, st agent.ContextState, thinking string) string {
	var b strings.Builder
	switch {
	case len(choices) == 0 && err != nil:
		return "could not list the models: " + err.Error()
	case len(choices) == 0 && current.Help != "":
		return "no models to choose from: no model provider is configured (send any message to see how to add one)"
	case len(choices) == 0:
		return "no models to choose from: the providers listed none; /model PROVIDER/MODEL switches to one by name"
	}
	b.WriteString("models — /model PROVIDER/MODEL (or MODEL of the provider in use) switches for the next message; add a reasoning level to set both\n")
	byProvider := map[string][]ModelChoice{}
	var providers []string
	for _, c := range choices {
		if _, ok := byProvider[c.Provider]; !ok {
			providers = append(providers, c.Provider)
		}
		byProvider[c.Provider] = append(byProvider[c.Provider], c)
	}
	slices.Sort(providers)
	for _, p := range providers {
		fmt.Fprintf(&b, "  %s\n", p)
		for _, c := range byProvider[p] {
			facts := choiceFacts(c, current, st)
			line := "    " + c.Model
			if len(facts) > 0 {
				line += " · " + strings.Join(facts, " · ")
			}
			b.WriteString(line + "\n")
		}
	}
	if err != nil {
		fmt.Fprintf(&b, "  (%v)\n", err)
	}
	fmt.Fprintf(&b, "reasoning: %s — /model %s sets it (a number is a thinking budget in tokens)", thinking, strings.Join(reasoningLevels, "|"))
	return b.String()
}

// choiceFacts are what /model says of a model: its window (the one the
// provider reported, for the model in use), its price, and whether it is
// in use.
func choiceFacts(c ModelChoice, current Provider, st agent.ContextState) []string {
	inUse := c.Provider == current.Name && c.Model == current.Model
	if inUse && st.WindowKnown && st.Window > 0 {
		c.Window = st.Window // learned from the provider, or configured
	}
	var facts []string
	if c.Window > 0 {
		facts = append(facts, app.TokenCount(int64(c.Window))+" window")
	}
	if c.HasPrice {
		facts = append(facts, fmt.Sprintf("$%s/$%s per M in/out", price(c.InPrice), price(c.OutPrice)))
	}
	if inUse {
		facts = append(facts, "in use")
	}
	return facts
}

// modelPicker is /model without arguments when the providers list
// models: the models, the one in use selected; typing filters them by
// provider/model, enter switches to the selected one as /model
// PROVIDER/MODEL does, esc closes.
type modelPicker struct {
	listNav
	m       *model
	all     []ModelChoice // sorted by provider, then as listed
	shown   []int         // indexes into all that match the filter
	query   string
	listErr error // the providers that could not list theirs
}

func newModelPicker(m *model, choices []ModelChoice, err error) *modelPicker {
	p := &modelPicker{listNav: newListNav("filter: ", "type part of a provider or model name"), m: m, listErr: err}
	p.all = slices.Clone(choices)
	slices.SortStableFunc(p.all, func(a, b ModelChoice) int { return strings.Compare(a.Provider, b.Provider) })
	p.match()
	for i, j := range p.shown {
		if c := p.all[j]; c.Provider == m.provider.Name && c.Model == m.provider.Model {
			p.cursor = i
		}
	}
	return p
}

// match brings shown up to date with the filter.
func (p *modelPicker) match() {
	p.query = strings.ToLower(strings.TrimSpace(p.filter.Value()))
	p.shown = p.shown[:0]
	for i, c := range p.all {
		if strings.Contains(strings.ToLower(c.Provider+"/"+c.Model), p.query) {
			p.shown = append(p.shown, i)
		}
	}
	p.cursor = min(p.cursor, max(len(p.shown)-1, 0))
}

func (p *modelPicker) finished() bool { return p.done }

func (p *modelPicker) update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		if p.navigate(k.String(), func() int { return len(p.shown) }) {
			return nil
		}
		if k.String() == "enter" {
			if len(p.shown) == 0 {
				return nil
			}
			c := p.all[p.shown[p.cursor]]
			p.done = true
			learn, _ := p.m.switchModel(c.Provider + "/" + c.Model)
			return learn
		}
	}
	var cmd tea.Cmd
	p.filter, cmd = p.filter.Update(msg)
	if strings.ToLower(strings.TrimSpace(p.filter.Value())) != p.query {
		p.match()
	}
	return cmd
}

func (p *modelPicker) view(width, height int) string {
	st := p.m.st
	var b strings.Builder
	b.WriteString(st.title.Render("Choose a model") + st.dim.Render(fmt.Sprintf("  %d · reasoning: %s (/model %s sets it)", len(p.shown), thinkingOf(p.m.app), strings.Join(reasoningLevels, "|"))) + "\n")
	p.filter.SetWidth(max(width-lipgloss.Width(p.filter.Prompt)-2, 10))
	b.WriteString(p.filter.View() + "\n")
	rowsRoom := max(height-4, 1)
	start := max(p.cursor-rowsRoom+1, 0)
	end := min(len(p.shown), start+rowsRoom)
	ctx := p.m.conv.Context()
	for i := start; i < end; i++ {
		c := p.all[p.shown[i]]
		// Cut as plain text, then styled: truncateText counts runes and
		// folds spaces, which styling's escapes and the gaps would spoil.
		name := truncateText(c.Provider+"/"+c.Model, max(width-4, 8))
		mark := "  "
		if i == p.cursor {
			mark = st.accent.Render("› ")
			name = st.accent.Bold(true).Render(name)
		}
		line := mark + name
		facts := strings.Join(choiceFacts(c, p.m.provider, ctx), " · ")
		if room := width - 4 - ansi.StringWidth(c.Provider+"/"+c.Model) - 2; facts != "" && room > 8 {
			line += "  " + st.dim.Render(truncateText(facts, room))
		}
		b.WriteString(line + "\n")
	}
	if len(p.shown) == 0 {
		b.WriteString(st.dim.Render(fmt.Sprintf("  no model matches %q", p.query)) + "\n")
	}
	if p.listErr != nil {
		b.WriteString(st.dim.Render("  ("+p.listErr.Error()+")") + "\n")
	}
	body := clipLines(strings.TrimRight(b.String(), "\n"), max(height-2, 1), true)
	return body + "\n\n" + st.dim.Render("type to filter · ↑/↓ select · enter switch · esc close")
}

// price is a price per million tokens without trailing zeros: 3, 0.25.
func price(p float64) string {
	return strconv.FormatFloat(p, 'f', -1, 64)
}
