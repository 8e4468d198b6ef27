package serve

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// An attacker cycling addresses cannot grow the limiter past its bound;
// the addresses it forgets are the least recently seen.
func TestAuthFailuresRemembersBoundedAddresses(t *testing.T) {
	f := newAuthFailures(time.Minute, 2, 100)
	now := time.Now()
	for i := range 10000 {
		f.fail(fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255), now)
	}
	if n := f.size(); n != 100 {
		t.Fatalf("%d addresses remembered, want the bound, 100", n)
	}
	// The most recent address is still throttled after its burst.
	last := "10.0.39.15" // i = 9999
	if ok, _, _ := f.fail(last, now); !ok {
		t.Fatalf("second failure of %s refused, want its burst of 2", last)
	}
	ok, retry, first := f.fail(last, now)
	if ok || !first || retry != time.Minute {
		t.Errorf("third failure: ok=%v first=%v retry=%v, want refused, first of its episode, retry in 1m0s", ok, first, retry)
	}
	if _, _, first := f.fail(last, now); first {
		t.Errorf("fourth failure is reported as the first of an episode again")
	}
	if ok, _, _ := f.fail(last, now.Add(time.Minute)); !ok {
		t.Errorf("a failure a minute later is refused, want a token back")
	}
}

// Failures are counted by IP: IPv6 by its /64, IPv4-mapped as IPv4; the
// port does not matter.
func TestClientAddr(t *testing.T) {
	for remote, want := range map[string]string{
		"192.0.2.7:51000":                "192.0.2.7",
		"[::ffff:192.0.2.7]:1":           "192.0.2.7",
		"[2001:db8:1:2:aaaa::1]:443":     "2001:db8:1:2::/64",
		"[2001:db8:1:2:bbbb:cc::9]:8443": "2001:db8:1:2::/64",
		"pipe":                           "pipe",
	} {
		if got := clientAddr(&http.Request{RemoteAddr: remote}); got != want {
			t.Errorf("clientAddr(%q) = %q, want %q", remote, got, want)
		}
	}
}
