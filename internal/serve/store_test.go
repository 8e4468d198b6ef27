package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/webdata"
)

// TestStoreQuotaDayStartsAtMidnightInItsZone: two replicas sharing a
// store with quota_timezone Europe/Berlin spend one quota of 2 until
// midnight in Berlin (23:00 UTC in winter), and a new one from then —
// not from midnight UTC, nor from each replica's own clock zone.
func TestStoreQuotaDayStartsAtMidnightInItsZone(t *testing.T) {
	url, _ := privateRedis(t)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	rates, err := webdata.NewRateLimits(nil)
	if err != nil {
		t.Fatal(err)
	}
	replica := func() *storeLimits {
		st, err := newStoreLimits(StoreOptions{URL: url}, 2, berlin, rates, slog.New(slog.DiscardHandler), newMetrics())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.close() })
		return st
	}
	a, b := replica(), replica()
	// A tool without a bucket: only the quota counts.
	const tool = "unlimited-tool"
	evening := time.Date(2026, 11, 27, 22, 59, 0, 0, time.UTC) // 23:59 in Berlin
	midnight := time.Date(2026, 11, 27, 23, 0, 0, 0, time.UTC)
	next := midnight.Add(24 * time.Hour)
	for i, step := range []struct {
		st    *storeLimits
		now   time.Time
		want  bool
		reset time.Time // of a refusal
	}{
		{a, evening, true, time.Time{}}, {b, evening, true, time.Time{}},
		{a, evening, false, midnight}, {b, evening.Add(59 * time.Second), false, midnight},
		{b, midnight, true, time.Time{}}, {a, midnight, true, time.Time{}}, {b, midnight.Add(time.Hour), false, next},
	} {
		v, err := step.st.spend(t.Context(), tool, "key:c", step.now)
		if err != nil {
			t.Fatal(err)
		}
		if v.ok != step.want || (!v.ok && !v.reset.Equal(step.reset)) {
			t.Fatalf("call %d at %s: ok = %v (reset %s), want %v (reset %s)", i+1, step.now.In(berlin), v.ok, v.reset.In(berlin), step.want, step.reset.In(berlin))
		}
	}
}

// lockedBuffer is a bytes.Buffer that goroutines may write together.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// newTestStore is a store at url with a daily quota of 10 and the
// default rate limits, logging to logs.
func newTestStore(t *testing.T, url string, logs *lockedBuffer) *storeLimits {
	t.Helper()
	rates, err := webdata.NewRateLimits(nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := newStoreLimits(StoreOptions{URL: url}, 10, time.UTC, rates, slog.New(slog.NewJSONHandler(logs, nil)), newMetrics())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.close() })
	return st
}

// TestStoreCallIsTriedOnce: when Redis stalls (SIGSTOP) under a call, the
// call is refused (deny) after one read timeout (1 s), naming the store,
// and once Redis resumes the quota counts the calls made — the stalled
// one at most once. Before, go-redis retried it (MaxRetries = 0 reads as
// its default of 3 retries): 2 s and more per call while Redis stalled.
func TestStoreCallIsTriedOnce(t *testing.T) {
	url, proc := privateRedis(t)
	st := newTestStore(t, url, &lockedBuffer{})
	if v, err := st.spend(t.Context(), webdata.NameListPresets, "key:c", time.Now()); err != nil || !v.ok {
		t.Fatalf("first call: %+v %v", v, err)
	}
	if err := proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = proc.Signal(syscall.SIGCONT)
		}
	}
	defer resume()
	start := time.Now()
	_, err := st.spend(t.Context(), webdata.NameListPresets, "key:c", start)
	took := time.Since(start)
	resume()
	var down *storeDownError
	if !errors.As(err, &down) || !strings.Contains(err.Error(), url) {
		t.Fatalf("spend while Redis is stopped: %v, want the store named unreachable", err)
	}
	if took > 1900*time.Millisecond {
		t.Errorf("the refusal took %s, want about the 1 s read timeout: one try", took)
	}
	rdb := st.rdb
	var used int
	for range 50 { // Redis runs what it had read once it resumes
		used, _ = rdb.Get(t.Context(), st.quotaKey("key:c", time.Now().UTC().Truncate(24*time.Hour))).Int()
		if used >= 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	used, _ = rdb.Get(t.Context(), st.quotaKey("key:c", time.Now().UTC().Truncate(24*time.Hour))).Int()
	if used > 2 {
		t.Errorf("the quota counts %d calls after 2 (one stalled): the stalled call was run again", used)
	}
}

// TestStoreDialFailureIsLoggedAsJSON: go-redis's own complaint (a failed
// dial) reaches the JSON log; before, it was written in plain text to
// stderr, between the JSON lines, after 5 dials 100 ms apart.
func TestStoreDialFailureIsLoggedAsJSON(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // connections are refused from now on
	var logs lockedBuffer
	st := newTestStore(t, "redis://"+addr, &logs)
	if _, err := st.spend(t.Context(), webdata.NameListPresets, "key:c", time.Now()); err == nil {
		t.Fatal("spend with nothing listening succeeded")
	}
	found := false
	for line := range strings.Lines(logs.String()) {
		var rec struct{ Component, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line is not JSON: %q", line)
		}
		found = found || (rec.Component == "redis" && strings.Contains(rec.Msg, "failed to dial after 1 attempts"))
	}
	if !found {
		t.Errorf("go-redis's failed dial (one attempt) is not in the log:\n%s", logs.String())
	}
}
