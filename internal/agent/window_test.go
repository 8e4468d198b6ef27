package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/compact"
	"github.com/otter-sh/otter/internal/hooks"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/record"
	"github.com/otter-sh/otter/internal/session"
	"github.com/otter-sh/otter/internal/tool"
)

// isSummaryRequest tells the summarising call from the conversation's.
func isSummaryRequest(r llmtest.Request) bool {
	return strings.Contains(r.System, "You compact a conversation")
}

// longAnswer is an answer of about n bytes that says which turn it is.
func longAnswer(turn, n int) []string {
	line := fmt.Sprintf("Turn %d: otters hold hands while they sleep so that they do not drift apart. ", turn)
	text := strings.Repeat(line, n/len(line)+1)[:n]
	return []string{text[:n/2], text[n/2:]}
}

// smallWindow answers like a model with a context window of window tokens:
// long answers to the conversation, short summaries to the compaction.
func smallWindow(t *testing.T, kind llmtest.Kind, window int) *llmtest.Server {
	srv := llmtest.New(t, kind)
	srv.ContextWindow = window
	turn := 0
	var mu sync.Mutex
	srv.Respond = func(r llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if isSummaryRequest(r) {
			return llmtest.Reply{Text: []string{"## Goals\nThe user asks about otters, one question per turn.\n## Open tasks\nAnswer the next question."}}
		}
		turn++
		return llmtest.Reply{Text: longAnswer(turn, 2400)}
	}
	return srv
}

// factsWith gives the fake provider the window as a [providers] table
// would.
func factsWith(window, output int) func(string, string) llm.ModelFacts {
	c := llm.Configured{Limits: []llm.Limits{{ContextWindow: window, MaxOutputTokens: output}}}
	return func(p, m string) llm.ModelFacts { return llm.Facts(c, m) }
}

type eventLog struct {
	mu  sync.Mutex
	evs []agent.Event
}

func (l *eventLog) add(ev agent.Event) { l.mu.Lock(); l.evs = append(l.evs, ev); l.mu.Unlock() }

// eventsOf returns the events of type T that l holds.
func eventsOf[T agent.Event](l *eventLog) []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []T
	for _, ev := range l.evs {
		if c, ok := ev.(T); ok {
			out = append(out, c)
		}
	}
	return out
}

func (l *eventLog) compactions() []agent.Compacted { return eventsOf[agent.Compacted](l) }

// A long conversation in a small window goes on indefinitely: the
// conversation is compacted before it would overflow, no request is ever
// refused, and the session store keeps every original message.
func TestLongConversationInASmallWindow(t *testing.T) {
	t.Parallel()
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			const window, turns = 4000, 30
			srv := smallWindow(t, kind, window)
			store, err := session.Open(context.Background(), filepath.Join(t.TempDir(), record.FileName))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			rec := session.NewRecorder(store, record.Info{Cwd: "/p", Provider: "fake", Model: "m"}, func(err error) { t.Error(err) })
			var log eventLog
			a := agent.New(agent.Options{Provider: srv.Provider(), Model: "m", Facts: factsWith(window, 1000), Recorder: rec, OnEvent: log.add,
				Now: func() time.Time { return time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC) }})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			for i := range turns {
				if err := a.Send(ctx, fmt.Sprintf("Question %d: tell me at length about otters.", i+1)); err != nil {
					t.Fatalf("turn %d: %v", i+1, err)
				}
			}
			for i, r := range srv.Requests() {
				if r.Refused != "" {
					t.Errorf("request %d was refused: %s", i, r.Refused)
				}
				if r.InputTokens+r.MaxTokens > window {
					t.Errorf("request %d: %d tokens + max_tokens %d pass the window of %d", i, r.InputTokens, r.MaxTokens, window)
				}
			}
			cs := log.compactions()
			var sizes []int
			for _, r := range srv.Requests() {
				sizes = append(sizes, r.InputTokens)
			}
			t.Logf("%d requests, %d compactions, prompt sizes %v", len(sizes), len(cs), sizes)
			if len(cs) == 0 {
				t.Fatal("no compaction in 30 long turns")
			}
			for _, c := range cs {
				if c.TokensAfter >= c.TokensBefore || c.Summarized == 0 || c.Summary == "" {
					t.Errorf("compaction %+v did not shrink the conversation with a summary", c)
				}
			}
			// The last request carries the summary and the latest question.
			reqs := srv.Requests()
			last := reqs[len(reqs)-1]
			if !strings.HasPrefix(last.Messages[0].Text, compact.SummaryPrefix) || !strings.Contains(last.Messages[len(last.Messages)-1].Text, "Question 30") {
				t.Errorf("last request does not start with the summary and end with question 30: %+v", last.Messages)
			}
			// Every original is stored; a resumed session sends the
			// compacted form.
			all, err := store.History(ctx, rec.ID())
			if err != nil {
				t.Fatal(err)
			}
			users := 0
			for _, m := range all {
				if m.Role == llm.RoleUser {
					users++
				}
			}
			if users != turns {
				t.Errorf("store holds %d user messages, want %d", users, turns)
			}
			stored, err := store.Compactions(ctx, rec.ID())
			if err != nil || len(stored) != len(cs) {
				t.Fatalf("store holds %d compactions (%v), the agent made %d", len(stored), err, len(cs))
			}
			resumed, err := store.ModelHistory(ctx, rec.ID())
			if err != nil {
				t.Fatal(err)
			}
			if got, want := compact.MessagesTokens(resumed), compact.MessagesTokens(a.Messages()); !compact.IsSummary(resumed[0]) || got != want {
				t.Errorf("resumed history: summary first %v, %d tokens; the agent's is %d", compact.IsSummary(resumed[0]), got, want)
			}
			if st := a.Context(); st.Window != window || st.Used <= 0 || st.Share() > 0.8 {
				t.Errorf("context state %+v (share %.2f)", st, st.Share())
			}
		})
	}
}

// A tool-heavy conversation: old tool results become one-line stubs that
// say where the whole output is; a result bigger than the room left is cut
// to fit; and when otter's figure of the window is wrong, the provider's
// "too long" refusal makes it compact and retry once, learning the window.
func TestToolResultsAreElidedAndCutAndOverflowRetried(t *testing.T) {
	t.Parallel()
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			const window = 6000
			srv := llmtest.New(t, kind)
			srv.ContextWindow = window
			var mu sync.Mutex
			calls := 0
			srv.Respond = func(r llmtest.Request) llmtest.Reply {
				mu.Lock()
				defer mu.Unlock()
				if isSummaryRequest(r) {
					return llmtest.Reply{Text: []string{"## Goals\nFetch pages about otters."}}
				}
				if len(r.Messages) > 0 && r.Messages[len(r.Messages)-1].Role == "user" {
					calls++
					return llmtest.Reply{Text: []string{"Fetching."}, Calls: []llmtest.Call{{ID: fmt.Sprintf("call_%d", calls), Name: "lookup_word", Args: fmt.Sprintf(`{"word":"otter %d"}`, calls)}}}
				}
				return llmtest.Reply{Text: []string{"Done."}}
			}
			size := 3000 // bytes of a result; the 6th is bigger than the window
			set := tool.NewSet(tool.Options{SpillDir: t.TempDir()})
			set.SetBuiltins([]tool.Tool{&fakeTool{name: "lookup_word", readOnly: true, call: func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
				mu.Lock()
				n := calls
				mu.Unlock()
				if n == 6 {
					return tool.TextResult(fmt.Sprintf("page %d: ", n) + strings.Repeat("a huge page. ", 40_000/13)), nil
				}
				return tool.TextResult(fmt.Sprintf("page %d: ", n) + strings.Repeat("otter facts. ", size/13)), nil
			}}})
			var log eventLog
			// otter believes the window is 60000: the provider's refusal
			// corrects it.
			a := agent.New(agent.Options{Provider: srv.Provider(), Model: "m", Tools: set, Facts: factsWith(60_000, 1000), OnEvent: log.add})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			for i := range 8 {
				if err := a.Send(ctx, fmt.Sprintf("Look up otter %d.", i+1)); err != nil {
					t.Fatalf("turn %d: %v", i+1, err)
				}
			}
			refused := 0
			for _, r := range srv.Requests() {
				if r.Refused != "" {
					refused++
					if refused == 1 && !strings.Contains(r.Refused, "6000") {
						t.Errorf("refusal %q", r.Refused)
					}
				}
			}
			if refused != 1 {
				t.Errorf("%d requests refused, want exactly the one that taught otter the window", refused)
			}
			if st := a.Context(); st.Window != window {
				t.Errorf("window after the refusal = %d, want the provider's %d", st.Window, window)
			}
			var stubs, cut int
			for _, m := range a.Messages() {
				for _, r := range m.ToolResults {
					if strings.HasPrefix(r.Text, "[elided to save context: lookup_word") {
						stubs++
						path := r.Text[strings.LastIndex(r.Text, "the full output is in ")+len("the full output is in ") : len(r.Text)-1]
						if data, err := os.ReadFile(path); err != nil || !strings.HasPrefix(string(data), "page ") {
							t.Errorf("stub %q: the file it names does not hold the output (%v)", r.Text, err)
						}
					}
					if strings.Contains(r.Text, "[cut to fit the model's context window") || strings.Contains(r.Text, "a huge page") && len(r.Text) < 30_000 {
						cut++
					}
				}
			}
			cs := log.compactions()
			t.Logf("%d compactions %+v; %d stubs, %d cut", len(cs), cs, stubs, cut)
			if len(cs) == 0 {
				t.Error("no compaction")
			}
			after := false
			for _, r := range srv.Requests() {
				if after && r.InputTokens > window {
					t.Errorf("a request of %d tokens after the refusal", r.InputTokens)
				}
				after = after || r.Refused != ""
			}
		})
	}
}

// A summary that is not shorter than the messages it would replace (a
// model that runs on) is not used: /compact says there is nothing to gain
// (an event, not an error: nothing failed) and the conversation stays as
// it was, instead of growing ("7.5k → 7.6k tokens").
func TestASummaryLongerThanItsMessagesIsNotUsed(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, llmtest.OpenAI)
	srv.Respond = func(r llmtest.Request) llmtest.Reply {
		if isSummaryRequest(r) {
			return llmtest.Reply{Text: []string{strings.Repeat("The user said hello and I answered at great length. ", 60)}}
		}
		return llmtest.Reply{Text: []string{"Hi."}}
	}
	var log eventLog
	a := agent.New(agent.Options{Provider: srv.Provider(), Model: "m", Facts: factsWith(8000, 1000), OnEvent: log.add})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, q := range []string{"hello", "how are you?", "fine, thanks"} {
		if err := a.Send(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	before := a.Messages()
	if err := a.Compact(ctx, ""); err != nil {
		t.Errorf("Compact = %v", err)
	}
	if b := log.barren(); len(b) != 1 || b[0].Reason != "manual" || !strings.Contains(b[0].Why, "not shorter") {
		t.Errorf("nothing to gain reported %+v, want once, saying the summary is not shorter", b)
	}
	if after := a.Messages(); len(after) != len(before) || compact.IsSummary(after[0]) {
		t.Errorf("the conversation changed: %d messages before, %d after (summary first: %v)", len(before), len(after), compact.IsSummary(after[0]))
	}
	if cs := log.compactions(); len(cs) != 0 {
		t.Errorf("a compaction was reported: %+v", cs)
	}
}

// A provider that reports no token counts (some OpenAI-compatible servers
// send none) still has its calls counted, so /cost does not say there were
// none.
func TestCallsWithoutUsageAreCounted(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Hi."}}, llmtest.Reply{Text: []string{"Hi again."}, InputTokens: 40, OutputTokens: 3})
	a := agent.New(agent.Options{Provider: srv.Provider(), Model: "m"})
	for _, q := range []string{"hello", "again"} {
		if err := a.Send(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	costs := a.Costs()
	if len(costs) != 1 || costs[0].Calls != 2 || costs[0].Unreported != 1 || costs[0].Usage.InputTokens != 40 {
		t.Errorf("costs = %+v, want 2 calls, 1 without token counts, 40 input tokens", costs)
	}
}

// The share of the window a front end reads on hearing Usage is the
// provider's count of that call (nothing was added since), not an
// estimate made before the answer joined the conversation; and after a
// compaction, without a count, it still covers the system prompt.
func TestContextOnUsageIsTheProvidersCount(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Text: []string{strings.Repeat("Hi there. ", 300)}, InputTokens: 1200, OutputTokens: 750},
		llmtest.Reply{Text: []string{"Fine."}, InputTokens: 2000, OutputTokens: 2},
		llmtest.Reply{Text: []string{"The user said hello."}}, // the summary
	)
	var a *agent.Agent
	var used []int
	a = agent.New(agent.Options{Provider: srv.Provider(), Model: "m", Facts: factsWith(3000, 500), OnEvent: func(ev agent.Event) {
		if _, ok := ev.(agent.Usage); ok {
			used = append(used, a.Context().Used)
		}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, q := range []string{"hello", "how are you?"} {
		if err := a.Send(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(used, []int{1950, 2002}) {
		t.Errorf("on Usage the context said %v tokens, want [1950 2002] (the calls' tokens in and out)", used)
	}
	if err := a.Compact(ctx, ""); err != nil {
		t.Fatal(err)
	}
	prompt := compact.Tokens(srv.Requests()[0].System)
	if got := a.Context().Used; got < prompt+compact.MessagesTokens(a.Messages()) {
		t.Errorf("after /compact the context says %d tokens: less than the system prompt (%d) and the messages (%d)", got, prompt, compact.MessagesTokens(a.Messages()))
	}
}

func (l *eventLog) barren() []agent.NothingToGain { return eventsOf[agent.NothingToGain](l) }

// A provider whose tokenizer counts fewer tokens than otter's estimate (4
// bytes a token) had /compact report "1.9k → 2.1k tokens": the provider's
// count before, otter's estimate after. The figures compare like with
// like: the compacted conversation is shorter, said so, and the meter
// after it reads what the notice says.
func TestACompactionNeverReportsGrowth(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, llmtest.OpenAI)
	srv.Respond = func(r llmtest.Request) llmtest.Reply {
		if isSummaryRequest(r) {
			return llmtest.Reply{Text: []string{strings.Repeat("The user asked about otters; the assistant answered at length. ", 20)}}
		}
		n := len(r.System)
		for _, m := range r.Messages {
			n += len(m.Text)
		}
		// A tokenizer that makes a token of 8 bytes.
		return llmtest.Reply{Text: longAnswer(len(r.Messages), 2400), InputTokens: int64(n / 8), OutputTokens: 300}
	}
	var log eventLog
	a := agent.New(agent.Options{Provider: srv.Provider(), Model: "m", Facts: factsWith(8000, 1000), OnEvent: log.add})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 4 {
		if err := a.Send(ctx, fmt.Sprintf("Question %d: tell me about otters.", i+1)); err != nil {
			t.Fatal(err)
		}
	}
	shown := a.Context().Used
	if err := a.Compact(ctx, ""); err != nil {
		t.Fatal(err)
	}
	cs := log.compactions()
	if len(cs) != 1 {
		t.Fatalf("compactions %+v, want one", cs)
	}
	c := cs[0]
	t.Logf("meter %d before; compaction %d → %d; meter %d after", shown, c.TokensBefore, c.TokensAfter, a.Context().Used)
	if c.TokensBefore != shown {
		t.Errorf("the compaction starts from %d tokens, the meter showed %d", c.TokensBefore, shown)
	}
	if c.TokensAfter >= c.TokensBefore {
		t.Errorf("compacted %d → %d tokens: not shorter", c.TokensBefore, c.TokensAfter)
	}
	if got := a.Context().Used; got != c.TokensAfter {
		t.Errorf("after the compaction the meter reads %d, the notice said %d", got, c.TokensAfter)
	}
}

// A message longer than the window (an 80-line paste into a 3k window):
// compacting has nothing to gain, which is said once, without a summary
// call for nothing and without sending the refused request again; the
// error's advice fits the case — a shorter message, not deferring MCP
// tools that do not exist — and the meter shows the share over 100 %.
func TestAMessageLongerThanTheWindow(t *testing.T) {
	t.Parallel()
	const line = "2026-03-04 12:00:01 INFO otterd[1234]: request served in 12 ms, 200 OK, path /api/v1/otters?limit=100&page=7 cache=hit\n"
	for _, tc := range []struct {
		name     string
		lines    int  // of the paste
		greeting bool // a short exchange comes first
		// mcp: an MCP server's 30 tools are offered whole (tool_search =
		// "never"), and deferring them would make the request fit.
		mcp bool
	}{{"alone", 110, false, false}, {"after a greeting", 110, true, false}, {"with MCP tools", 60, false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const window = 3000
			srv := llmtest.New(t, llmtest.OpenAI)
			srv.ContextWindow = window
			srv.Respond = func(r llmtest.Request) llmtest.Reply {
				if isSummaryRequest(r) { // runs on: longer than the greeting
					return llmtest.Reply{Text: []string{strings.Repeat("The user greeted the assistant. ", 20)}}
				}
				return llmtest.Reply{Text: []string{"Hello."}}
			}
			set := tool.NewSet(tool.Options{SpillDir: t.TempDir()})
			var builtins []tool.Tool
			for _, n := range []string{"fetch_page", "scrape", "analyze_site", "export_data", "lookup_word", "extract"} {
				builtins = append(builtins, &fakeTool{name: n, readOnly: true, call: func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.TextResult("ok"), nil }})
			}
			set.SetBuiltins(builtins)
			if tc.mcp {
				set.SetServerTools("many", manyServer(t, 30))
			}
			var log eventLog
			opts := agent.Options{Provider: srv.Provider(), Model: "m", Tools: set, Facts: factsWith(window, 500), OnEvent: log.add}
			if tc.mcp {
				opts.ToolSearch = agent.ToolSearch{Mode: agent.ToolSearchNever}
			}
			a := agent.New(opts)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if tc.greeting {
				if err := a.Send(ctx, "hi"); err != nil {
					t.Fatal(err)
				}
			}
			before := len(srv.Requests())
			err := a.Send(ctx, "Why does this log say nothing useful?\n"+strings.Repeat(line, tc.lines))
			tle, ok := errors.AsType[*agent.TooLongError](err)
			if !ok {
				t.Fatalf("Send = %v, want a TooLongError", err)
			}
			msg := err.Error()
			t.Log(msg)
			if !tle.MessageTooLong() || !strings.Contains(msg, "a shorter message") {
				t.Errorf("the advice does not say the message alone is too long: %s", msg)
			}
			if tle.NewConversationHelps() || strings.Contains(msg, "a new conversation") {
				t.Errorf("a new conversation is advised, but the message alone does not fit: %s", msg)
			}
			if strings.Contains(msg, "tool_search") != tc.mcp || tle.DeferringHelps() != tc.mcp {
				t.Errorf("tool search advised %v with MCP tools %v: %s", strings.Contains(msg, "tool_search"), tc.mcp, msg)
			}
			if tle.WindowStated == strings.Contains(msg, "context_window") {
				t.Errorf("window stated by the provider %v, yet context_window advice %v: %s", tle.WindowStated, !tle.WindowStated, msg)
			}
			var sent, summaries int
			for _, r := range srv.Requests()[before:] {
				if isSummaryRequest(r) {
					summaries++
				} else {
					sent++
				}
			}
			if sent != 1 || summaries > 1 {
				t.Errorf("%d requests of the conversation and %d summary calls, want the one refused request and at most one summary", sent, summaries)
			}
			if cs := log.compactions(); len(cs) != 0 {
				t.Errorf("a compaction was reported: %+v", cs)
			}
			if b := log.barren(); len(b) != 1 || b[0].Reason != "auto" || b[0].Why == "" {
				t.Errorf("nothing to gain reported %+v, want once, for the automatic compaction, with why", b)
			}
			// The meter is not capped: the message is over the window, and
			// by how much tells how much to cut.
			if st := a.Context(); st.Share() <= 1 {
				t.Errorf("context share %.2f, want over 1 (%+v)", st.Share(), st)
			}
		})
	}
}

// The PreCompact hooks run for a compaction otter decides on, with trigger
// "auto", and what they report is shown; before, they ran only for the
// person's /compact.
func TestAutomaticCompactionRunsPreCompact(t *testing.T) {
	t.Parallel()
	const window = 4000
	srv := smallWindow(t, llmtest.OpenAI, window)
	var mu sync.Mutex
	var triggers []string
	run := func(_ context.Context, ev hooks.Event, in hooks.Input) hooks.Outcome {
		if ev != hooks.PreCompact {
			return hooks.Outcome{}
		}
		mu.Lock()
		triggers = append(triggers, in.Trigger)
		mu.Unlock()
		return hooks.Outcome{Messages: []string{"saved the notes before compaction"}}
	}
	var log eventLog
	a := agent.New(agent.Options{Provider: srv.Provider(), Model: "m", Facts: factsWith(window, 1000), OnEvent: log.add, Hooks: run})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := 0; i < 8 && len(log.compactions()) == 0; i++ {
		if err := a.Send(ctx, fmt.Sprintf("Question %d: tell me at length about otters.", i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if len(log.compactions()) == 0 {
		t.Fatal("no automatic compaction in 8 long turns")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(triggers) == 0 || triggers[0] != "auto" {
		t.Errorf("PreCompact ran with triggers %q, want auto before the compaction", triggers)
	}
	said := false
	for _, m := range eventsOf[agent.HookMessage](&log) {
		said = said || (m.Event == hooks.PreCompact && m.Text == "saved the notes before compaction")
	}
	if !said {
		t.Error("what the PreCompact hook reported was not shown")
	}
}
