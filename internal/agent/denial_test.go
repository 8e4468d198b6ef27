package agent_test

import (
	"errors"
	"testing"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// A stored result of a call that was never run reads back as a denial in
// the words shown live: one marked Denied, and one saved before results
// were marked, whether a person, a rule or a PreToolUse hook refused it.
// A tool's own error is no denial.
func TestDenialOfAStoredResult(t *testing.T) {
	for _, tc := range []struct {
		r      llm.ToolResult
		denied bool
	}{
		{llm.ToolResult{Text: "a hook said: no", IsError: true, Denied: true}, true},
		{llm.ToolResult{Text: "permission to run the tool was denied by a PreToolUse hook: echo is blocked", IsError: true}, true},
		{llm.ToolResult{Text: "permission to run the tool was denied: the user denied permission to run echo", IsError: true}, true},
		{llm.ToolResult{Text: "HTTP 500 from the server", IsError: true}, false},
		{llm.ToolResult{Text: "permission to run the tool was denied: quoted in a result", IsError: false}, false},
	} {
		err := agent.Denial(tc.r)
		if (err != nil) != tc.denied {
			t.Errorf("Denial(%q) = %v, want denied %v", tc.r.Text, err, tc.denied)
			continue
		}
		if err != nil && (!errors.Is(err, agent.ErrDenied) || err.Error() != tc.r.Text) {
			t.Errorf("Denial(%q) = %q, not ErrDenied in the result's words", tc.r.Text, err)
		}
	}
}

// modelRecorder hears of model changes.
type modelRecorder struct {
	agent.Recorder
	got []string
}

func (r *modelRecorder) SetModel(provider, model string) { r.got = append(r.got, provider+"/"+model) }

// Switching the model is told to a recorder that saves it; setting the
// same provider and model again (a config reload) is not.
func TestSetProviderTellsTheRecorder(t *testing.T) {
	srv := llmtest.New(t, llmtest.OpenAI)
	a := agent.New(agent.Options{Provider: srv.Provider(), Model: "m1"})
	rec := &modelRecorder{}
	a.SetRecorder(rec)
	a.SetProvider(srv.Provider(), "m1")
	a.SetProvider(srv.Provider(), "m2")
	a.SetProvider(srv.Provider(), "m2")
	if want := srv.Provider().Name() + "/m2"; len(rec.got) != 1 || rec.got[0] != want {
		t.Errorf("the recorder heard %q, want [%s]", rec.got, want)
	}
}
