package tool

import (
	"fmt"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/testpeer"
)

// A server's 20,000 tools go into the set and are found there. How long it
// takes is BenchmarkSetServerTools20000's to measure (a timed bound here
// failed under -race on a loaded machine): the rebuild sorts them once and
// works out each name's normal form once, not twice per comparison (some
// 570,000 times).
func TestSetServerTools20000(t *testing.T) {
	names := testpeer.AwkwardToolNames(20_000)
	tools := make([]Tool, len(names))
	for i, n := range names {
		tools[i] = newTool("many", n)
	}
	s := NewSet(Options{})
	start := time.Now()
	s.SetServerTools("many", tools)
	took := time.Since(start)
	t.Logf("SetServerTools of %d tools: %s", len(tools), took)
	if got := s.ServerToolCounts()["many"]; got != len(tools) {
		t.Fatalf("%d of %d tools in the set", got, len(tools))
	}
	if _, ok := s.Lookup(fmt.Sprintf("mcp__many__t%d", 19_999)); !ok {
		t.Error("mcp__many__t19999 is not in the set")
	}
}

func BenchmarkSetServerTools20000(b *testing.B) {
	names := testpeer.AwkwardToolNames(20_000)
	tools := make([]Tool, len(names))
	for i, n := range names {
		tools[i] = newTool("many", n)
	}
	for b.Loop() {
		NewSet(Options{}).SetServerTools("many", tools)
	}
}
