package tui

import (
	"io"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// onInit is a model that runs f in Init and quits.
type onInit struct{ f func() }

func (m onInit) Init() tea.Cmd                       { m.f(); return tea.Quit }
func (m onInit) Update(tea.Msg) (tea.Model, tea.Cmd) { return m, nil }
func (m onInit) View() tea.View                      { return tea.NewView("") }

// TestFrameClockHoldsTheTicker: frameClock finds the renderer's ticker in a
// running Bubble Tea program, and slows it down and speeds it up. If a new
// Bubble Tea keeps its ticker elsewhere, this fails: otter would still
// work, but an idle otter would wake 60 times a second again.
func TestFrameClockHoldsTheTicker(t *testing.T) {
	var c frameClock
	var held *time.Ticker
	p := tea.NewProgram(onInit{func() {
		c.start()
		held = c.ticker
	}}, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutSignalHandler())
	c.prog = p
	if _, err := p.Run(); err != nil {
		t.Fatal(err)
	}
	c.close()
	if held == nil {
		t.Fatal("frameClock found no renderer ticker in Bubble Tea's Program (the field \"ticker\" of type *time.Ticker): see frameClock")
	}
}

// TestFrameClockSleepsAndWakes: with no view for idleAfter the clock
// slows the ticker to sleepPeriod; the next view sets the frame rate back.
func TestFrameClockSleepsAndWakes(t *testing.T) {
	tk := time.NewTicker(time.Second / framesPerSecond)
	defer tk.Stop()
	c := frameClock{ticker: tk, period: time.Second / framesPerSecond, fast: true}
	c.idle = time.AfterFunc(idleAfter, c.sleep)
	defer c.close()
	fast := func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.fast }
	for deadline := time.Now().Add(30 * time.Second); fast(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the clock never slowed down with no view")
		}
	}
	// Asleep: no tick comes within a second (sleepPeriod is 2 s).
	drain(tk)
	select {
	case <-tk.C:
		t.Fatal("an idle clock still ticks at the frame rate")
	case <-time.After(time.Second):
	}
	c.viewed()
	if !fast() {
		t.Fatal("a view did not wake the clock")
	}
	select {
	case <-tk.C:
	case <-time.After(time.Second):
		t.Fatal("no frame tick came after a view")
	}
}

func drain(tk *time.Ticker) {
	for {
		select {
		case <-tk.C:
		default:
			return
		}
	}
}
