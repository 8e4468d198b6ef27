package serve

import (
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultMaxSessions bounds the open MCP sessions of `otter mcp serve
// --http` ([serve] max_sessions): a client that opens sessions and never
// closes them (5,000 of them held 52 MB and 5,012 goroutines) costs at most
// this many. When a new session passes the cap, the sessions idle longest
// (no request in flight) are closed; their clients get 404 and start anew.
const DefaultMaxSessions = 1000

// DefaultMaxSessionsPerKey bounds the open MCP sessions of one API key
// ([serve] max_sessions_per_key), so that one key holder cannot fill the
// global cap and push every other client's sessions out: past it, a new
// session of that key closes that key's own idlest session.
const DefaultMaxSessionsPerKey = 100

// evictionLogInterval is how often closed sessions are reported: one
// summary line per interval, however many were closed (1,200 sessions
// held by one key once wrote 13,889 lines in 15 s).
const evictionLogInterval = 10 * time.Second

// HTTP server timeouts: a client without a key is refused before its body
// is read, and one with a key cannot hold a connection open by sending its
// headers or body slowly, or by keeping an idle keep-alive connection.
var defaultHTTPTimeouts = httpTimeouts{
	header: 10 * time.Second, // the request line and headers
	body:   30 * time.Second, // the whole request, body included
	idle:   60 * time.Second, // a keep-alive connection between requests
}

type httpTimeouts struct{ header, body, idle time.Duration }

// sessionCap tracks the MCP sessions' use to close idle ones past the caps:
// the global one, and the one per API key.
//
// A session is busy only while a POST of it is in flight (a tool call,
// say). An open GET stream (SSE) is not activity: a client can hold one
// forever at no cost to itself, so counting it as busy made such sessions
// unevictable, and 1,200 of them pushed out every other client's.
type sessionCap struct {
	s      *Server
	max    int
	perKey int // 0: no per-key cap (serving without keys: every client is one address)

	mu   sync.Mutex
	used map[string]*sessionUse

	log *evictionLog
}

type sessionUse struct {
	client  string    // who opened it (keyClient, or the remote address)
	last    time.Time // when a POST of it last began or ended
	posts   int       // its POSTs in flight: while any is, it is not closed
	streams int       // its open GET streams (SSE): not activity
}

func newSessionCap(s *Server, max, perKey int) *sessionCap {
	if max <= 0 {
		max = DefaultMaxSessions
	}
	if perKey <= 0 {
		perKey = DefaultMaxSessionsPerKey
	}
	if len(s.keys) == 0 {
		perKey = 0
	}
	return &sessionCap{s: s, max: max, perKey: perKey, used: map[string]*sessionUse{},
		log: &evictionLog{logger: s.logger, interval: evictionLogInterval, max: max, perKey: perKey}}
}

// wrap notes each request's session, and the session a response creates.
func (c *sessionCap) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		if id == "" {
			next.ServeHTTP(w, r)
			if id = w.Header().Get("Mcp-Session-Id"); id != "" {
				c.opened(id, r.Header.Get(clientHeader))
			}
			return
		}
		stream := r.Method == http.MethodGet
		c.begin(id, stream)
		defer c.end(id, stream)
		next.ServeHTTP(w, r)
	})
}

func (c *sessionCap) begin(id string, stream bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.used[id]
	if u == nil {
		// Not opened through wrap (or already closed): the SDK answers
		// 404 for an unknown session; track it only while it is in use.
		u = &sessionUse{last: time.Now()}
		c.used[id] = u
	}
	if stream {
		u.streams++
		return
	}
	u.posts++
	u.last = time.Now()
}

func (c *sessionCap) end(id string, stream bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.used[id]
	if u == nil {
		return
	}
	if stream {
		u.streams--
		return
	}
	u.posts--
	u.last = time.Now()
}

// opened records a new session of client and closes idle sessions past the
// caps: first that client's own idlest past the per-key cap, then, past
// the global cap, the idlest of the clients holding the most sessions.
func (c *sessionCap) opened(id, client string) {
	c.mu.Lock()
	// Listed under the lock: a session listed before it could be taken
	// for closed while a request of it already began.
	live := map[string]bool{}
	for ss := range c.s.mcp.Sessions() {
		live[ss.ID()] = true
	}
	if u, ok := c.used[id]; ok {
		u.client = client
	} else {
		c.used[id] = &sessionUse{client: client, last: time.Now()}
	}
	perClient := map[string]int{}
	for sid, u := range c.used {
		if !live[sid] && sid != id {
			delete(c.used, sid) // closed by its client or timed out
			continue
		}
		perClient[u.client]++
	}
	idle := func(sid string, u *sessionUse) bool { return u.posts == 0 && sid != id }
	byLast := func(a, b string) int { return c.used[a].last.Compare(c.used[b].last) }

	var keyEvict, globalEvict []string
	if c.perKey > 0 && strings.HasPrefix(client, "key:") && perClient[client] > c.perKey {
		var own []string
		for sid, u := range c.used {
			if u.client == client && idle(sid, u) {
				own = append(own, sid)
			}
		}
		slices.SortFunc(own, byLast)
		keyEvict = own[:min(perClient[client]-c.perKey, len(own))]
		for _, sid := range keyEvict {
			delete(c.used, sid)
		}
		perClient[client] -= len(keyEvict)
	}
	if excess := len(c.used) - c.max; excess > 0 {
		var cands []string
		for sid, u := range c.used {
			if idle(sid, u) {
				cands = append(cands, sid)
			}
		}
		// The heaviest holders give way first, so that a client with one
		// session keeps it while another holds hundreds.
		slices.SortFunc(cands, func(a, b string) int {
			if d := perClient[c.used[b].client] - perClient[c.used[a].client]; d != 0 {
				return d
			}
			return byLast(a, b)
		})
		globalEvict = cands[:min(excess, len(cands))]
		for _, sid := range globalEvict {
			delete(c.used, sid)
		}
	}
	c.mu.Unlock()
	if len(keyEvict)+len(globalEvict) == 0 {
		return
	}
	closing := map[string]bool{}
	for _, sid := range slices.Concat(keyEvict, globalEvict) {
		closing[sid] = true
	}
	for ss := range c.s.mcp.Sessions() {
		if closing[ss.ID()] {
			_ = ss.Close() // ends its GET stream too
		}
	}
	c.log.add(len(keyEvict), len(globalEvict))
}

// open is the number of sessions tracked (for tests).
func (c *sessionCap) open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.used)
}

// evictionLog reports closed sessions as a rate: one line per interval
// with the counts, never one line per session.
type evictionLog struct {
	logger      *slog.Logger
	interval    time.Duration
	max, perKey int

	mu             sync.Mutex
	byKey, byTotal int
	since          time.Time
	timer          *time.Timer
}

func (e *evictionLog) add(byKey, byTotal int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timer == nil {
		e.since = time.Now()
		e.timer = time.AfterFunc(e.interval, e.flush)
	}
	e.byKey += byKey
	e.byTotal += byTotal
}

// flush writes the summary of the closings since the last one, if any.
func (e *evictionLog) flush() {
	e.mu.Lock()
	byKey, byTotal, since := e.byKey, e.byTotal, e.since
	e.byKey, e.byTotal = 0, 0
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	e.mu.Unlock()
	if byKey+byTotal == 0 {
		return
	}
	e.logger.Warn("closed idle MCP sessions: more were open than the caps allow; their clients get 404 and start a new session",
		"closed", byKey+byTotal, "over_max_sessions_per_key", byKey, "over_max_sessions", byTotal,
		"max_sessions_per_key", e.perKey, "max_sessions", e.max,
		"seconds", time.Since(since).Round(time.Second).Seconds())
}
