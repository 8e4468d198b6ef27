package session

import (
	"context"
	"testing"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/record"
)

// What a front end showed is saved with the rows and read back: a prompt
// as typed and with its paste's placeholder, a message sent for the
// person, a notice's kind, a denied call; rows saved without them (by an
// older otter) read as before. The model's history is what it was sent.
func TestRowsKeepHowTheyWereShown(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := context.Background()
	r := NewRecorder(s, record.Info{Cwd: "/proj", Provider: "fake", Model: "m"}, func(err error) { t.Error(err) })
	sent := llm.Message{Role: llm.RoleUser, Text: "Review #42.\n\nContext from the hook."}
	shown := record.Shown{Typed: "/review:pr 42 a\nb", Short: "/review:pr 42 [pasted 2 lines #1]"}
	r.RecordPrompt(sent, shown)
	r.Notice(record.NoticeAttached, "@docs:readme (text, 12 B)")
	r.RecordMessage(llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "echo", Args: []byte(`{}`)}}}, llm.Usage{})
	r.Notice(record.NoticeInfo, "a PreToolUse hook blocked echo: no")
	r.RecordToolResult(llm.ToolResult{CallID: "c1", Name: "echo", Text: "permission to run the tool was denied by a PreToolUse hook: no", IsError: true, Denied: true})
	r.RecordPrompt(llm.Message{Role: llm.RoleUser, Text: "Stop hook feedback:\nsay bye"}, record.Shown{Hidden: true})
	r.Notice(record.NoticeError, "fake: request failed (HTTP 400)")
	r.SetModel("other", "m2")
	if _, err := s.Append(ctx, r.ID(), llm.Message{Role: record.RoleNotice, Text: "an older otter's notice"}, llm.Usage{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, r.ID(), llm.Message{Role: llm.RoleUser, Text: "typed as sent"}, llm.Usage{}); err != nil {
		t.Fatal(err)
	}

	entries, err := s.Entries(ctx, r.ID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 9 {
		t.Fatalf("%d rows, want 9", len(entries))
	}
	if e := entries[0]; e.Shown != shown || e.Message.Text != sent.Text || e.ShownText() != shown.Typed {
		t.Errorf("the prompt reads back as %+v", e)
	}
	if e := entries[1]; e.Notice != record.NoticeAttached {
		t.Errorf("the chips' notice reads back as %+v", e)
	}
	if e := entries[3]; e.Notice != record.NoticeInfo || e.Message.Text != "a PreToolUse hook blocked echo: no" {
		t.Errorf("the hook's notice reads back as %+v", e)
	}
	if res := entries[4].Message.ToolResults; len(res) != 1 || !res[0].Denied || !res[0].IsError {
		t.Errorf("the denied result reads back as %+v", res)
	}
	if e := entries[5]; !e.Shown.Hidden || e.ShownText() != e.Message.Text {
		t.Errorf("the message sent for the person reads back as %+v", e)
	}
	if e := entries[6]; e.Notice != record.NoticeError {
		t.Errorf("the error notice reads back as %+v", e)
	}
	if e := entries[7]; e.Notice != record.NoticeInfo {
		t.Errorf("an older notice reads back as %+v", e)
	}
	if e := entries[8]; e.Shown != (record.Shown{}) || e.ShownText() != "typed as sent" {
		t.Errorf("a prompt saved without how it was shown reads back as %+v", e)
	}
	h := History(entries)
	if h[0].Text != sent.Text || h[3].Text != "Stop hook feedback:\nsay bye" {
		t.Errorf("the model's history: %+v", h)
	}
	info, err := s.Get(ctx, r.ID())
	if err != nil || info.Provider != "other" || info.Model != "m2" {
		t.Errorf("the session's model: %s/%s (%v)", info.Provider, info.Model, err)
	}
}
