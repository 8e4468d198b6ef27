package app

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/record"
)

// Issue 35 point 4: a resumed conversation holds what the person saw live
// — their messages as typed (a command by its name, a paste by its
// placeholder) apart from what the model was sent (the command's body,
// the hook's context), a call a hook blocked as denied, the hook's and
// the failed turn's notices where they stood, and the model in use at
// quit — while the model is sent what it was sent before.
func TestResumedConversationKeepsWhatWasShown(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	model := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "get_status", Args: `{}`}}},
		llmtest.Reply{Text: []string{"The hook said no."}},
		llmtest.Reply{Status: 400, Message: "the fake model refuses this one"},
		llmtest.Reply{Text: []string{"Still here."}},
	)
	cfg := fmt.Sprintf(`[agent]
provider = "fake"
model = "m"
[providers.fake]
type = "openai"
base_url = %q
api_key = "k"
context_window = 100000
[providers.other]
type = "openai"
base_url = %q
api_key = "k"
model = "m2"
context_window = 100000
`, model.URL, model.URL)
	paths := testPaths(t, cfg)
	proj := t.TempDir()
	put(t, filepath.Join(proj, ".otter", "config.toml"), `
[[hooks.PreToolUse]]
[[hooks.PreToolUse.hooks]]
type = "command"
command = "echo 'get_status is blocked by policy' >&2; exit 2"

[[hooks.UserPromptSubmit]]
[[hooks.UserPromptSubmit.hooks]]
type = "command"
command = "echo 'Context from the hook.'"
`)
	put(t, filepath.Join(proj, ".otter", "commands", "review", "pr.md"), "Review pull request #$1 and list its risks.")
	if err := paths.Trust(proj); err != nil {
		t.Fatal(err)
	}
	open := func(o Options) *App {
		o.Parts, o.Paths, o.WorkDir, o.Logger = testParts, paths, proj, slog.New(slog.DiscardHandler)
		a, err := New(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return a
	}
	ctx := context.Background()
	a := open(Options{})
	c, err := a.NewConversation(ctx, ConversationOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, "test the hooks", nil); err != nil {
		t.Fatal(err)
	}
	paste := "line one\nline two\nline three"
	short := "/review:pr 42 [pasted 3 lines #1]"
	if err := c.SendShown(ctx, "/review:pr 42 "+paste, short, nil); err == nil {
		t.Fatal("the model's 400 did not fail the turn")
	}
	if err := a.SetModel("other", "m2"); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, "still there?", nil); err != nil {
		t.Fatal(err)
	}
	id := c.SessionID()

	// The model was sent what it was sent before: the hook's context, the
	// command's body, the paste.
	reqs := model.Requests()
	if got := reqs[0].Messages[len(reqs[0].Messages)-1].Text; got != "test the hooks\n\nContext from the hook." {
		t.Errorf("first message sent as %q", got)
	}
	if got := reqs[2].Messages[len(reqs[2].Messages)-1].Text; !strings.HasPrefix(got, "Review pull request #42 and list its risks.") || !strings.Contains(got, "Context from the hook.") {
		t.Errorf("the command was sent as %q", got)
	}
	if reqs[3].Model != "m2" {
		t.Errorf("the last message went to %q, want m2", reqs[3].Model)
	}

	// Resumed in another otter: the model in use at quit, and the rows.
	a2 := open(Options{})
	c2, err := a2.NewConversation(ctx, ConversationOptions{Session: SessionOptions{Resume: id}})
	if err != nil {
		t.Fatal(err)
	}
	if p, m, _ := a2.Provider(); p == nil || p.Name() != "other" || m != "m2" {
		t.Errorf("resumed with %v/%q, want other/m2 (the model in use at quit)", p, m)
	}
	info, entries := c2.Resumed()
	if info.Provider != "other" || info.Model != "m2" {
		t.Errorf("the session says %s/%s", info.Provider, info.Model)
	}
	var shown []string
	for _, e := range entries {
		m := e.Message
		switch m.Role {
		case llm.RoleUser:
			shown = append(shown, fmt.Sprintf("user %q short=%q", e.ShownText(), e.Shown.Short))
		case llm.RoleAssistant:
			for _, call := range m.ToolCalls {
				shown = append(shown, "call "+call.Name)
			}
			if m.Text != "" {
				shown = append(shown, "answer "+m.Text)
			}
		case llm.RoleTool:
			for _, r := range m.ToolResults {
				shown = append(shown, fmt.Sprintf("result denied=%v %s", agent.Denial(r) != nil && r.Denied, r.Text))
			}
		case record.RoleNotice:
			shown = append(shown, fmt.Sprintf("notice %q %s", e.Notice, m.Text))
		}
	}
	want := []string{
		`user "test the hooks" short=""`,
		"call get_status",
		`notice "" a PreToolUse hook blocked get_status: get_status is blocked by policy`,
		"result denied=true permission to run the tool was denied by a PreToolUse hook: get_status is blocked by policy",
		"answer The hook said no.",
		fmt.Sprintf("user %q short=%q", "/review:pr 42 "+paste, short),
		`notice "error" ` + reqErr(t, entries),
		`user "still there?" short=""`,
		"answer Still here.",
	}
	if got := strings.Join(shown, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("resumed rows:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	// Continuing sends the model the history it had.
	if msgs := c2.Messages(); len(msgs) < 1 || msgs[0].Text != "test the hooks\n\nContext from the hook." {
		t.Errorf("resumed history starts %+v", msgs[:1])
	}

	// A model chosen on the command line wins over the session's.
	a3 := open(Options{Model: "m3"})
	if _, err := a3.NewConversation(ctx, ConversationOptions{Session: SessionOptions{Resume: id}}); err != nil {
		t.Fatal(err)
	}
	if p, m, _ := a3.Provider(); p.Name() != "fake" || m != "m3" {
		t.Errorf("with --model m3, resumed with %s/%q", p.Name(), m)
	}
}

// reqErr is the text of the one error notice among entries, which must
// name the model's refusal.
func reqErr(t *testing.T, entries []record.Entry) string {
	t.Helper()
	for _, e := range entries {
		if e.Notice == record.NoticeError {
			if !strings.Contains(e.Message.Text, "the fake model refuses this one") {
				t.Errorf("the error notice is %q", e.Message.Text)
			}
			return e.Message.Text
		}
	}
	return "(no error notice)"
}
