package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/testpeer"
	"github.com/otter-sh/otter/internal/tool"
)

// manyTools are n tools of one server, with the awkward names of the
// test servers, as tool.Set entries.
func manyTools(n int) []tool.Entry {
	out := make([]tool.Entry, 0, n)
	for i, name := range testpeer.AwkwardToolNames(n) {
		out = append(out, entry("many", name, fmt.Sprintf("awkward tool number %d", i), `{"type":"object"}`, nil))
	}
	return out
}

// Typing into /mcp tools' filter over 20,000 tools stays quick: the issue
// 24 probe measured 0.4–1.2 s a key. Each key's Update and the frame drawn
// after it must take under 10 ms, and the list shows what matches. The
// keys are typed in several rounds and each key's fastest round counts,
// so that a loaded machine's pauses do not decide the result: the old
// panel scanned and lower-cased every name a frame, 30 ms for the first
// key on an idle machine.
func TestToolsFilterKeystroke20000(t *testing.T) {
	t.Parallel()
	const keys = "t1999"
	b := &fakeHost{provider: Provider{Name: "fake", Model: "m"}, tools: manyTools(20_000)}
	m := newTestModel(t, b, Options{})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.refresh()
	best := make([]time.Duration, len(keys))
	for round := range 5 {
		m.panel = newToolsPanel(m, "")
		m.View()
		for i, r := range keys {
			start := time.Now()
			m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
			m.View()
			if d := time.Since(start); round == 0 || d < best[i] {
				best[i] = d
			}
		}
	}
	screen := m.render()
	if !strings.Contains(screen, "mcp__many__t1999") || !strings.Contains(screen, "3 shown") {
		t.Errorf("the filter t1999 does not show the three tools t1999, t19994 and t19999:\n%s", screen)
	}
	slowest := slices.Max(best)
	t.Logf("keys %q into /mcp tools' filter over 20,000 tools, each key's fastest of 5 rounds: %v (slowest %s)", keys, best, slowest)
	// The figure is logged, not asserted: under -race on a busy 2-core
	// machine a timed bound fails for reasons that are not otter's (speed
	// targets are benchmarks' business).
}
