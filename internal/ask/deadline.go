package ask

import (
	"context"
	"sync"
	"time"
)

// WithPausableTimeout returns a context that ends d after it is made, like
// context.WithTimeout, except for the time spent while paused (see
// PauseTimeout): a server's startup_timeout must not run out while the
// person is reading a login prompt or a form it triggered. Its Err is
// context.DeadlineExceeded when the time runs out.
func WithPausableTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	c := &pausable{Context: parent, done: make(chan struct{}), left: d, started: time.Now()}
	c.mu.Lock() // end, on a short timer, must see c.timer set
	c.timer = time.AfterFunc(d, func() { c.end(context.DeadlineExceeded) })
	c.mu.Unlock()
	stop := context.AfterFunc(parent, func() { c.end(parent.Err()) })
	return c, func() {
		stop()
		c.end(context.Canceled)
	}
}

// PauseTimeout stops the clock of ctx's pausable timeout, if it has one,
// until the returned function is called. Pauses may nest.
func PauseTimeout(ctx context.Context) (resume func()) {
	c, ok := ctx.Value(pausableKey{}).(*pausable)
	if !ok {
		return func() {}
	}
	c.pause()
	var once sync.Once
	return func() { once.Do(c.resume) }
}

type pausableKey struct{}

type pausable struct {
	context.Context // the parent, for Value and Deadline

	done  chan struct{}
	timer *time.Timer

	mu      sync.Mutex
	err     error
	paused  int           // nesting depth
	left    time.Duration // time left when the clock last stopped
	started time.Time     // when the clock last started
}

func (c *pausable) Done() <-chan struct{} { return c.done }

func (c *pausable) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Deadline reports the parent's deadline only: this one moves.
func (c *pausable) Deadline() (time.Time, bool) { return c.Context.Deadline() }

func (c *pausable) Value(key any) any {
	if key == (pausableKey{}) {
		return c
	}
	return c.Context.Value(key)
}

func (c *pausable) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	c.timer.Stop()
	close(c.done)
}

func (c *pausable) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused++
	if c.paused == 1 && c.err == nil && c.timer.Stop() {
		c.left -= time.Since(c.started)
	}
}

func (c *pausable) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused--
	if c.paused == 0 && c.err == nil {
		c.started = time.Now()
		c.timer.Reset(max(c.left, 0))
	}
}
