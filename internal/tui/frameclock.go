package tui

import (
	"reflect"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
)

// frameClock lets Bubble Tea's renderer sleep while nothing changes.
//
// Bubble Tea v2 (2.0.10, and still 2.1.1) draws from a time.Ticker at the
// program's frame rate, 60 a second, for the program's whole life, whether
// or not there is anything new to draw: an idle otter woke 60 times a
// second to find nothing to do (~350 context switches a second). No option
// stops that ticker (upstream: charmbracelet/bubbletea#1796), so
// frameClock takes hold of it and slows it to sleepPeriod once no view has
// been made for idleAfter; the next view — Bubble Tea makes one after each
// message it handles, so after anything that may change the screen — sets
// it back to the frame rate at once. A frame is thus at most one frame
// period late, as before.
//
// The slow tick is a safety net, not a frame rate: a tick that came due
// just as the ticker slowed down is dropped, and its frame then shows
// within sleepPeriod rather than at the next change.
//
// If Bubble Tea's program no longer has that ticker (a new version), the
// clock does nothing and the renderer ticks as Bubble Tea made it;
// TestFrameClockHoldsTheTicker says so.
type frameClock struct {
	mu     sync.Mutex
	prog   *tea.Program  // set before the program runs
	ticker *time.Ticker  // the renderer's, once the program started
	idle   *time.Timer   // slows ticker down when it fires
	fast   bool          // ticker runs at the frame rate
	closed bool          // the program has ended: leave its ticker alone
	period time.Duration // the frame period
}

const (
	// idleAfter is how long after the last view the renderer keeps its
	// frame rate: a dozen frames, room for a late tick to draw it.
	idleAfter = 200 * time.Millisecond
	// sleepPeriod is how often an idle renderer still looks for a frame
	// to draw (see frameClock).
	sleepPeriod = 2 * time.Second
	// framesPerSecond is Bubble Tea's default frame rate, which otter keeps.
	framesPerSecond = 60
)

// tickerOf returns p's renderer ticker, or nil if p has none (not started,
// or a Bubble Tea whose Program keeps it elsewhere). The field is read,
// never written: its ticker's own methods are safe to call from any
// goroutine.
func tickerOf(p *tea.Program) *time.Ticker {
	if p == nil {
		return nil
	}
	f := reflect.ValueOf(p).Elem().FieldByName("ticker")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*time.Ticker]() || f.IsNil() {
		return nil
	}
	return (*time.Ticker)(f.UnsafePointer())
}

// start takes hold of the running program's ticker. It runs in the
// model's Init, on the goroutine that started the renderer (after it did).
func (c *frameClock) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.ticker != nil {
		return
	}
	if c.ticker = tickerOf(c.prog); c.ticker == nil {
		return
	}
	c.period = time.Second / framesPerSecond
	c.fast = true
	c.idle = time.AfterFunc(idleAfter, c.sleep)
}

// viewed says that the program is making a view: the renderer draws it at
// its next tick, which comes within a frame.
func (c *frameClock) viewed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ticker == nil || c.closed {
		return
	}
	if !c.fast {
		c.fast = true
		c.ticker.Reset(c.period)
	}
	c.idle.Reset(idleAfter)
}

// sleep slows the renderer down: no view came for idleAfter.
func (c *frameClock) sleep() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ticker == nil || c.closed || !c.fast {
		return
	}
	c.fast = false
	c.ticker.Reset(sleepPeriod)
}

// close lets go of the ticker once the program has ended (its renderer
// stopped the ticker: a Reset would start it again).
func (c *frameClock) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.idle != nil {
		c.idle.Stop()
	}
}
