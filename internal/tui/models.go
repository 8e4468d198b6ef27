package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/agent"
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
	if len(words) == 1 {
		if !m.switchModel(words[0]) {
			return nil
		}
	}
	if level != "" {
		if err := m.b.SetThinking(level); err != nil {
			m.notice(itemError, err.Error())
			return nil
		}
		m.notice(itemInfo, "reasoning for the next message: "+m.b.Thinking())
	}
	return nil
}

// modelsText is /model's list: each provider's models, one a line, with
// window and price where known, and the reasoning level in use.
func modelsText(choices []ModelChoice, err error, current Provider, st agent.ContextState, thinking string) string {
	var b strings.Builder
	if len(choices) == 0 && err != nil {
		return "could not list the models: " + err.Error()
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
			inUse := c.Provider == current.Name && c.Model == current.Model
			if inUse && st.WindowKnown && st.Window > 0 {
				c.Window = st.Window // learned from the provider, or configured
			}
			var facts []string
			if c.Window > 0 {
				facts = append(facts, humanCount(int64(c.Window))+" window")
			}
			if c.HasPrice {
				facts = append(facts, fmt.Sprintf("$%s/$%s per M in/out", price(c.InPrice), price(c.OutPrice)))
			}
			if inUse {
				facts = append(facts, "in use")
			}
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

// price is a price per million tokens without trailing zeros: 3, 0.25.
func price(p float64) string {
	return strconv.FormatFloat(p, 'f', -1, 64)
}
