package compact_test

import (
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/compact"
	"github.com/otter-sh/otter/internal/llm"
)

// A cut never falls between a tool call and its result, whatever the
// budget.
func TestSplitKeepsToolCallsWithTheirResults(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 4000)
	msgs := []llm.Message{
		{Role: llm.RoleUser, Text: "q1"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "t", Args: []byte(`{}`)}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "a", Text: big}}},
		{Role: llm.RoleAssistant, Text: "a1"},
		{Role: llm.RoleUser, Text: "q2"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "b", Name: "t", Args: []byte(`{}`)}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "b", Text: big}}},
	}
	for keep := 0; keep < 3000; keep += 50 {
		cut := compact.Split(msgs, keep)
		if cut <= 0 || cut >= len(msgs) || msgs[cut].Role == llm.RoleTool {
			t.Fatalf("keep %d: cut at %d (%s)", keep, cut, msgs[cut].Role)
		}
	}
	if cut := compact.Split(msgs, 10_000); cut != 1 {
		t.Errorf("everything fits: cut at %d, want 1 (the first message is always summarised)", cut)
	}
}

func TestElideLeavesRecentResultsAndSaysWhereTheOutputIs(t *testing.T) {
	t.Parallel()
	big := "first line\n" + strings.Repeat("y", 4000)
	msgs := []llm.Message{
		{Role: llm.RoleUser, Text: "q"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "mcp__web__fetch", Args: []byte(`{"url":"https://example.com/otters"}`)}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "a", Name: "mcp__web__fetch", Text: big}}},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "b", Name: "mcp__web__fetch", Args: []byte(`{}`)}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "b", Text: big}}},
	}
	var saved []string
	n := compact.Elide(msgs, 3, 0, func(s string) (string, error) { saved = append(saved, s); return "/tmp/out-1.txt", nil })
	stub := msgs[2].ToolResults[0].Text
	if n != 1 || msgs[4].ToolResults[0].Text != big || len(saved) != 1 || saved[0] != big {
		t.Fatalf("elided %d; recent result kept %v; saved %d", n, msgs[4].ToolResults[0].Text == big, len(saved))
	}
	for _, want := range []string{"mcp__web__fetch", "https://example.com/otters", "4011 characters", `"first line"`, "/tmp/out-1.txt"} {
		if !strings.Contains(stub, want) {
			t.Errorf("stub %q does not say %q", stub, want)
		}
	}
	if strings.Contains(stub, "\n") {
		t.Errorf("stub is more than one line: %q", stub)
	}
}
