package app

import (
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/agent"
)

func TestCompactedTextCountsInTheSingular(t *testing.T) {
	got := CompactedText(agent.Compacted{Reason: "auto", TokensBefore: 7500, TokensAfter: 3000, Elided: 1, Summarized: 1})
	for _, want := range []string{"1 old tool result replaced by a one-line stub,", "1 earlier message summarised"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
	got = CompactedText(agent.Compacted{Reason: "manual", TokensBefore: 7500, TokensAfter: 3000, Elided: 3, Summarized: 12})
	for _, want := range []string{"because you asked", "3 old tool results replaced by one-line stubs", "12 earlier messages summarised"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
	// An automatic one says why, with the tokens before and after.
	got = CompactedText(agent.Compacted{Reason: "auto", TokensBefore: 161_000, TokensAfter: 62_000, Elided: 4, Summarized: 30})
	for _, want := range []string{"compacted the conversation because it neared the model's context window", "161k → 62k tokens", "replaced by one-line stubs", "summarised"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
}

// A compaction whose figures round to the same ("3.6k → 3.6k") shows
// them whole; one with nothing to gain says so and why.
func TestCompactionNoticesSayWhatHappened(t *testing.T) {
	if got := CompactedText(agent.Compacted{Reason: "auto", TokensBefore: 3612, TokensAfter: 3571, Elided: 1}); !strings.Contains(got, "3612 → 3571 tokens") {
		t.Errorf("%q does not show the figures whole", got)
	}
	if got := CompactedText(agent.Compacted{Reason: "auto", TokensBefore: 3612, TokensAfter: 1200, Summarized: 4}); !strings.Contains(got, "3.6k → 1.2k tokens") {
		t.Errorf("%q", got)
	}
	got := NothingToGainText(agent.NothingToGain{Reason: "manual", Tokens: 1900, Why: "the model's summary (300 tokens) is not shorter than the 1 messages it would replace (20 tokens)"})
	if want := "the conversation was not compacted as you asked: nothing to gain — the model's summary"; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "it stays at 1.9k tokens") {
		t.Errorf("%q, want it to begin %q and end with the tokens", got, want)
	}
}

// A count reads as a window is usually named, whatever its size.
func TestTokenCount(t *testing.T) {
	for n, want := range map[int64]string{
		950: "950", 1000: "1k", 1500: "1.5k", 8192: "8.2k", 62_000: "62k", 99_960: "100k", 200_000: "200k",
		999_400: "999k", 999_600: "1M", 1_000_000: "1M", 1_200_000: "1.2M", 12_345_678: "12.3M", 150_000_000: "150M",
	} {
		if got := TokenCount(n); got != want {
			t.Errorf("TokenCount(%d) = %q, want %q", n, got, want)
		}
	}
}
