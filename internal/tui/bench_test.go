package tui

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/agent"
)

const benchMarkdown = "Here is what I found about **%d**:\n\n- first point with `code`\n- second point\n\n```go\nfunc f() int { return %d }\n```\n"

// benchModel returns a model whose transcript holds n messages (user
// messages, markdown answers and tool calls, in turn), fed through Update
// as a conversation would be.
func benchModel(n int) *model {
	m := newModel(New(Options{}), &fakeBackend{provider: Provider{Name: "fake", Model: "m"}})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	ev := func(e agent.Event) { m.Update(chatEventMsg{turn: m.turn, ev: e}) }
	for i := len(m.tr.items); i < n; i++ {
		switch i % 3 {
		case 0:
			m.notice(itemUser, fmt.Sprintf("question number %d: what about it?", i))
		case 1:
			ev(agent.TextDelta{Text: fmt.Sprintf(benchMarkdown, i, i)})
			ev(agent.TurnFinished{Text: "x"})
		case 2:
			id := fmt.Sprint(i)
			ev(agent.ToolCallStarted{ID: id, Name: "mcp__everything__echo", Args: json.RawMessage(`{"message":"hi"}`)})
			ev(agent.ToolCallFinished{ID: id, Result: textResult("Echo: hi\nsecond line"), Elapsed: time.Millisecond})
		}
	}
	m.render()
	return m
}

// streamStep is one frame of a streaming answer: a delta arrives, the
// frame tick fires, the screen is drawn.
func streamStep(m *model, i int) {
	if i%50 == 0 {
		m.Update(chatEventMsg{turn: m.turn, ev: agent.TurnFinished{Text: "x"}})
	}
	m.Update(chatEventMsg{turn: m.turn, ev: agent.TextDelta{Text: "word "}})
	m.Update(frameMsg{})
	m.View()
}

// BenchmarkRender10k compares the cost of an Update+View frame while an
// answer streams, with 10,000 messages in the transcript against 10.
func BenchmarkRender10k(b *testing.B) {
	var perOp [2]time.Duration
	for i, n := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			m := benchModel(n)
			b.ResetTimer()
			for j := 0; j < b.N; j++ {
				streamStep(m, j)
			}
			perOp[i] = b.Elapsed() / time.Duration(b.N)
		})
	}
	if perOp[0] > 0 && perOp[1] > 0 {
		fmt.Printf("render-10k: otter=%s/op baseline=%s/op ratio=%.2f (Update+View with 10,000 vs 10 messages; target ≤ 1.5)\n",
			perOp[1], perOp[0], float64(perOp[1])/float64(perOp[0]))
	}
}

// BenchmarkMemoryPer1kMessages reports the heap a transcript holds per
// 1,000 messages, before and after every message was rendered once.
func BenchmarkMemoryPer1kMessages(b *testing.B) {
	memOnce.Do(func() {
		heap := func() uint64 {
			runtime.GC()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return ms.HeapAlloc
		}
		before := heap()
		m := benchModel(1000)
		memHeld = heap() - before
		for _, it := range m.tr.items {
			m.itemLines(it)
		}
		memRendered = heap() - before
		runtime.KeepAlive(m)
		fmt.Printf("memory-per-1k-messages: otter=%d KB (every message rendered once: %d KB)\n", memHeld/1024, memRendered/1024)
	})
	for i := 0; i < b.N; i++ {
	}
	b.ReportMetric(float64(memHeld)/1024, "KB/1k-msgs")
	b.ReportMetric(float64(memRendered)/1024, "KB/1k-rendered")
}

var (
	memOnce              sync.Once
	memHeld, memRendered uint64
)
