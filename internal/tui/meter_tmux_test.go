package tui

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// meterWindow is the context window of the meter tests: small, so that a
// few kilobytes of conversation move the meter, and the system prompt and
// tools are a good part of it.
const meterWindow = 8000

var meterRe = regexp.MustCompile(`(\d+)% of 8k`)

// meter waits until the status line's context meter shows and returns
// the tokens it says, unless it shows what was read last time (then it
// waits for a new figure, for up to settle).
func (p *tmuxPane) meter(settle time.Duration, last int) int {
	p.t.Helper()
	deadline := time.Now().Add(settle)
	for {
		s := p.capture()
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		if m := meterRe.FindStringSubmatch(lines[len(lines)-1]); m != nil {
			pct, _ := strconv.Atoi(m[1])
			if got := pct * meterWindow / 100; got != last || time.Now().After(deadline) {
				return got
			}
		} else if time.Now().After(deadline.Add(30 * time.Second)) {
			p.t.Fatalf("the status line shows no context meter:\n%s", s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// near reports whether the meter's figure is within 10 % of the tokens
// the request took (and 1 % of the window, the meter's own step).
func near(meter, request int) bool {
	d := meter - request
	return max(d, -d) <= request/10+meterWindow/100
}

// Issue 28, walk 4: the status line's context meter says what the next
// request takes, within 10 %: after `otter -c` of a compacted
// conversation, while a tool runs, and after /compact (where it agrees
// with the compaction's notice too). The fake model counts a request's
// tokens as the real APIs report them, from its size.
func TestContextMeterMatchesTheNextRequest(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	// About 5k tokens of answer in the 8k window: with the system prompt
	// and tools, the next message passes compact_at and is compacted.
	long := strings.Repeat("Otters are mustelids. ", 900)
	model := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Text: []string{long}},
		llmtest.Reply{Text: []string{"The user asked about otters, which are mustelids."}}, // the summary
		// Enough for /compact to summarise later.
		llmtest.Reply{Text: []string{"They eat fish. " + strings.Repeat("Fish, crabs and sea urchins. ", 170)}},
	)
	model.ContextWindow = meterWindow
	cfg := fakeModelConfig(model.URL) + "context_window = 8000\n" + testServerConfig("notes", "notes")
	p := startTmux(t, dir, cfg, 100, 30)
	p.waitFor("fake/fake-model", "1/1 servers")
	p.keys("tell me about otters", "Enter")
	p.waitFor("Otters are mustelids.")
	p.keys("what do they eat?", "Enter")
	p.waitFor("sea urchins.")
	if n := len(model.Requests()); n != 3 {
		t.Fatalf("the model got %d requests, want 3 (the second message's compaction asks for a summary)", n)
	}
	p.quit()

	// Continued: the meter, before anything is sent, against the first
	// request.
	p.restart(dir, "-c")
	p.waitFor("Continuing session", "1/1 servers")
	resumed := p.meter(0, -1)
	model.Push(
		// Some text before the call, for /compact to summarise later.
		llmtest.Reply{Text: []string{strings.Repeat("Waiting is what otters do best. ", 40)},
			Calls: []llmtest.Call{{ID: "call_1", Name: "mcp__notes__wait", Args: `{"file":"` + gate + `"}`}}},
		llmtest.Reply{Text: []string{"Done waiting."}},
	)
	n := len(model.Requests())
	p.keys("wait for the file", "Enter")
	p.waitFor("mcp__notes__wait", "running")
	req := model.Requests()[n]
	t.Logf("resumed: the meter said %d tokens, the next request took %d", resumed, req.InputTokens)
	if !near(resumed, req.InputTokens) {
		t.Errorf("after otter -c the meter said %d tokens (%d%%); the next request took %d", resumed, resumed*100/meterWindow, req.InputTokens)
	}

	// While the tool runs: the meter against the request that sends its
	// result.
	running := p.meter(2*time.Second, resumed)
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p.waitFor("Done waiting.")
	req = model.Requests()[n+1]
	t.Logf("tool running: the meter said %d tokens, the next request took %d", running, req.InputTokens)
	if !near(running, req.InputTokens) {
		t.Errorf("while a tool ran the meter said %d tokens (%d%%); the request with its result took %d", running, running*100/meterWindow, req.InputTokens)
	}

	// /compact: the meter agrees with the notice and the next request.
	before := p.meter(0, -1)
	model.Push(llmtest.Reply{Text: []string{"Otters: mustelids that eat fish; a wait tool ran."}}, llmtest.Reply{Text: []string{"Yes."}})
	p.keys("/compact", "Enter")
	s := p.waitFor("compacted the conversation because you asked")
	after := p.meter(2*time.Second, before)
	m := regexp.MustCompile(`because you asked: [0-9.]+k? → ([0-9.]+)(k?) tokens`).FindStringSubmatch(strings.Join(strings.Fields(s), " "))
	if m == nil {
		t.Fatalf("the compaction's notice gives no figure:\n%s", s)
	}
	f, _ := strconv.ParseFloat(m[1], 64)
	if m[2] == "k" {
		f *= 1000
	}
	noticed := int(f)
	n = len(model.Requests())
	p.keys("is that all?", "Enter")
	p.waitFor("Yes.")
	req = model.Requests()[n]
	t.Logf("/compact: the meter said %d tokens before, the notice %d after, the meter %d, the next request took %d", before, noticed, after, req.InputTokens)
	if !near(after, noticed) || !near(after, req.InputTokens) {
		t.Errorf("after /compact the meter said %d tokens (%d%%), the notice %d, and the next request took %d", after, after*100/meterWindow, noticed, req.InputTokens)
	}
}
