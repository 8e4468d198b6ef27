package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/record"
	"github.com/otter-sh/otter/internal/session"
)

// TestContinueInTheTUI is the "done when", as a new user would:
// chat in the real TUI (an answer and a tool call), quit, start `otter -c`:
// the same conversation is on the screen, and the model receives it with
// the next message.
func TestContinueInTheTUI(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Text: []string{"Let me look that up."}, Calls: []llmtest.Call{{ID: "call_1", Name: "otter_no_such_tool", Args: `{"q":"otters"}`}}},
		llmtest.Reply{Text: []string{"Sea otters hold hands ", "while they sleep."}},
		llmtest.Reply{Text: []string{"So they do not drift apart."}},
	)
	p := startTmux(t, dir, fakeModelConfig(model.URL), 100, 40)
	p.waitFor("fake/fake-model")
	p.keys("tell me about otters", "Enter")
	p.waitFor("while they sleep.")
	p.quit()

	// The same run script, with -c.
	p.restart(dir, "-c")
	screen := p.waitFor("Continuing session", "tell me about otters", "Let me look that up.", "otter_no_such_tool", "while they sleep.")
	if !strings.Contains(screen, "4 messages") {
		t.Errorf("the resumed session's note:\n%s", screen)
	}
	p.keys("and then?", "Enter")
	p.waitFor("So they do not drift apart.")
	reqs := model.Requests()
	var got []string
	for _, m := range reqs[len(reqs)-1].Messages {
		got = append(got, m.Role+":"+m.Text)
	}
	want := "user:tell me about otters|assistant:Let me look that up.|tool:|assistant:Sea otters hold hands while they sleep.|user:and then?"
	if strings.Join(got, "|") != want {
		t.Errorf("the model received:\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}

	// /rename, /fork, /new, /resume.
	p.keys("/rename Otter facts", "Enter")
	p.waitFor("renamed: Otter facts")
	p.keys("/fork", "Enter")
	p.waitFor("forked: you now continue")
	p.keys("/new", "Enter")
	p.waitFor("a new conversation")
	p.keys("/resume", "Enter")
	p.waitFor("Resume a conversation", "Otter facts (fork)", "Otter facts ")
	p.keys("Escape")
	p.waitGone("Resume a conversation")
	p.keys("/resume drift", "Enter")
	p.waitFor("Conversations that mention \"drift\"")
	db, err := session.Open(context.Background(), filepath.Join(p.home, ".local/share/otter", record.FileName))
	if err != nil {
		t.Fatal(err)
	}
	list, _ := db.List(context.Background(), record.ListOptions{})
	db.Close()
	var orig string
	for _, i := range list {
		if i.Title == "Otter facts" {
			orig = i.ID
		}
	}
	if len(list) != 2 || orig == "" {
		t.Fatalf("saved sessions: %+v", list)
	}
	p.keys("/resume "+orig[:8], "Enter")
	p.waitFor("Continuing session "+orig[:8], "So they do not drift apart.", "and then?")
	p.quit()
}

// /clear starts over as /new does: the cleared conversation stays saved as
// it was (so /resume brings it back), the model hears nothing of it, and
// what follows is saved as a conversation of its own — before, it was
// appended to the cleared one, and resuming brought back both.
func TestClearStartsANewSession(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Text: []string{"Otters sleep holding hands."}},
		llmtest.Reply{Text: []string{"Beavers build dams."}},
	)
	p := startTmux(t, dir, fakeModelConfig(model.URL), 100, 30)
	p.waitFor("fake/fake-model")
	p.keys("tell me about otters", "Enter")
	p.waitFor("Otters sleep holding hands.")
	p.keys("/clear", "Enter")
	p.waitFor("conversation cleared")
	p.keys("tell me about beavers", "Enter")
	p.waitFor("Beavers build dams.")

	reqs := model.Requests()
	for _, m := range reqs[len(reqs)-1].Messages {
		if strings.Contains(m.Text, "otters") || strings.Contains(m.Text, "Otters") {
			t.Errorf("after /clear the model still received %s: %q", m.Role, m.Text)
		}
	}
	db, err := session.Open(context.Background(), filepath.Join(p.home, ".local/share/otter", record.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	list, err := db.List(context.Background(), record.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	saved := map[string]string{}
	for _, info := range list {
		h, err := db.History(context.Background(), info.ID)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, m := range h {
			texts = append(texts, m.Text)
		}
		saved[info.ID[:8]] = strings.Join(texts, " | ")
	}
	if len(saved) != 2 {
		t.Fatalf("want the cleared conversation and the new one saved apart, got %d sessions: %q", len(saved), saved)
	}
	for id, text := range saved {
		if strings.Contains(text, "otters") == strings.Contains(text, "beavers") {
			t.Errorf("session %s mixes or misses the conversations: %q", id, text)
		}
	}
}
