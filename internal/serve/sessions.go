package serve

import (
	"net/http"
	"slices"
	"sync"
	"time"
)

// DefaultMaxSessions bounds the open MCP sessions of `otter mcp serve
// --http` ([serve] max_sessions): a client that opens sessions and never
// closes them (5,000 of them held 52 MB and 5,012 goroutines) costs at most
// this many. When a new session passes the cap, the sessions idle longest
// (no request in flight) are closed; their clients get 404 and start anew.
const DefaultMaxSessions = 1000

// HTTP server timeouts: a client without a key is refused before its body
// is read, and one with a key cannot hold a connection open by sending its
// headers or body slowly, or by keeping an idle keep-alive connection.
var defaultHTTPTimeouts = httpTimeouts{
	header: 10 * time.Second, // the request line and headers
	body:   30 * time.Second, // the whole request, body included
	idle:   60 * time.Second, // a keep-alive connection between requests
}

type httpTimeouts struct{ header, body, idle time.Duration }

// sessionCap tracks the MCP sessions' use to close the idle ones past max.
type sessionCap struct {
	s   *Server
	max int

	mu   sync.Mutex
	used map[string]*sessionUse
}

type sessionUse struct {
	last     time.Time
	inFlight int
}

func newSessionCap(s *Server, max int) *sessionCap {
	if max <= 0 {
		max = DefaultMaxSessions
	}
	return &sessionCap{s: s, max: max, used: map[string]*sessionUse{}}
}

// wrap notes each request's session, and the session a response creates.
func (c *sessionCap) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		if id == "" {
			next.ServeHTTP(w, r)
			if id = w.Header().Get("Mcp-Session-Id"); id != "" {
				c.opened(id)
			}
			return
		}
		c.begin(id)
		defer c.end(id)
		next.ServeHTTP(w, r)
	})
}

func (c *sessionCap) begin(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.used[id]
	if u == nil {
		u = &sessionUse{}
		c.used[id] = u
	}
	u.inFlight++
	u.last = time.Now()
}

func (c *sessionCap) end(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u := c.used[id]; u != nil {
		u.inFlight--
		u.last = time.Now()
	}
}

// opened records a new session and closes the idlest ones past the cap.
func (c *sessionCap) opened(id string) {
	live := map[string]bool{}
	for ss := range c.s.mcp.Sessions() {
		live[ss.ID()] = true
	}
	c.mu.Lock()
	if _, ok := c.used[id]; !ok {
		c.used[id] = &sessionUse{last: time.Now()}
	}
	var idle []string
	for sid, u := range c.used {
		switch {
		case !live[sid]:
			delete(c.used, sid) // closed by its client or timed out
		case u.inFlight == 0 && sid != id:
			idle = append(idle, sid)
		}
	}
	slices.SortFunc(idle, func(a, b string) int { return c.used[a].last.Compare(c.used[b].last) })
	excess := len(live) - c.max
	evict := idle[:min(max(excess, 0), len(idle))]
	for _, sid := range evict {
		delete(c.used, sid)
	}
	c.mu.Unlock()
	if len(evict) == 0 {
		return
	}
	closing := map[string]bool{}
	for _, sid := range evict {
		closing[sid] = true
	}
	for ss := range c.s.mcp.Sessions() {
		if closing[ss.ID()] {
			_ = ss.Close()
		}
	}
	c.s.logger.Warn("closed the idlest MCP sessions: more were open than [serve] max_sessions", "closed", len(evict), "max_sessions", c.max)
}
