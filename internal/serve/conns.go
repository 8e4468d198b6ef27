package serve

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// DefaultMaxConnections bounds the open connections of `otter mcp serve
// --http` ([serve] max_connections) on a machine whose file limit allows
// more. Below that, the cap is the file limit (RLIMIT_NOFILE) less
// fdReserve: 1,100 idle connections under `ulimit -n 1024` once used every
// descriptor, and /health failed 23 times in 50.
const DefaultMaxConnections = 10000

// fdReserve is the number of file descriptors kept out of the connection
// cap for everything else the server opens: the audit ledger, a shared
// store's connections, log files, the tools' own network connections.
func fdReserve(limit int) int { return 64 + limit/16 }

// nearCapShare is the share of the connection cap past which idle
// connections (keep-alive between requests, or accepted and silent) are
// closed after nearCapIdle instead of the usual idle timeout, so that a new
// client (a /health probe) finds room.
const (
	nearCapShare = 0.75
	nearCapIdle  = time.Second
)

// connectionCap is the cap on open connections: configured (0: the
// default) but never above what the file limit leaves after fdReserve.
func connectionCap(configured int) (limit, fdLimit int) {
	fdLimit = openFileLimit()
	limit = DefaultMaxConnections
	if configured > 0 {
		limit = configured
	}
	if fdLimit > 0 {
		limit = min(limit, fdLimit-fdReserve(fdLimit))
	}
	return max(limit, 1), fdLimit
}

// connLimiter is a listener that keeps at most max connections open.
// At the cap it makes room by closing the connection idle longest (between
// requests, or accepted and silent) before it accepts another; only when
// every connection is busy does Accept wait, as netutil.LimitListener
// does. Near the cap, a janitor closes connections idle for nearCapIdle.
// Busy connections — a request being read or answered, an SSE stream — are
// bounded by the HTTP server's timeouts and the session caps, not here.
type connLimiter struct {
	net.Listener
	max, high int
	idleNear  time.Duration

	mu    sync.Mutex
	conns map[*limitedConn]struct{}
	freed chan struct{} // a connection closed (buffered 1)
	done  chan struct{} // the listener closed
	once  sync.Once
}

func newConnLimiter(ln net.Listener, limit int) *connLimiter {
	l := &connLimiter{
		Listener: ln, max: limit, high: max(1, int(float64(limit)*nearCapShare)), idleNear: nearCapIdle,
		conns: map[*limitedConn]struct{}{}, freed: make(chan struct{}, 1), done: make(chan struct{}),
	}
	go l.janitor()
	return l
}

// Accept waits for room under the cap, then accepts a connection.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		l.mu.Lock()
		n := len(l.conns)
		var victim *limitedConn
		if n >= l.max {
			victim = l.idlestLocked(time.Now())
		}
		l.mu.Unlock()
		if n < l.max {
			break
		}
		if victim != nil {
			victim.Close()
			continue
		}
		select {
		case <-l.freed:
		case <-time.After(100 * time.Millisecond): // a connection may have gone idle
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := &limitedConn{Conn: c, l: l, state: http.StateNew, since: time.Now()}
	l.mu.Lock()
	l.conns[lc] = struct{}{}
	l.mu.Unlock()
	return lc, nil
}

// Close stops accepting; the connections open are the HTTP server's to close.
func (l *connLimiter) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// open is the number of open connections.
func (l *connLimiter) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Before a connection may be closed to make room at the cap, it must have
// been idle between requests for minIdleKept, or accepted and silent for
// minNewKept. The second is longer: a new connection's request may have
// arrived without the server having read it yet — on a busy 2-core machine
// a /health probe's fresh connection, silent for the server for 100 ms,
// was closed as idle ("server closed idle connection", 1 probe in 22).
const (
	minIdleKept = 100 * time.Millisecond
	minNewKept  = 500 * time.Millisecond
)

// idlestLocked is the connection idle (or new and silent) longest, past
// minIdleKept or minNewKept; nil if none is.
func (l *connLimiter) idlestLocked(now time.Time) *limitedConn {
	var best *limitedConn
	for c := range l.conns {
		keep := minIdleKept
		if c.state == http.StateNew {
			keep = minNewKept
		}
		if (c.state == http.StateIdle || c.state == http.StateNew) && now.Sub(c.since) >= keep &&
			(best == nil || c.since.Before(best.since)) {
			best = c
		}
	}
	return best
}

// janitor closes, while more than high connections are open, those idle
// for idleNear: the idle timeout, shortened near the cap.
func (l *connLimiter) janitor() {
	t := time.NewTicker(l.idleNear / 4)
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
		}
		now := time.Now()
		var idle []*limitedConn
		l.mu.Lock()
		if len(l.conns) > l.high {
			for c := range l.conns {
				if (c.state == http.StateIdle || c.state == http.StateNew) && now.Sub(c.since) >= l.idleNear {
					idle = append(idle, c)
				}
			}
		}
		l.mu.Unlock()
		for _, c := range idle {
			c.Close()
		}
	}
}

// connState is the HTTP server's ConnState hook: it keeps each
// connection's state, which decides what may be closed to make room.
func (l *connLimiter) connState(c net.Conn, st http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	switch st {
	case http.StateClosed, http.StateHijacked:
		lc.release()
	default:
		l.mu.Lock()
		lc.state, lc.since = st, time.Now()
		l.mu.Unlock()
	}
}

// limitedConn is a connection counted by a connLimiter.
type limitedConn struct {
	net.Conn
	l     *connLimiter
	once  sync.Once
	state http.ConnState // guarded by l.mu
	since time.Time      // when state was entered; guarded by l.mu
}

func (c *limitedConn) Close() error {
	c.release()
	return c.Conn.Close()
}

// release frees c's place under the cap, once.
func (c *limitedConn) release() {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
		select {
		case c.l.freed <- struct{}{}:
		default:
		}
	})
}
