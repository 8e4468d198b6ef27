package session

import (
	"context"
	"slices"
	"testing"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/record"
)

func TestRecorderSavesState(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	rec := NewRecorder(s, record.Info{Cwd: "/p"}, func(err error) { t.Error(err) })
	rec.RecordState("loaded_tools", []string{"too early"}) // no session yet: nothing is created
	if rec.ID() != "" {
		t.Fatalf("state alone created session %s", rec.ID())
	}
	rec.RecordMessage(llm.Message{Role: llm.RoleUser, Text: "hi"}, llm.Usage{})
	rec.RecordState("loaded_tools", []string{"mcp__a__x"})
	rec.RecordState("loaded_tools", []string{"mcp__a__x", "mcp__b__y"})
	var got []string
	if found, err := s.State(context.Background(), rec.ID(), "loaded_tools", &got); !found || err != nil || !slices.Equal(got, []string{"mcp__a__x", "mcp__b__y"}) {
		t.Errorf("State = %v, %v, %v", got, found, err)
	}
}
