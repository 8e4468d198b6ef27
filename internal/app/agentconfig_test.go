package app

import (
	"testing"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/config"
)

// The agent knows the config's [agent] values by its own names: they must
// stay the same words and figures, since app passes them through.
func TestAgentSharesTheConfigsWords(t *testing.T) {
	for _, c := range [][2]string{
		{config.ToolSearchAuto, agent.ToolSearchAuto},
		{config.ToolSearchAlways, agent.ToolSearchAlways},
		{config.ToolSearchNever, agent.ToolSearchNever},
	} {
		if c[0] != c[1] {
			t.Errorf("tool_search %q in the config is %q in the agent", c[0], c[1])
		}
	}
	if config.DefaultCompactAt != agent.DefaultCompactAt {
		t.Errorf("compact_at defaults to %v in the config, %v in the agent", config.DefaultCompactAt, agent.DefaultCompactAt)
	}
}
