package serve

import (
	"container/list"
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Failed authentication is limited per client address: each address may
// fail authFailBurst times at once, then one more time every
// authFailEvery; past that its failures are answered 429 with Retry-After.
//
// Only failures are limited. The key is checked first, so a client with a
// good key is let in however many bad keys arrive from its address (the
// same host, or the same NAT or reverse proxy): a flood cannot lock it
// out. The price is that a throttled address still learns whether a guess
// was right (a 200 rather than a 429); what makes guessing hopeless is the
// length of the keys (MinAPIKeyLen), not the limit. The limit turns a
// flood into cheap answers (no body read, the connection closed), one log
// line per episode and a metric, and tells a client that is merely
// misconfigured to back off.
const (
	authFailBurst = 20
	authFailEvery = 6 * time.Second // 10 failures a minute, steady
	// authFailAddrs bounds the addresses remembered (about 200 bytes
	// each); past it the least recently seen is forgotten, so that an
	// attacker cycling addresses cannot exhaust memory. Forgetting an
	// address only gives it a fresh burst.
	authFailAddrs = 10000
)

// MinAPIKeyLen is the fewest characters an API key may have: 16 random
// hex digits are 64 bits, out of reach of guessing at any rate a server
// answers.
const MinAPIKeyLen = 16

// authFailures is the per-address limiter of failed authentication.
type authFailures struct {
	limit rate.Limit
	burst int
	max   int

	mu    sync.Mutex
	addrs map[string]*list.Element // of *authFailAddr
	lru   list.List                // front: most recently seen
}

type authFailAddr struct {
	addr      string
	lim       *rate.Limiter
	throttled bool // its last failure was refused (for one log line per episode)
}

func newAuthFailures(every time.Duration, burst, max int) *authFailures {
	return &authFailures{limit: rate.Every(every), burst: burst, max: max, addrs: map[string]*list.Element{}}
}

// fail records a failed authentication from addr. ok is false when addr
// has failed too often: retry is then how long until it may fail again,
// and first says whether this starts an episode of refusals.
func (f *authFailures) fail(addr string, now time.Time) (ok bool, retry time.Duration, first bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var a *authFailAddr
	if e, found := f.addrs[addr]; found {
		f.lru.MoveToFront(e)
		a = e.Value.(*authFailAddr)
	} else {
		if f.lru.Len() >= f.max {
			old := f.lru.Back()
			f.lru.Remove(old)
			delete(f.addrs, old.Value.(*authFailAddr).addr)
		}
		a = &authFailAddr{addr: addr, lim: rate.NewLimiter(f.limit, f.burst)}
		f.addrs[addr] = f.lru.PushFront(a)
	}
	if a.lim.AllowN(now, 1) {
		a.throttled = false
		return true, 0, false
	}
	// The time until a whole token is back, in whole seconds as
	// Retry-After has it (never 0: that would invite an immediate retry).
	missing := 1 - a.lim.TokensAt(now)
	retry = time.Duration(math.Ceil(missing/float64(f.limit))) * time.Second
	first, a.throttled = !a.throttled, true
	return false, max(retry, time.Second), first
}

// size is the number of addresses remembered.
func (f *authFailures) size() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lru.Len()
}

// clientAddr is the address failures are counted by: the peer's IP, an
// IPv6 one by its /64 (one host's usual share). X-Forwarded-For is not
// read: any client can write it. Behind a reverse proxy every client
// shares the proxy's address, which only throttles bad keys together;
// good keys still pass.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return host
	case ip.To4() != nil:
		return ip.To4().String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
