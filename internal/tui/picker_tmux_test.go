package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/record"
	"github.com/otter-sh/otter/internal/session"
)

// TestPickerInTheTUI, as a new user would: `otter -r` without an ID in the
// real binary at 80×24 opens the picker over the saved conversations;
// typing a word from an answer finds its session, enter continues it, and
// the next message reaches the model with that history.
func TestPickerInTheTUI(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	ctx := context.Background()
	db, err := session.Open(ctx, filepath.Join(dir, "home", ".local/share/otter", record.FileName))
	if err != nil {
		t.Fatal(err)
	}
	seed := func(title string, msgs ...string) {
		t.Helper()
		info, err := db.Create(ctx, record.Info{Cwd: work, Title: title, FirstPrompt: msgs[0]})
		if err != nil {
			t.Fatal(err)
		}
		for i, text := range msgs {
			role := llm.RoleUser
			if i%2 == 1 {
				role = llm.RoleAssistant
			}
			if _, err := db.Append(ctx, info.ID, llm.Message{Role: role, Text: text}, llm.Usage{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	seed("Otter facts", "tell me about otters", "They hold hands while they sleep, a habit called rafting.")
	seed("Beaver dams", "how do beavers build dams?", "With branches and mud.")
	db.Close()

	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Rafting keeps them ", "from drifting apart."}})
	p := startTmuxAs(t, "otter-picker", dir, fakeModelConfig(model.URL), 80, 24, "-r")
	p.waitFor("Resume a conversation", "Otter facts", "Beaver dams", "tell me about otters", "esc close")
	p.keys("raft")
	p.waitGone("Beaver dams")
	p.keys("Enter")
	screen := p.waitFor("Continuing session", "a habit called rafting", "tell me about otters")
	if strings.Contains(screen, "Resume a conversation") {
		t.Errorf("the picker stays open:\n%s", screen)
	}
	p.keys("why?", "Enter")
	p.waitFor("from drifting apart.")
	reqs := model.Requests()
	var got []string
	for _, m := range reqs[len(reqs)-1].Messages {
		got = append(got, m.Role+":"+m.Text)
	}
	want := "user:tell me about otters|assistant:They hold hands while they sleep, a habit called rafting.|user:why?"
	if strings.Join(got, "|") != want {
		t.Errorf("the model received:\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
}
