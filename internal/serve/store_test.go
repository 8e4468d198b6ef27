package serve

import (
	"log/slog"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/webdata"
)

// TestStoreQuotaDayStartsAtMidnightInItsZone: two replicas sharing a
// store with quota_timezone Europe/Berlin spend one quota of 2 until
// midnight in Berlin (23:00 UTC in winter), and a new one from then —
// not from midnight UTC, nor from each replica's own clock zone.
func TestStoreQuotaDayStartsAtMidnightInItsZone(t *testing.T) {
	url := privateRedis(t)
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
